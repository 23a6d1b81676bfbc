// @vitest-environment node
// What checking a plan may cost (security-5 N3): any website can post to the collector's /v1/*, which checks each
// message against the --plan. Each bound with a plan or a message that would cost without it.
import { describe, expect, it } from 'vitest';
import { compilePlan, PlanError } from '../../src/plan/plan';
import { catastrophic } from '../../src/plan/plan-schema';
import { PATTERN_INPUT_MAX, STEP_BUDGET } from '../../src/plan/schema';

const track = (event: string, properties: unknown) => ({ type: 'track' as const, messageId: 'm', event, properties: properties as Record<string, never> });
const timed = <T>(f: () => T): [T, number] => {
  const t = performance.now();
  const r = f();
  return [r, performance.now() - t];
};

describe('the plan checker: bounded costs', () => {
  it('refuses a $ref loop through dependentSchemas or dependencies (it recursed until a RangeError on every message)', () => {
    for (const k of ['dependentSchemas', 'dependencies'])
      expect(() => compilePlan({ $defs: { A: { [k]: { x: { $ref: '#/$defs/A' } } } }, events: { E: { properties: { $ref: '#/$defs/A' } } } })).toThrow(/does not lead back to itself/);
  });

  it('loads a 2^n fan-out of $ref in linear time, and stops a message past its step budget with a violation', () => {
    const $defs: Record<string, unknown> = { D40: { type: 'object' } };
    for (let i = 0; i < 40; i++) $defs['D' + i] = { allOf: [{ $ref: `#/$defs/D${i + 1}` }, { $ref: `#/$defs/D${i + 1}` }] };
    const [plan, load] = timed(() => compilePlan({ $defs, events: { E: { properties: { $ref: '#/$defs/D0' } } } }));
    expect(load).toBeLessThan(500);
    const [violations, check] = timed(() => plan.check(track('E', {})));
    expect(check).toBeLessThan(2000);
    expect(violations).toEqual([expect.objectContaining({ pointer: '', expected: expect.stringContaining(`at most ${STEP_BUDGET} steps`) })]);
    // an ordinary message of an ordinary plan is far within the budget
    const small = compilePlan({ $defs: { P: { type: 'string', enum: ['a', 'b'] } }, events: { E: { properties: { type: 'object', properties: { p: { $ref: '#/$defs/P' }, l: { type: 'array', items: { $ref: '#/$defs/P' } } } } } } });
    expect(small.check(track('E', { p: 'a', l: Array(5000).fill('b') }))).toEqual([]);
  });

  it('compiles each pattern once, not once per value', () => {
    const plan = compilePlan({ events: { E: { properties: { type: 'object', patternProperties: { '^k\\d+$': { type: 'string', pattern: '^v' } } } } } });
    const Native = globalThis.RegExp;
    let made = 0;
    globalThis.RegExp = new Proxy(Native, { construct: (t, args) => (made++, new t(...(args as [string, string]))) });
    try {
      const properties = Object.fromEntries(Array.from({ length: 500 }, (_, i) => ['k' + i, 'v' + i]));
      for (let i = 0; i < 20; i++) expect(plan.check(track('E', properties))).toEqual([]);
    } finally {
      globalThis.RegExp = Native;
    }
    expect(made).toBeLessThanOrEqual(2);
  });

  it('refuses patterns whose matching can take exponential time (a repeated group that repeats or alternates inside), in pattern and patternProperties', () => {
    for (const p of ['^(a+)+$', '(a|a)*b', '^(\\w+\\s?)*$', '^(?:(a*))*x', '(.*,){2,}x']) {
      expect(catastrophic(p), p).toBeDefined();
      expect(() => compilePlan({ events: { E: { properties: { type: 'string', pattern: p } } } }), p).toThrow(PlanError);
      expect(() => compilePlan({ events: { E: { properties: { patternProperties: { [p]: true } } } } }), p).toThrow(/exponential time/);
    }
    for (const p of ['^[a-z]+$', '^(?:ab)*$', '^\\d{4}-\\d{2}$', '^(a+){1,3}$', '^(foo|bar)$', '\\(a+\\)+', '^[(+]*$', '^(?<y>\\d+)-x$']) expect(catastrophic(p), p).toBeUndefined();
  });

  it('tries a pattern on at most PATTERN_INPUT_MAX characters: a longer string fails it, saying why', () => {
    const plan = compilePlan({ events: { E: { properties: { properties: { s: { type: 'string', pattern: '^a*$' } } } } } });
    expect(plan.check(track('E', { s: 'a'.repeat(PATTERN_INPUT_MAX) }))).toEqual([]);
    expect(plan.check(track('E', { s: 'a'.repeat(PATTERN_INPUT_MAX + 1) }))[0].expected).toContain(`of at most ${PATTERN_INPUT_MAX} characters`);
  });

  it('looks for a "did you mean" only among names of about the same length, and not for a long name', () => {
    const events = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`Planned Event Number ${i} `.repeat(4), {}]));
    const plan = compilePlan({ events });
    const [violations, took] = timed(() => plan.check(track('x'.repeat(31_000), {})));
    expect(violations[0].expected).not.toContain('did you mean');
    expect(took).toBeLessThan(200);
    expect(plan.check(track('Planned Event Number 7 '.repeat(4).replace('7', '8x'), {}))[0].expected).toContain('did you mean');
  });

  it('tells repeated items of a long array in one pass (uniqueItems), objects whatever their key order', () => {
    const plan = compilePlan({ events: { E: { properties: { properties: { l: { type: 'array', uniqueItems: true } } } } } });
    const numbers = Array.from({ length: 16_000 }, (_, i) => i);
    const [ok, took] = timed(() => plan.check(track('E', { l: numbers })));
    expect(ok).toEqual([]);
    expect(took).toBeLessThan(300);
    expect(plan.check(track('E', { l: [...numbers, 15_999] }))[0].pointer).toBe('/properties/l/16000');
    expect(plan.check(track('E', { l: [{ a: 1, b: [2] }, { b: [2], a: 1 }] }))[0].pointer).toBe('/properties/l/1');
    expect(plan.check(track('E', { l: [1, '1', [1], { 1: 1 }, null, true, 'true'] }))).toEqual([]);
  });
});

describe('the plan checker: frozen keywords', () => {
  it('refuses a keyword it does not check, with a clear error; annotations and x- keys pass', () => {
    for (const kw of ['unevaluatedProperties', '$id', '$anchor', 'dependentRequire', 'contentMediaType'])
      expect(() => compilePlan({ events: { E: { properties: { [kw]: 'x' } } } }), kw).toThrow(`/events/E/properties/${kw}: a keyword this checker checks: it does not check ${kw}`);
    expect(() => compilePlan({ events: { E: { properties: { title: 't', description: 'd', $comment: 'c', examples: [{}], default: {}, deprecated: false, 'x-owner': 'growth' } } } })).not.toThrow();
  });
});
