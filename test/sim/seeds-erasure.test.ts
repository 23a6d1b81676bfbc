// @vitest-environment node
// Seeds of the long simulator run (20,000 schedules) that found faults, replayed one by one (issue 27): an erasure in
// one page while another holds copies of its records (5046, 11960, 12506: sent after a consent withdrawal), and a
// request forced in a backoff left in flight as its page entered the back/forward cache (15430: the simulator took its
// duplicate for a knowable one).
import { expect, it } from 'vitest';
import { runMany } from '../../sim/main';
import { eraseDelivery, startDelivery } from '../../src/delivery/start';
import { deliverStored, keepNote } from '../../src/offline/deliver';

for (const seed of [5046, 11960, 12506, 15430])
  it(`sim seed ${seed}`, async () => {
    const { failed } = await runMany({ seed, runs: 1, mod: { startDelivery, eraseDelivery, worker: { deliverStored, keepNote } } as never });
    expect(failed.map((r) => r.violations)).toEqual([]);
  });
