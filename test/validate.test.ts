import { afterEach, describe, expect, it } from 'vitest';
import { byteLength, check, MESSAGE_LIMIT, sanitize } from '../src/validate';
import type { AnalyticsError } from '../src/types';

describe('sanitize', () => {
  afterEach(() => {
    delete (Object.prototype as any).polluted;
  });

  it('keeps strings, finite numbers, booleans and null', () => {
    expect(sanitize({ s: 'a', n: 1.5, z: 0, b: false, x: null })).toEqual({ s: 'a', n: 1.5, z: 0, b: false, x: null });
  });

  it('replaces a cycle with "[Circular]"', () => {
    const a: any = { name: 'a', list: [] };
    a.self = a;
    a.list.push(a);
    expect(sanitize(a)).toEqual({ name: 'a', list: ['[Circular]'], self: '[Circular]' });
  });

  it('replaces an indirect cycle with "[Circular]"', () => {
    const a: any = { b: { c: {} } };
    a.b.c.back = a;
    expect(sanitize(a)).toEqual({ b: { c: { back: '[Circular]' } } });
  });

  it('keeps a shared, non-cyclic reference at every place it appears', () => {
    const shared = { x: 1 };
    expect(sanitize({ a: shared, b: shared, list: [shared, shared] })).toEqual({ a: { x: 1 }, b: { x: 1 }, list: [{ x: 1 }, { x: 1 }] });
  });

  it('turns a BigInt into its decimal string', () => {
    expect(sanitize({ n: 12345678901234567890n, neg: -5n })).toEqual({ n: '12345678901234567890', neg: '-5' });
  });

  it('turns NaN and ±Infinity into null', () => {
    expect(sanitize({ a: NaN, b: Infinity, c: -Infinity })).toEqual({ a: null, b: null, c: null });
    expect(sanitize([NaN])).toEqual([null]);
  });

  it('leaves functions, symbols and undefined out of objects', () => {
    const out = sanitize({ f: () => 1, s: Symbol('s'), u: undefined, k: 1 }) as object;
    expect(out).toEqual({ k: 1 });
    expect(Object.keys(out)).toEqual(['k']);
  });

  it('turns functions, symbols and undefined into null inside arrays', () => {
    expect(sanitize([() => 1, Symbol('s'), undefined, 2])).toEqual([null, null, null, 2]);
  });

  it('is undefined for a function, symbol or undefined at the top level', () => {
    expect(sanitize(() => 1)).toBeUndefined();
    expect(sanitize(Symbol('x'))).toBeUndefined();
    expect(sanitize(undefined)).toBeUndefined();
  });

  it('turns a Date into its ISO string', () => {
    expect(sanitize({ d: new Date('2024-05-06T07:08:09.010Z') })).toEqual({ d: '2024-05-06T07:08:09.010Z' });
  });

  it('turns an invalid Date into null', () => {
    expect(sanitize({ d: new Date('nope') })).toEqual({ d: null });
  });

  it('uses toJSON and sanitises what it returns', () => {
    const v = { toJSON: () => ({ kept: 1, big: 2n, f: () => 0 }) };
    expect(sanitize({ v })).toEqual({ v: { kept: 1, big: '2' } });
  });

  it('calls toJSON once per value, as JSON.stringify does, even when it returns the object itself', () => {
    const self = { a: 1, toJSON() { return this; } };
    const spread = { a: 1, toJSON() { return { ...this, b: 2 }; } };
    let out: unknown;
    expect(() => (out = sanitize({ self, spread }))).not.toThrow();
    expect(out).toEqual(JSON.parse(JSON.stringify({ self, spread })));
  });

  it('turns a Map into an object', () => {
    const m = new Map<string, unknown>([
      ['a', 1],
      ['b', { c: new Date(0) }],
    ]);
    expect(sanitize({ m })).toEqual({ m: { a: 1, b: { c: '1970-01-01T00:00:00.000Z' } } });
  });

  it('turns a Set into an array', () => {
    expect(sanitize({ s: new Set([1, 'two', 1]) })).toEqual({ s: [1, 'two'] });
  });

  it('replaces a cycle through a Map or a Set with "[Circular]"', () => {
    const m = new Map<string, unknown>();
    m.set('self', m);
    const s = new Set<unknown>();
    s.add(s);
    expect(sanitize({ m, s })).toEqual({ m: { self: '[Circular]' }, s: ['[Circular]'] });
  });

  it('sanitises nested arrays', () => {
    expect(sanitize([[1, [NaN, [2n, undefined]]], []])).toEqual([[1, [null, ['2', null]]], []]);
  });

  it('keeps a __proto__ key as own data, without changing the prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const out: any = sanitize(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')!.value).toEqual({ polluted: true });
    expect(out.polluted).toBeUndefined();
    expect(({} as any).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('keeps a __proto__ key of a Map as own data', () => {
    const out: any = sanitize(new Map([['__proto__', { polluted: true }]]));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true}}');
  });

  it('gives the same JSON as JSON.stringify for plain data', () => {
    const data = { a: [1, 'x', { b: null, c: true }], d: { e: 'é😀' }, n: -0.5 };
    expect(JSON.stringify(sanitize(data))).toBe(JSON.stringify(data));
  });

  it('throws when a getter throws', () => {
    const bad = {
      get boom() {
        throw new Error('boom');
      },
    };
    expect(() => sanitize({ bad })).toThrow('boom');
  });
});

describe('byteLength', () => {
  it('counts one byte per ASCII character', () => {
    expect(byteLength('')).toBe(0);
    expect(byteLength('hello')).toBe(5);
  });

  it('counts multi-byte UTF-8 characters', () => {
    expect(byteLength('é')).toBe(2);
    expect(byteLength('€')).toBe(3);
    expect(byteLength('日本')).toBe(6);
  });

  it('counts an emoji (a surrogate pair) as 4 bytes', () => {
    expect(byteLength('😀')).toBe(4);
    expect(byteLength('a😀b')).toBe(6);
  });
});

describe('check', () => {
  // A message whose serialised form is exactly `bytes` bytes long.
  function messageOf(bytes: number, char = 'a') {
    const base = { messageId: 'm1', properties: { pad: '' } };
    const empty = JSON.stringify(base).length;
    const per = new TextEncoder().encode(char).length;
    const n = (bytes - empty) / per;
    if (!Number.isInteger(n)) throw new Error('cannot build an exact size with ' + char);
    return { messageId: 'm1', properties: { pad: char.repeat(n) } };
  }

  it('has a 32,000-byte limit', () => {
    expect(MESSAGE_LIMIT).toBe(32000);
  });

  it('accepts a message of exactly 32,000 serialised bytes and reports its size', () => {
    const m = messageOf(32000);
    const r = check(m);
    expect('code' in r).toBe(false);
    if (!('code' in r)) {
      expect(r.bytes).toBe(32000);
      expect(r.value).toEqual(m);
    }
  });

  it('refuses a message of 32,001 serialised bytes with message_too_large and its id', () => {
    const r = check(messageOf(32001)) as AnalyticsError;
    expect(r).toBeInstanceOf(Error);
    expect(r.code).toBe('message_too_large');
    expect(r.messageIds).toEqual(['m1']);
  });

  it('measures bytes, not characters', () => {
    // 10,700 characters of '€' are 32,100 bytes: under the limit in characters, over it in bytes.
    const m = { messageId: 'm1', properties: { pad: '€'.repeat(10700) } };
    expect(JSON.stringify(m).length).toBeLessThan(32000);
    expect((check(m) as AnalyticsError).code).toBe('message_too_large');
  });

  it('measures the serialised, sanitised message', () => {
    const m = { messageId: 'm1', big: 5n, d: new Date(0), f: () => 1 };
    const r = check(m);
    if ('code' in r) throw r;
    expect(r.bytes).toBe(byteLength(JSON.stringify(r.value)));
    expect(r.value).toEqual({ messageId: 'm1', big: '5', d: '1970-01-01T00:00:00.000Z' });
  });

  it('takes another limit when given', () => {
    expect((check(messageOf(101), 100) as AnalyticsError).code).toBe('message_too_large');
    expect('code' in check(messageOf(100), 100)).toBe(false);
  });

  it('returns invalid_payload instead of throwing when a getter throws', () => {
    const m = {
      messageId: 'm1',
      properties: {
        get boom() {
          throw new Error('boom');
        },
      },
    };
    let r: ReturnType<typeof check> | undefined;
    expect(() => (r = check(m))).not.toThrow();
    expect((r as AnalyticsError).code).toBe('invalid_payload');
  });

  it('returns invalid_payload when toJSON throws', () => {
    const m = { messageId: 'm1', v: { toJSON: () => { throw new Error('nope'); } } };
    expect((check(m) as AnalyticsError).code).toBe('invalid_payload');
  });
});
