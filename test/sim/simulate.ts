import { expect, it } from 'vitest';
import { runMany } from '../../sim/main';
import { eraseDelivery, startDelivery } from '../../src/delivery/start';
import { deliverStored, keepNote } from '../../src/offline/deliver';
import known from '../../sim/known-failures.json';

/**
 * Runs `runs` schedules of the simulator from `seed` on the delivery code in src/ and expects every one to keep the
 * invariants, except the seeds of findings not fixed yet (sim/known-failures.json, each written up in
 * sim/README.md): a fix removes its seeds from that list.
 */
export function simulate(seed: number, runs: number) {
  // (SIM_CI_RUNS: fewer, for a quick look)
  runs = Number(process.env.SIM_CI_RUNS || runs);
  it(`keeps delivery's invariants in ${runs} seeded schedules (seeds ${seed} to ${seed + runs - 1})`, async () => {
    const open = new Set<number>(known.seeds);
    const { failed, totals } = await runMany({ seed, runs, mod: { startDelivery, eraseDelivery, worker: { deliverStored, keepNote } } as never });
    const fresh = failed.filter((r) => !open.has(r.seed)).map((r) => `seed ${r.seed}: ${r.violations[0]}\n  replay: npm run sim -- --seed=${r.seed} --runs=1 --trace`);
    expect(totals.runs).toBe(runs);
    expect(fresh).toEqual([]);
  }, 600000);
}
