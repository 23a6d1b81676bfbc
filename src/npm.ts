import type { BrowserSettings, LoadOptions } from './types';
import { createAnalytics, type Analytics } from './analytics';
import type { Plugin } from './plugins';

/** The npm entry: `AnalyticsBrowser.load({ writeKey }, options)` returns the API, usable before it is ready. */
export const AnalyticsBrowser = {
  load(settings: BrowserSettings, options?: LoadOptions): Analytics {
    // The debug tools are a chunk of their own, imported on `debug(true)` only.
    const { api } = createAnalytics(() => import('./debug').then((m) => m.createDebugTools()));
    // On a server (SSR) `load` does nothing and touches no browser global; calls are refused with `not_loaded`.
    // Plugins first, as analytics.js: every message, the first page view included, goes through them.
    if (settings && Array.isArray(settings.plugins)) api.register(...(settings.plugins as Plugin[]));
    api.load(settings && settings.writeKey, options);
    return api;
  },
};
