import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTabs, LEASE_MS } from '../../src/delivery/tabs';
import type { QueueRecord } from '../../src/delivery/queue';
import { fakeLocks } from './fake-locks';

const TAB = (id: string) => 'svc-analytics:tab:' + id;
const SEND = 'svc-analytics:adopt'; // the lock of `exclusive`


// A LockManager that exists but refuses, as where storage is blocked (sandboxed frames, "block all cookies").
function refusingLocks(how: 'reject' | 'throw') {
  const error = () => new DOMException('The request was denied.', 'SecurityError');
  const fail = () => {
    if (how == 'throw') throw error();
    return Promise.reject(error());
  };
  return { request: vi.fn(fail), query: vi.fn(fail) };
}

function useLocks(manager: unknown) {
  Object.defineProperty(navigator, 'locks', { configurable: true, get: () => manager });
}

const entered: ReturnType<typeof createTabs>[] = [];
function tabs(id: string, gone: () => void = () => {}) {
  const t = createTabs(id, gone);
  entered.push(t);
  return t;
}

const record = (owner: string, age: number): QueueRecord =>
  ({ id: owner + age, message: {} as QueueRecord['message'], bytes: 1, queuedAt: Date.now() - age, attempts: 0, owner }) as QueueRecord;

afterEach(() => {
  // Ends every tab's lock hold, watches and BroadcastChannel.
  entered.splice(0).forEach((t) => t._leave());
  delete (navigator as any).locks;
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

// What a tab without usable Web Locks does.
async function expectLeaseMode(t: ReturnType<typeof createTabs>, id = 'A') {
  expect(t._leased()).toBe(true);
  const isOrphan = await t._orphans();
  expect(isOrphan(record('other', LEASE_MS + 1000))).toBe(true);
  expect(isOrphan(record('other', LEASE_MS - 1000))).toBe(false);
  expect(isOrphan(record(id, LEASE_MS + 1000))).toBe(false);
  const fn = vi.fn(async () => 'done');
  expect(await t._exclusive(fn)).toBe('done');
  expect(fn).toHaveBeenCalledTimes(1);
}

describe('createTabs', () => {
  describe('alive', () => {
    it('stays true until the page leaves, and a test taken after a new enter() is true again', () => {
      const t = tabs('A');
      const before = t._alive();
      expect(before()).toBe(true);
      t._leave();
      expect(before()).toBe(false);
      t._enter();
      expect(before()).toBe(false);
      expect(t._alive()()).toBe(true);
    });
  });

  describe('without Web Locks', () => {
    it('takes over records of other tabs after the 60 s lease and runs exclusive work at once', async () => {
      useLocks(undefined);
      const t = tabs('A');
      t._enter();
      expect(LEASE_MS).toBe(60000);
      await expectLeaseMode(t);
    });

    it('works where reading navigator.locks throws', async () => {
      Object.defineProperty(navigator, 'locks', {
        configurable: true,
        get: () => {
          throw new DOMException('denied', 'SecurityError');
        },
      });
      const t = tabs('A');
      expect(() => t._enter()).not.toThrow();
      await expectLeaseMode(t);
    });

    it('tells exclusive work whether it still holds the lock: no longer once the page left, even after a new enter()', async () => {
      useLocks(undefined);
      const t = tabs('A');
      t._enter();
      let finish!: () => void;
      let held!: () => boolean;
      const running = t._exclusive((h) => ((held = h), new Promise<void>((r) => (finish = r))));
      expect(held()).toBe(true);
      t._leave();
      expect(held()).toBe(false);
      t._enter();
      expect(held()).toBe(false);
      // work begun after the new enter() holds it
      expect(await t._exclusive(async (h) => h())).toBe(true);
      finish();
      await running;
    });
  });

  describe('where Web Locks reject (SecurityError)', () => {
    it('falls back to the lease once entering is refused', async () => {
      const locks = refusingLocks('reject');
      useLocks(locks);
      const t = tabs('A');
      expect(t._leased()).toBe(false);
      t._enter();
      await vi.waitFor(() => expect(t._leased()).toBe(true));
      await expectLeaseMode(t);
    });

    it('still runs exclusive work, once, when the lock request rejects', async () => {
      const locks = refusingLocks('reject');
      useLocks(locks);
      const t = tabs('A');
      const fn = vi.fn(async () => 42);
      expect(await t._exclusive(fn)).toBe(42);
      expect(fn).toHaveBeenCalledTimes(1);
      expect(locks.request).toHaveBeenCalledTimes(1);
      // and from then on without asking for a lock
      expect(await t._exclusive(fn)).toBe(42);
      expect(locks.request).toHaveBeenCalledTimes(1);
      expect(t._leased()).toBe(true);
    });

    it('falls back the same way when the lock request throws', async () => {
      useLocks(refusingLocks('throw'));
      const t = tabs('A');
      expect(() => t._enter()).not.toThrow();
      await expectLeaseMode(t);
    });

    it('falls back to the lease when only query() rejects', async () => {
      const { manager } = fakeLocks();
      manager.query.mockRejectedValue(new DOMException('denied', 'SecurityError'));
      useLocks(manager);
      const t = tabs('A');
      const isOrphan = await t._orphans();
      expect(isOrphan(record('other', LEASE_MS + 1000))).toBe(true);
      expect(isOrphan(record('other', 1000))).toBe(false);
      expect(t._leased()).toBe(true);
    });
  });

  describe('with Web Locks', () => {
    it("holds this tab's lock from enter() until leave()", async () => {
      const { manager, held } = fakeLocks();
      useLocks(manager);
      const t = tabs('A');
      t._enter();
      await vi.waitFor(() => expect(held.has(TAB('A'))).toBe(true));
      expect(t._leased()).toBe(false);
      t._enter(); // a second enter asks for nothing more
      t._leave();
      await vi.waitFor(() => expect(held.has(TAB('A'))).toBe(false));
      expect(manager.request.mock.calls.filter((c) => c[0] == TAB('A'))).toHaveLength(1);
    });

    it('opens no channel and lets its lock go at once when leave() came before the lock was granted', async () => {
      const { manager, held, waiting, hold } = fakeLocks();
      useLocks(manager);
      const opened: string[] = [];
      const Real = BroadcastChannel;
      vi.stubGlobal(
        'BroadcastChannel',
        class extends Real {
          constructor(name: string) {
            super(name);
            opened.push(name);
          }
        },
      );
      // Its own lock is still held (by the page it was before a back/forward restore, say): enter() has to wait.
      const releaseOld = await hold(TAB('A'));
      const a = tabs('A');
      a._enter();
      expect(manager.request.mock.lastCall![0]).toBe(TAB('A'));
      const granted = manager.request.mock.results.at(-1)!.value as Promise<unknown>;
      await vi.waitFor(() => expect(waiting.map((w) => w.name)).toEqual([TAB('A')]));
      a._leave();
      releaseOld(); // the lock is granted now, after leave()
      await granted; // the request settles once A has let the lock go
      expect(held.has(TAB('A'))).toBe(false);
      expect(waiting).toEqual([]);
      await new Promise((r) => setTimeout(r));
      expect(opened).toEqual([]); // no hello
      expect(manager.query).not.toHaveBeenCalled();
      expect(manager.request.mock.calls.map((c) => c[0])).toEqual([TAB('A'), TAB('A')]);
    });

    it('counts as orphans the records of tabs whose lock nobody holds, never its own', async () => {
      const { manager, hold } = fakeLocks();
      useLocks(manager);
      await hold(TAB('B'));
      const t = tabs('A');
      const isOrphan = await t._orphans();
      expect(isOrphan(record('B', LEASE_MS * 10))).toBe(false); // B lives, however old its records
      expect(isOrphan(record('C', 0))).toBe(true); // C is gone, however new
      expect(isOrphan(record('A', LEASE_MS * 10))).toBe(false);
    });

    it('runs exclusive work of two tabs one after the other, passing on results and rejections', async () => {
      const { manager } = fakeLocks();
      useLocks(manager);
      const a = tabs('A');
      const b = tabs('B');
      const log: string[] = [];
      let finishA!: () => void;
      const first = a._exclusive(async () => {
        log.push('A starts');
        await new Promise<void>((r) => (finishA = r));
        log.push('A ends');
        return 'a';
      });
      await vi.waitFor(() => expect(log).toEqual(['A starts']));
      const second = b._exclusive(async () => {
        log.push('B starts');
        throw new Error('b failed');
      });
      await new Promise((r) => setTimeout(r));
      expect(log).toEqual(['A starts']);
      finishA();
      expect(await first).toBe('a');
      await expect(second).rejects.toThrow('b failed');
      expect(log).toEqual(['A starts', 'A ends', 'B starts']);
      expect(manager.request.mock.calls.map((c) => c[0])).toEqual([SEND, SEND]);
      // the lock was released after the failure
      expect(await a._exclusive(async () => 'again')).toBe('again');
    });

    it('lets go of the send lock when the page leaves, even while its work still runs (a request in flight)', async () => {
      const { manager, held } = fakeLocks();
      useLocks(manager);
      const a = tabs('A');
      a._enter();
      let finish!: (v: string) => void;
      const running = a._exclusive(() => new Promise<string>((r) => (finish = r)));
      await vi.waitFor(() => expect(held.has(SEND)).toBe(true));
      a._leave();
      // another page of the site gets the lock at once (a page in the back/forward cache must hold none)
      expect(await tabs('B')._exclusive(async () => 'B ran')).toBe('B ran');
      finish('A done');
      expect(await running).toBe('A done');
    });

    it('tells exclusive work whether it still holds the send lock: no longer once the page left, even after a new enter()', async () => {
      const { manager, held } = fakeLocks();
      useLocks(manager);
      const a = tabs('A');
      a._enter();
      let finish!: () => void;
      let started = false;
      let stillHeld!: () => boolean;
      const running = a._exclusive((h) => ((started = true), (stillHeld = h), new Promise<void>((r) => (finish = r))));
      await vi.waitFor(() => expect(started).toBe(true));
      expect(held.has(SEND)).toBe(true);
      expect(stillHeld()).toBe(true);
      a._leave();
      expect(stillHeld()).toBe(false);
      // restored from the back/forward cache: the work begun before still does not hold the lock
      a._enter();
      await vi.waitFor(() => expect(held.has(TAB('A'))).toBe(true));
      expect(stillHeld()).toBe(false);
      // work begun after the new enter() does
      expect(await a._exclusive(async (h) => h())).toBe(true);
      finish();
      await running;
      expect(stillHeld()).toBe(false);
    });

    it('runs exclusive work that throws synchronously once, and rejects with its error', async () => {
      const { manager, held } = fakeLocks();
      useLocks(manager);
      const t = tabs('A');
      const error = new Error('thrown at once');
      const fn = vi.fn((): Promise<string> => {
        throw error;
      });
      await expect(t._exclusive(fn)).rejects.toBe(error);
      expect(fn).toHaveBeenCalledTimes(1);
      expect(held.has(SEND)).toBe(false);
      expect(t._leased()).toBe(false);
      expect(await t._exclusive(async () => 'again')).toBe('again');
    });

    it('calls gone when the lock of a tab it found through the lock manager is released (that tab died)', async () => {
      const { manager, waiting, hold } = fakeLocks();
      useLocks(manager);
      const releaseB = await hold(TAB('B'));
      const gone = vi.fn();
      const a = tabs('A', gone);
      a._enter();
      // A waits on B's lock
      await vi.waitFor(() => expect(waiting.map((w) => w.name)).toContain(TAB('B')));
      expect(gone).not.toHaveBeenCalled();
      releaseB();
      await vi.waitFor(() => expect(gone).toHaveBeenCalledTimes(1));
      // A let go of B's lock at once
      expect(waiting).toEqual([]);
    });

    it("calls gone only once A no longer holds the dead tab's lock, so that its records are orphans by then", async () => {
      const { manager, hold } = fakeLocks();
      useLocks(manager);
      const releaseB = await hold(TAB('B'));
      let seen: boolean | undefined;
      const a = tabs('A', () => a._orphans().then((isOrphan) => (seen = isOrphan(record('B', 0)))));
      a._enter();
      await vi.waitFor(() => expect(manager.request.mock.calls.map((c) => c[0])).toContain(TAB('B')));
      releaseB();
      await vi.waitFor(() => expect(seen).toBe(true));
    });

    it('calls gone for a tab that loaded later, which it hears of on the BroadcastChannel', async () => {
      const { manager, waiting } = fakeLocks();
      useLocks(manager);
      const goneA = vi.fn();
      const a = tabs('A', goneA);
      a._enter();
      await vi.waitFor(() => expect(manager.query).toHaveBeenCalledTimes(1)); // A looked before B existed
      const b = tabs('B');
      b._enter();
      // B finds A through the lock manager, A hears B's hello
      await vi.waitFor(() => expect(waiting.map((w) => w.name).sort()).toEqual([TAB('A'), TAB('B')]));
      b._leave();
      await vi.waitFor(() => expect(goneA).toHaveBeenCalledTimes(1));
    });

    it('finds other tabs through the lock manager where there is no BroadcastChannel', async () => {
      vi.stubGlobal('BroadcastChannel', undefined);
      const { manager, hold } = fakeLocks();
      useLocks(manager);
      const releaseB = await hold(TAB('B'));
      const gone = vi.fn();
      const a = tabs('A', gone);
      expect(() => a._enter()).not.toThrow();
      await vi.waitFor(() => expect(manager.request.mock.calls.map((c) => c[0])).toContain(TAB('B')));
      releaseB();
      await vi.waitFor(() => expect(gone).toHaveBeenCalledTimes(1));
    });

    it('ends its watches at leave(): a tab that dies afterwards is not reported, and Web Locks stay in use', async () => {
      const { manager, waiting, held, hold } = fakeLocks();
      useLocks(manager);
      const releaseB = await hold(TAB('B'));
      const gone = vi.fn();
      const a = tabs('A', gone);
      a._enter();
      await vi.waitFor(() => expect(waiting.map((w) => w.name)).toContain(TAB('B')));
      a._leave();
      await vi.waitFor(() => expect(waiting).toEqual([]));
      releaseB();
      await vi.waitFor(() => expect(held.has(TAB('B'))).toBe(false));
      await new Promise((r) => setTimeout(r));
      expect(gone).not.toHaveBeenCalled();
      expect(a._leased()).toBe(false);
    });

    it('watches again after a leave() and a new enter() (a page restored from the back/forward cache)', async () => {
      const { manager, waiting, held, hold } = fakeLocks();
      useLocks(manager);
      const releaseB = await hold(TAB('B'));
      const gone = vi.fn();
      const a = tabs('A', gone);
      a._enter();
      await vi.waitFor(() => expect(waiting.map((w) => w.name)).toContain(TAB('B')));
      a._leave();
      await vi.waitFor(() => expect(held.has(TAB('A'))).toBe(false));
      a._enter();
      await vi.waitFor(() => expect(held.has(TAB('A'))).toBe(true));
      await vi.waitFor(() => expect(waiting.map((w) => w.name)).toEqual([TAB('B')]));
      releaseB();
      await vi.waitFor(() => expect(gone).toHaveBeenCalledTimes(1));
    });
  });
});
