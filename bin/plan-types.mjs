// `svc-analytics plan types`: a declaration file that types `track`, `identify` and `group` by a tracking plan
// (CONTRACT section 7). It fills the global interface `SvcAnalyticsTrackingPlan`, which the package's types read
// (empty by default: without the file, typing stays as it is), so one file serves `svc-analytics`,
// `svc-analytics/core` and `window.analytics` alike. The plan's descriptions become JSDoc.

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const key = (k) => (IDENTIFIER.test(k) ? k : JSON.stringify(k));
const doc = (text, indent) => (typeof text === 'string' && text ? `${indent}/** ${text.replace(/\*\//g, '*\\/').replace(/\n/g, `\n${indent} * `)} */\n` : '');
const PRIMITIVES = { string: 'string', number: 'number', integer: 'number', boolean: 'boolean', null: 'null' };

/** The TypeScript type of a JSON Schema, `$ref`s into the plan resolved (a reference that recurses is `unknown`). */
function typeOf(schema, ctx, indent, seen = []) {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isObject(schema)) return 'unknown';
  const parts = [];
  if (typeof schema.$ref === 'string') {
    if (seen.includes(schema.$ref)) return 'unknown';
    parts.push(typeOf(ctx.resolve(schema.$ref), ctx, indent, [...seen, schema.$ref]));
  }
  if (Array.isArray(schema.enum)) parts.push(schema.enum.map((v) => JSON.stringify(v)).join(' | '));
  else if ('const' in schema) parts.push(JSON.stringify(schema.const));
  else if (schema.type !== undefined || schema.properties || schema.items) {
    const types = schema.type === undefined ? [schema.properties ? 'object' : 'array'] : [].concat(schema.type);
    parts.push(types.map((t) => (t === 'object' ? objectType(schema, ctx, indent, seen) : t === 'array' ? arrayType(schema, ctx, indent, seen) : PRIMITIVES[t] || 'unknown')).join(' | '));
  }
  for (const [k, join] of [['anyOf', ' | '], ['oneOf', ' | '], ['allOf', ' & ']]) {
    if (Array.isArray(schema[k])) parts.push(`(${schema[k].map((s) => typeOf(s, ctx, indent, seen)).join(join)})`);
  }
  return parts.length ? parts.map((p) => (parts.length > 1 && p.includes('|') ? `(${p})` : p)).join(' & ') : 'unknown';
}

function objectType(schema, ctx, indent, seen) {
  const inner = indent + '  ';
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const lines = Object.entries(properties).map(
    ([k, s]) => `${doc(isObject(s) && s.description, inner)}${inner}${key(k)}${required.includes(k) ? '' : '?'}: ${typeOf(s, ctx, inner, seen)};\n`,
  );
  // Required names the schema does not describe: present, of any type.
  for (const k of required) if (!(k in properties)) lines.push(`${inner}${key(k)}: unknown;\n`);
  // (names its patternProperties allow are open too: an index signature cannot say which)
  if (schema.additionalProperties !== false || isObject(schema.patternProperties)) lines.push(`${inner}[key: string]: unknown;\n`);
  // (a closed object with no properties: `{}` would take anything, a string included)
  return lines.length ? `{\n${lines.join('')}${indent}}` : '{ [key: string]: never }';
}

function arrayType(schema, ctx, indent, seen) {
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : null;
  // (a tuple's items are required only up to minItems, as the checker has it)
  const min = Number.isInteger(schema.minItems) ? schema.minItems : 0;
  if (tuple) return `[${tuple.map((s, i) => { const t = typeOf(s, ctx, indent, seen); return i < min ? t : /^[\w.$]+$/.test(t) ? `${t}?` : `(${t})?`; }).join(', ')}, ...unknown[]]`;
  const item = typeOf(schema.items, ctx, indent, seen);
  // (anything but a name is wrapped: `[]` after `{ ... } & (...)` or `a | b` binds to its last part only)
  return /^[\w.$]+$/.test(item) ? `${item}[]` : `(${item})[]`;
}

/** Looks up `#/...` pointers in the plan. */
const resolver = (plan) => (ref) =>
  ref
    .slice(1)
    .split('/')
    .slice(1)
    .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, k) => (isObject(node) ? node[k] : undefined), plan);

/**
 * The declaration file's text for a valid plan. `source` names the plan in the header; `specEvents` are the spec's
 * ecommerce and semantic event names, which need no entry (they stay open unless the plan lists them).
 */
export function planTypes(plan, { source = 'tracking-plan.json', specEvents = [] } = {}) {
  const ctx = { resolve: resolver(plan) };
  const events = isObject(plan.events) ? plan.events : {};
  const lines = [];
  for (const [name, entry] of Object.entries(events)) {
    const schema = isObject(entry) && entry.properties !== undefined ? entry.properties : { type: 'object' };
    lines.push(`${doc(entry && entry.description, '    ')}    ${JSON.stringify(name)}: ${typeOf(schema, ctx, '    ')};\n`);
  }
  for (const name of specEvents) if (!(name in events)) lines.push(`    ${JSON.stringify(name)}: { [key: string]: unknown };\n`);
  const section = (name, field) =>
    isObject(plan[name]) && plan[name][field] !== undefined ? `${doc(plan[name].description, '  ')}  ${name}: ${typeOf(plan[name][field], ctx, '  ')};\n` : '';
  return (
    `// Generated by \`svc-analytics plan types\` from ${source}: do not edit; run it again when the plan changes.\n` +
    '// Types analytics.track, identify and group (svc-analytics, svc-analytics/core, window.analytics) by the plan.\n' +
    'interface SvcAnalyticsTrackingPlan {\n' +
    `  events: {\n${lines.join('')}  };\n` +
    `  unplannedEvents: ${JSON.stringify(plan.unplannedEvents === 'allow' ? 'allow' : 'error')};\n` +
    section('identify', 'traits') +
    section('group', 'traits') +
    '}\n'
  );
}
