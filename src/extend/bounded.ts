import { copyJSON } from '../message/validate';
import type { JSONValue } from '../message/types';

// What the middleware stage (transforms.ts) and the plugin runner (plugins.ts) both use (in the CDN build, both in the
// middleware chunk).

/**
 * Settles like `work`, or rejects with `'timeout'` after `ms`. `work` is a function of the page: what it throws
 * becomes a rejection.
 */
export function bounded<T>(ms: number, work: (done: (v: T) => void) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject('timeout'), ms);
    const done = (v: T) => (clearTimeout(timer), resolve(v));
    try {
      Promise.resolve(work(done)).catch((e) => (clearTimeout(timer), reject(e ?? 'rejected')));
    } catch (e) {
      clearTimeout(timer);
      reject(e ?? 'threw');
    }
  });
}

// A copy of what a function of the page receives: it changes nothing but what it passes on.
export const copy: <T extends JSONValue>(m: T) => T = copyJSON;


/** Whether a value of the page is a promise (or a thenable). */
export const isThenable = (v: unknown): v is PromiseLike<unknown> => !!v && typeof (v as PromiseLike<unknown>).then == 'function';
