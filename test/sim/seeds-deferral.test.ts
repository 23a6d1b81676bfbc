// @vitest-environment node
// Seeds of the second long simulator range (20,001 to 26,000) that found a fault (issue 27): a planned batch read
// before the deferred request was taken back, whose browser had sent it meanwhile (its deadline came, or the page
// died), carried its records again, a move the ledger's table refuses (KEEP from R) and a duplicate once both are
// accepted (src/delivery/request.ts `send`). They reached it through a page that kept running after its crash, which
// the simulator no longer lets happen (sim/platform.ts: a dead page sends nothing); a page restored from the
// back/forward cache meets the same order, and test/delivery/scheduler.test.ts holds the fix. Replayed here as found.
import { expect, it } from 'vitest';
import { runMany } from '../../sim/main';
import { eraseDelivery, startDelivery } from '../../src/delivery/start';
import { deliverStored, keepNote } from '../../src/offline/deliver';

for (const seed of [21500, 21964])
  it(`sim seed ${seed}`, async () => {
    const { failed } = await runMany({ seed, runs: 1, mod: { startDelivery, eraseDelivery, worker: { deliverStored, keepNote } } as never });
    expect(failed.map((r) => r.violations)).toEqual([]);
  });
