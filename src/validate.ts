import type { JSONValue, AnalyticsError } from './types';
import { analyticsError } from './errors';

/** Largest serialised message the service processes (spec 000 section 8: 32 KB, read as 32,000 bytes). */
export const MESSAGE_LIMIT = 32000;
/** Largest request body the service processes (spec 000 section 8: 500 KB, read as 500,000 bytes). */
export const BATCH_LIMIT = 500000;

// Every engine that runs ES2020 code has TextEncoder.
const encoder = /* @__PURE__ */ new TextEncoder();

/** Sets `o[k] = v` as an own data property, so a key such as `__proto__` never reaches a prototype. */
export function setOwn(o: object, k: string, v: unknown) {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** UTF-8 bytes of a string. */
export function byteLength(s: string): number {
  return encoder.encode(s).length;
}

/**
 * Turns any value into plain JSON data, predictably:
 * - Date and objects with `toJSON` → their `toJSON()` result (an invalid Date becomes null);
 * - BigInt → its decimal string; NaN and ±Infinity → null;
 * - functions, symbols and `undefined` → left out of objects, null inside arrays (as JSON.stringify does);
 * - Map → object, Set → array; a cycle → the string "[Circular]";
 * - keys such as `__proto__` stay plain data and never reach a prototype.
 * Throws only if reading the value throws (a getter or `toJSON` that throws).
 */
export function sanitize(value: unknown, seen: object[] = [], json = true): JSONValue | undefined {
  switch (typeof value) {
    case 'string':
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
  if (seen.indexOf(value) >= 0) return '[Circular]';
  let v: any = value;
  // Once per value, as JSON.stringify does: a toJSON returning `this` (or a copy of it) must not recurse.
  if (json && typeof v.toJSON == 'function') return sanitize(v.toJSON(), seen, false);
  if (v instanceof Map) v = Object.fromEntries(v);
  else if (v instanceof Set) v = Array.from(v);
  seen.push(value);
  let out: any;
  if (Array.isArray(v)) {
    out = v.map((x) => {
      const s = sanitize(x, seen);
      return s === undefined ? null : s;
    });
  } else {
    out = {};
    for (const k of Object.keys(v)) {
      const s = sanitize(v[k], seen);
      if (s !== undefined) setOwn(out, k, s);
    }
  }
  seen.pop();
  return out;
}

/** A message ready to queue: its sanitised form and its serialised size in bytes. */
export interface Checked<T> {
  value: T;
  bytes: number;
}

/** Sanitises a message and checks it against the 32 KB limit; returns the error instead of throwing. */
export function check<T>(message: T, limit = MESSAGE_LIMIT): Checked<T> | AnalyticsError {
  let value: any;
  try {
    value = sanitize(message);
  } catch (e) {
    return analyticsError('invalid_payload', `could not read the call's data: ${(e as Error)?.message || e}`);
  }
  const bytes = byteLength(JSON.stringify(value));
  if (bytes > limit)
    return analyticsError('message_too_large', `message is ${bytes} bytes, over the ${limit} limit`, [value.messageId]);
  return { value, bytes };
}
