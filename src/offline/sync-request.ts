import type { NoteStorage } from '../delivery/platform';

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

/** The message a page posts to its service worker with what the exit note says now (its JSON text, or null). */
export const NOTE_MESSAGE = 'svcAnalyticsNote';

/**
 * The exit note (delivery/exit-note.ts: ids handed to the browser as a page went away) told to the site's service
 * worker too, as it is written: the worker cannot read localStorage, and must not send again what the note names
 * (src/offline/deliver.ts). Where no service worker controls the page, the note is just stored.
 */
export const mirrored = (s?: NoteStorage): NoteStorage | undefined =>
  s && {
    getItem: (key) => s.getItem(key),
    setItem(key, value) {
      s.setItem(key, value);
      tell(value);
    },
    removeItem(key) {
      s.removeItem(key);
      tell(null);
    },
  };

function tell(note: string | null) {
  try {
    navigator.serviceWorker.controller?.postMessage({ [NOTE_MESSAGE]: note });
  } catch {
    // no service worker here
  }
}
