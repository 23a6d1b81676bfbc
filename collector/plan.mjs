// The tracking plan in Node (CONTRACT section 7): read a plan file and compile it with the package's one checker
// (dist/plan.mjs, the same code as the browser's chunk), for the collector's --plan, the testing kit's analyticsPlan
// and `svc-analytics plan check`.
import fs from 'node:fs';
import path from 'node:path';

const CHECKER = new URL('../dist/plan.mjs', import.meta.url);

/** A plan that cannot be used: `code` 2 for the CLI (unreadable, not JSON, not a valid plan). */
export class PlanLoadError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PlanLoadError';
  }
}

/** The checker module (dist/plan.mjs); a clear error when the package was not built. */
export async function planModule() {
  try {
    return await import(CHECKER.href);
  } catch (err) {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND') throw new PlanLoadError(`the plan checker ${CHECKER.pathname} is missing: run npm run build`);
    throw err;
  }
}

/**
 * Reads and compiles a plan: a file path, or a plan object. Returns `{ file, plan, check(message) }`; throws a
 * `PlanLoadError` naming the file and, for a plan that is not valid, the place in it.
 */
export async function loadPlan(source) {
  const { compilePlan } = await planModule();
  let plan = source;
  let file = null;
  if (typeof source === 'string') {
    file = path.resolve(source);
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new PlanLoadError(`cannot read the plan ${file} (${err.code || err.message})`);
    }
    try {
      plan = JSON.parse(text.replace(/^\uFEFF/, '')); // (a byte-order mark, as Windows editors write it)
    } catch (err) {
      throw new PlanLoadError(`the plan ${file} is not JSON: ${err.message}`);
    }
  }
  try {
    return { file, ...compilePlan(plan) };
  } catch (err) {
    throw new PlanLoadError(`${file ? file + ': ' : ''}${err.message}`);
  }
}

/**
 * The collector's entries for `GET /_/violations`: one per violation of the messages of request `rec`, each with
 * `"kind": "plan"` and a `violation` ({ kind, reason }) as the request records have.
 */
export function planEntries(plan, rec, messages, describeViolation) {
  // (a checker that fails on a message is reported as its violation, never as the request's failure: the message
  // was received)
  const check = (m) => {
    try {
      return plan.check(m);
    } catch (err) {
      return [{ messageId: m?.messageId ?? '', type: m?.type ?? '', pointer: '', expected: `a message the checker can check (it failed: ${err?.message || err})` }];
    }
  };
  return messages.flatMap((m) =>
    check(m).map((v) => ({
      kind: 'plan',
      requestId: rec.id,
      at: rec.at,
      ...v,
      violation: { kind: 'plan', reason: describeViolation(v) },
    })),
  );
}
