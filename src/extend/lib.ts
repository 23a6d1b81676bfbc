import type { byteLength, copyJSON, ownKeys, sanitize, stringify, timestamp, tooLarge } from '../message/validate';
import type { isObject } from '../message/boundary';
import type { analyticsError, describe } from '../message/errors';
import type { over } from '../message/message';

/**
 * What the middleware chunk (dist/analytics.extend.min.js) uses of the bundle's message code, in this order (a list:
 * no names to ship; rollup.config.mjs reads the order here): the bundle gives its own functions as it loads the chunk (src/entry/browser.ts `loadExtend`), so that the chunk does not carry a second
 * copy of them. In the chunk's build only, the chunk's imports of src/message/validate.ts, boundary.ts, errors.ts and message.ts
 * read them from here (rollup.config.mjs `shared`); every other build imports those files as they are.
 */
export type Lib = [
  analyticsError: typeof analyticsError,
  byteLength: typeof byteLength,
  copyJSON: typeof copyJSON,
  describe: typeof describe,
  isObject: typeof isObject,
  over: typeof over,
  ownKeys: typeof ownKeys,
  sanitize: typeof sanitize,
  stringify: typeof stringify,
  timestamp: typeof timestamp,
  tooLarge: typeof tooLarge,
];

/** The bundle's functions, once given (the first `share` wins: the chunk is the bundle's, not the page's). */
export let lib: Lib;
export const share = (given: Lib) => void (lib ||= given);
