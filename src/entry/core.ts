// `svc-analytics/core`: the npm entry without the helper namespaces (`ecommerce`, `semantic`), for apps that do not
// use them: their tables tree-shake away. Everything else is the `svc-analytics` entry's.
import type { BrowserSettings, LoadOptions } from '../types';
import type { CoreAnalytics } from '../api/types';
import { loadBrowser } from './npm';

/** `AnalyticsBrowser.load({ writeKey }, options)` returns the API without `ecommerce` and `semantic`. */
export const AnalyticsBrowser = {
  load: (settings: BrowserSettings, options?: LoadOptions): CoreAnalytics => loadBrowser(settings, options),
};
export type { CoreAnalytics, Group, TrackEventName, TrackProperties, IdentifyTraits, GroupTraits } from '../api/types';
export type * from '../extend/types';
export type * from '../message/types';
export type * from '../message/errors';
export type * from '../types';
