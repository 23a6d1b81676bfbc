// @vitest-environment node
// Seeds of the second long simulator range (20,001 to 26,000) that found a fault (issue 27): a planned batch read
// before the deferred request was taken back, whose browser had sent it meanwhile (its deadline came, or the page
// died), carried its records again, a move the ledger's table refuses (KEEP from R) and a duplicate once both are
// accepted (src/delivery/request.ts `send`). They reach it through a page's code that runs on after its crash (a
// continuation the simulator's promises still run: since 8bb0162 such a page sends nothing, but its ledger still
// checks the move, so both seeds still fail without the fix); a real page meets the same order when restored from the
// back/forward cache, the case test/delivery/scheduler.test.ts holds.
import { expect, it } from 'vitest';
import { runMany } from '../../sim/main';
import { eraseDelivery, startDelivery } from '../../src/delivery/start';
import { deliverStored, keepNote } from '../../src/offline/deliver';

for (const seed of [21500, 21964])
  it(`sim seed ${seed}`, async () => {
    const { failed } = await runMany({ seed, runs: 1, mod: { startDelivery, eraseDelivery, worker: { deliverStored, keepNote } } as never });
    expect(failed.map((r) => r.violations)).toEqual([]);
  });
