/** How the page leaves (see `LifecycleHandlers.exit`). */
export type ExitKind = 'hidden' | 'cached' | 'discarded';

/** What the library does at each moment of the page's life. */
export interface LifecycleHandlers {
  /**
   * The page is hidden (`hidden`), or going away: into the back/forward cache (`cached`, it may come back) or for
   * good (`discarded`: a closing tab, or a navigation the cache does not keep). The last reliable moment to send
   * (https://developer.mozilla.org/en-US/docs/Web/API/Document/visibilitychange_event#usage_notes).
   */
  _exit(how: ExitKind): void;
  /** The page is visible again, or restored from the back/forward cache (`restored` true). */
  _resume(restored: boolean): void;
  /** The network is back. */
  _online(): void;
}

/**
 * The one listener of page lifecycle events: `visibilitychange` to hidden and `pagehide` mean exit; `pageshow`
 * from the back/forward cache and visibility back mean resume. Never `unload`/`beforeunload` (they break bfcache,
 * https://web.dev/articles/bfcache#never-use-the-unload-event).
 */
export function listenLifecycle(handlers: LifecycleHandlers): () => void {
  const onVisibility = () => (document.visibilityState == 'hidden' ? handlers._exit('hidden') : handlers._resume(false));
  // `persisted`: the page goes into the back/forward cache (https://html.spec.whatwg.org/#the-pagetransitionevent-interface)
  const onPagehide = (event: PageTransitionEvent) => handlers._exit(event.persisted ? 'cached' : 'discarded');
  const onPageshow = (event: PageTransitionEvent) => event.persisted && handlers._resume(true);
  const onOnline = () => handlers._online();
  document.addEventListener('visibilitychange', onVisibility);
  addEventListener('pagehide', onPagehide);
  addEventListener('pageshow', onPageshow);
  addEventListener('online', onOnline);
  return () => {
    document.removeEventListener('visibilitychange', onVisibility);
    removeEventListener('pagehide', onPagehide);
    removeEventListener('pageshow', onPageshow);
    removeEventListener('online', onOnline);
  };
}
