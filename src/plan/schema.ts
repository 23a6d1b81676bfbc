// The JSON Schema subset of a tracking plan (CONTRACT section 7): type, properties, patternProperties, required,
// additionalProperties, enum, const, not, items (and draft-07's tuple form, 2020-12's prefixItems), minimum/maximum and
// their exclusive forms, multipleOf, minLength/maxLength, minItems/maxItems, uniqueItems, contains (minContains,
// maxContains), minProperties/maxProperties, propertyNames, dependentRequired, pattern, format (date-time, email, uri),
// anyOf/oneOf/allOf, if/then/else and $ref into the plan's `$defs` (draft-07's `definitions` too); plan-schema.ts
// refuses the keywords it does not check. An interpreter over the schema as data: no code is generated, so it
// runs under a strict CSP (no eval, no new Function), in Node and in the browser alike.

/** A JSON Schema (an object, or `true`/`false`). */
export type Schema = boolean | SchemaObject;

/**
 * A JSON Schema object as a checked plan holds it (`checkSchema`, src/plan/plan-schema.ts, refuses any other form of
 * these keywords); any other key is the writer's own (`description`, `$comment`, `x-owner`...).
 */
export interface SchemaObject {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema;
  items?: Schema | Schema[];
  prefixItems?: Schema[];
  additionalItems?: Schema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  not?: Schema;
  uniqueItems?: boolean;
  contains?: Schema;
  minContains?: number;
  maxContains?: number;
  minProperties?: number;
  maxProperties?: number;
  propertyNames?: Schema;
  dependentRequired?: Record<string, string[]>;
  dependentSchemas?: Record<string, Schema>;
  dependencies?: Record<string, string[] | Schema>;
  if?: Schema;
  then?: Schema;
  else?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  $defs?: Record<string, Schema>;
  definitions?: Record<string, Schema>;
  [keyword: string]: unknown;
}

/** One place where a value does not satisfy its schema: a JSON pointer into the value, and what was expected. */
export interface SchemaFailure {
  pointer: string;
  expected: string;
}

/** Looks up a `$ref` (`#/$defs/Name`); undefined when it names nothing. */
export type Refs = (ref: string) => Schema | undefined;

const TYPES: Record<string, (v: unknown) => boolean> & { object(v: unknown): v is { [key: string]: unknown } } = {
  string: (v) => typeof v == 'string',
  number: (v) => typeof v == 'number' && isFinite(v),
  integer: Number.isInteger,
  boolean: (v) => typeof v == 'boolean',
  null: (v) => v === null,
  object: (v): v is { [key: string]: unknown } => !!v && typeof v == 'object' && !Array.isArray(v),
  array: Array.isArray,
};

/** The type names of JSON Schema, as this checker knows them. */
export const TYPE_NAMES = Object.keys(TYPES);

const DATE_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const FORMATS: Record<string, (v: string) => boolean> = {
  // (a real day of that month: V8's Date.parse takes February 30)
  'date-time': (v) => DATE_TIME.test(v) && new Date(Date.UTC(+v.slice(0, 4), +v.slice(5, 7) - 1, +v.slice(8, 10))).getUTCDate() == +v.slice(8, 10),
  email: (v) => /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/.test(v),
  uri: (v) => /^[a-z][a-z\d+.-]*:[^\s]*$/i.test(v),
};

/** The formats this checker knows. */
export const FORMAT_NAMES = Object.keys(FORMATS);

/** `/a~1b` for the key `a/b` (RFC 6901). */
export const pointerTo = (base: string, key: string | number) => `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** A value as a failure quotes it: JSON, cut short. */
export const shown = (v: unknown): string => {
  const text = v === undefined ? 'nothing' : JSON.stringify(v);
  return text && text.length > 40 ? text.slice(0, 37) + '...' : String(text);
};

/** Deep equality of JSON values (for `enum` and `const`). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a != 'object' || typeof b != 'object' || Array.isArray(a) != Array.isArray(b)) return false;
  const ka = Object.keys(a);
  return ka.length == Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same((a as any)[k], (b as any)[k]));
}

const a = (type: string) => (/^[aeiou]/.test(type) ? 'an ' : 'a ') + type;

/**
 * The longest string a `pattern` (or a `patternProperties` key) is tried on: a longer one fails it. With the patterns
 * plan-schema.ts refuses (nested quantifiers), this bounds what a message can cost (security-5 N3).
 */
export const PATTERN_INPUT_MAX = 4096;
// Each pattern compiled once (a plan has few: the cache is cleared past 1,000).
const compiled = new Map<string, RegExp>();
/** Whether `v` matches the plan's pattern `source` (unicode); never over `PATTERN_INPUT_MAX` characters. */
export const matches = (source: string, v: string) => {
  let re = compiled.get(source);
  if (!re) {
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(source, (re = new RegExp(source, 'u')));
  }
  return v.length <= PATTERN_INPUT_MAX && re.test(v);
};

/** The steps (schemas applied to values) one message may cost (security-5 N3); past them, `validate` throws `TooCostly`. */
export const STEP_BUDGET = 200_000;
export class TooCostly extends Error {}
let steps = Infinity;
/** `f()` with a budget of `STEP_BUDGET` steps for the `validate` calls it makes (`compilePlan`'s check of one message). */
export function withBudget<T>(f: () => T): T {
  steps = STEP_BUDGET;
  try {
    return f();
  } finally {
    steps = Infinity;
  }
}

/** A JSON value as one string, the keys of objects sorted: equal (`same`) values give the same string. */
const canonical = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(canonical).join(',')}]` : v && typeof v == 'object' ? `{${Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical((v as any)[k])).join(',')}}` : JSON.stringify(v) ?? 'undefined';

/**
 * Checks `value` against `schema`, pushing each failure (pointer, expected) to `out`; `at` is the value's pointer.
 * Returns `out` for convenience. A `$ref` that names nothing fails (a plan checked by `compilePlan` has none).
 */
export function validate(schema: Schema, value: unknown, at: string, refs: Refs, out: SchemaFailure[] = []): SchemaFailure[] {
  const fail = (expected: string, pointer = at) => void out.push({ pointer, expected });
  if (--steps < 0) throw new TooCostly();
  if (schema === true || schema == null) return out;
  if (schema === false) return fail('nothing here (the plan allows no value)'), out;
  const s = schema;
  if (typeof s.$ref == 'string') {
    const target = refs(s.$ref);
    if (target === undefined) return fail(`a value of ${s.$ref}, which the plan does not define`), out;
    validate(target, value, at, refs, out);
  }
  if (s.type !== undefined) {
    const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => TYPES[t]?.(value))) return fail(types.map(a).join(' or ') + ', got ' + shown(value)), out;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e: unknown) => same(e, value))) fail(`one of ${s.enum.map(shown).join(', ')}, got ${shown(value)}`);
  if ('const' in s && !same(s.const, value)) fail(`${shown(s.const)}, got ${shown(value)}`);
  if (typeof value == 'number') numberKeywords(s, value, fail);
  if (typeof value == 'string') stringKeywords(s, value, fail);
  if (TYPES.object(value)) objectKeywords(s, value, at, refs, out);
  if (Array.isArray(value)) arrayKeywords(s, value, at, refs, out);
  combinators(s, value, at, refs, out);
  return out;
}

function numberKeywords(s: SchemaObject, v: number, fail: (expected: string) => void) {
  const got = ', got ' + v;
  if (typeof s.minimum == 'number' && v < s.minimum) fail(`a number of at least ${s.minimum}` + got);
  if (typeof s.maximum == 'number' && v > s.maximum) fail(`a number of at most ${s.maximum}` + got);
  if (typeof s.exclusiveMinimum == 'number' && v <= s.exclusiveMinimum) fail(`a number over ${s.exclusiveMinimum}` + got);
  if (typeof s.exclusiveMaximum == 'number' && v >= s.exclusiveMaximum) fail(`a number under ${s.exclusiveMaximum}` + got);
  // (within the rounding of binary floating point, relative to the quotient: 19.99 / 0.01 is 1998.9999999999998)
  const step = s.multipleOf;
  const q = typeof step == 'number' && step > 0 ? v / step : 0;
  if (Math.abs(q - Math.round(q)) > 8 * Number.EPSILON * Math.max(1, Math.abs(q))) fail(`a multiple of ${step}` + got);
}

function stringKeywords(s: SchemaObject, v: string, fail: (expected: string) => void) {
  // Length in code points, as JSON Schema counts it.
  const length = [...v].length;
  const got = ', got ' + shown(v);
  if (typeof s.minLength == 'number' && length < s.minLength) fail(`a string of at least ${s.minLength} character(s)` + got);
  if (typeof s.maxLength == 'number' && length > s.maxLength) fail(`a string of at most ${s.maxLength} character(s)` + got);
  if (typeof s.pattern == 'string' && !matches(s.pattern, v)) fail(`a string matching /${s.pattern}/${v.length > PATTERN_INPUT_MAX ? ` of at most ${PATTERN_INPUT_MAX} characters` : ''}` + got);
  if (typeof s.format == 'string' && FORMATS[s.format] && !FORMATS[s.format](v)) fail(`${a(s.format)}` + got);
}

function objectKeywords(s: SchemaObject, v: Record<string, unknown>, at: string, refs: Refs, out: SchemaFailure[]) {
  const properties: Record<string, Schema> = TYPES.object(s.properties) ? s.properties : {};
  const has = (k: string) => Object.prototype.hasOwnProperty.call(v, k);
  const required = (k: string, why: string) => !has(k) && out.push({ pointer: pointerTo(at, k), expected: `a value (required by the plan${why}), got nothing` });
  if (Array.isArray(s.required)) for (const k of s.required) required(k, '');
  // (draft-07's `dependencies` holds both forms: names that are then required, or a schema the object then follows)
  const dependent = { ...(TYPES.object(s.dependencies) ? s.dependencies : {}), ...(TYPES.object(s.dependentSchemas) ? s.dependentSchemas : {}), ...(TYPES.object(s.dependentRequired) ? s.dependentRequired : {}) };
  for (const [k, then] of Object.entries(dependent))
    if (has(k)) Array.isArray(then) ? then.forEach((n: string) => required(n, ` with ${shown(k)}`)) : validate(then as Schema, v, at, refs, out);
  const count = Object.keys(v).length;
  if (typeof s.minProperties == 'number' && count < s.minProperties) out.push({ pointer: at, expected: `at least ${s.minProperties} propert(ies), got ${count}` });
  if (typeof s.maxProperties == 'number' && count > s.maxProperties) out.push({ pointer: at, expected: `at most ${s.maxProperties} propert(ies), got ${count}` });
  if (s.propertyNames !== undefined)
    for (const k of Object.keys(v)) for (const f of validate(s.propertyNames, k, pointerTo(at, k), refs, [])) out.push({ ...f, expected: 'a property name of ' + f.expected });
  const patterns = Object.entries<Schema>(TYPES.object(s.patternProperties) ? s.patternProperties : {});
  for (const k of Object.keys(v)) {
    const where = pointerTo(at, k);
    const matched = patterns.filter(([re]) => matches(re, k));
    for (const [, schema] of matched) validate(schema, v[k], where, refs, out);
    if (Object.prototype.hasOwnProperty.call(properties, k)) validate(properties[k], v[k], where, refs, out);
    else if (matched.length) continue;
    else if (s.additionalProperties === false) {
      const known = Object.keys(properties);
      out.push({ pointer: where, expected: `no such property (the plan lists ${known.length ? known.map(shown).join(', ') : 'none'})` });
    } else if (s.additionalProperties !== undefined) validate(s.additionalProperties, v[k], where, refs, out);
  }
}

function arrayKeywords(s: SchemaObject, v: unknown[], at: string, refs: Refs, out: SchemaFailure[]) {
  const got = ', got ' + v.length;
  if (typeof s.minItems == 'number' && v.length < s.minItems) out.push({ pointer: at, expected: `at least ${s.minItems} item(s)` + got });
  if (typeof s.maxItems == 'number' && v.length > s.maxItems) out.push({ pointer: at, expected: `at most ${s.maxItems} item(s)` + got });
  // 2020-12: prefixItems then items; draft-07: items as an array, then additionalItems.
  const tuple: Schema[] | undefined = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined;
  const rest: Schema | undefined = tuple && Array.isArray(s.items) ? s.additionalItems : Array.isArray(s.items) ? undefined : s.items;
  v.forEach((item, i) => {
    const schema = tuple && i < tuple.length ? tuple[i] : rest;
    if (schema !== undefined) validate(schema, item, pointerTo(at, i), refs, out);
  });
  if (s.uniqueItems === true) {
    // (one pass: each item's canonical form in a set, not each pair compared)
    const seen = new Set<string>();
    const i = v.findIndex((item) => seen.size == seen.add(canonical(item)).size);
    if (i >= 0) out.push({ pointer: pointerTo(at, i), expected: `items that are all different (the plan's uniqueItems), got ${shown(v[i])} again` });
  }
  if (s.contains !== undefined) {
    const matches = v.filter((item) => !validate(s.contains!, item, at, refs, []).length).length;
    const min = typeof s.minContains == 'number' ? s.minContains : 1;
    if (matches < min || (typeof s.maxContains == 'number' && matches > s.maxContains))
      out.push({ pointer: at, expected: `${matches < min ? 'at least ' + min : 'at most ' + s.maxContains} item(s) matching the plan's "contains", got ${matches}` });
  }
}

function combinators(s: SchemaObject, v: unknown, at: string, refs: Refs, out: SchemaFailure[]) {
  if (s.not !== undefined && !validate(s.not, v, at, refs, []).length) out.push({ pointer: at, expected: `no value matching the plan's "not", got ${shown(v)}` });
  if (Array.isArray(s.allOf)) for (const sub of s.allOf) validate(sub, v, at, refs, out);
  if (s.if !== undefined) {
    const branch = validate(s.if, v, at, refs, []).length ? s.else : s.then;
    if (branch !== undefined) validate(branch, v, at, refs, out);
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(s[key])) continue;
    const results = s[key].map((sub: Schema) => validate(sub, v, at, refs, []));
    const passed = results.filter((r: SchemaFailure[]) => !r.length).length;
    if (key == 'anyOf' ? !passed : passed != 1) {
      // One alternative: its own failures say more. Several: what each expected.
      if (results.length == 1) out.push(...results[0]);
      else out.push({ pointer: at, expected: (key == 'oneOf' && passed ? 'exactly one of: ' : 'one of: ') + results.map((r: SchemaFailure[]) => (r[0] ? r[0].expected.replace(/, got .*$/, '') : 'a match')).join('; ') + ', got ' + shown(v) });
    }
  }
}
