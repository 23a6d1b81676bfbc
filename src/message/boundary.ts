// The page boundary's primitives: what the library checks of values the page gave it, written once. Each is safe on a
// page that broke the built-ins it uses (nothing here throws into the page).

const fnToString = Function.prototype.toString;

/**
 * Whether `fn` is the engine's own function (its source reads `[native code]`), read through
 * Function.prototype.toString as the bundle found it. False on a page whose toString throws or was taken away, where
 * nothing can tell: then the library takes the path that needs no native function.
 */
export function isNative(fn: unknown): boolean {
  try {
    return typeof fn == 'function' && /\{\s*\[native code\]\s*\}$/.test(fnToString.call(fn));
  } catch {
    return false;
  }
}

/** A plain object of data (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, any> => !!v && typeof v == 'object' && !Array.isArray(v);

/** A function (a callback or handler of the page). */
export const isFunction = (v: unknown): v is (...args: any[]) => unknown => typeof v == 'function';

/** `n` random bytes: `crypto.getRandomValues`, or `Math.random` where a page or a privacy setting made crypto throw. */
export function randomBytes(n: number): Uint8Array {
  try {
    return crypto.getRandomValues(new Uint8Array(n));
  } catch {
    return new Uint8Array(n).map(() => Math.random() * 256);
  }
}

/**
 * A copy of an options object with its own enumerable properties only, on no prototype: a key the page (or a polluted
 * `Object.prototype`) did not set on the object itself reads as undefined (STYLE practice 17, CONTRACT section 6).
 */
export const ownOptions = <T extends object>(o: T | null | undefined): Partial<T> => Object.assign(Object.create(null), o);
