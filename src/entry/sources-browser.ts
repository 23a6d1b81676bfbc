// The IIFE build of the sources chunk (dist/analytics.sources.min.js): trackLink/trackForm (src/sources/autotrack.ts)
// and trackPageViews' watch of URL changes (src/sources/pageviews.ts), an edge (CONTRACT section 1). The bundle
// inserts it on the first `trackLink`, `trackForm` (or their aliases), or at a load with `trackPageViews`, and reads
// what it leaves here when it has run (src/api/lazy.ts runs what waited for it, in call order).
import { sources, type Sources } from '../sources';

// (the page's window, with the property this chunk leaves on it)
const page: Window & { svcAnalyticsSources?: Sources } = window;
page.svcAnalyticsSources = sources;
