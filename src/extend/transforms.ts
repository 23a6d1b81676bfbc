import type { JSONObject } from '../message/types';

/** Set by `load` (a middleware may be added before it): read when a message goes through. */
export interface TransformSettings {
  /** The load-time default `integrations` (what a middleware gets as `integrations`). */
  integrations: JSONObject;
  /** How long one middleware, hook or plugin `load` may take, in ms. */
  timeout: number;
}

/** `middlewareTimeout` default: one second. */
export const DEFAULT_MIDDLEWARE_TIMEOUT = 1000;
