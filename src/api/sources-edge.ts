import type { AnalyticsError } from '../message/errors';
import type { Autotrack, AutotrackDeps } from '../sources/autotrack';
import type { Sources } from '../sources';
import type { RecordedPage } from './types';
import { analyticsError, describe } from '../message/errors';
import { wireUrl } from '../message/context';
import { lazy } from './lazy';
import { readPage } from './page-context';

// The bundle's side of the sources edge (src/sources/: trackLink/trackForm, trackPageViews), wired by analytics.ts.

// trackLink/trackForm and trackPageViews (an edge: the sources chunk in the CDN bundle), run in call order once it is
// here; a chunk that cannot load is reported, and what waits runs once a later call loads it. `_autotrack` runs a
// function with the one trackLink/trackForm binder.
export function sourcesEdge(load: () => Sources | Promise<Sources>, report: (e: AnalyticsError) => void, deps: AutotrackDeps) {
  // (a chunk that could not load is `chunk_unavailable`; a call it could not run, say a page's element list whose
  // reading throws, `invalid_arguments`)
  const sources = lazy(load, (e, used) => report(analyticsError(used ? 'invalid_arguments' : 'chunk_unavailable', `trackLink/trackForm/trackPageViews: ${describe(e)}`)));
  let bound: Autotrack | undefined;
  return Object.assign(sources, { _autotrack: (f: (a: Autotrack) => void) => sources((s) => f((bound ||= s.autotrack(deps)))) });
}

// trackPageViews: the page view at load goes now (`view`); the frame-timed watch of later URL changes comes with the
// sources chunk. Every change is heard from now: history.pushState and replaceState (wrapped here), back/forward and
// hash changes (listened to before an app's router that tracks its route's events a frame after the change: listeners
// run in the order they were added, so the page view stays first). Until the chunk is here, and for good if it cannot
// load, a change is a page view at once (its title as it is then): a route change made while the chunk loads is not
// lost with a page left before it came, or whose chunk failed (e2e/contract-audit.spec.ts). `view` drops a page view
// of the URL of the last page message, so the chunk, which checks the URL as it comes, never repeats one.
export function watchPages(view: (page: RecordedPage) => void, sources: ReturnType<typeof sourcesEdge>) {
  let last = wireUrl(location.href);
  // (the referrer read through Document.prototype, never an element named `referrer`; the title: `view`)
  view([last, '', readPage()[2]]);
  let changed = (_traversal?: unknown) => {
    const url = wireUrl(location.href);
    if (url != last) view([url, '', last]), (last = url);
  };
  for (const name of ['popstate', 'hashchange']) addEventListener(name, () => changed(1));
  const h = history;
  for (const name of ['pushState', 'replaceState'] as const) {
    const orig = h[name];
    h[name] = function (this: History, ...args: Parameters<History['pushState']>) {
      const r = orig.apply(this, args);
      changed();
      return r;
    };
  }
  sources((s) => (changed = s.pageViews(view, last, wireUrl)));
}
