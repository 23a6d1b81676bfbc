import type { BrowserSettings, LoadOptions } from '../types';
import type { Analytics } from '../helpers/add-helpers';
import { loadBrowser } from './npm';
import { addHelpers } from '../helpers/add-helpers';

/**
 * The npm entry (CONTRACT section 1): `AnalyticsBrowser.load({ writeKey }, options)` returns the API, usable before
 * it is ready, with the `ecommerce` and `semantic` helpers (also on an instance `svc-analytics/core` made first).
 */
export const AnalyticsBrowser = {
  load: (settings: BrowserSettings, options?: LoadOptions): Analytics => loadBrowser(settings, options, addHelpers),
};
export type { Analytics } from '../helpers/add-helpers';
export type { CoreAnalytics, Group, TrackEventName, TrackProperties, IdentifyTraits, GroupTraits } from '../api/types';
export type * from '../extend/types';
export type * from '../message/types';
export type * from '../message/errors';
export type * from '../types';
export type * from '../helpers/ecommerce';
export type * from '../helpers/semantic';
