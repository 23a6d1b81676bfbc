import { hasDocument } from '../offline/scope';

/** The key of the storage event by which a page's erasure tells the site's other pages when (exit-note.ts `tellErased`). */
export const ERASED_KEY = 'svc_erased';

/** How the page leaves (see `LifecycleHandlers.exit`). */
export type ExitKind = 'hidden' | 'cached' | 'discarded';

/** What the library does at each moment of the page's life. */
export interface LifecycleHandlers {
  /**
   * The page is hidden or frozen (`hidden`), or going away: into the back/forward cache (`cached`, it may come back)
   * or for good (`discarded`: a closing tab, or a navigation the cache does not keep). The last reliable moment to send
   * (https://developer.mozilla.org/en-US/docs/Web/API/Document/visibilitychange_event#usage_notes).
   */
  _exit(how: ExitKind): void;
  /** The page is visible again, or restored from the back/forward cache (`restored` true). */
  _resume(restored: boolean): void;
  /** The network is back. */
  _online(): void;
  /** Another page of the site erased what was stored, at `at` (ms since the epoch: exit-note.ts `tellErased`). */
  _erased(at: number): void;
}

/**
 * Whether this page replaces one the browser discarded to save memory (Page Lifecycle,
 * https://wicg.github.io/page-lifecycle/#dom-document-wasdiscarded; Chromium only): no page event ran as that page
 * ended, so what it queued is adopted at once. False where there is no document (a service worker).
 */
export const wasDiscarded = () => hasDocument() && !!(document as { wasDiscarded?: boolean }).wasDiscarded;

/**
 * The one listener of page lifecycle events: `visibilitychange` to hidden, `freeze` and `pagehide` mean exit;
 * `pageshow` from the back/forward cache and visibility back mean resume. A frozen page runs no script, and may be
 * discarded without another event (https://wicg.github.io/page-lifecycle/#freeze-event), so waiting messages leave
 * before it, as at a hide. Never `unload`/`beforeunload` (they break bfcache,
 * https://web.dev/articles/bfcache#never-use-the-unload-event).
 */
export function listenLifecycle(h: LifecycleHandlers): () => void {
  // (a worker has no document: `online` only; what it queued is stored, and adopted by whoever runs next)
  const doc = hasDocument() ? document : undefined;
  const on: [EventTarget | undefined, string, (event: any) => unknown][] = [
    [doc, 'visibilitychange', () => (document.visibilityState == 'hidden' ? h._exit('hidden') : h._resume(false))],
    [doc, 'freeze', () => h._exit('hidden')],
    // `persisted`: the page goes into the back/forward cache (https://html.spec.whatwg.org/#the-pagetransitionevent-interface)
    [globalThis, 'pagehide', (event: PageTransitionEvent) => h._exit(event.persisted ? 'cached' : 'discarded')],
    [globalThis, 'pageshow', (event: PageTransitionEvent) => event.persisted && h._resume(true)],
    [globalThis, 'online', () => h._online()],
    [globalThis, 'storage', (event: StorageEvent) => event.key == ERASED_KEY && event.newValue && h._erased(+event.newValue)],
  ];
  on.forEach(([target, name, fn]) => target?.addEventListener(name, fn));
  return () => on.forEach(([target, name, fn]) => target?.removeEventListener(name, fn));
}
