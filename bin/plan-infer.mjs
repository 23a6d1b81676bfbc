// `svc-analytics plan infer`: a tracking plan that the given messages satisfy, for a site to start from (CONTRACT
// section 7): each event seen, its properties' types, `required` for those present every time.

/** Where editors find the plan's own schema once the package is installed. */
export const PLAN_SCHEMA_REF = './node_modules/svc-analytics/plan.schema.json';
const AUTOMATIC_PAGE = ['path', 'referrer', 'search', 'title', 'url'];

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** The schema of the values seen at one place: their types (integer joins number), and the items of arrays. */
function schemaOf(values) {
  let types = [...new Set(values.map(typeOf))];
  if (types.includes('number')) types = types.filter((t) => t !== 'integer');
  const schema = { type: types.length === 1 ? types[0] : types.sort() };
  if (types.includes('object')) Object.assign(schema, objectSchema(values.filter((v) => typeOf(v) === 'object'), false));
  const items = values.filter(Array.isArray).flat();
  if (items.length) schema.items = schemaOf(items);
  return schema;
}

/** `{ type: 'object', properties, required }` of objects seen: `required` lists the keys present in every one. */
function objectSchema(objects, withType = true) {
  const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))].sort();
  const properties = Object.fromEntries(keys.map((k) => [k, schemaOf(objects.filter((o) => Object.hasOwn(o, k)).map((o) => o[k]))]));
  const required = keys.filter((k) => objects.every((o) => Object.hasOwn(o, k)));
  return { ...(withType && { type: 'object' }), properties, ...(required.length && { required }) };
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A plan (CONTRACT section 7) that `messages` satisfy. */
export function inferPlan(messages) {
  const byEvent = new Map();
  const of = (type) => messages.filter((m) => m.type === type);
  for (const m of of('track')) {
    if (typeof m.event !== 'string') continue;
    if (!byEvent.has(m.event)) byEvent.set(m.event, []);
    byEvent.get(m.event).push(isObject(m.properties) ? m.properties : {});
  }
  const plan = { $schema: PLAN_SCHEMA_REF, unplannedEvents: 'error', events: {} };
  for (const [event, list] of [...byEvent].sort(([a], [b]) => a.localeCompare(b))) {
    plan.events[event] = { description: `Seen ${list.length} time(s).`, properties: objectSchema(list) };
  }
  for (const type of ['identify', 'group']) {
    const traits = of(type).map((m) => (isObject(m.traits) ? m.traits : {}));
    if (traits.some((t) => Object.keys(t).length)) plan[type] = { traits: objectSchema(traits) };
  }
  const pages = of('page').map((m) => Object.fromEntries(Object.entries(isObject(m.properties) ? m.properties : {}).filter(([k]) => !AUTOMATIC_PAGE.includes(k))));
  if (pages.some((p) => Object.keys(p).length)) plan.page = { properties: objectSchema(pages) };
  return plan;
}
