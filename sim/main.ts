import { createWorld, START, type DeliveryModule } from './world';
import { schedule } from './actors';
import { check } from './check';

// Runs seeded schedules of the real delivery code (see README of sim/: `npm run sim -- --runs=N --seed=S`).

export interface RunResult {
  seed: number;
  violations: string[];
  trace: string[];
  reqs: { n: number; page: string; via: string; at: number; ids: string[]; status?: number; delivered?: boolean; unknowable?: boolean; lost?: boolean }[];
  stats: { pages: number; accepted: number; requests: number; delivered: number };
}

/** Runs one schedule. */
export async function runSeed(seed: number, mod: DeliveryModule, actions = 40): Promise<RunResult> {
  const w = createWorld(seed, mod);
  const rejected = (e: unknown) => w.errors.push(`unhandled rejection: ${(e as Error)?.stack || e}`);
  process.on('unhandledRejection', rejected);
  try {
    const end = schedule(w, actions);
    // (a bound on the tasks of a run: more is a loop in virtual time, say one timer re-armed at 0 ms for ever)
    for (let steps = 0; ; steps++) {
      if (steps > 200000) {
        w.errors.push(`livelock: over 200,000 tasks, stuck at ${((w.loop.now() - START) / 1000).toFixed(3)}s`);
        break;
      }
      let next = w.loop.next();
      // (IndexedDB work still running may set a timer yet)
      if (next == Infinity) await w.loop.drain(), (next = w.loop.next());
      if (next == Infinity || next > end.endAt) break;
      // Now and then IndexedDB is still at work when the next thing happens at once (a page exit just after an answer).
      await w.loop.drain(next - w.loop.now() < 50 && w.rng.chance(0.2) ? w.rng.int(0, 3) : Infinity);
      w.loop.step();
    }
    await w.loop.drain();
  } catch (e) {
    w.errors.push(String((e as Error).message || e));
  }
  try {
    const violations = check(w);
    if (process.env.SIM_DEBUG) {
      for (const p of w.pages) console.log(p.id, p.life, p.fellBack ? 'fellBack' : '', p.delivery?._queue._list().map((r) => r.id.slice(-3)).join(' '));
      const db = await new Promise<IDBDatabase>((r) => { const q = w.platform.makePage(0, -1, false).idb.open('svc-analytics'); q.onsuccess = () => r(q.result); });
      const all = await new Promise<unknown[]>((r) => { const q = db.transaction('queue').objectStore('queue').getAll(); q.onsuccess = () => r(q.result); });
      console.log('idb', all.map((x) => (x as { id: string; owner: string }).id.slice(-3) + ':' + (x as { owner: string }).owner).join(' '), 'options', JSON.stringify(w.options), 'note', w.platform.storage.get('svc_sent'));
      console.log('now', (w.loop.now() - START) / 1000, 'next', w.loop.next());
      console.log('locks', JSON.stringify(await w.platform.locks.managerFor(w.pages[0]).query()));
    }
    return {
      seed,
      violations,
      trace: w.trace,
      reqs: w.net.log.map((r) => ({ n: r.n, page: r.page.id, via: r.via, at: (r.at - START) / 1000, ids: r.ids, status: r.status, delivered: r.delivered, unknowable: r.unknowable, lost: r.lost })),
      stats: { pages: w.pages.length, accepted: w.accepted.size, requests: w.net.log.length, delivered: w.net.delivered.size },
    };
  } finally {
    process.off('unhandledRejection', rejected);
    w.platform.uninstall();
    w.loop.restore();
  }
}

/** Runs `runs` schedules from `seed` on; stops at the first failure when `stop`. */
export async function runMany(opts: { seed: number; runs: number; mod: DeliveryModule; stop?: boolean; skip?: Set<number>; seeds?: number[]; onFail?: (r: RunResult) => void }) {
  const failed: RunResult[] = [];
  const totals = { runs: 0, accepted: 0, requests: 0, delivered: 0 };
  const seeds = opts.seeds ?? Array.from({ length: opts.runs }, (_, i) => opts.seed + i);
  for (const seed of seeds) {
    if (opts.skip?.has(seed)) continue;
    const r = await runSeed(seed, opts.mod);
    totals.runs++;
    totals.accepted += r.stats.accepted;
    totals.requests += r.stats.requests;
    totals.delivered += r.stats.delivered;
    if (r.violations.length) {
      failed.push(r);
      opts.onFail?.(r);
      if (opts.stop) break;
    }
  }
  return { failed, totals };
}
