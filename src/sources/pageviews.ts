import type { RecordedPage } from '../api/types';
import type { wireUrl as WireUrl } from '../message/context';

/**
 * `trackPageViews` (CONTRACT section 3), after the page view at load (which the bundle sends itself, so that it never
 * waits for this chunk): one for every same-document URL change (history.pushState, replaceState that changes the
 * URL, back/forward, hash change) from `last`, the URL of the page view sent before, with the previous URL as the
 * referrer (a change made while this code loaded is seen at once). The check waits a frame so the route has rendered
 * its title, and a router firing several of these for one navigation sends one page view. URLs are compared as they go
 * on the wire (see `wireUrl`): a fragment that carries parameters (an OAuth callback's `#access_token=...`, then
 * removed by `replaceState`) makes no page view (the bundle gives `wireUrl`: the chunk does not carry a copy of it).
 * The bundle hears every change (src/api/analytics.ts `watchPages`: it wraps history.pushState and replaceState and
 * listens to back/forward and hash changes from its own load, before an app's router that tracks its route's events a
 * frame after the change, as this chunk, which comes later, could not: listeners run in the order they were added, so
 * the page view stays first) and calls what this returns on each of them.
 */
export function trackPageViews(send: (page: RecordedPage) => void, last: string, wireUrl: typeof WireUrl): (traversal?: unknown) => void {
  let pending = false;
  const check = () => {
    pending = false;
    const url = wireUrl(location.href);
    if (url == last) return;
    // (the title: the bundle reads it, through Document.prototype, never an element named `title`)
    send([url, '', last]);
    last = url;
  };
  const soon = (traversal?: unknown) => {
    if (pending) return;
    pending = true;
    // Read after the next frame (a task queued from inside it), so a router that renders its title in that
    // frame has done so; a hidden tab gets no frames, so a timer backs it up. Back/forward and hash changes
    // (`traversal`): read in the frame itself. The app's router heard the change in the same event, perhaps before
    // the bundle did (a bundle that came after the app's scripts listens after them), and has rendered; its route's
    // events a frame later (a task queued from a frame callback, as the demo's) then come after the page view.
    let done = false;
    const once = () => (done ? 0 : ((done = true), check()));
    requestAnimationFrame(() => (traversal ? once() : setTimeout(once)));
    setTimeout(once, 100);
  };
  if (wireUrl(location.href) != last) soon();
  return soon;
}
