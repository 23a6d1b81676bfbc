// Checks the schemas of a plan before any message is checked against them: a misspelt type, a pattern that is no
// regular expression or a `$ref` to nothing is refused with the place (a JSON pointer into the plan file), instead of
// passing or failing every message in silence.
import { TYPE_NAMES, FORMAT_NAMES, pointerTo, shown, type Refs } from './schema';

/** A plan that is not valid: `pointer` names the place in the plan file, the message says what is expected there. */
export class PlanError extends Error {
  constructor(
    readonly pointer: string,
    expected: string,
  ) {
    super(`tracking plan: ${pointer || '(the whole file)'}: ${expected}`);
    this.name = 'PlanError';
  }
}

const isObject = (v: unknown): v is Record<string, any> => !!v && typeof v == 'object' && !Array.isArray(v);
const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains'];
const NUMBERS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
const SCHEMAS = ['additionalProperties', 'additionalItems', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'];
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
// The keywords this checker checks, and the annotations it lets be: it is frozen there (security-5 N3). A plan with any
// other keyword (`unevaluatedProperties`, `$dynamicRef`, `$id`...) is refused, rather than every message passing it
// in silence; a writer's own keys start with `x-`.
const KEYWORDS = [
  ...COUNTS,
  ...NUMBERS,
  ...SCHEMAS,
  ...LISTS,
  ...'$ref type enum const properties patternProperties required items pattern format uniqueItems dependentRequired dependentSchemas dependencies $defs definitions title description $comment examples default deprecated readOnly writeOnly $schema'.split(' '),
];

/**
 * A pattern whose matching can take exponential time (ReDoS): a group repeated without bound (`*`, `+`, `{n,}`) that
 * holds a quantifier or an alternation of its own (`(a+)+`, `(a|a)*`, `(\w+\s?)*`). Undefined when it has none.
 */
export function catastrophic(source: string): string | undefined {
  // per open group: where it starts, and whether it holds a quantifier or an alternation
  const open: [number, boolean][] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c == '\\') i++;
    else if (c == '[') while (i < source.length && source[++i] != ']') source[i] == '\\' && i++;
    else if (c == '(') {
      open.push([i, false]);
      // (a group's own `?:`, `?=`, `?!`, `?<=`, `?<!`, `?<name>` is no quantifier)
      const modifier = /^\?(<[=!]|<[^>]*>|[:=!])?/.exec(source.slice(i + 1));
      if (modifier) i += modifier[0].length;
    }
    else if (c == ')') {
      const [start, inner] = open.pop() || [0, false];
      const repeated = /^(\*|\+|\{\d*,\d*\})/.exec(source.slice(i + 1));
      if (inner && repeated && !/^\{\d*,\d{1,2}\}/.test(repeated[0])) return source.slice(start, i + 1 + repeated[0].length);
      if (inner || repeated || /^[?{]/.test(source[i + 1] || '')) open.forEach((g) => (g[1] = true));
    } else if ('*+?{|'.includes(c) && open.length) open.forEach((g) => (g[1] = true));
  }
}

// The references known to lead to no loop (`sameValue`), for each plan (its `refs`): each is followed once.
const safe = new WeakMap<Refs, Set<string>>();

/**
 * Follows what applies a schema to the same value (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
 * `dependentSchemas`, `dependencies`): a reference met again on that path, with no property or item between, would
 * never end. A reference followed to its end once is not followed again (no 2^n fan-out at load).
 */
function sameValue(schema: unknown, at: string, refs: Refs, seen: string[]): void {
  if (!isObject(schema)) return;
  const s = schema;
  const done = safe.get(refs) || (safe.set(refs, new Set()), safe.get(refs)!);
  if (typeof s.$ref == 'string' && !done.has(s.$ref)) {
    if (seen.includes(s.$ref)) throw new PlanError(pointerTo(at, '$ref'), `a reference that does not lead back to itself without a property or an item between (${[...seen, s.$ref].join(' -> ')})`);
    sameValue(refs(s.$ref), at, refs, [...seen, s.$ref]);
    done.add(s.$ref);
  }
  for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) for (const sub of s[k]) sameValue(sub, at, refs, seen);
  for (const k of ['not', 'if', 'then', 'else']) sameValue(s[k], at, refs, seen);
  for (const k of ['dependentSchemas', 'dependencies']) if (isObject(s[k])) for (const sub of Object.values(s[k])) sameValue(sub, at, refs, seen);
}

/** Throws a `PlanError` at `at` for a pattern that is no regular expression, or one that can take exponential time. */
function checkPattern(source: unknown, at: string, what: string) {
  try {
    if (typeof source != 'string') throw 0;
    new RegExp(source, 'u');
  } catch {
    throw new PlanError(at, `${what} (ECMA-262, unicode), got ${shown(source)}`);
  }
  const bad = catastrophic(source);
  if (bad) throw new PlanError(at, `${what} without a repeated group that repeats or alternates inside (${bad}: its matching can take exponential time; write it without the nesting)`);
}

/** Throws a `PlanError` at the first keyword of `schema` (at `at` in the plan) that is not well formed. */
export function checkSchema(schema: unknown, at: string, refs: Refs): void {
  if (typeof schema == 'boolean') return;
  const fail = (key: string, expected: string) => {
    throw new PlanError(key ? pointerTo(at, key) : at, expected);
  };
  if (!isObject(schema)) return fail('', `a JSON Schema (an object, or true/false), got ${shown(schema)}`);
  const s = schema;
  if (s.$ref !== undefined) {
    const target = typeof s.$ref == 'string' ? refs(s.$ref) : undefined;
    if (target === undefined) fail('$ref', `a reference into the plan such as "#/$defs/Name", got ${shown(s.$ref)}, which names nothing`);
    sameValue(s, at, refs, []);
  }
  for (const k of Object.keys(s))
    if (!KEYWORDS.includes(k) && !k.startsWith('x-')) fail(k, `a keyword this checker checks: it does not check ${k} (write the rule with properties, additionalProperties, items...; a key of your own starts with x-)`);
  if (s.uniqueItems !== undefined && typeof s.uniqueItems != 'boolean') fail('uniqueItems', `true or false, got ${shown(s.uniqueItems)}`);
  const names = (v: unknown) => Array.isArray(v) && v.every((k) => typeof k == 'string');
  if (s.dependentRequired !== undefined && !(isObject(s.dependentRequired) && Object.values(s.dependentRequired).every(names)))
    fail('dependentRequired', 'an object of property names to arrays of property names');
  for (const k of ['dependentSchemas', 'dependencies']) {
    if (s[k] === undefined) continue;
    if (!isObject(s[k])) fail(k, 'an object of property names to schemas' + (k == 'dependencies' ? ' or arrays of property names' : ''));
    for (const [name, sub] of Object.entries(s[k])) if (!(k == 'dependencies' && names(sub))) checkSchema(sub, pointerTo(pointerTo(at, k), name), refs);
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const bad = types.find((t: unknown) => !TYPE_NAMES.includes(t as string));
    if (bad !== undefined || !types.length) fail('type', `one of ${TYPE_NAMES.join(', ')} (or an array of them), got ${shown(bad ?? s.type)}`);
  }
  if (s.properties !== undefined) {
    if (!isObject(s.properties)) fail('properties', 'an object of property names to schemas');
    for (const [k, sub] of Object.entries(s.properties)) checkSchema(sub, pointerTo(pointerTo(at, 'properties'), k), refs);
  }
  if (s.patternProperties !== undefined) {
    if (!isObject(s.patternProperties)) fail('patternProperties', 'an object of regular expressions to schemas');
    for (const [re, sub] of Object.entries(s.patternProperties)) {
      const at2 = pointerTo(pointerTo(at, 'patternProperties'), re);
      checkPattern(re, at2, 'a key that is a regular expression');
      checkSchema(sub, at2, refs);
    }
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((k: unknown) => typeof k == 'string')))
    fail('required', 'an array of property names');
  if (s.enum !== undefined && !(Array.isArray(s.enum) && s.enum.length)) fail('enum', 'a non-empty array of values');
  for (const k of COUNTS) if (s[k] !== undefined && !(Number.isInteger(s[k]) && s[k] >= 0)) fail(k, `a whole number, 0 or more, got ${shown(s[k])}`);
  for (const k of NUMBERS) if (s[k] !== undefined && typeof s[k] != 'number') fail(k, `a number, got ${shown(s[k])}`);
  if (s.pattern !== undefined) checkPattern(s.pattern, pointerTo(at, 'pattern'), 'a regular expression');
  // (a format this checker does not know is an annotation, as JSON Schema has it: accepted, not checked)
  if (s.format !== undefined && typeof s.format != 'string') fail('format', `a format name such as ${FORMAT_NAMES.join(', ')}, got ${shown(s.format)}`);
  for (const k of SCHEMAS) if (s[k] !== undefined) checkSchema(s[k], pointerTo(at, k), refs);
  if (s.items !== undefined) {
    if (Array.isArray(s.items)) s.items.forEach((sub: unknown, i: number) => checkSchema(sub, pointerTo(pointerTo(at, 'items'), i), refs));
    else checkSchema(s.items, pointerTo(at, 'items'), refs);
  }
  for (const k of LISTS) {
    if (s[k] === undefined) continue;
    if (!Array.isArray(s[k]) || !s[k].length) fail(k, 'a non-empty array of schemas');
    s[k].forEach((sub: unknown, i: number) => checkSchema(sub, pointerTo(pointerTo(at, k), i), refs));
  }
  for (const k of ['$defs', 'definitions']) {
    if (s[k] === undefined) continue;
    if (!isObject(s[k])) fail(k, 'an object of named schemas');
    for (const [name, sub] of Object.entries(s[k])) checkSchema(sub, pointerTo(pointerTo(at, k), name), refs);
  }
}
