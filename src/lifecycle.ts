/** What the library does at each moment of the page's life. */
export interface LifecycleHandlers {
  /** The page is hidden (`final` false) or going away (`final` true): the last reliable moment to send. */
  exit(final: boolean): void;
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
  const onVisibility = () => (document.visibilityState == 'hidden' ? h.exit(false) : h.resume(false));
  const onPagehide = () => h.exit(true);
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
