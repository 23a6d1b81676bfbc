// Opt-in types for snippet users: `import type {} from 'svc-analytics/global'` (or a `/// <reference types=...>`)
// declares `window.analytics` as the library's API. Not imported by the library itself.
import type { Analytics } from '../helpers/add-helpers';

declare global {
  interface Window {
    /** svc-analytics: the snippet's stub until the bundle takes over, then the API (both have every method). */
    analytics: Analytics;
  }
}

export type { Analytics };
