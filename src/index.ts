import type { BrowserSettings, LoadOptions } from './types';
import type { Analytics } from './analytics';
import { loadBrowser } from './npm';
import { addHelpers } from './helpers';

/**
 * The npm entry (CONTRACT section 1): `AnalyticsBrowser.load({ writeKey }, options)` returns the API, usable before
 * it is ready, with the `ecommerce` and `semantic` helpers (also on an instance `svc-analytics/core` made first).
 */
export const AnalyticsBrowser = {
  load: (settings: BrowserSettings, options?: LoadOptions): Analytics => loadBrowser(settings, options, addHelpers) as Analytics,
};
export type { Analytics, CoreAnalytics } from './analytics';
export type * from './types';
export type * from './ecommerce';
export type * from './semantic';
