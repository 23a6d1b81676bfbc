import type { Loop } from './loop';
import { als } from './loop';
import type { Net, Page as NetPage, Req } from './net';
import { KEEPALIVE_QUOTA } from './net';
import type { Rng } from './rng';
import { createLocks } from './locks';
import { createRng } from './rng';

// A generator of its own for the page's Math.random, so that how often the code draws does not shift the schedule's.
const createJitter = (seed: number) => createRng(seed).next;

// The browser's platform as the delivery code reads it, per page: fetch, sendBeacon, fetchLater, navigator.onLine,
// navigator.locks, BroadcastChannel, localStorage, indexedDB, document and window events. Installed as globals
// whose getters answer for the page in whose context the code runs (loop.ts `als`).

export interface Page extends NetPage {
  tab: number;
  visibility: 'visible' | 'hidden';
  /** What the page is in its life (see actors.ts). */
  life: 'live' | 'frozen' | 'cached' | 'dead';
  wasDiscarded: boolean;
  docListeners: Map<string, Set<(e: unknown) => void>>;
  winListeners: Map<string, Set<(e: unknown) => void>>;
  deferred: Set<Deferred>;
  fetch: typeof fetch;
  sendBeacon: (url: string, data: string) => boolean;
  fetchLater?: (url: string, init: RequestInit) => { readonly activated: boolean };
  idb: IDBFactory;
}
interface Deferred {
  url: string;
  body: string;
  bytes: number;
  activated: boolean;
  /** When the page handed it to the browser. */
  since: number;
}

/** Storage faults the driver turns on and off. */
export interface StorageFaults {
  /** Every put throws QuotaExceededError (the disk is full, or the origin's quota used). */
  full: boolean;
  /** The next `indexedDB.open` never answers (blocked by another connection's version change, or a stalled profile). */
  blockNextOpen: boolean;
}

export function createPlatform(loop: Loop, net: Net, rng: Rng, opts: { fetchLater: boolean; locks: boolean; sw?: boolean }, idb: IDBFactory) {
  const storage = new Map<string, string>();
  const faults: StorageFaults = { full: false, blockNextOpen: false };
  const channels = new Set<{ name: string; page: Page; ch: FakeChannel }>();
  const locks = createLocks(loop);
  const cur = () => als.getStore() as Page | undefined;
  const pages = new Set<Page>();

  // Activates a page's deferred requests: at its deadline, when the page goes away (closed, crashed, discarded) or
  // enters the back/forward cache (https://fetch.spec.whatwg.org/#process-deferred-fetches; the browser sends them
  // for a renderer that crashed too, which is what deferred delivery is for). Never one that was aborted.
  const activate = (page: Page, unknowable: boolean) => {
    for (const d of page.deferred) {
      d.activated = true;
      page.keepalive -= d.bytes;
      const r = net.send({ page, via: 'later', at: loop.now(), since: d.since, url: d.url, bytes: d.bytes, body: d.body });
      if (unknowable) r.unknowable = true;
    }
    page.deferred.clear();
  };

  function makePage(n: number, tab: number, wasDiscarded: boolean): Page {
    const page = { n, tab, id: 'page' + n, dead: false, frozen: false, held: [], inflight: new Set<Req>(), keepalive: 0, visibility: 'visible', life: 'live', wasDiscarded, docListeners: new Map(), winListeners: new Map(), deferred: new Set() } as unknown as Page;
    page.fetch = ((url: string, init: RequestInit) =>
      new Promise((resolve, reject) => {
        // (a page that crashed or was killed runs nothing more: a continuation of its code that the simulator's promises
        // still run sends nothing, and never hears back)
        if (page.dead) return;
        const body = String(init.body);
        const bytes = Buffer.byteLength(body);
        // https://fetch.spec.whatwg.org/#http-network-or-cache-fetch: a keepalive body that would pass 64 KiB in
        // flight for the page (with its beacons and, here, its deferred requests) is a network error (TypeError).
        if (init.keepalive && page.keepalive + bytes > KEEPALIVE_QUOTA) return reject(new TypeError('Failed to fetch (keepalive quota)'));
        const auth = (init.headers as Record<string, string> | undefined)?.Authorization;
        const req = net.send({ page, via: init.keepalive ? 'keepalive' : 'fetch', at: loop.now(), url, bytes, body, auth }, (a) =>
          loop.at(0, () => {
            req.heard = true;
            if (!a || !a.status) return reject(new TypeError('Failed to fetch'));
            // redirect: 'manual' gives an opaque-redirect filtered response: status 0, no headers
            // (https://fetch.spec.whatwg.org/#concept-filtered-response-opaque-redirect)
            if (a.redirect) return resolve({ type: 'opaqueredirect', status: 0, body: null, headers: { get: () => null } } as unknown as Response);
            resolve({ type: 'cors', status: a.status, body: null, headers: { get: (h: string) => (h.toLowerCase() == 'retry-after' ? a.retryAfter ?? null : null) } } as unknown as Response);
          }, page),
        );
        init.signal?.addEventListener('abort', () => {
          req.heard = true;
          net.abort(req);
          // (the page gave up on it without an answer: whatever it carried may have arrived)
          req.unknowable = true;
          loop.at(0, () => reject(new DOMException('aborted', 'AbortError')), page);
        });
      })) as typeof fetch;
    // https://w3c.github.io/beacon/#sendbeacon-method: queued as a keepalive fetch; false when over the quota.
    page.sendBeacon = (url: string, data: string) => {
      if (page.dead) return false;
      const bytes = Buffer.byteLength(data);
      if (page.keepalive + bytes > KEEPALIVE_QUOTA) return false;
      net.send({ page, via: 'beacon', at: loop.now(), url, bytes, body: data });
      return true;
    };
    if (opts.fetchLater) {
      // https://fetch.spec.whatwg.org/#dom-window-fetchlater: QuotaExceededError over the origin's 64 KiB (shared
      // here with keepalive: issue 27's model), AbortError for an aborted signal; abort() takes back one not yet
      // activated. Bound, so its toString ends in [native code] like the browser's own (transport.ts checks it).
      const later = (url: string, init: RequestInit & { activateAfter?: number }) => {
        if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError');
        // (nothing is deferred by a page that is gone: see fetch above)
        if (page.dead) return { activated: false };
        const body = String(init.body);
        const bytes = Buffer.byteLength(body);
        if (page.keepalive + bytes > KEEPALIVE_QUOTA) throw new DOMException('deferred fetch quota', 'QuotaExceededError');
        const d: Deferred = { url, body, bytes, activated: false, since: loop.now() };
        page.deferred.add(d);
        page.keepalive += bytes;
        init.signal?.addEventListener('abort', () => {
          if (!d.activated && page.deferred.delete(d)) page.keepalive -= bytes;
        });
        if (init.activateAfter != null)
          loop.at(init.activateAfter, () => {
            if (page.deferred.delete(d)) {
              d.activated = true;
              page.keepalive -= bytes;
              net.send({ page, via: 'later', at: loop.now(), since: d.since, url, bytes, body });
            }
          }, null);
        return { get activated() { return d.activated; } };
      };
      page.fetchLater = later.bind(null);
    }
    page.idb = wrapIdb(idb, page, faults);
    pages.add(page);
    return page;
  }

  class FakeChannel {
    onmessage: ((e: { data: unknown }) => void) | null = null;
    private entry;
    // https://html.spec.whatwg.org/#broadcasting-to-other-browsing-contexts: delivered as a task to every other
    // open channel of that name (a frozen page's waits, loop.ts).
    constructor(name: string) {
      this.entry = { name, page: cur()!, ch: this };
      channels.add(this.entry);
    }
    postMessage(data: unknown) {
      if (this.entry.page.dead) return;
      const copy = structuredClone(data);
      for (const e of channels) if (e.name == this.entry.name && e.ch != this && !e.page.dead) loop.at(0, () => e.ch.onmessage?.({ data: copy }), e.page);
    }
    close() {
      channels.delete(this.entry);
    }
  }

  // A change tells every other page of the site (https://html.spec.whatwg.org/multipage/webstorage.html#the-storage-event),
  // here at once rather than as a task of its own (a task would shift every seed's schedule: main.ts draws for each);
  // a frozen or cached page gets it when it runs again (loop.ts holds it), a dead one never.
  const changed = (key: string, oldValue: string | null, newValue: string | null) => {
    const from = cur();
    if (oldValue === newValue) return;
    for (const p of pages) if (p != from && !p.dead) for (const fn of [...(p.winListeners.get('storage') || [])]) loop.dispatch(p, () => fn({ type: 'storage', key, oldValue, newValue }));
  };
  const write = (k: string, v: string | null) => {
    const old = storage.get(k) ?? null;
    v == null ? storage.delete(k) : storage.set(k, v);
    changed(k, old, v);
  };
  const localStorage = {
    getItem: (k: string) => storage.get(k) ?? null,
    // (a dead page's script is gone: a write its leftover code makes is not the page's)
    setItem: (k: string, v: string) => void (cur()?.dead || (process.env.SIM_NOTE && console.log("note", cur()?.id, k, String(v).slice(0, 400)), write(k, String(v)))),
    removeItem: (k: string) => void (cur()?.dead || (process.env.SIM_NOTE && console.log("unnote", cur()?.id, k), write(k, null))),
    clear: () => storage.clear(),
  };
  // The site's service worker, where the schedule gives the site one (sim/worker.ts sets `sw`): the pages' Background
  // Sync requests and the messages they post to their controller (a structured clone) reach it.
  const sw = { register: () => {}, message: (_data: unknown) => {}, leave: () => {} };
  const serviceWorker = {
    ready: Promise.resolve({ sync: { register: async () => sw.register() } }),
    controller: { postMessage: (data: unknown) => sw.message(structuredClone(data)) },
  };
  const navigator = {
    get serviceWorker() { return opts.sw && cur() ? serviceWorker : undefined; },
    get onLine() { return net.state.online; },
    get sendBeacon() { return cur()?.sendBeacon; },
    get locks() { const p = cur(); return opts.locks && p ? locks.managerFor(p) : undefined; },
  };
  const on = (m: 'docListeners' | 'winListeners', add: boolean) => (type: string, fn: (e: unknown) => void) => {
    const p = cur();
    if (!p) return;
    const set = p[m].get(type) ?? p[m].set(type, new Set()).get(type)!;
    add ? set.add(fn) : set.delete(fn);
  };
  const document = {
    get visibilityState() { return cur()?.visibility; },
    get wasDiscarded() { return cur()?.wasDiscarded; },
    addEventListener: on('docListeners', true),
    removeEventListener: on('docListeners', false),
  };
  const window = { get fetchLater() { return cur()?.fetchLater; }, addEventListener: on('winListeners', true), removeEventListener: on('winListeners', false) };
  const realTimeout = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const realFetch = globalThis.fetch;
  const realNow = Date.now;
  const globals: Record<string, () => unknown> = {
    navigator: () => navigator,
    document: () => document,
    window: () => window,
    fetchLater: () => cur()?.fetchLater,
    localStorage: () => localStorage,
    indexedDB: () => cur()?.idb,
    BroadcastChannel: () => FakeChannel,
    fetch: () => cur()?.fetch ?? realFetch,
    addEventListener: () => on('winListeners', true),
    removeEventListener: () => on('winListeners', false),
    setTimeout: () => (cur() ? (fn: () => void, ms?: number) => loop.at(ms ?? 0, fn) : realTimeout),
    clearTimeout: () => (cur() ? (id: unknown) => loop.cancel(id) : realClear),
  };
  const saved = new Map<string, PropertyDescriptor | undefined>();
  for (const [k, get] of Object.entries(globals)) {
    saved.set(k, Object.getOwnPropertyDescriptor(globalThis, k));
    Object.defineProperty(globalThis, k, { get, set: () => {}, configurable: true });
  }
  Date.now = () => (als.getStore() ? loop.now() : realNow());
  // (the backoff's jitter: from the seed, so a seed replays its run)
  const realRandom = Math.random;
  const jitter = createJitter(rng.next() * 4294967296);
  Math.random = () => (als.getStore() ? jitter() : realRandom());

  return {
    storage,
    faults,
    sw,
    makePage,
    activate,
    locks,
    /** Dispatches a page event (document or window) in the page's context. */
    fire(page: Page, target: 'doc' | 'win', type: string, event: object = {}) {
      const set = (target == 'doc' ? page.docListeners : page.winListeners).get(type);
      if (set) for (const fn of [...set]) loop.dispatch(page, () => fn({ type, ...event }));
    },
    /**
     * The page is gone: its requests in flight are unknowable to it, and so are those whose answer came while it was
     * frozen and it never ran again to hear (CONTRACT section 4: "a request in flight when its page ... was killed");
     * its channels and locks go.
     */
    bury(page: Page) {
      page.dead = true;
      page.life = 'dead';
      // (a deferred request the browser sent as the page went, and a beacon, were handed over by the page: whether
      // their records stay stored for the next load is the library's decision, known when it made it; a crash marks
      // its deferred requests unknowable as it activates them, world.ts `kill`)
      for (const r of page.inflight) if (r.via != 'later' && r.via != 'beacon') r.unknowable = true;
      for (const r of net.log) if (r.page == page && (r.via == 'fetch' || r.via == 'keepalive') && !r.heard) r.unknowable = true;
      for (const e of channels) if (e.page == page) channels.delete(e);
      locks.release(page);
    },
    uninstall() {
      for (const [k, d] of saved) d ? Object.defineProperty(globalThis, k, d) : delete (globalThis as Record<string, unknown>)[k];
      Date.now = realNow;
      Math.random = realRandom;
    },
  };
}
export type Platform = ReturnType<typeof createPlatform>;

// A page's view of IndexedDB: the browser's one database (fake-indexeddb), with faults. A dead page's leftover code
// reaches it no more (its transactions throw), a full disk refuses writes, a blocked open never answers (the store
// gives up after OPEN_TIMEOUT_MS and keeps the queue in memory).
function wrapIdb(idb: IDBFactory, page: Page, faults: StorageFaults): IDBFactory {
  return {
    open(name: string, version?: number) {
      if (faults.blockNextOpen) {
        faults.blockNextOpen = false;
        return {} as IDBOpenDBRequest;
      }
      const req = idb.open(name, version);
      req.addEventListener('success', () => {
        const db = req.result;
        const tx = db.transaction.bind(db);
        db.transaction = ((stores: string | string[], mode?: IDBTransactionMode) => {
          if (page.dead) throw new DOMException('the page is gone', 'InvalidStateError');
          const t = tx(stores, mode);
          // A full disk or origin quota refuses what grows the store (https://w3c.github.io/IndexedDB/#dom-idbobjectstore-put
          // raises, or the transaction aborts, with QuotaExceededError); deletes still go through.
          const os = t.objectStore.bind(t);
          t.objectStore = (n: string) => {
            const s = os(n);
            const put = s.put.bind(s);
            s.put = (...a: Parameters<IDBObjectStore['put']>) => {
              if (faults.full) throw new DOMException('quota exceeded', 'QuotaExceededError');
              return put(...a);
            };
            return s;
          };
          return t;
        }) as typeof db.transaction;
      });
      return req;
    },
    databases: () => idb.databases(),
    deleteDatabase: (n: string) => idb.deleteDatabase(n),
    cmp: (a: unknown, b: unknown) => idb.cmp(a, b),
  } as IDBFactory;
}
