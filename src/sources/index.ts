// The sources (CONTRACT section 1, an edge): the features that call the API as a page would. In the CDN build they are
// the sources chunk (dist/analytics.sources.min.js, src/entry/sources-browser.ts), fetched on the first trackLink,
// trackForm (or their aliases) or at a load with `trackPageViews`; the npm entries import them at once.
import { createAutotrack } from './autotrack';
import { trackPageViews } from './pageviews';

/** What the sources chunk holds (plain names: the bundle and the chunk are minified apart). */
export const sources = { autotrack: createAutotrack, pageViews: trackPageViews };
export type Sources = typeof sources;
