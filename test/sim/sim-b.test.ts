// @vitest-environment node
// Seeds 1,001 to 2,000 of the simulator (see sim-a.test.ts).
import { simulate } from './simulate';

simulate(1001, 1000);
