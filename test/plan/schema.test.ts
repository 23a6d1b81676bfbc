// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { validate, type Schema } from '../../src/plan/schema';

const defs: Record<string, Schema> = { Plan: { enum: ['free', 'pro'] } };
const refs = (ref: string) => defs[ref.replace('#/$defs/', '')];
const check = (schema: Schema, value: unknown) => validate(schema, value, '/properties', refs);

describe('validate', () => {
  it('accepts a value that satisfies every keyword', () => {
    const schema = {
      type: 'object',
      required: ['seats', 'plan'],
      additionalProperties: false,
      properties: {
        seats: { type: 'integer', minimum: 1, maximum: 500 },
        plan: { $ref: '#/$defs/Plan' },
        email: { type: 'string', format: 'email', maxLength: 80 },
        at: { type: 'string', format: 'date-time' },
        site: { type: 'string', format: 'uri' },
        code: { type: 'string', pattern: '^[A-Z]{3}$', minLength: 3 },
        tags: { type: 'array', items: { type: 'string' } },
        kind: { const: 'web' },
        note: { type: ['string', 'null'] },
      },
    };
    const value = { seats: 3, plan: 'pro', email: 'a@b.example', at: '2026-11-26T12:00:00.000Z', site: 'https://x.example/a', code: 'ABC', tags: ['a'], kind: 'web', note: null };
    expect(check(schema, value)).toEqual([]);
  });

  it('names the place and what was expected for each failure', () => {
    const schema = { type: 'object', required: ['seats'], properties: { seats: { type: 'integer' }, plan: { $ref: '#/$defs/Plan' } } };
    expect(check(schema, { plan: 'gold' })).toEqual([
      { pointer: '/properties/seats', expected: 'a value (required by the plan), got nothing' },
      { pointer: '/properties/plan', expected: 'one of "free", "pro", got "gold"' },
    ]);
    expect(check(schema, { seats: '3' })).toEqual([{ pointer: '/properties/seats', expected: 'an integer, got "3"' }]);
  });

  it('checks numbers, strings and formats', () => {
    expect(check({ minimum: 1 }, 0)[0].expected).toBe('a number of at least 1, got 0');
    expect(check({ exclusiveMaximum: 5 }, 5)[0].expected).toBe('a number under 5, got 5');
    expect(check({ maxLength: 2 }, '😀😀')).toEqual([]); // code points, not UTF-16 units
    expect(check({ pattern: '^a' }, 'b')[0].expected).toBe('a string matching /^a/, got "b"');
    expect(check({ format: 'date-time' }, '2026-02-30T00:00:00Z')).toHaveLength(1);
    expect(check({ format: 'date-time' }, '2026-11-26')).toHaveLength(1);
    expect(check({ format: 'email' }, 'no-at.example')[0].expected).toBe('an email, got "no-at.example"');
    expect(check({ format: 'uri' }, '/relative')).toHaveLength(1);
    expect(check({ type: 'number' }, NaN)).toHaveLength(1);
  });

  it('refuses properties the plan does not list when additionalProperties is false, or checks them against its schema', () => {
    expect(check({ properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2 })).toEqual([
      { pointer: '/properties/b', expected: 'no such property (the plan lists "a")' },
    ]);
    expect(check({ additionalProperties: { type: 'string' } }, { b: 2 })).toEqual([{ pointer: '/properties/b', expected: 'a string, got 2' }]);
  });

  it('checks array items, tuples (2020-12 prefixItems and draft-07 items arrays) and bounds', () => {
    expect(check({ items: { type: 'integer' } }, [1, 'x'])).toEqual([{ pointer: '/properties/1', expected: 'an integer, got "x"' }]);
    expect(check({ prefixItems: [{ type: 'string' }], items: false }, ['a', 1])[0].pointer).toBe('/properties/1');
    expect(check({ items: [{ type: 'string' }], additionalItems: { type: 'number' } }, ['a', 1])).toEqual([]);
    expect(check({ minItems: 2 }, [1])[0].expected).toBe('at least 2 item(s), got 1');
  });

  it('escapes keys in pointers (RFC 6901)', () => {
    expect(check({ properties: { 'a/b~c': { type: 'string' } } }, { 'a/b~c': 1 })[0].pointer).toBe('/properties/a~1b~0c');
  });

  it('checks anyOf, oneOf, allOf and not', () => {
    expect(check({ anyOf: [{ type: 'string' }, { type: 'integer' }] }, 1.5)[0].expected).toBe('one of: a string; an integer, got 1.5');
    expect(check({ oneOf: [{ type: 'number' }, { type: 'integer' }] }, 1)[0].expected).toMatch(/^exactly one of/);
    expect(check({ allOf: [{ minimum: 1 }, { maximum: 2 }] }, 3)).toHaveLength(1);
    expect(check({ not: { const: 'x' } }, 'x')).toHaveLength(1);
  });

  it('takes true and false as schemas', () => {
    expect(check(true, 1)).toEqual([]);
    expect(check(false, 1)).toHaveLength(1);
  });
});

describe('keywords and numbers review 11 found unchecked or wrong', () => {
  const fails = (schema: object, value: unknown) => validate(schema as any, value, '', () => undefined).map((f) => f.pointer + ' ' + f.expected);
  it('multipleOf with a decimal step takes the values that are multiples of it in decimal (19.99 of 0.01)', () => {
    expect(fails({ multipleOf: 0.01 }, 19.99)).toEqual([]);
    expect(fails({ multipleOf: 0.1 }, 0.3)).toEqual([]);
    expect(fails({ multipleOf: 0.01 }, 19.995)).toHaveLength(1);
    expect(fails({ multipleOf: 3 }, 10)).toHaveLength(1);
    // (a large value is not a multiple by tolerance: review 12)
    expect(fails({ multipleOf: 1 }, 1700000000000.5)).toHaveLength(1);
    expect(fails({ multipleOf: 0.5 }, 1700000000000.5)).toEqual([]);
  });
  it('checks uniqueItems, contains (minContains, maxContains), minProperties, maxProperties, propertyNames, dependentRequired and if/then/else', () => {
    expect(fails({ uniqueItems: true }, [1, { a: 1 }, { a: 1 }])).toEqual(['/2 items that are all different (the plan\'s uniqueItems), got {"a":1} again']);
    expect(fails({ uniqueItems: true }, [1, 2])).toEqual([]);
    expect(fails({ contains: { type: 'string' } }, [1, 2])).toHaveLength(1);
    expect(fails({ contains: { type: 'string' }, maxContains: 1 }, ['a', 'b'])).toHaveLength(1);
    expect(fails({ contains: { type: 'string' }, minContains: 2 }, ['a', 'b', 3])).toEqual([]);
    expect(fails({ minProperties: 2 }, {})).toHaveLength(1);
    expect(fails({ maxProperties: 1 }, { a: 1, b: 2 })).toHaveLength(1);
    expect(fails({ propertyNames: { pattern: '^[a-z_]+$' } }, { ok: 1, 'Not OK': 2 })).toEqual(['/Not OK a property name of a string matching /^[a-z_]+$/, got "Not OK"']);
    expect(fails({ dependentRequired: { coupon: ['discount'] } }, { coupon: 'X' })).toEqual(['/discount a value (required by the plan with "coupon"), got nothing']);
    expect(fails({ dependentRequired: { coupon: ['discount'] } }, {})).toEqual([]);
    // draft-07's dependencies (both forms) and 2020-12's dependentSchemas
    expect(fails({ dependencies: { coupon: ['discount'] } }, { coupon: 'X' })).toHaveLength(1);
    expect(fails({ dependencies: { coupon: { required: ['discount'] } } }, { coupon: 'X' })).toHaveLength(1);
    expect(fails({ dependentSchemas: { coupon: { properties: { discount: { type: 'number' } } } } }, { coupon: 'X', discount: '5' })).toHaveLength(1);
    expect(fails({ dependencies: { coupon: ['discount'] } }, { coupon: 'X', discount: 5 })).toEqual([]);
    const cond = { if: { properties: { kind: { const: 'paid' } } }, then: { required: ['price'] }, else: { properties: { price: { const: 0 } } } };
    expect(fails(cond, { kind: 'paid' })).toHaveLength(1);
    expect(fails(cond, { kind: 'free', price: 5 })).toHaveLength(1);
    expect(fails(cond, { kind: 'free', price: 0 })).toEqual([]);
  });
});
