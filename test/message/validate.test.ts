import { afterEach, describe, expect, it, vi } from 'vitest';
import { byteLength, isoDate, ownKeys, quote, sanitize, stringify, timestamp } from '../../src/message/validate';
import type { JSONValue } from '../../src/message/types';
import { patched } from '../patched';


// A small seeded PRNG (mulberry32), so a failure can be replayed.
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

  // One object referenced twice on each of `depth` levels: 2^depth paths to the leaf, depth + 1 distinct objects.
  const dag = (depth: number, leaf: unknown = { leaf: 'x' }) => {
    let o: any = leaf;
    for (let i = 0; i < depth; i++) o = { a: o, b: [o] };
    return o;
  };

  it('copies shared references at every place, as JSON.stringify writes them, each place its own copy', () => {
    const value = dag(8);
    const out: any = sanitize(value);
    expect(out).toEqual(JSON.parse(JSON.stringify(value)));
    expect(out.a).not.toBe(out.b[0]);
  });

  it('stops with message_too_large, at once, when shared references make the copy certainly over the limit', () => {
    // 2^21 paths: two million copies before (seconds, hundreds of MB); a page's data of 30 levels froze the tab
    const value = dag(21);
    const t = performance.now();
    let error: any;
    try {
      sanitize({ props: value });
    } catch (e) {
      error = e;
    }
    expect(performance.now() - t).toBeLessThan(1000);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('message_too_large');
  });

  it('stops too when one long string or one long key is referenced many times', () => {
    const long = 'x'.repeat(1000);
    expect(() => sanitize({ list: Array(100).fill(long) })).toThrow(/32000/);
    const keyed = { [long]: 1 };
    expect(() => sanitize({ list: Array(100).fill(keyed) })).toThrow(/32000/);
    expect(() => sanitize(new Map([['m', Array(100).fill(long)]]))).toThrow(/32000/);
  });

  it('never stops on what fits in a message: only what is certainly over the limit', () => {
    expect(sanitize({ pad: 'a'.repeat(31990) })).toEqual({ pad: 'a'.repeat(31990) });
    // multi-byte characters count as one: still only a lower bound of the bytes
    expect(sanitize({ pad: '€'.repeat(31990) })).toEqual({ pad: '€'.repeat(31990) });
    const random = prng(7);
    let stopped = 0;
    for (let i = 0; i < 200; i++) {
      const depth = 1 + Math.floor(random() * 12);
      const value = dag(depth, random() < 0.5 ? 'y'.repeat(Math.floor(random() * 40)) : { s: 'é'.repeat(Math.floor(random() * 20)) });
      const text = JSON.stringify(value);
      const bytes = new TextEncoder().encode(text).length;
      let over = false;
      try {
        expect(JSON.stringify(sanitize(value)) == text).toBe(true);
      } catch (e: any) {
        if (e.code != 'message_too_large') throw e;
        over = true;
      }
      if (over) {
        expect(bytes, `depth ${depth}`).toBeGreaterThan(32000);
        stopped += 1;
      }
    }
    // (both sides were seen)
    expect(stopped).toBeGreaterThan(10);
    expect(stopped).toBeLessThan(190);
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

  it('leaves a __proto__ key out, without changing the prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const out: any = sanitize(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(false);
    expect(out.polluted).toBeUndefined();
    expect(({} as any).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"a":1}');
  });

  it('leaves a __proto__ key of a Map out', () => {
    const out: any = sanitize(new Map([['__proto__', { polluted: true }]]));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{}');
  });

  it('leaves out a constructor key holding an object (constructor.prototype), at any depth; one holding a string stays', () => {
    const input = JSON.parse('{"constructor": {"prototype": {"polluted": true}}, "nested": [{"constructor": {"prototype": {}}, "__proto__": {"x": 1}}], "car": {"constructor": "Ferrari"}}');
    expect(JSON.stringify(sanitize(input))).toBe('{"nested":[{}],"car":{"constructor":"Ferrari"}}');
    // what a naive deep merge downstream does with the copy: nothing reaches a prototype
    const merge = (t: any, s: any) => {
      for (const k in s) if (s[k] && typeof s[k] == 'object') merge((t[k] ||= {}), s[k]); else t[k] = s[k];
      return t;
    };
    merge({}, sanitize(JSON.parse('{"constructor": {"prototype": {"polluted": true}}, "__proto__": {"polluted": true}}')));
    expect(({} as any).polluted).toBeUndefined();
  });

  it('gives the same JSON as JSON.stringify for plain data', () => {
    const data = { a: [1, 'x', { b: null, c: true }], d: { e: 'é😀' }, n: -0.5 };
    expect(JSON.stringify(sanitize(data))).toBe(JSON.stringify(data));
  });

  it('ignores a toJSON a page put on Array.prototype (Prototype.js turns arrays into strings)', () => {
    let out: unknown;
    patched(Array.prototype as any, 'toJSON', function (this: unknown[]) {
      return 'array of ' + this.length;
    }, () => (out = sanitize({ list: [1, [2, 3]], e: [] })));
    expect(out).toEqual({ list: [1, [2, 3]], e: [] });
  });

  it('ignores a toJSON a page put on Object.prototype', () => {
    let out: unknown;
    patched(Object.prototype as any, 'toJSON', () => 'nope', () => (out = sanitize({ a: { b: 1 }, c: [{ d: 2 }] })));
    expect(out).toEqual({ a: { b: 1 }, c: [{ d: 2 }] });
    expect(Object.prototype).not.toHaveProperty('toJSON');
  });

  it("still uses the toJSON of a value's own class", () => {
    class Money {
      constructor(private cents: number) {}
      toJSON() {
        return { amount: this.cents / 100 };
      }
    }
    expect(sanitize({ price: new Money(1999) })).toEqual({ price: { amount: 19.99 } });
  });

  it('formats a Date itself, whatever a page did to Date.prototype.toJSON and toISOString', () => {
    let out: unknown;
    patched(Date.prototype as any, 'toJSON', () => 'page json', () =>
      patched(Date.prototype as any, 'toISOString', () => 'page iso', () => (out = sanitize({ d: new Date(0), bad: new Date(NaN) }))),
    );
    expect(out).toEqual({ d: '1970-01-01T00:00:00.000Z', bad: null });
  });

  it('copies own enumerable keys only, even where a page replaced Object.keys', () => {
    const input = Object.create({ inherited: 1 }, { own: { value: 2, enumerable: true }, hidden: { value: 3 } });
    let out: unknown;
    patched(Object, 'keys', (o: object) => {
      const all: string[] = [];
      for (const k in o) all.push(k);
      return all;
    }, () => (out = sanitize(input)));
    expect(out).toEqual({ own: 2 });
    expect(Object.keys(out as object)).toEqual(['own']);
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

describe('ownKeys', () => {
  it('lists own enumerable string keys in Object.keys order', () => {
    const o: any = Object.create({ inherited: 1 });
    o.b = 1;
    o[2] = 1;
    o.a = 1;
    o[1] = 1;
    o[Symbol('s')] = 1;
    Object.defineProperty(o, 'hidden', { value: 1 });
    expect(ownKeys(o)).toEqual(['1', '2', 'b', 'a']);
    expect(ownKeys(o)).toEqual(Object.keys(o));
  });

  it('ignores enumerable keys a page put on Object.prototype', () => {
    let out: unknown;
    patched(Object.prototype as any, 'extra', 1, () => (out = ownKeys({ a: 1 })));
    expect(out).toEqual(['a']);
  });
});

describe('isoDate', () => {
  it('is the ISO 8601 form of a Date, or null for an invalid one', () => {
    expect(isoDate(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006Z');
    expect(isoDate(new Date('nope'))).toBeNull();
  });
});

describe('timestamp', () => {
  it('takes a Date, an ISO string or a number of ms, as an ISO 8601 date-time in UTC', () => {
    const iso = '2024-05-06T07:08:09.010Z';
    expect(timestamp(new Date(iso))).toBe(iso);
    expect(timestamp(iso)).toBe(iso);
    expect(timestamp(Date.parse(iso))).toBe(iso);
    expect(timestamp('2024-05-06T09:08:09+02:00')).toBe('2024-05-06T07:08:09.000Z');
  });

  it('accepts the years 0000 to 9999', () => {
    expect(timestamp('0000-01-01T00:00:00.000Z')).toBe('0000-01-01T00:00:00.000Z');
    expect(timestamp(new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)))).toBe('9999-12-31T23:59:59.999Z');
  });

  it('is undefined for a year ISO 8601 cannot hold in 4 digits', () => {
    expect(timestamp(new Date(8.64e15))).toBeUndefined(); // +275760-09-13
    expect(timestamp(new Date(-8.64e15))).toBeUndefined(); // -271821-04-20
    expect(timestamp(Date.UTC(10000, 0, 1))).toBeUndefined();
    expect(timestamp('-000001-01-01T00:00:00.000Z')).toBeUndefined();
    expect(timestamp(Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1)).toBeUndefined();
  });

  it('is undefined for what is not a date', () => {
    expect(timestamp('nope')).toBeUndefined();
    expect(timestamp(new Date(NaN))).toBeUndefined();
    expect(timestamp(NaN)).toBeUndefined();
    expect(timestamp(8.64e15 + 1)).toBeUndefined();
    expect(timestamp({})).toBeUndefined();
  });

  it('formats the date itself, whatever a page did to Date.prototype.toISOString', () => {
    let out: unknown;
    patched(Date.prototype as any, 'toISOString', () => 'page iso', () => (out = timestamp(new Date(0))));
    expect(out).toBe('1970-01-01T00:00:00.000Z');
  });

  it('formats dates from their UTC fields on a page that replaced Date.prototype.toISOString before the bundle ran', async () => {
    const saved = Object.getOwnPropertyDescriptor(Date.prototype, 'toISOString')!;
    // (a site that sends local times with their offset)
    Date.prototype.toISOString = function (this: Date) {
      return '2024-01-02T04:04:05.006+01:00';
    };
    try {
      vi.resetModules();
      const v = await import('../../src/message/validate');
      expect(v.timestamp(Date.UTC(2024, 0, 2, 3, 4, 5, 6))).toBe('2024-01-02T03:04:05.006Z');
      expect(v.timestamp(new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)))).toBe('9999-12-31T23:59:59.999Z');
      expect(v.timestamp('0000-01-01T00:00:00.000Z')).toBe('0000-01-01T00:00:00.000Z');
      expect(v.timestamp(Date.UTC(10000, 0, 1))).toBeUndefined();
      expect(v.timestamp(new Date(NaN))).toBeUndefined();
      expect(v.sanitize({ d: new Date(Date.UTC(2020, 9, 8, 7, 6, 5, 40)), bad: new Date(NaN) })).toEqual({ d: '2020-10-08T07:06:05.040Z', bad: null });
    } finally {
      Object.defineProperty(Date.prototype, 'toISOString', saved);
      vi.resetModules();
    }
  });
});

describe('quote', () => {
  it('escapes quotes, backslashes and control characters', () => {
    expect(quote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(quote('\n\r\t')).toBe('"\\n\\r\\t"');
    expect(quote('\u0000\u001f')).toBe('"\\u0000\\u001f"');
    expect(quote('')).toBe('""');
  });

  it('reads back as the same string for every UTF-16 code unit', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const s = 'a' + String.fromCharCode(c) + 'b';
      if (JSON.parse(quote(s)) !== s) throw new Error('code unit ' + c.toString(16) + ' does not read back');
    }
  });

  it('keeps a surrogate pair and escapes a lone surrogate, as JSON.stringify does', () => {
    for (const s of ['😀', '\ud800', '\udfff', 'a\ud83d', '\ude00b', '\ude00\ud83d', '\ud83d\ud83d\ude00', '\ud83d\ude00\ude00'])
      expect(quote(s)).toBe(JSON.stringify(s));
  });

  it('writes only well-formed UTF-16, so the body encodes to UTF-8 without replacement characters', () => {
    const q = quote('x\ud800y\udc00z');
    expect(new TextDecoder().decode(new TextEncoder().encode(q))).toBe(q);
  });
});

describe('stringify', () => {
  // Same meaning as JSON.stringify: parses to the same value, keys in the same order.
  const same = (v: JSONValue) => {
    const text = stringify(v);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
    expect(JSON.stringify(JSON.parse(text))).toBe(JSON.stringify(v));
  };

  const TRICKY: JSONValue[] = [
    null,
    true,
    false,
    0,
    -0,
    1,
    -1.5,
    0.1 + 0.2,
    1e21,
    1e-7,
    5e-324,
    Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER,
    '',
    'plain',
    'quote " backslash \\ slash /',
    '\b\f\n\r\t\v\u0000\u0001\u001f\u007f',
    Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join(''),
    'é€日本語 😀 👩‍👩‍👧 \u2028\u2029 \ufeff \uffff',
    '\ud800',
    '\udfff',
    'lone \ud83d in the middle',
    'reversed \ude00\ud83d pair',
    '</script><!--',
    [],
    {},
    [[]],
    [[[], [[], [1, [2, [3, ['deep']]]]]]],
    [null, true, 'x', 1, { a: [] }],
    { a: { b: { c: { d: {} } } } },
    { '': 'empty key', ' ': 'space', '"': 'quote', '\\': 'backslash', '\u0000': 'nul', '😀': 'emoji', '\ud800': 'lone' },
    { b: 1, a: 2, 10: 'ten', 2: 'two', '-1': 'minus', '01': 'zero one' },
    { nested: [{ list: [1, 2, { x: [null] }] }], s: 'é' },
    JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'),
  ];

  it('gives the same JSON as JSON.stringify for tricky values', () => {
    for (const v of TRICKY) same(v);
  });

  it("gives byte for byte what JSON.stringify gives; our own serialiser (used once a page put toJSON on a built-in prototype) spells \\b and \\f as \\u0008 and \\u000c", () => {
    for (const v of TRICKY) expect(stringify(v)).toBe(JSON.stringify(v));
    const expected = TRICKY.map((v) => JSON.stringify(v));
    // JSON.stringify's text with its two-character escapes \b and \f spelt out (escape pairs read left to right)
    const spelt = (text: string) => text.replace(/\\(.)/g, (pair, c) => (c == 'b' ? '\\u0008' : c == 'f' ? '\\u000c' : pair));
    const prototypeToJSON = () => 'patched';
    patched(Array.prototype as any, 'toJSON', prototypeToJSON, () => {
      TRICKY.forEach((v, i) => expect(stringify(v)).toBe(spelt(expected[i])));
      expect(stringify('\b\f\\b')).toBe('"\\u0008\\u000c\\\\b"');
    });
    patched(Object.prototype as any, 'toJSON', prototypeToJSON, () => {
      TRICKY.forEach((v, i) => expect(stringify(v)).toBe(spelt(expected[i])));
    });
  });

  it('gives the same JSON as JSON.stringify for random values (random code units, numbers and nesting)', () => {
    const random = prng(20260102);
    const str = () => Array.from({ length: Math.floor(random() * 12) }, () => String.fromCharCode(random() < 0.5 ? Math.floor(random() * 128) : Math.floor(random() * 0x10000))).join('');
    const num = () => [0, -0, 1 / 3, -1e300, 1e-300, 2 ** 53 + 2, 123456789][Math.floor(random() * 7)] * (random() < 0.5 ? 1 : random());
    const value = (depth: number): JSONValue => {
      const r = random();
      if (depth > 4 || r < 0.3) return [null, true, false][Math.floor(random() * 3)];
      if (r < 0.5) return str();
      if (r < 0.6) return num();
      if (r < 0.8) return Array.from({ length: Math.floor(random() * 5) }, () => value(depth + 1));
      const o: Record<string, JSONValue> = {};
      for (let i = Math.floor(random() * 5); i > 0; i--) o[str()] = value(depth + 1);
      return o;
    };
    for (let i = 0; i < 500; i++) same(value(0));
  });

  it('serialises what sanitize returns for any input, as JSON.stringify would', () => {
    const input = { d: new Date(0), big: 10n, nan: NaN, list: [undefined, () => 1, new Set([1])], m: new Map([['k', 'v']]), u: undefined };
    const value = sanitize(input)!;
    expect(stringify(value)).toBe(JSON.stringify(input, (_k, v) => (typeof v == 'bigint' ? String(v) : v instanceof Set ? [...v] : v instanceof Map ? Object.fromEntries(v) : v)));
  });

  it("is unaffected by a page's Array.prototype.toJSON, Object.prototype.toJSON, JSON.stringify and Object.keys", () => {
    const value = { a: [1, [2]], b: { c: [] }, s: 'x' };
    const expected = '{"a":[1,[2]],"b":{"c":[]},"s":"x"}';
    let out: unknown;
    patched(Array.prototype as any, 'toJSON', () => 'array', () =>
      patched(Object.prototype as any, 'toJSON', () => 'object', () =>
        patched(JSON, 'stringify', () => 'page', () => patched(Object, 'keys', () => ['page'], () => (out = stringify(value)))),
      ),
    );
    expect(out).toBe(expected);
    expect(JSON.stringify(value)).toBe(expected);
    expect([].hasOwnProperty.call(Array.prototype, 'toJSON')).toBe(false);
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

  // What TextEncoder writes: the reference byteLength must agree with (it used to be byteLength itself).
  const utf8 = (s: string) => new TextEncoder().encode(s).length;

  it('equals the UTF-8 length TextEncoder writes for ASCII, Latin-1, CJK, emoji and mixes of them', () => {
    const strings = [
      '',
      'a',
      'hello, world',
      Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join(''), // every ASCII character
      'café naïve façade',
      Array.from({ length: 128 }, (_, i) => String.fromCharCode(0x80 + i)).join(''), // Latin-1 supplement
      'ÿ',
      '日本語のテキスト',
      '中文 한국어',
      '€',
      '😀',
      '😀😀😀',
      '👩‍👩‍👧', // pairs joined by U+200D
      '🇫🇷',
      '𝄞 music',
      'a é 日 😀 b',
      'ASCII é€日本😀👩‍👩‍👧 \u2028\u2029 \ufeff end',
      '\u0000\u007f\u0080',
    ];
    for (const s of strings) expect(byteLength(s), JSON.stringify(s)).toBe(utf8(s));
  });

  it('counts a lone high or low surrogate as TextEncoder does (3 bytes: U+FFFD)', () => {
    const strings = [
      '\ud800',
      '\udbff',
      '\udc00',
      '\udfff',
      'a\ud83d',
      '\ud83db',
      'a\ude00b',
      '\ude00\ud83d', // a reversed pair: two lone surrogates
      '\ud800\ud800',
      '\udc00\udc00',
      'x\ud800y\udc00z',
    ];
    for (const s of strings) {
      expect(byteLength(s), JSON.stringify(s)).toBe(utf8(s));
    }
    expect(byteLength('\ud800')).toBe(3);
    expect(byteLength('\udc00')).toBe(3);
  });

  it('counts a lone surrogate next to a pair as 3 bytes and the pair as 4', () => {
    const strings = [
      '\ud83d\ud83d\ude00', // lone high, then a pair
      '\ud83d\ude00\ude00', // a pair, then lone low
      '\ude00\ud83d\ude00', // lone low, then a pair
      '\ud83d\ude00\ud83d', // a pair, then lone high
      '\ud83d\ude00\ude00\ud83d\ude00',
      'a\udbff\udbff\udfffb',
    ];
    for (const s of strings) expect(byteLength(s), JSON.stringify(s)).toBe(utf8(s));
    expect(byteLength('\ud83d\ud83d\ude00')).toBe(7);
    expect(byteLength('\ud83d\ude00\ude00')).toBe(7);
  });

  it('counts the characters at the 1-, 2- and 3-byte boundaries as TextEncoder does', () => {
    const cases: [string, number][] = [
      ['\u007f', 1],
      ['\u0080', 2],
      ['\u07ff', 2],
      ['\u0800', 3],
      ['\ud7ff', 3],
      ['\ue000', 3],
      ['\ufffd', 3],
      ['\uffff', 3],
      ['\u{10000}', 4],
      ['\u{10ffff}', 4],
    ];
    for (const [s, n] of cases) {
      expect(byteLength(s), JSON.stringify(s)).toBe(n);
      expect(utf8(s)).toBe(n);
    }
    const all = cases.map(([s]) => s).join('');
    expect(byteLength(all)).toBe(utf8(all));
  });

  it('equals the UTF-8 length TextEncoder writes for a 30,000-character string of random code units', () => {
    const random = prng(20260315);
    // Half ASCII, the rest any UTF-16 code unit, surrogates included: many lone ones, some pairs by chance.
    const units = Array.from({ length: 30000 }, () => (random() < 0.5 ? Math.floor(random() * 0x80) : Math.floor(random() * 0x10000)));
    const s = String.fromCharCode(...units);
    expect(s.length).toBe(30000);
    expect(byteLength(s)).toBe(utf8(s));
    // and every prefix cut at a random place (which may split a pair)
    for (let i = 0; i < 200; i++) {
      const t = s.slice(0, Math.floor(random() * s.length));
      if (byteLength(t) !== utf8(t)) throw new Error('differs for the prefix of length ' + t.length);
    }
  });

  it('equals the UTF-8 length TextEncoder writes for random short strings biased to surrogates', () => {
    const random = prng(7);
    const pick = () => {
      const r = random();
      return r < 0.3 ? 0xd800 + Math.floor(random() * 0x400) : r < 0.6 ? 0xdc00 + Math.floor(random() * 0x400) : r < 0.8 ? Math.floor(random() * 0x800) : Math.floor(random() * 0x10000);
    };
    for (let i = 0; i < 2000; i++) {
      const s = String.fromCharCode(...Array.from({ length: 1 + Math.floor(random() * 8) }, pick));
      if (byteLength(s) !== utf8(s)) throw new Error('differs for ' + JSON.stringify(s));
    }
  });
});
