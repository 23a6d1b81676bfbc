import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startDelivery } from '../../src/delivery/start';
import type { LifecycleHandlers } from '../../src/delivery/lifecycle';
import type { NoteStorage, Platform } from '../../src/delivery/platform';
import { browserPlatform } from '../../src/delivery/platform';
import { DEFAULT_BOUNDS } from '../../src/delivery/queue';
import type { Identity } from '../../src/identity/identity';
import type { Message } from '../../src/message/types';

// The delivery code reaches the browser only through the platform (platform.ts): started on a fake one, with the
// browser's own built-ins made to throw, it runs on the fake's clock, network, note and lifecycle alone (as the
// simulator and a service worker run it).

function fakePlatform() {
  let now = 1_000_000;
  const timers: { at: number; fn: () => void; id: number }[] = [];
  let seq = 0;
  const note = new Map<string, string>();
  const storage: NoteStorage = { getItem: (k) => note.get(k) ?? null, setItem: (k, v) => void note.set(k, v), removeItem: (k) => void note.delete(k) };
  const handlers: LifecycleHandlers[] = [];
  const fetch = vi.fn(async () => ({ status: 200, type: 'cors', body: null, headers: { get: () => null } }) as unknown as Response);
  const beacon = vi.fn(() => true);
  const platform: Platform = {
    _now: () => now,
    _setTimeout: (fn, ms = 0) => ((timers.push({ at: now + ms, fn, id: ++seq }), seq) as unknown as ReturnType<typeof setTimeout>),
    _clearTimeout: (id) => void timers.splice(timers.findIndex((t) => t.id === (id as unknown)) >>> 0, timers.some((t) => t.id === (id as unknown)) ? 1 : 0),
    _random: () => 0.5,
    _fetch: fetch as unknown as typeof globalThis.fetch,
    _sendBeacon: beacon,
    _onLine: () => true,
    _channel: () => {
      throw new Error('no BroadcastChannel');
    },
    _storage: storage,
    _listen: (h) => (handlers.push(h), () => {}),
    _wasDiscarded: false,
  };
  // Runs the due timers (and the promise jobs between them) until `ms` of virtual time have passed.
  const advance = async (ms: number) => {
    const end = now + ms;
    for (;;) {
      await new Promise((r) => setImmediate(r));
      timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const t = timers[0];
      if (!t || t.at > end) break;
      timers.shift();
      now = Math.max(now, t.at);
      t.fn();
    }
    now = end;
  };
  return { platform, fetch, beacon, note, handlers, advance };
}

const identity = { _persist: () => {}, _reload: () => {} } as unknown as Identity;
const message = (id: string) => ({ type: 'track', event: 'E', messageId: id }) as unknown as Message;

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  vi.stubGlobal('fetch', () => {
    throw new Error('the global fetch was used');
  });
  vi.stubGlobal('localStorage', undefined);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('startDelivery on a platform', () => {
  it("sends on the platform's clock and fetch, and notes an exit hand-off in the platform's storage", async () => {
    const f = fakePlatform();
    const emit = vi.fn();
    const d = startDelivery({
      owner: 'tab', writeKey: 'wk', url: 'https://api.test/v1/batch', flushAt: 20, flushInterval: 1000, bounds: DEFAULT_BOUNDS,
      identity, open: () => true, report: vi.fn(), emit, platform: f.platform,
    });
    await f.advance(2000);
    await d._ready;
    const now = f.platform._now();
    await d._queue._add({ id: 'm1', message: message('m1'), bytes: 40, queuedAt: now, attempts: 0, owner: 'tab' });
    d._scheduler._notify();
    await f.advance(10);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    expect(String((f.fetch.mock.calls[0] as unknown[])[1] && ((f.fetch.mock.calls[0] as unknown[])[1] as RequestInit).body)).toContain('"sentAt":"' + new Date(now).toISOString());
    // (once the delete of its record committed, in fake-indexeddb)
    await vi.waitFor(() => expect(emit).toHaveBeenCalledWith('delivered', [message('m1')]));

    // At a page exit the waiting message goes by the platform's beacon; the lifecycle is the platform's.
    await d._queue._add({ id: 'm2', message: message('m2'), bytes: 40, queuedAt: f.platform._now(), attempts: 0, owner: 'tab' });
    expect(f.handlers).toHaveLength(1);
    f.handlers[0]._exit('cached');
    expect(f.beacon).toHaveBeenCalledTimes(1);
    expect(JSON.parse(f.note.get('svc_sent')!)).toEqual(['m2']);
  });

  it("the browser's platform takes fetch when it is made, and reads the clock when used", () => {
    vi.unstubAllGlobals();
    const taken = vi.fn();
    vi.stubGlobal('fetch', taken);
    const p = browserPlatform();
    vi.stubGlobal('fetch', vi.fn());
    expect(p._fetch).toBe(taken);
    vi.useFakeTimers({ now: 5000 });
    expect(p._now()).toBe(5000);
    vi.useRealTimers();
  });
});

describe('browserPlatform in a context without a page (a service worker)', () => {
  it('is made without document, localStorage or sendBeacon, and says no page was discarded', () => {
    vi.unstubAllGlobals();
    vi.stubGlobal('document', undefined);
    vi.stubGlobal('localStorage', undefined);
    const p = browserPlatform();
    expect(p._wasDiscarded).toBe(false);
    expect(p._storage).toBeUndefined();
  });
});
