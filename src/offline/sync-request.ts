// The page's side of `svc-analytics/service-worker` (CONTRACT section 1): a send that failed for lack of a network,
// in a page a service worker of the site controls, asks that worker for a Background Sync
// (https://wicg.github.io/background-sync/spec/#dom-syncmanager-register): the browser wakes the worker once it is
// online again, with no page open, and the worker delivers what is stored (src/offline/deliver.ts).
// In the bundle itself, not a chunk: it runs offline, when no chunk can load (unless the worker cached it).

/** The tag the pages register and the worker answers (`sync` events of other tags are the site's own). */
export const SYNC_TAG = 'svc-analytics';

/**
 * Asks the service worker that controls this page for a Background Sync; does nothing where there is none, or where
 * Background Sync is missing (Firefox, Safari: the next page sends, as before). Never throws or rejects
 * (`navigator.serviceWorker` throws in an opaque origin, and is missing in insecure contexts).
 */
export function requestSync() {
  try {
    // (`ready` settles only where a service worker of the site has this page in its scope)
    navigator.serviceWorker.ready.then((r) => (r as { sync?: { register(tag: string): Promise<void> } }).sync?.register(SYNC_TAG)).catch(() => {});
  } catch {
    // no service worker here
  }
}
