import type { BrowserSettings, LoadOptions } from './types';
import { createAnalytics, type Analytics } from './analytics';
import type { Plugin } from './plugins';

// One instance per write key in a page, whatever loads it again: React's StrictMode runs effects twice, and hot
// module reload evaluates this module again (so the registry lives on the global object, not in this module).
const INSTANCES = Symbol.for('svc-analytics.instances');

/**
 * The npm entry: `AnalyticsBrowser.load({ writeKey }, options)` returns the API, usable before it is ready. In a
 * browser a second `load` with the same write key returns the first instance (its options stay those of the first).
 */
export const AnalyticsBrowser = {
  load(settings: BrowserSettings, options?: LoadOptions): Analytics {
    const writeKey = settings && settings.writeKey;
    const registry: Map<string, Analytics> | undefined =
      typeof window == 'undefined' ? undefined : ((globalThis as any)[INSTANCES] ||= new Map());
    const existing = registry && typeof writeKey == 'string' && registry.get(writeKey);
    if (existing) return existing;
    // The debug tools are a chunk of their own, imported on `debug(true)` only.
    const { api } = createAnalytics(() => import('./debug').then((m) => m.createDebugTools()));
    // On a server (SSR) `load` does nothing and touches no browser global; calls are refused with `not_loaded`.
    // Plugins first, as analytics.js: every message, the first page view included, goes through them.
    if (settings && Array.isArray(settings.plugins)) api.register(...(settings.plugins as Plugin[]));
    api.load(writeKey, options);
    if (registry && api.initialized) registry.set(writeKey, api);
    return api;
  },
};
