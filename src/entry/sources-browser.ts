// The IIFE build of the sources chunk (dist/analytics.sources.min.js): trackLink/trackForm (src/sources/autotrack.ts),
// an edge (CONTRACT section 1). The bundle inserts it on the first `trackLink`, `trackForm` (or their aliases) and
// reads what it leaves here when it has run (src/api/lazy.ts binds what waited for it, in call order).
import { createAutotrack } from '../sources/autotrack';

// (the page's window, with the property this chunk leaves on it)
const page: Window & { svcAnalyticsSources?: typeof createAutotrack } = window;
page.svcAnalyticsSources = createAutotrack;
