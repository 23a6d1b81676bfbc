// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { compilePlan, describeViolation, PlanError } from '../../src/plan/plan';
import { validate } from '../../src/plan/schema';

const PLAN = {
  $schema: 'https://cdn.svc.example/plan.schema.json',
  events: {
    'Signed Up': {
      description: 'A visitor created an account.',
      properties: { type: 'object', required: ['plan', 'seats'], properties: { plan: { $ref: '#/$defs/Plan' }, seats: { type: 'integer', minimum: 1 } } },
    },
    'Order Completed': { properties: { type: 'object', required: ['order_id'] } },
  },
  identify: { traits: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } },
  group: { traits: { type: 'object', properties: { seats: { type: 'integer' } } } },
  page: { properties: { type: 'object', additionalProperties: false, properties: { section: { type: 'string' } } } },
  $defs: { Plan: { enum: ['free', 'pro'] } },
};
const msg = (m: object) => ({ messageId: 'm1', ...m });

describe('compilePlan', () => {
  const plan = compilePlan(PLAN);

  it('passes messages that follow the plan', () => {
    expect(plan.check(msg({ type: 'track', event: 'Signed Up', properties: { plan: 'pro', seats: 3 } }))).toEqual([]);
    expect(plan.check(msg({ type: 'identify', traits: { email: 'a@b.example' } }))).toEqual([]);
    expect(plan.check(msg({ type: 'alias', userId: 'u' }))).toEqual([]);
  });

  it('names the message, the place and what the plan expected', () => {
    expect(plan.check(msg({ type: 'track', event: 'Signed Up', properties: { plan: 'pro', seats: '3' } }))).toEqual([
      { messageId: 'm1', type: 'track', event: 'Signed Up', pointer: '/properties/seats', expected: 'an integer, got "3"' },
    ]);
    expect(plan.check(msg({ type: 'group', groupId: 'g', traits: { seats: 'x' } }))[0].pointer).toBe('/traits/seats');
  });

  it('refuses an event the plan does not list, suggesting the one it may be', () => {
    const [v] = plan.check(msg({ type: 'track', event: 'Signed up', properties: {} }));
    expect(v).toEqual({ messageId: 'm1', type: 'track', event: 'Signed up', pointer: '/event', expected: 'an event of the plan (did you mean "Signed Up"?), got "Signed up"' });
    expect(describeViolation(v)).toBe('track "Signed up" (m1): /event: expected an event of the plan (did you mean "Signed Up"?), got "Signed up"');
  });

  it('lets unplanned events through with unplannedEvents "allow"', () => {
    expect(compilePlan({ ...PLAN, unplannedEvents: 'allow' }).check(msg({ type: 'track', event: 'Other' }))).toEqual([]);
  });

  it('needs no entry for the spec ecommerce and semantic events, and checks the ones listed', () => {
    expect(plan.check(msg({ type: 'track', event: 'Product Added', properties: {} }))).toEqual([]);
    expect(plan.check(msg({ type: 'track', event: 'User Deleted', properties: {} }))).toEqual([]);
    expect(plan.check(msg({ type: 'track', event: 'Order Completed', properties: {} }))[0].pointer).toBe('/properties/order_id');
  });

  it('needs no entry for the automatic page properties', () => {
    const properties = { path: '/', url: 'http://x/', title: 't', referrer: '', search: '', section: 'home' };
    expect(plan.check(msg({ type: 'page', properties }))).toEqual([]);
    expect(plan.check(msg({ type: 'page', properties: { ...properties, extra: 1 } }))[0].pointer).toBe('/properties/extra');
  });

  it("needs no entry for the name and category the library copies into page properties (page('Shop', 'Cart'))", () => {
    const properties = { path: '/', url: 'http://x/', title: 't', referrer: '', search: '', section: 'home' };
    expect(plan.check(msg({ type: 'page', category: 'Shop', name: 'Cart', properties: { ...properties, category: 'Shop', name: 'Cart' } }))).toEqual([]);
    // one the caller set apart from the message's own is checked
    expect(plan.check(msg({ type: 'page', name: 'Cart', properties: { ...properties, name: 'Other' } }))[0].pointer).toBe('/properties/name');
  });
});

describe('validatePlan (through compilePlan)', () => {
  const refused = (plan: unknown) => {
    try {
      compilePlan(plan);
    } catch (e) {
      expect(e).toBeInstanceOf(PlanError);
      return (e as Error).message;
    }
    throw new Error('the plan was accepted');
  };

  it('refuses a plan that is not valid, naming the place', () => {
    expect(refused([])).toBe('tracking plan: (the whole file): a tracking plan is a JSON object with "events"');
    expect(refused({ event: {} })).toMatch(/^tracking plan: \/event: not a key of a tracking plan/);
    expect(refused({ events: { 'Signed Up': { properties: { type: 'numbr' } } } })).toMatch(/^tracking plan: \/events\/Signed Up\/properties\/type: one of string, number/);
    expect(refused({ events: { A: { properties: { properties: { n: { pattern: '(' } } } } } })).toMatch(/^tracking plan: \/events\/A\/properties\/properties\/n\/pattern: a regular expression/);
    expect(refused({ events: { A: { properties: { $ref: '#/$defs/Nope' } } } })).toMatch(/\/events\/A\/properties\/\$ref: a reference into the plan/);
    expect(refused({ $defs: { A: { $ref: '#/$defs/A' } } })).toMatch(/\/\$defs\/A\/\$ref: a reference that does not lead back to itself/);
    expect(refused({ events: { A: { props: {} } } })).toMatch(/\/events\/A\/props: not a key here/);
    expect(refused({ unplannedEvents: 'warn' })).toMatch(/\/unplannedEvents: "error" or "allow"/);
    expect(refused({ identify: { traits: { format: 7 } } })).toMatch(/\/identify\/traits\/format: a format name such as date-time, email, uri/);
  });

  it('takes a format it does not know as an annotation, as JSON Schema does: accepted, not checked', () => {
    const plan = compilePlan({ events: { A: { properties: { properties: { d: { type: 'string', format: 'date' }, u: { format: 'uuid' }, e: { format: 'email' } } } } } });
    expect(plan.check({ messageId: 'x', type: 'track', event: 'A', properties: { d: 'not a date', u: 'x', e: 'a@b.example' } })).toEqual([]);
    expect(plan.check({ messageId: 'x', type: 'track', event: 'A', properties: { e: 'not an email' } })[0].pointer).toBe('/properties/e');
  });

  it('takes draft-07 documents: definitions and items arrays', () => {
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', definitions: { N: { type: 'number' } }, events: { A: { properties: { properties: { n: { $ref: '#/definitions/N' }, t: { items: [{ type: 'string' }] } } } } } };
    expect(compilePlan(draft7).check({ messageId: 'x', type: 'track', event: 'A', properties: { n: 'x', t: ['a'] } })[0].pointer).toBe('/properties/n');
  });
});

describe('plan.schema.json (what editors check a plan file with)', () => {
  const read = (f: string) => JSON.parse(readFileSync(f, 'utf8'));
  const meta = read('plan.schema.json');
  // The JSON Schema meta-schema it points sub-schemas to is not ours to check here: taken as true.
  const refs = (ref: string) => (ref[0] == '#' ? ref.slice(2).split('/').reduce((n: any, k) => n?.[k], meta) : true);

  it('accepts the plans of the repository, and names what is wrong in one that is not a plan', () => {
    for (const f of ['demo/tracking-plan.json', 'e2e/site/tracking-plan.json', 'e2e/site/kit-plan.json']) expect({ f, failures: validate(meta, read(f), '', refs) }).toEqual({ f, failures: [] });
    expect(validate(meta, { event: {}, unplannedEvents: 'warn' }, '', refs).map((f) => f.pointer).sort()).toEqual(['/event', '/unplannedEvents']);
  });

  it('lists the top-level keys compilePlan takes', () => {
    expect(Object.keys(meta.properties).sort()).toEqual(['$defs', 'definitions', 'description', 'events', 'group', 'identify', 'page', 'unplannedEvents']);
    expect(() => compilePlan({ description: 'x', definitions: {}, $defs: {}, page: {}, 'x-owner': 'growth' })).not.toThrow();
  });
});

describe('what review 11 found', () => {
  it('checks the automatic page properties a page schema lists through $ref or allOf, and needs no entry for one it only requires', () => {
    const page = (properties: object) => ({ type: 'page', messageId: 'p1', name: 'Shop', properties: { path: '/admin', url: 'https://s.test/admin', title: 'T', referrer: '', search: '', name: 'Shop', ...properties } });
    const viaRef = compilePlan({ $defs: { Page: { type: 'object', properties: { path: { type: 'string', pattern: '^/shop' } } } }, page: { properties: { $ref: '#/$defs/Page' } } });
    expect(viaRef.check(page({})).map((v) => v.pointer)).toEqual(['/properties/path']);
    const viaAllOf = compilePlan({ page: { properties: { allOf: [{ properties: { path: { pattern: '^/shop' } } }] } } });
    expect(viaAllOf.check(page({})).map((v) => v.pointer)).toEqual(['/properties/path']);
    const requiredOnly = compilePlan({ page: { properties: { type: 'object', required: ['path', 'section'], properties: { section: { type: 'string' } } } } });
    expect(requiredOnly.check(page({ section: 'a' }))).toEqual([]);
  });

  it('accepts recursion through a property (a tree), and refuses keywords it does not check', () => {
    const tree = compilePlan({ $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' }, n: { type: 'number' } } } }, events: { Tree: { properties: { $ref: '#/$defs/Node' } } } });
    expect(tree.check({ type: 'track', event: 'Tree', messageId: 't', properties: { child: { child: { n: 'x' } } } }).map((v) => v.pointer)).toEqual(['/properties/child/child/n']);
    for (const kw of ['unevaluatedProperties', 'unevaluatedItems'])
      expect(() => compilePlan({ events: { E: { properties: { type: 'object', [kw]: false } } } }), kw).toThrow(new RegExp(`/${kw}: a keyword this checker checks: it does not check ${kw}`));
  });
});
