// `npm run sim:mutants [-- --base=DIR --runs=N]`: puts back, one at a time, faults delivery once had (issue 27) and
// two of our choosing, each as a source transform of a copy of DIR (default src) in .tmp/mutants/, and runs the
// simulator on the copy until it fails. Every mutant must be caught; prints how many schedules each took.
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? true]));
const base = resolve(args.base ?? 'src');
const runs = Number(args.runs ?? 1000);

// Each: the file, the text (or pattern) it has now, and the fault put in its place (it must occur exactly once).
const MUTANTS = [
  {
    name: 'retry-wait: a tab closed during a retry wait leaves its deferred request with the browser (742c5a5)',
    file: 'delivery/scheduler.ts',
    from: /deferral\._take\(how != 'hidden'\);\n(\s*)(d\.open\(\) && )?handoff\._exit\(how, ([^;]*)\);\n\s*deferral\._cover\(\);/,
    to: "const keep = how == 'discarded' && ($3);\n$1if (!keep) deferral._take(how != 'hidden');\n$1$2handoff._exit(how, $3);\n$1if (!keep) deferral._cover();",
  },
  {
    name: 'bfcache: a page entering the back/forward cache keeps its deferred request (before ebae781)',
    file: 'delivery/scheduler.ts',
    from: /deferral\._take\(how != 'hidden'\);\n(\s*)(d\.open\(\) && )?handoff\._exit\(how, ([^;]*)\);\n\s*deferral\._cover\(\);/,
    to: "if (how != 'cached') deferral._take(how != 'hidden');\n$1$2handoff._exit(how, $3);\n$1if (how != 'cached') deferral._cover();",
  },
  {
    name: 'redirect: a redirect answer counted as delivered (before d6b13be)',
    file: 'delivery/transport.ts',
    from: 'return { _status: response.status,',
    to: "return { _status: response.type == 'opaqueredirect' ? 200 : response.status,",
  },
  {
    name: 'take-back: a request reads its batch before it takes the deferred request back (before 30373b0)',
    file: 'delivery/request.ts',
    from: 'deferral._take();\n    const batch = stillQueued(planned, d._queue._list());',
    to: 'const batch = stillQueued(planned, d._queue._list());\n    deferral._take();',
    // (rare: the long runs found it first at seed 21500, none of seeds 1 to 20,000 meets it; searched from 20,001)
    seed: 20001,
  },
  {
    name: 'ledger 1: a failed answer leaves its records noted as handed to the browser (the UNHAND row keeps N)',
    file: 'delivery/ledger.ts',
    from: '/* UNHAND */ [N, 0, 0, N],',
    to: '/* UNHAND */ [N, 0, 0, 0],',
  },
  {
    name: 'ledger 2: a request that ends without an answer forgets that an exit noted it (the END row clears N)',
    file: 'delivery/ledger.ts',
    from: '/* END */ [S | K, 0, 0, S | K],',
    to: '/* END */ [S | K, 0, 0, S | K | N],',
  },
  {
    name: 'tabs 1: a page restored from the back/forward cache keeps the records another tab adopted meanwhile',
    file: 'delivery/start.ts',
    from: 'restored ? queue._reconcile() : Promise.resolve()',
    to: 'Promise.resolve()',
  },
  {
    name: 'tabs 2: a load adopts orphans before finishing the hand-offs earlier pages noted',
    file: 'delivery/start.ts',
    from: 'await finishHandoffs(',
    to: 'await ((..._: unknown[]) => undefined)(',
  },
];

// The seeds the code as it is fails (findings not fixed yet): a mutant is judged on the others.
const sim = (src, extra) => {
  try {
    return execFileSync(process.execPath, ['sim/cli.mjs', `--src=${src}`, `--runs=${runs}`, ...extra], { encoding: 'utf8', maxBuffer: 1 << 28 });
  } catch (e) {
    return e.stdout;
  }
};
const known = [...sim(base, []).matchAll(/FAIL seed (\d+):/g)].map((m) => m[1]);
console.log(`the code as it is fails ${known.length} of ${runs} schedules (left out): ${known.join(', ') || 'none'}`);
let missed = 0;
// (`--only=2,5`: those mutants only)
const only = args.only ? String(args.only).split(',').map(Number) : undefined;
for (const [i, m] of MUTANTS.entries()) {
  if (only && !only.includes(i + 1)) continue;
  const dir = resolve('.tmp/mutants', String(i + 1));
  rmSync(dir, { recursive: true, force: true });
  cpSync(base, resolve(dir, 'src'), { recursive: true });
  const path = resolve(dir, 'src', m.file);
  const text = readFileSync(path, 'utf8');
  const found = typeof m.from == 'string' ? text.split(m.from).length - 1 : (text.match(new RegExp(m.from, 'g')) || []).length;
  if (found != 1) {
    console.log(`? ${m.name}: its code is not in ${m.file} any more (rewrite the mutant in the new code's terms)`);
    missed++;
    continue;
  }
  writeFileSync(path, text.replace(m.from, m.to));
  const out = sim(`${dir}/src`, ['--stop', `--skip=${known.join(',')}`, ...(m.seed ? [`--seed=${m.seed}`, `--runs=${Math.max(runs, 2000)}`] : [])]);
  const fail = out.match(/FAIL seed (\d+):\n {2}(.*)/);
  const total = out.match(/sim: (\d+) schedules/);
  const from = m.seed ? ` from seed ${m.seed}` : '';
  if (fail) console.log(`caught   ${m.name}\n         after ${total?.[1]} schedule(s)${from}, seed ${fail[1]}: ${fail[2].slice(0, 160)}`);
  else (missed++, console.log(`MISSED   ${m.name} (${total?.[1]} schedules)`));
}
console.log(missed ? `\n${missed} mutant(s) not caught` : `\nall ${MUTANTS.length} mutants caught`);
process.exit(missed ? 1 : 0);
