/** How the page leaves (see `LifecycleHandlers.exit`). */
export type ExitKind = 'hidden' | 'cached' | 'discarded';

/** What the library does at each moment of the page's life. */
export interface LifecycleHandlers {
  /**
   * The page is hidden (`hidden`), or going away: into the back/forward cache (`cached`, it may come back) or for
   * good (`discarded`: a closing tab, or a navigation the cache does not keep). The last reliable moment to send.
   */
  exit(how: ExitKind): void;
  /** The page is visible again, or restored from the back/forward cache (`restored` true). */
  resume(restored: boolean): void;
  /** The network is back. */
  online(): void;
}

/**
 * The one listener of page lifecycle events: `visibilitychange` to hidden and `pagehide` mean exit; `pageshow`
 * from the back/forward cache and visibility back mean resume. Never `unload`/`beforeunload` (they break bfcache).
 */
export function listenLifecycle(h: LifecycleHandlers): () => void {
  const onVisibility = () => (document.visibilityState == 'hidden' ? h.exit('hidden') : h.resume(false));
  // `persisted`: the page goes into the back/forward cache (https://html.spec.whatwg.org/#the-pagetransitionevent-interface)
  const onPagehide = (e: PageTransitionEvent) => h.exit(e.persisted ? 'cached' : 'discarded');
  const onPageshow = (e: PageTransitionEvent) => e.persisted && h.resume(true);
  const onOnline = () => h.online();
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
