// The tracking plan (CONTRACT section 7): `compilePlan` refuses a plan that is not valid, naming the place, and the
// compiled plan checks messages. One checker for every place that checks a plan: the browser's `plan` option (a chunk
// of its own), the collector's `--plan`, the testing kit and `svc-analytics plan check` (dist/plan.mjs).
import type { Message } from '../message/types';
import type { PlanViolation } from '../message/errors';
import { validate, pointerTo, shown, withBudget, TooCostly, STEP_BUDGET, type Schema, type SchemaFailure } from './schema';
import { checkSchema, PlanError } from './plan-schema';
import { ECOMMERCE_EVENTS } from '../helpers/ecommerce';
import { SEMANTIC_EVENTS } from '../helpers/semantic';

export { PlanError };
export type { PlanViolation };

/** A tracking plan as written (see CONTRACT section 7 and plan.schema.json). */
export interface TrackingPlanFile {
  events?: Record<string, { description?: string; properties?: Schema }>;
  identify?: { description?: string; traits?: Schema };
  group?: { description?: string; traits?: Schema };
  page?: { description?: string; properties?: Schema };
  unplannedEvents?: 'error' | 'allow';
  $defs?: Record<string, Schema>;
  [key: string]: unknown;
}

/** A plan checked by `compilePlan`: `check` lists a message's violations (none: it follows the plan). */
export interface CompiledPlan {
  plan: TrackingPlanFile;
  check(message: Partial<Message>): PlanViolation[];
}

/** `page` properties the library fills itself: they need no entry in the plan (nor do `name` and `category`, below). */
const AUTOMATIC_PAGE = ['path', 'referrer', 'search', 'title', 'url'];
const TOP = ['events', 'identify', 'group', 'page', 'unplannedEvents', '$defs', 'definitions', 'description'];
const SECTIONS: Record<string, string> = { identify: 'traits', group: 'traits', page: 'properties' };

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v == 'object' && !Array.isArray(v);
// Keys a writer may add anywhere: `$schema`, `$comment`, `x-owner`...
const extra = (k: string) => k[0] == '$' || k.startsWith('x-');
const loose = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

/** The longest event name a "did you mean" is looked for (a longer one is compared with nothing: security-5 N3). */
const NEAR_MAX = 200;

/**
 * Edit distance (Levenshtein) of two names, compared loosely (case, spaces, `_` and `-` aside); 3 for names whose
 * lengths differ by more than 2 (not computed: only 2 edits or fewer count).
 */
function distance(a: string, b: string): number {
  [a, b] = [loose(a), loose(b)];
  if (Math.abs(a.length - b.length) > 2) return 3;
  let row = [...Array(b.length + 1).keys()];
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** Resolves a JSON pointer fragment (`#/$defs/Seats`) in the plan; undefined when it names nothing. */
function resolver(plan: unknown) {
  return (ref: string): Schema | undefined => {
    if (ref[0] != '#') return undefined;
    let node: any = plan;
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (!node || typeof node != 'object' || !Object.prototype.hasOwnProperty.call(node, key)) return undefined;
      node = node[key];
    }
    return ref == '#' ? undefined : node;
  };
}

/** Checks that `plan` is a tracking plan; throws a `PlanError` naming the first place that is not. */
export function validatePlan(plan: unknown): asserts plan is TrackingPlanFile {
  if (!isObject(plan)) throw new PlanError('', 'a tracking plan is a JSON object with "events"');
  const refs = resolver(plan);
  for (const k of Object.keys(plan)) if (!TOP.includes(k) && !extra(k)) throw new PlanError(pointerTo('', k), `not a key of a tracking plan (known: ${TOP.join(', ')})`);
  if (plan.unplannedEvents !== undefined && plan.unplannedEvents != 'error' && plan.unplannedEvents != 'allow')
    throw new PlanError('/unplannedEvents', `"error" or "allow", got ${shown(plan.unplannedEvents)}`);
  for (const defs of ['$defs', 'definitions']) {
    if (plan[defs] === undefined) continue;
    if (!isObject(plan[defs])) throw new PlanError('/' + defs, 'an object of named schemas');
    for (const [name, schema] of Object.entries(plan[defs])) checkSchema(schema, pointerTo('/' + defs, name), refs);
  }
  if (plan.events !== undefined && !isObject(plan.events)) throw new PlanError('/events', 'an object of event names to { "description"?, "properties"? }');
  const entries: [string, unknown, string][] = Object.entries(plan.events || {}).map(([name, entry]) => [pointerTo('/events', name), entry, 'properties']);
  for (const section of Object.keys(SECTIONS)) if (plan[section] !== undefined) entries.push(['/' + section, plan[section], SECTIONS[section]]);
  for (const [at, entry, field] of entries) {
    if (!isObject(entry)) throw new PlanError(at, `an object with "${field}" (a JSON Schema) and an optional "description"`);
    for (const k of Object.keys(entry)) if (k != field && k != 'description' && !extra(k)) throw new PlanError(pointerTo(at, k), `not a key here (known: ${field}, description)`);
    if (entry.description !== undefined && typeof entry.description != 'string') throw new PlanError(at + '/description', 'a string');
    if (entry[field] !== undefined) checkSchema(entry[field], `${at}/${field}`, refs);
  }
}

/**
 * Checks `plan` (see `validatePlan`: a `PlanError` when it is not valid) and returns its checker. Events the plan does
 * not list are violations unless `unplannedEvents` is `"allow"`; the spec's ecommerce and semantic events, and the
 * automatic `page` properties, need no entry (when listed, their entry is checked like any other).
 */
export function compilePlan(plan: unknown): CompiledPlan {
  validatePlan(plan);
  const refs = resolver(plan);
  const events = plan.events || {};
  const planned = (e: string) => Object.prototype.hasOwnProperty.call(events, e);
  const strict = plan.unplannedEvents != 'allow';
  // The page properties the plan lists or requires, through `$ref` and the combinators too: the automatic ones among
  // them are checked, the others need no entry.
  const pageListed = new Set<string>();
  const list = (schema: unknown, seen: unknown[]): void => {
    if (!isObject(schema) || seen.includes(schema)) return;
    seen.push(schema);
    if (isObject(schema.properties)) for (const k of Object.keys(schema.properties)) pageListed.add(k);
    if (Array.isArray(schema.required)) for (const k of schema.required) pageListed.add(k);
    if (typeof schema.$ref == 'string') list(refs(schema.$ref), seen);
    for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(schema[k])) for (const sub of schema[k]) list(sub, seen);
    for (const k of ['if', 'then', 'else']) list(schema[k], seen);
  };
  list(plan.page?.properties, []);
  const check = (message: Partial<Message>): PlanViolation[] => {
    const { messageId = '', type = '', event } = message;
    let failures: SchemaFailure[] = [];
    try {
      withBudget(() => follows(message, failures));
    } catch (e) {
      if (!(e instanceof TooCostly)) throw e;
      failures = [{ pointer: '', expected: `a message the plan checks in at most ${STEP_BUDGET} steps (its schemas applied to its values), got one that costs more` }];
    }
    return failures.map((f) => ({ messageId, type, ...(event !== undefined && { event }), ...f }));
  };
  // Pushes the failures of `message` to `failures`.
  const follows = (message: Partial<Message>, failures: SchemaFailure[]) => {
    const { type = '', event } = message;
    const against = (schema: Schema | undefined, field: 'properties' | 'traits', value: unknown) =>
      schema !== undefined && validate(schema, value === undefined ? {} : value, '/' + field, refs, failures);
    if (type == 'track' && typeof event == 'string') {
      if (planned(event)) against(events[event].properties, 'properties', message.properties);
      else if (strict && !ECOMMERCE_EVENTS.includes(event) && !SEMANTIC_EVENTS.includes(event)) {
        // the planned name it may be a misspelling of: the nearest, within 2 edits
        const near = (event.length > NEAR_MAX ? [] : Object.keys(events))
          .map((e) => [distance(e, event), e] as const)
          .filter(([d]) => d <= 2)
          .sort((x, y) => x[0] - y[0])[0]?.[1];
        failures.push({ pointer: '/event', expected: `an event of the plan${near ? ` (did you mean ${shown(near)}?)` : ''}, got ${shown(event)}` });
      }
    }
    if ((type == 'identify' || type == 'group') && plan[type]) against(plan[type]!.traits, 'traits', message.traits);
    if (type == 'page' && plan.page && plan.page.properties !== undefined) {
      const properties = { ...message.properties };
      for (const k of AUTOMATIC_PAGE) if (!pageListed.has(k)) delete properties[k];
      // (as are `name` and `category`, copied from the message's own by the library)
      for (const k of ['name', 'category']) if (!pageListed.has(k) && properties[k] === (message as Record<string, unknown>)[k]) delete properties[k];
      against(plan.page.properties, 'properties', properties);
    }
  };
  return { plan, check };
}

/** One line for a violation: `track "Signed Up" (01H...): /properties/seats: expected a number, got "3"`. */
export function describeViolation(v: PlanViolation): string {
  const what = v.type == 'track' ? `track ${shown(v.event)}` : v.type;
  return `${what}${v.messageId ? ` (${v.messageId})` : ''}: ${v.pointer}: expected ${v.expected}`;
}
