import type { JSONValue } from './types';
import { analyticsError } from './errors';
import { isNative } from './boundary';

/** Largest serialised message the service processes (spec 000 section 8: 32 KB, read as 32,000 bytes). */
export const MESSAGE_LIMIT = 32000;
/**
 * The refusal of a message over `MESSAGE_LIMIT` bytes serialised: `bytes` its size, when it was measured (a copy that
 * `sanitize` stopped is only known to be over).
 */
export const tooLarge = (ids?: string[], bytes?: number) =>
  analyticsError('message_too_large', `message is ${bytes || 'more than ' + MESSAGE_LIMIT} bytes, over the ${MESSAGE_LIMIT} limit`, ids);
/** Largest request body the service processes (spec 000 section 8: 500 KB, read as 500,000 bytes). */
export const BATCH_LIMIT = 500000;

/**
 * Sets `o[k] = v` as an own data property, so a key such as `__proto__` (or one a page defined on Object.prototype,
 * with a setter) never reaches a prototype. Plain assignment where the key is not inherited: it is much faster.
 */
export function setOwn(o: Record<string, unknown>, k: string, v: unknown) {
  if (k in o) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

// What is not ASCII: a surrogate pair (4 UTF-8 bytes), or one character (2 bytes up to U+07FF, else 3).
const NON_ASCII = /[\ud800-\udbff][\udc00-\udfff]|[^\x00-\x7f]/g;

/** UTF-8 bytes of a string, as TextEncoder writes it (a lone surrogate as U+FFFD), without encoding it. */
export function byteLength(s: string): number {
  let n = s.length;
  const wide = s.match(NON_ASCII);
  if (wide) for (const c of wide) n += c.length < 2 && c < '\u0800' ? 1 : 2;
  return n;
}

// Taken when the bundle runs: a page that later replaces or extends these built-ins (old libraries such as
// Prototype.js define `Array.prototype.toJSON`, polyfills replace `JSON.stringify`) changes nothing we send.
// (typed with the `toJSON` a page may have added to it)
const objectProto: { toJSON?: unknown; hasOwnProperty(key: PropertyKey): boolean } = Object.prototype;
const isArray = Array.isArray;
// (Date.prototype.toISOString as the bundle found it: the engine's own, or, on a page that replaced it before (sites do,
// to send local times with their offset, `...T10:00:00+02:00`), written here from the date's UTC fields, so that
// neither a call's timestamp nor a date in its data is refused or changed; a year ISO 8601 cannot hold unextended
// reads as invalid then.)
const pad = (n: number, width = 2) => ('' + n).padStart(width, '0');
const nativeISO = Date.prototype.toISOString;
const dateToISO = isNative(nativeISO)
  ? nativeISO
  : function (this: Date) {
      const y = this.getUTCFullYear();
      if (!(y >= 0 && y < 1e4)) throw 0;
      return `${pad(y, 4)}-${pad(this.getUTCMonth() + 1)}-${pad(this.getUTCDate())}T${pad(this.getUTCHours())}:${pad(this.getUTCMinutes())}:${pad(this.getUTCSeconds())}.${pad(this.getUTCMilliseconds(), 3)}Z`;
    };
/** `Object.prototype.hasOwnProperty` as the bundle found it: `hasOwn.call(o, k)` (STYLE 17: decisions are own properties). */
export const hasOwn = objectProto.hasOwnProperty;

/**
 * The own enumerable string keys of `o`, in `Object.keys` order, without `Object.keys` (Prototype.js 1.6 replaces it
 * with a version that lists inherited keys too). Typed as `for...in` types the keys of a generic object: the string
 * keys `T` declares (any string for a record; none for a bare `object`).
 */
export function ownKeys<T extends object>(o: T): Extract<keyof T, string>[] {
  const out: Extract<keyof T, string>[] = [];
  for (const k in o) if (hasOwn.call(o, k)) out.push(k);
  return out;
}

/** A Date as ISO 8601 (never through a `toJSON` a page may have given `Date.prototype`); null when invalid. */
export function isoDate(d: Date): string | null {
  try {
    return dateToISO.call(d);
  } catch {
    return null; // an invalid Date
  }
}

/**
 * A call's `timestamp` option (a Date, or a string or number `Date` reads) as the ISO 8601 date-time the API takes;
 * undefined when there is none such (invalid, or a year outside 0000-9999, which ISO 8601 cannot hold unextended).
 */
export function timestamp(value: unknown): string | undefined {
  // Calls in a burst share their millisecond: the last one is remembered (the answer only depends on `value`).
  if (typeof value == 'number' && value === lastTime) return lastIso;
  const iso = isoDate(value instanceof Date ? value : new Date(value as string));
  const valid = iso && iso.length == 24 ? iso : undefined;
  if (typeof value == 'number') (lastTime = value), (lastIso = valid);
  return valid;
}
let lastTime: number | undefined;
let lastIso: string | undefined;

/**
 * Turns any value into plain JSON data, predictably:
 * - Date → its ISO string (null when invalid); an object with a `toJSON` of its own class (not one a page added to
 *   a built-in prototype) → its `toJSON()` result;
 * - BigInt → its decimal string; NaN and ±Infinity → null;
 * - functions, symbols and `undefined` → left out of objects, null inside arrays (as JSON.stringify does);
 * - Map → object, Set → array; a cycle → the string "[Circular]";
 * - a `__proto__` key, and a `constructor` key holding an object, are left out (`constructor.prototype`: a deep merge
 *   downstream, in a site's middleware or a warehouse loader, would write through them into a prototype); other
 *   keys never reach a prototype either;
 * An object referenced many times is copied at every place, as JSON.stringify writes it; once the copy is certainly
 * over `max` serialised (`MESSAGE_LIMIT`), it stops with a `message_too_large` error (one object referenced twice on each of
 * 30 levels is 2^30 copies: the page would freeze). Throws too if reading the value throws (a getter or `toJSON`).
 */
export function sanitize(value: unknown, max = MESSAGE_LIMIT): JSONValue | undefined {
  // (a page's toJSON or getter may call the library meanwhile: that copy counts on its own, and leaves this one's
  // count as it was, or at 0 when it stopped)
  const [outer, outerMax] = [size, limit];
  size = 0;
  limit = max;
  const out = copy(value, []);
  [size, limit] = [outer, outerMax];
  return out;
}

// A lower bound of the serialised bytes of the copy `sanitize` is making: its strings' and keys' UTF-16 units, and
// two per object; and where it stops (`max`: the message limit, or more for a copy that a middleware sees first).
let size = 0;
let limit = MESSAGE_LIMIT;

function copy(value: unknown, seen: object[], ofToJSON?: 1): JSONValue | undefined {
  switch (typeof value) {
    case 'string':
      size += value.length;
      return value;
    case 'boolean':
      return value;
    case 'number':
      return isFinite(value) ? value : null;
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return undefined; // function, symbol, undefined
  }
  if (value === null) return null;
  if (value instanceof Date) return isoDate(value);
  if (seen.indexOf(value) >= 0) return '[Circular]';
  let v: any = value;
  // Once per value, as JSON.stringify does: a toJSON returning `this` (or a copy of it) must not recurse. One that
  // a page put on Array.prototype or Object.prototype is the page's business, never the wire's.
  if (!ofToJSON && !isArray(v) && typeof v.toJSON == 'function' && v.toJSON !== objectProto.toJSON) return copy(v.toJSON(), seen, 1);
  if (v instanceof Map) v = Object.fromEntries(v);
  else if (v instanceof Set) v = [...v];
  seen.push(value);
  let out: JSONValue[] | { [key: string]: JSONValue };
  if (isArray(v)) {
    out = [];
    for (const x of v) {
      const s = copy(x, seen);
      out.push(s === undefined ? null : s);
    }
  } else {
    out = {};
    // (own keys in Object.keys order, as `ownKeys` gives them, without an array per object)
    for (const k in v)
      if (hasOwn.call(v, k)) {
        const s = copy(v[k], seen);
        if (s !== undefined && k != '__proto__' && (k != 'constructor' || typeof s != 'object')) setOwn(out, k, s), (size += k.length);
      }
  }
  seen.pop();
  if ((size += 2) > limit) throw ((size = 0), tooLarge());
  return out;
}

// Characters JSON must escape; a lone surrogate is escaped too (a pair is kept), as JSON.stringify does.
const ESCAPED = /[\\"\u0000-\u001f]|[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]/g;
const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const parse = JSON.parse;
/** A deep copy of JSON data, through our own serialiser and the engine's parser as the bundle found them. */
export const copyJSON = <T extends JSONValue>(v: T): T => parse(stringify(v));

/** A string as a JSON string literal. */
export const quote = (s: string): string =>
  '"' + s.replace(ESCAPED, (c) => (c.length > 1 ? c : SHORT[c] || '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))) + '"';

// The engine's JSON.stringify, when it is still the engine's when the bundle runs.
const jsonStringify = JSON.stringify;
// (a page that broke Function.prototype.toString gets our own serialiser: see `isNative`)
const nativeJSON = isNative(jsonStringify);

/**
 * Serialises plain JSON data (what `sanitize` returns). The engine's `JSON.stringify` is used only while no page
 * has put a `toJSON` on Array.prototype or Object.prototype (the only ones it consults for such data): Prototype.js
 * turns every array into a string that way. Otherwise, and where a page replaced `JSON.stringify` before the
 * bundle ran, our own serialiser writes the same text.
 */
export function stringify(v: JSONValue): string {
  return nativeJSON && (Array.prototype as { toJSON?: unknown }).toJSON === undefined && objectProto.toJSON === undefined
    ? jsonStringify(v)
    : serialise(v);
}

function serialise(v: JSONValue): string {
  if (typeof v == 'string') return quote(v);
  if (v === null || typeof v != 'object') return '' + v;
  if (isArray(v)) return '[' + v.map(serialise).join(',') + ']';
  let s = '';
  // (a key holding undefined is left out, as JSON.stringify does)
  for (const k of ownKeys(v)) if (v[k] !== undefined) s += (s ? ',' : '') + quote(k) + ':' + serialise(v[k]);
  return '{' + s + '}';
}
