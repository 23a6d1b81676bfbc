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
// Assertions of JSON Schema (2020-12, draft-07) this checker does not make: a plan that uses one is refused, rather
// than every message passing it in silence.
const UNCHECKED = ['unevaluatedProperties', 'unevaluatedItems', '$dynamicRef', '$recursiveRef'];

/**
 * Follows what applies a schema to the same value (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`): a
 * reference met again on that path, with no property or item between, would never end.
 */
function sameValue(schema: unknown, at: string, refs: Refs, seen: string[]): void {
  if (!isObject(schema)) return;
  const s = schema;
  if (typeof s.$ref == 'string') {
    if (seen.includes(s.$ref)) throw new PlanError(pointerTo(at, '$ref'), `a reference that does not lead back to itself without a property or an item between (${[...seen, s.$ref].join(' -> ')})`);
    sameValue(refs(s.$ref), at, refs, [...seen, s.$ref]);
  }
  for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) for (const sub of s[k]) sameValue(sub, at, refs, seen);
  for (const k of ['not', 'if', 'then', 'else']) sameValue(s[k], at, refs, seen);
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
  for (const k of UNCHECKED)
    if (s[k] !== undefined) fail(k, `a keyword this checker checks: it does not check ${k} (write the rule with properties, additionalProperties, items...)`);
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
      try {
        new RegExp(re, 'u');
      } catch {
        throw new PlanError(at2, 'a key that is a regular expression (ECMA-262, unicode)');
      }
      checkSchema(sub, at2, refs);
    }
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((k: unknown) => typeof k == 'string')))
    fail('required', 'an array of property names');
  if (s.enum !== undefined && !(Array.isArray(s.enum) && s.enum.length)) fail('enum', 'a non-empty array of values');
  for (const k of COUNTS) if (s[k] !== undefined && !(Number.isInteger(s[k]) && s[k] >= 0)) fail(k, `a whole number, 0 or more, got ${shown(s[k])}`);
  for (const k of NUMBERS) if (s[k] !== undefined && typeof s[k] != 'number') fail(k, `a number, got ${shown(s[k])}`);
  if (s.pattern !== undefined) {
    try {
      new RegExp(s.pattern, 'u');
      if (typeof s.pattern != 'string') throw 0;
    } catch {
      fail('pattern', `a regular expression (ECMA-262, unicode), got ${shown(s.pattern)}`);
    }
  }
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
