// @vitest-environment node
// The deterministic simulator (sim/, issue 27) in CI: seeds 1 to 1,000 here, 1,001 to 2,000 in sim-b.test.ts (two
// files, so two workers run them side by side). A failing seed prints the command that replays it.
import { simulate } from './simulate';

simulate(1, 1000);
