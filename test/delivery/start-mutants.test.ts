// startDelivery as a whole, on a fake platform (as in platform.test.ts): what it reports, when it adopts what other
// tabs left, and what it does at each moment of the page's life (found missing by mutation testing, `npm run mutate`).
import 'fake-indexeddb/auto';
import { IDBDatabase, IDBFactory } from 'fake-indexeddb';
import { createStore, setMany } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startDelivery, type DeliverySettings } from '../../src/delivery/start';
import type { LifecycleHandlers } from '../../src/delivery/lifecycle';
import type { NoteStorage, Platform } from '../../src/delivery/platform';
import { DEFAULT_BOUNDS, type QueueRecord } from '../../src/delivery/queue';
import { LEASE_MS, ORPHAN_GRACE_MS } from '../../src/delivery/tabs';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

const URL_ = 'https://api.test/v1/batch';
const SOURCE = 'wk ' + URL_; // the records' binding (start.ts)
const T0 = 1_000_000_000;

// A LockManager with exclusive locks shared by every tab of a test (as in tabs.test.ts).
function fakeLocks() {
  const held = new Set<string>();
  const waiting: { name: string; signal?: AbortSignal; cb: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
  const grant = (r: (typeof waiting)[number]) => {
    held.add(r.name);
    Promise.resolve()
      .then(() => r.cb())
      .then(
        (v) => (release(r.name), r.resolve(v)),
        (e) => (release(r.name), r.reject(e)),
      );
  };
  const release = (name: string) => {
    held.delete(name);
    const i = waiting.findIndex((w) => w.name == name);
    if (i >= 0) grant(waiting.splice(i, 1)[0]);
  };
  const manager = {
    request: (name: string, options: LockOptions, cb: () => unknown) =>
      new Promise((resolve, reject) => {
        const r = { name, signal: options.signal ?? undefined, cb, resolve, reject };
        if (r.signal?.aborted) return reject(new DOMException('aborted', 'AbortError'));
        if (!held.has(name) && !waiting.some((w) => w.name == name)) return grant(r);
        waiting.push(r);
        r.signal?.addEventListener('abort', () => {
          const i = waiting.indexOf(r);
          if (i >= 0) waiting.splice(i, 1), reject(new DOMException('aborted', 'AbortError'));
        });
      }),
    query: async () => ({ held: [...held].map((name) => ({ name, mode: 'exclusive' })), pending: waiting.map((w) => ({ name: w.name, mode: 'exclusive' })) }),
  };
  // Holds a lock as another tab does while it lives; returns its release.
  const hold = (name: string) => {
    let release!: () => void;
    manager.request(name, {}, () => new Promise<void>((r) => (release = r)));
    return () => release();
  };
  return { manager: manager as unknown as LockManager, held, hold };
}

// A platform on a virtual clock (timers as a browser runs them: a delay is a 32-bit integer, so Infinity is 0).
function fakePlatform(over: Partial<Platform> = {}) {
  let now = T0;
  const timers: { at: number; fn: () => void; id: number }[] = [];
  let seq = 0;
  const note = new Map<string, string>();
  const storage: NoteStorage = { getItem: (k) => note.get(k) ?? null, setItem: (k, v) => void note.set(k, v), removeItem: (k) => void note.delete(k) };
  const handlers: LifecycleHandlers[] = [];
  const api = { status: 200, retryAfter: null as string | null };
  const fetch = vi.fn(async (_u: string, _init: RequestInit) => ({ status: api.status, type: 'cors', body: null, headers: { get: (n: string) => (n.toLowerCase() == 'retry-after' ? api.retryAfter : null) } }) as unknown as Response);
  const platform: Platform = {
    _now: () => now,
    _setTimeout: (fn, ms = 0) => ((timers.push({ at: now + Math.max(0, ms | 0), fn, id: ++seq }), seq) as unknown as ReturnType<typeof setTimeout>),
    _clearTimeout: (id) => {
      const i = timers.findIndex((t) => t.id === (id as unknown));
      if (i >= 0) timers.splice(i, 1);
    },
    _random: () => 0.5,
    _fetch: fetch as unknown as typeof globalThis.fetch,
    _sendBeacon: vi.fn(() => true),
    _onLine: () => true,
    _channel: () => {
      throw new Error('no BroadcastChannel');
    },
    _storage: storage,
    _listen: (h) => (handlers.push(h), () => {}),
    _wasDiscarded: false,
    ...over,
  };
  // Runs the due timers (and the promise jobs between them) until `ms` of virtual time have passed.
  const advance = async (ms: number) => {
    const end = now + ms;
    const settle = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    const next = () => timers.sort((a, b) => a.at - b.at || a.id - b.id).find((t) => t.at <= end);
    for (let n = 0; ; n++) {
      if (n > 2000) throw new Error('timers keep firing');
      await settle(5);
      // (IndexedDB work may still arm a timer)
      const t = next() || (await settle(30), next());
      if (!t) break;
      timers.splice(timers.indexOf(t), 1);
      now = Math.max(now, t.at);
      t.fn();
    }
    now = end;
  };
  const sent = () => fetch.mock.calls.map((c) => (JSON.parse(String(c[1].body)).batch as Message[]).map((m) => m.messageId));
  return { platform, fetch, api, note, handlers, advance, sent, now: () => now };
}

const identity = () => ({ _persist: vi.fn(), _reload: vi.fn() });
const message = (id: string) => ({ type: 'track', event: 'E', messageId: id }) as unknown as Message;
const rec = (id: string, owner: string, queuedAt: number): QueueRecord => ({ id, message: message(id), bytes: 40, queuedAt, attempts: 0, owner, source: SOURCE });
// What another tab left in the shared store.
const leave = (...rs: QueueRecord[]) => setMany(rs.map((r) => [r.id, r]), createStore('svc-analytics', 'queue'));

function start(f: ReturnType<typeof fakePlatform>, over: Partial<DeliverySettings> = {}) {
  const report = vi.fn<(e: AnalyticsError) => void>();
  const id = identity();
  const d = startDelivery({
    owner: 'A', writeKey: 'wk', url: URL_, flushAt: 20, flushInterval: 1000, bounds: DEFAULT_BOUNDS,
    identity: id as never, open: () => true, report, emit: vi.fn(), platform: f.platform, ...over,
  });
  return { d, report, identity: id };
}

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  vi.stubGlobal('fetch', () => {
    throw new Error('the global fetch was used');
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('startDelivery: reports', () => {
  it('IndexedDB that refuses every write is reported once as storage_unavailable, and the messages are still sent', async () => {
    const f = fakePlatform();
    f.api.status = 503;
    f.api.retryAfter = '3600';
    const { d, report } = start(f);
    await f.advance(2000);
    await d._ready;
    vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(() => {
      throw new DOMException('The disk is full', 'QuotaExceededError');
    });
    await d._queue._add(rec('m1', 'A', f.now()));
    // (told at the first failure)
    expect(report).toHaveBeenCalledTimes(1);
    await d._queue._add(rec('m2', 'A', f.now()));
    const errors = report.mock.calls.map(([e]) => e);
    expect(errors.map((e) => e.code)).toEqual(['storage_unavailable']);
    expect(errors[0].message).toMatch(/^IndexedDB is unusable \(.*disk is full.*\): messages are kept in this page's memory$/);
    expect(d._queue._list().map((r) => r.id)).toEqual(['m1', 'm2']);
  });

  it('a message that grew older than queue.maxAgeMs is dropped and reported as expired, with its id', async () => {
    const f = fakePlatform();
    f.api.status = 503;
    f.api.retryAfter = '3600';
    const { d, report } = start(f, { bounds: { ...DEFAULT_BOUNDS, maxAgeMs: 10000 } });
    await f.advance(2000);
    await d._ready;
    await d._queue._add(rec('m1', 'A', f.now()));
    await f.advance(10001);
    await d._queue._add(rec('m2', 'A', f.now()));
    await f.advance(10);
    const expired = report.mock.calls.map(([e]) => e).filter((e) => e.code == 'expired');
    expect(expired).toHaveLength(1);
    expect(expired[0].message).toBe('1 queued message(s) older than queue.maxAgeMs dropped');
    expect(expired[0].messageIds).toEqual(['m1']);
    expect(d._queue._list().map((r) => r.id)).toEqual(['m2']);
  });
});

describe('startDelivery: adopting what other tabs left', () => {
  it('a page that replaces a discarded one adopts what that page left before ready, and sends it', async () => {
    const f = fakePlatform({ _wasDiscarded: true });
    await leave(rec('o1', 'gone-tab', T0 - LEASE_MS - 1000));
    const { d } = start(f);
    await d._ready;
    expect(d._queue._list().map((r) => r.id)).toEqual(['o1']);
    d._scheduler._notify();
    await f.advance(10);
    expect(f.sent()).toEqual([['o1']]);
  });

  it('a page that replaces a discarded one and makes no call sends what it adopted at start (sim seed 3035)', async () => {
    for (const locks of [undefined, fakeLocks().manager]) {
      (globalThis as any).indexedDB = new IDBFactory();
      const f = fakePlatform({ _wasDiscarded: true, _locks: locks });
      await leave(rec('o1', 'gone-tab', T0 - LEASE_MS - 1000));
      const { d } = start(f);
      await d._ready;
      // no call, no flush(), no exit: the adoption alone plans the send (with Web Locks nothing else looks again)
      await f.advance(10);
      expect(f.sent()).toEqual([['o1']]);
      expect(d._queue._list()).toEqual([]);
    }
  });

  it('adopts nothing while nothing may be stored or sent (a withdrawal, an opt-out)', async () => {
    const f = fakePlatform({ _wasDiscarded: true });
    await leave(rec('o1', 'gone-tab', T0 - LEASE_MS - 1000));
    const { d } = start(f, { open: () => false });
    await d._ready;
    await f.advance(LEASE_MS * 2);
    expect(d._queue._list()).toEqual([]);
    expect(f.fetch).not.toHaveBeenCalled();
  });

  it('without Web Locks, adopts an orphan ORPHAN_GRACE_MS after it first saw it', async () => {
    const f = fakePlatform();
    await leave(rec('o1', 'gone-tab', T0 - LEASE_MS - 1000));
    const { d } = start(f);
    await f.advance(ORPHAN_GRACE_MS - 10);
    expect(f.fetch).not.toHaveBeenCalled();
    await f.advance(20);
    expect(f.sent()).toEqual([['o1']]);
    expect(d._queue._list()).toEqual([]);
  });

  it("without Web Locks, adopts another tab's record once its lease ran out (looking again when it does)", async () => {
    const f = fakePlatform();
    // another tab's record, stored just now: that tab may live, and send it itself
    await leave(rec('o1', 'other-tab', T0));
    start(f);
    await f.advance(LEASE_MS);
    expect(f.fetch).not.toHaveBeenCalled();
    // its lease ends at T0 + LEASE_MS: seen orphaned a random delay of up to a second later (half of one here: two
    // tabs whose timers fell due at once both adopted and sent it, sim seed 9706), adopted ORPHAN_GRACE_MS after that
    await f.advance(ORPHAN_GRACE_MS + 10);
    expect(f.fetch).not.toHaveBeenCalled();
    await f.advance(500);
    expect(f.sent()).toEqual([['o1']]);
  });

  it('without Web Locks, looks at least every half lease for what tabs that closed since left', async () => {
    const f = fakePlatform();
    start(f);
    await f.advance(1000);
    // a tab that closed after this one started left a record old enough to be adopted at once
    await leave(rec('o1', 'closed-tab', f.now() - LEASE_MS - 1000));
    await f.advance(LEASE_MS / 2 - 1000 - 10);
    expect(f.fetch).not.toHaveBeenCalled();
    await f.advance(ORPHAN_GRACE_MS + 20);
    expect(f.sent()).toEqual([['o1']]);
  });

  it('with Web Locks, adopts what a tab left once its lock is released (it is gone), and polls for nothing meanwhile', async () => {
    const locks = fakeLocks();
    const f = fakePlatform({ _locks: locks.manager });
    const releaseB = locks.hold('svc-analytics:tab:B');
    await leave(rec('b1', 'B', T0));
    const { d } = start(f);
    await f.advance(LEASE_MS * 3);
    await d._ready;
    expect(f.fetch).not.toHaveBeenCalled();
    releaseB(); // tab B is gone
    await f.advance(ORPHAN_GRACE_MS + 10);
    expect(f.sent()).toEqual([['b1']]);
  });
});

describe('startDelivery: the page lifecycle', () => {
  it("holds this tab's lock while the page is only hidden, lets it go as the page goes away, and takes it again once restored", async () => {
    const locks = fakeLocks();
    const f = fakePlatform({ _locks: locks.manager });
    const { d, identity } = start(f);
    await f.advance(10);
    await d._ready;
    expect(locks.held.has('svc-analytics:tab:A')).toBe(true);
    f.handlers[0]._exit('hidden');
    await f.advance(10);
    expect(locks.held.has('svc-analytics:tab:A')).toBe(true);
    f.handlers[0]._exit('cached');
    await f.advance(10);
    expect(locks.held.has('svc-analytics:tab:A')).toBe(false);
    // shown again, but not restored: nothing to enter again
    f.handlers[0]._resume(false);
    await f.advance(10);
    expect(locks.held.has('svc-analytics:tab:A')).toBe(false);
    expect(identity._reload).toHaveBeenCalledTimes(1);
    f.handlers[0]._resume(true);
    await f.advance(10);
    expect(locks.held.has('svc-analytics:tab:A')).toBe(true);
    expect(identity._reload).toHaveBeenCalledTimes(2);
  });

  it('a page shown again adopts what a tab that closed meanwhile left', async () => {
    const f = fakePlatform();
    const { d } = start(f);
    await f.advance(10);
    await d._ready;
    f.handlers[0]._exit('hidden');
    await leave(rec('o1', 'closed-tab', f.now() - LEASE_MS - 1000));
    f.handlers[0]._resume(false);
    await f.advance(ORPHAN_GRACE_MS + 10);
    expect(f.sent()).toEqual([['o1']]);
  });

  it('the network coming back sends what waited offline at once', async () => {
    let online = false;
    const f = fakePlatform({ _onLine: () => online });
    const { d } = start(f);
    await f.advance(10);
    await d._ready;
    // offline: the message stays queued, and an exit keeps it
    await d._queue._add(rec('m1', 'A', f.now()));
    d._scheduler._notify();
    await f.advance(10);
    expect(f.fetch).not.toHaveBeenCalled();
    online = true;
    f.handlers[0]._online();
    await f.advance(10);
    expect(f.sent()).toEqual([['m1']]);
  });
});
describe('startDelivery: a full disk and the back/forward cache', () => {
  it('a record a full disk refused to store is still sent after a restore', async () => {
    const locks = fakeLocks();
    const f = fakePlatform({ _locks: locks.manager });
    f.api.status = 503;
    f.api.retryAfter = '3600';
    const { d } = start(f);
    await f.advance(10);
    await d._ready;
    await d._queue._add(rec('m1', 'A', f.now()));
    d._scheduler._notify();
    await f.advance(10);
    const put = vi.spyOn((globalThis as any).IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota exceeded', 'QuotaExceededError');
    });
    await d._queue._add(rec('m2', 'A', f.now()));
    d._scheduler._notify();
    f.handlers[0]._exit('hidden');
    f.handlers[0]._exit('cached');
    await f.advance(10);
    f.handlers[0]._resume(true);
    await f.advance(10);
    put.mockRestore();
    f.api.status = 200;
    await d._scheduler._flush();
    await f.advance(10);
    expect(f.sent().flat()).toContain('m2');
  });
});

describe('startDelivery: an erasure in another page', () => {
  // Without Web Locks, this tab adopted a record of a tab that lives (its lease ran out: offline, say), which then
  // withdrew consent (exit-note.ts `tellErased` tells this page by a storage event, lifecycle.ts `_erased`).
  it('sim seed 5046', async () => {
    let online = false;
    const beacons: string[][] = [];
    const deferred: { ids: string[]; aborted: boolean }[] = [];
    const ids = (body: string) => (JSON.parse(body).batch as Message[]).map((m) => m.messageId);
    const f = fakePlatform({
      _onLine: () => online,
      _sendBeacon: vi.fn((_u: string, body: string) => (beacons.push(ids(body)), true)),
      _fetchLater: (_u, init) => {
        const d = { ids: ids(String(init.body)), aborted: false };
        init.signal?.addEventListener('abort', () => (d.aborted = true));
        deferred.push(d);
        return { activated: false };
      },
    });
    await leave(rec('b1', 'B', T0 - LEASE_MS - 1000));
    const { d } = start(f);
    await f.advance(ORPHAN_GRACE_MS * 2);
    await d._ready;
    expect(d._queue._list().map((r) => r.id)).toEqual(['b1']);
    expect(deferred.filter((x) => !x.aborted).map((x) => x.ids)).toEqual([['b1']]);
    // Tab B withdraws consent: the store is emptied there, and this page hears when.
    const at = f.now();
    f.handlers[0]._erased(at);
    // (at once: the browser would send the deferred request if this page crashed now)
    expect(deferred.filter((x) => !x.aborted)).toEqual([]);
    await f.advance(10);
    // A call made here since (this page's consent stands) is kept.
    await d._queue._add(rec('a1', 'A', f.now()));
    d._scheduler._notify();
    await f.advance(10);
    expect(d._queue._list().map((r) => r.id)).toEqual(['a1']);
    expect(deferred.filter((x) => !x.aborted).map((x) => x.ids)).toEqual([['a1']]);
    // Back online, the page goes away: its exit beacon carries what it queued since, and nothing erased.
    online = true;
    f.handlers[0]._exit('discarded');
    expect(beacons).toEqual([['a1']]);
    expect(f.fetch).not.toHaveBeenCalled();
  });
});

// Issue 28: at 4x CPU the first event waited on a deferred request made and taken back before it. Checked by the
// order in which the platform hears of each, not by timers. (The identity is still persisted at once: a page that ends
// before its first request, or a tab opened meanwhile, keeps the visitor's id.)
describe('startDelivery: the first send goes before any deferred request', () => {
  it('a message queued at start leaves before a deferred request is made for it; the identity was persisted before both', async () => {
    const order: string[] = [];
    const fetchLater = vi.fn(() => (order.push('fetchLater'), { activated: false }));
    const f = fakePlatform({ _locks: fakeLocks().manager, _fetchLater: fetchLater });
    f.fetch.mockImplementation(async () => (order.push('fetch'), { status: 200, type: 'cors', body: null, headers: { get: () => null } }) as unknown as Response);
    const { d, identity } = start(f);
    expect(identity._persist).toHaveBeenCalledTimes(1);
    // (what the API's queueTo does with the first recorded call: src/api/calls.ts)
    d._queue._add(rec('m1', 'A', f.now()));
    d._scheduler._notify();
    await f.advance(10);
    await d._ready;
    expect(order[0]).toBe('fetch');
    expect(f.sent()).toEqual([['m1']]);
  });
});
