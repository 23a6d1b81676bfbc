import { listenLifecycle, wasDiscarded, type LifecycleHandlers } from './lifecycle';

// The platform: every built-in of the browser the delivery code touches, in ONE object passed in parameters
// (`startDelivery(settings)` takes it as `settings.platform`, default `browserPlatform()`), so that the same code runs
// in a page, in a service worker (issue 30) and in the simulator (sim/, issue 27) on fakes.
//
// How the simulator supplies each member (one Platform per simulated page, made when that page starts delivery):
// - `_now`, `_setTimeout`, `_clearTimeout`: its virtual clock (no real timer in a run); a timer of a page that is
//   frozen, in the back/forward cache or dead does not fire (or fires when the page thaws), as in a browser.
// - `_random`: its seeded generator (the retry backoff's jitter), so a seed replays the same run.
// - `_fetch`: its fake API for that page (seeded answers: 2xx, 4xx, 429 with Retry-After, 5xx, redirects answered as
//   `{type: 'opaqueredirect', status: 0}`, network errors as a rejected TypeError, answers that never come); a
//   keepalive body over the page's 64 KiB in-flight quota rejects with a TypeError (fetch spec "inflight keepalive
//   bytes"); an aborted signal rejects with an AbortError.
// - `_sendBeacon`: false when the quota refuses it (beacons share the keepalive quota); may throw (a bad URL).
// - `_fetchLater`: undefined to play Firefox/WebKit; else the fake deferred fetching: sends at the page's end (close,
//   crash, discard) or as it enters the back/forward cache, never after its signal aborted; throws a
//   QuotaExceededError past the origin's 64 KiB; `activated` true once sent. Only the browser's own function belongs
//   here (`browserPlatform` checks it is native).
// - `_onLine`: the page's navigator.onLine.
// - `_locks`: a fake LockManager (`request` with `signal`, `query`) shared by the pages of one simulated browser, whose
//   locks a page's death releases; undefined to play a browser without Web Locks.
// - `_channel`: a BroadcastChannel of that browser (pages of the same site hear each other); may throw (missing).
// - `_storage`: the site's localStorage of that browser (getItem/setItem/removeItem; kept across crashes, shared by
//   its pages, written synchronously); undefined where there is none (a service worker: see below). Holds the
//   ledger's exit note.
// - `_listen`: registers the page's lifecycle handlers (`_exit('hidden' | 'cached' | 'discarded')`, `_resume`,
//   `_online`); the simulator calls them as its page hides, freezes, enters or leaves the back/forward cache, closes,
//   comes online. Returns an unsubscribe.
// - `_wasDiscarded`: true for a page that replaces one the browser discarded (Chromium's document.wasDiscarded).
// IndexedDB is not routed: idb-keyval reads the global `indexedDB`; the simulator installs a fresh fake-indexeddb
// IDBFactory as that global per simulated browser (and swaps it as it switches browsers).
//
// A service worker (issue 30) starts delivery with `{...browserPlatform(), _listen: () => () => {}, _storage: note}`
// (`browserPlatform` works there: no document, no localStorage, no sendBeacon, each guarded):
// no page events (it is never hidden; what waits goes on its own timer and at `_flush`), and the exit note kept in a
// synchronous store of its own (a Map it loads from IndexedDB first, say), or none (`_storage` undefined: it then
// reads no note, and adopts only after ORPHAN_GRACE_MS like any tab; a page's note in localStorage is out of its reach,
// so what a page handed to the browser at exit and noted may be sent again by it: at least once, never lost).
// `_wasDiscarded` false. Its `_ready` settles once what closed pages left is adopted (after ORPHAN_GRACE_MS, under
// the tabs' lock); `_scheduler._flush()` then sends it. (`identity` may be one whose `_persist`/`_reload` do nothing.)

/** The note store: the parts of `Storage` the exit note uses. */
export type NoteStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** The built-ins delivery uses (see the header comment for how a simulator or a service worker supplies them). */
export interface Platform {
  /** ms since the epoch (`Date.now`). */
  _now(): number;
  /** `setTimeout`: runs `fn` once after `ms` (0 when omitted); returns a handle for `_clearTimeout`. */
  _setTimeout(fn: () => void, ms?: number): ReturnType<typeof setTimeout>;
  /** `clearTimeout`: accepts undefined and handles already fired. */
  _clearTimeout(handle: ReturnType<typeof setTimeout> | undefined): void;
  /** A number in [0, 1) (`Math.random`): the backoff's jitter. */
  _random(): number;
  /** `fetch`, as the page had it when the library loaded. */
  _fetch: typeof fetch;
  /** `navigator.sendBeacon(url, body)`: whether the browser queued it; throws where missing. */
  _sendBeacon(url: string, body: string): boolean;
  /** The browser's own `fetchLater` (deferred fetching), or undefined where there is none. */
  _fetchLater?: (url: string, init: RequestInit) => { activated: boolean };
  /** `navigator.onLine` now. */
  _onLine(): boolean;
  /** `navigator.locks`, or undefined where missing (or its getter throws). */
  _locks?: LockManager;
  /** `new BroadcastChannel(name)`; throws where missing. */
  _channel(name: string): BroadcastChannel;
  /** `localStorage`, or undefined where there is none (it may still throw on use: blocked storage). */
  _storage?: NoteStorage;
  /** Listens to the page's lifecycle (lifecycle.ts); returns an unsubscribe. A context without pages: a no-op. */
  _listen(handlers: LifecycleHandlers): () => void;
  /** Whether this page replaces one the browser discarded (no page event ran as that page ended). */
  _wasDiscarded: boolean;
}

/**
 * The browser's platform: `fetch`, `sendBeacon`, `fetchLater` and the lock manager are taken now (a page that later
 * wraps, replaces or breaks them cannot lose or change our requests); the clock and timers are read when used.
 */
export function browserPlatform(): Platform {
  const nav = navigator;
  const sendBeacon = nav.sendBeacon;
  // Deferred fetching (https://fetch.spec.whatwg.org/#deferred-fetch): Chromium 135 and later, in secure contexts.
  // Only the browser's own (a real function: where it is missing, an element named fetchLater could stand in for it;
  // a page's stand-in, a no-op shim or a polyfill that sends at once, would lose or repeat what it is given).
  const later = (globalThis as any).fetchLater;
  let fetchLater: Platform['_fetchLater'];
  let locks: LockManager | undefined;
  let storage: NoteStorage | undefined;
  try {
    if (typeof later == 'function' && /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(later))) fetchLater = later;
  } catch {
    // a page that broke Function.prototype.toString: no deferred delivery
  }
  try {
    locks = nav.locks;
  } catch {
    // a getter that throws: as if missing
  }
  try {
    storage = localStorage;
  } catch {
    // a sandboxed frame, "block all cookies": no note
  }
  return {
    _now: () => Date.now(),
    _setTimeout: (fn, ms) => setTimeout(fn, ms),
    _clearTimeout: (handle) => clearTimeout(handle),
    _random: () => Math.random(),
    _fetch: fetch,
    _sendBeacon: (url, body) => sendBeacon.call(nav, url, body),
    _fetchLater: fetchLater,
    _onLine: () => nav.onLine,
    _locks: locks,
    _channel: (name) => new BroadcastChannel(name),
    _storage: storage,
    _listen: listenLifecycle,
    _wasDiscarded: wasDiscarded(),
  };
}
