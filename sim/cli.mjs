// `npm run sim -- [--runs=N] [--seed=S] [--trace] [--requests] [--stop] [--src=DIR]`: runs N seeded schedules (TypeScript run by
// jiti, no build step) of the delivery code in DIR (default: src; mutants.mjs passes a mutated copy).
import { createJiti } from 'jiti';
import { resolve } from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? true]));
const runs = Number(args.runs ?? 200);
const seed = Number(args.seed ?? 1);
const src = resolve(args.src ?? 'src');
const jiti = createJiti(import.meta.url, { moduleCache: true });
const { runMany } = await jiti.import('./main.ts');
const { startDelivery, eraseDelivery } = await jiti.import(resolve(src, 'delivery/start.ts'));
const { deliverStored, keepNote } = await jiti.import(resolve(src, 'offline/deliver.ts'));
// Seeds to leave out (`--skip=1,5,26`: those the unmutated code fails, when judging a mutant).
// `--seeds=FILE`: only the seeds listed in FILE (one a line: to run again the failures of a long run).
const list = args.seeds ? (await import('node:fs')).readFileSync(args.seeds, 'utf8').split(/\s+/).filter(Boolean).map(Number) : undefined;
const skip = new Set(String(args.skip ?? '').split(',').filter(Boolean).map(Number));
const replay = (s) => `npm run sim -- --seed=${s} --runs=1 --trace${args.src ? ' --src=' + args.src : ''}`;
const t0 = performance.now();
const { failed, totals } = await runMany({
  seed,
  runs,
  mod: { startDelivery, eraseDelivery, worker: { deliverStored, keepNote } },
  stop: !!args.stop,
  skip,
  seeds: list,
  onFail(r) {
    console.log(`\nFAIL seed ${r.seed}:\n  ` + r.violations.slice(0, 8).join('\n  ') + (r.violations.length > 8 ? `\n  ... ${r.violations.length - 8} more` : ''));
    if (args.trace) console.log('trace:\n  ' + r.trace.join('\n  '));
    // (`--requests`: every request of the schedule, with the ids it carried and what became of it)
    if (args.requests)
      for (const q of r.reqs)
        console.log(`  #${q.n} ${q.at.toFixed(3)}s ${q.page} ${q.via} ${q.status ?? '-'}${q.delivered ? ' delivered' : ''}${q.unknowable ? ' unknowable' : ''}${q.lost ? ' lost' : ''}: ${q.ids.map((id) => id.slice(-3)).join(' ')}`);
    console.log(`replay: ${replay(r.seed)}`);
  },
});
const s = ((performance.now() - t0) / 1000).toFixed(1);
console.log(`\nsim: ${totals.runs} schedules (seeds ${list ? list.join(', ') : `${seed}..${seed + totals.runs - 1}`}), ${failed.length} failed, ${s} s; ${totals.accepted} messages accepted, ${totals.requests} requests, ${totals.delivered} delivered`);
process.exit(failed.length ? 1 : 0);
