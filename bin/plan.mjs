// `svc-analytics plan ...`: the tracking plan's tools (CONTRACT section 7). `check` checks captured messages with the
// package's one checker (dist/plan.mjs), `infer` writes a plan the messages satisfy, `types` writes declarations.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadPlan, planModule, PlanLoadError } from '../collector/plan.mjs';
import { inferPlan } from './plan-infer.mjs';
import { planTypes } from './plan-types.mjs';

const DEFAULT_LOG = '.collector/events.jsonl';

const HELP = `svc-analytics plan: the tracking plan's tools

Usage:
  svc-analytics plan check <plan> [FILE.jsonl ...]
      Checks captured messages (default: ${DEFAULT_LOG}, the collector's --log) against the plan: one line
      per violation, then a summary. Exit 0: none; 1: some; 2: the plan or a file cannot be read, or the plan
      is not a valid plan (the message names the place).
  svc-analytics plan infer [FILE.jsonl ...] [--out FILE]
      Writes a plan that the messages satisfy (each event seen, its properties' types, "required" for those
      present every time), to start from. Default: stdout.
  svc-analytics plan types <plan> [--out FILE]
      Writes a TypeScript declaration file that types track, identify and group by the plan (svc-analytics,
      svc-analytics/core and window.analytics); include it in your tsconfig. Default: stdout.
`;

/** Messages of JSON-lines files: the collector's log lines ({ receivedAt, requestId, message }) or bare messages. */
export function readMessages(files) {
  const messages = [];
  for (const file of files) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new PlanLoadError(`cannot read ${file} (${err.code || err.message})`);
    }
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      let value;
      try {
        value = JSON.parse(i ? line : line.replace(/^\uFEFF/, ''));
      } catch {
        throw new PlanLoadError(`${file}:${i + 1} is not a JSON line`);
      }
      // (a line that holds an array, such as a saved GET /_/messages, is a list of them)
      for (const item of Array.isArray(value) ? value : [value]) {
        const message = item && typeof item.message === 'object' && item.message ? item.message : item;
        if (!message || typeof message !== 'object' || Array.isArray(message) || typeof message.type !== 'string')
          throw new PlanLoadError(`${file}:${i + 1} is not a message (a JSON object with a "type", or the collector's log line { "message": ... }), nor a list of them`);
        messages.push({ file, line: i + 1, message });
      }
    });
  }
  return messages;
}

function write(text, out) {
  if (!out) return process.stdout.write(text);
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  fs.writeFileSync(out, text);
  console.error(`svc-analytics: wrote ${out}`);
}

async function check(plan, files) {
  const compiled = await loadPlan(plan);
  const { describeViolation } = await planModule();
  if (!files.length && !fs.existsSync(DEFAULT_LOG)) {
    throw new PlanLoadError(`cannot read ${DEFAULT_LOG} (ENOENT): name the files, or run the collector with --log ${DEFAULT_LOG} first`);
  }
  const messages = readMessages(files.length ? files : [DEFAULT_LOG]);
  let count = 0;
  const events = new Set();
  for (const { file, line, message } of messages) {
    for (const v of compiled.check(message)) {
      count += 1;
      events.add(v.event ?? v.type);
      console.log(`${file}:${line}: ${describeViolation(v)}`);
    }
  }
  const where = `${messages.length} message(s) of ${files.length || 1} file(s)`;
  // (a check of nothing passes: say so, since a CI job that captured nothing would otherwise look green)
  if (!messages.length) console.error(`plan check: no message to check in ${files.join(', ') || DEFAULT_LOG}: did the collector receive anything?`);
  console.log(count ? `${count} violation(s) of the plan (${events.size} event(s)) in ${where}` : `no violation of the plan in ${where}`);
  return count ? 1 : 0;
}

/** Runs `svc-analytics plan <args>`; `fail(message, code)` prints one line and exits. */
export async function runPlan(args, fail) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { out: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    return fail(`plan: ${err.message.split('\n')[0]} (run svc-analytics plan --help)`, 2);
  }
  const [command, ...rest] = parsed.positionals;
  const { out } = parsed.values;
  if (parsed.values.help || !command) return void process.stdout.write(HELP);
  try {
    if (command === 'check') {
      if (!rest.length) return fail('plan check: name the plan file (svc-analytics plan check tracking-plan.json)', 2);
      if (out) return fail('plan check: --out is for infer and types', 2);
      process.exitCode = await check(rest[0], rest.slice(1));
    } else if (command === 'infer') {
      write(JSON.stringify(inferPlan(readMessages(rest.length ? rest : [DEFAULT_LOG]).map((m) => m.message)), null, 2) + '\n', out);
    } else if (command === 'types') {
      if (rest.length !== 1) return fail('plan types: name one plan file (svc-analytics plan types tracking-plan.json --out src/tracking-plan.d.ts)', 2);
      const { plan, file } = await loadPlan(rest[0]);
      const { SPEC_EVENTS } = await planModule();
      write(planTypes(plan, { source: path.relative(out ? path.dirname(path.resolve(out)) : process.cwd(), file), specEvents: SPEC_EVENTS }), out);
    } else return fail(`plan: unknown command "${command}" (check, infer or types)`, 2);
  } catch (err) {
    if (err.name === 'PlanLoadError') return fail(err.message, 2);
    // (a checker that fails is not a violation: exit 1 would read as one)
    return fail(`plan ${command}: ${err.message}`, 2);
  }
}
