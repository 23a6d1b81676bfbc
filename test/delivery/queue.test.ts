import 'fake-indexeddb/auto';
import { IDBDatabase, IDBFactory } from 'fake-indexeddb';
import { createStore, values, type UseStore } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createQueue, DEFAULT_BOUNDS, type QueueBounds, type QueueRecord } from '../../src/delivery/queue';
import { OPEN_TIMEOUT_MS } from '../../src/delivery/store';
import { LEASE_MS, leaseOver } from '../../src/delivery/tabs';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

const WIDE: QueueBounds = { maxCount: 1000, maxBytes: 1e9, maxAgeMs: 1e9 };

function rec(n: number, owner = 'A', extra: Partial<QueueRecord> = {}): QueueRecord {
  const id = 'id-' + String(n).padStart(4, '0');
  return {
    id,
    message: { type: 'track', event: 'e' + n, messageId: id } as unknown as Message,
    bytes: 100,
    queuedAt: Date.now(),
    attempts: 0,
    owner,
    ...extra,
  };
}

function events() {
  return { _expired: vi.fn(), _fallback: vi.fn() };
}

// The refusal of a promise that must reject.
async function refusal(p: Promise<unknown> | AnalyticsError): Promise<AnalyticsError> {
  if (p instanceof Error) return p;
  try {
    await p;
  } catch (e) {
    return e as AnalyticsError;
  }
  throw new Error('expected the promise to reject');
}

// What the shared IndexedDB store holds, read the way another page would.
let inspect: UseStore;
const stored = async () => ((await values<QueueRecord>(inspect)) as QueueRecord[]).sort((a, b) => (a.id < b.id ? -1 : 1));
const storedIds = async () => (await stored()).map((r) => r.id);
const ids = (q: { _list(): readonly QueueRecord[] }) => q._list().map((r) => r.id);

beforeEach(() => {
  // A fresh, empty IndexedDB for every test.
  (globalThis as any).indexedDB = new IDBFactory();
  inspect = createStore('svc-analytics', 'queue');
  localStorage.clear();
});
afterEach(() => {
  localStorage.clear();
  vi.restoreAllMocks();
});

describe('createQueue', () => {
  describe('add', () => {
    it('keeps records in the order they were added', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q._add(rec(1)), q._add(rec(2)), q._add(rec(3))]);
      expect(ids(q)).toEqual(['id-0001', 'id-0002', 'id-0003']);
    });

    it('resolves once the record is in IndexedDB', async () => {
      const q = createQueue('A', WIDE, events());
      await q._add(rec(1));
      expect(await storedIds()).toEqual(['id-0001']);
    });

    it('stores a whole burst of calls', async () => {
      const q = createQueue('A', WIDE, events());
      const all = [1, 2, 3, 4, 5].map((n) => q._add(rec(n)));
      await all[all.length - 1];
      await q._flushed();
      expect(await storedIds()).toEqual(['id-0001', 'id-0002', 'id-0003', 'id-0004', 'id-0005']);
    });

    it('persists records so a queue of another owner can adopt them once they are orphans', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A'));
      await a._add(rec(2, 'A'));

      const b = createQueue('B', WIDE, events());
      await b._adopt(() => false);
      expect(b._list()).toEqual([]);

      await b._adopt((r) => r.owner == 'A');
      expect(ids(b)).toEqual(['id-0001', 'id-0002']);
      expect(b._list().every((r) => r.owner == 'B')).toBe(true);
      expect(b._list()[0].message).toEqual(rec(1).message);
      expect((await stored()).map((r) => r.owner)).toEqual(['B', 'B']);
    });

    it("never takes back one of its own records that left memory (delivered, its delete not yet committed)", async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A'));
      // The adoption's read of the store starts first; the delivery lands while that read is in flight: the record
      // leaves memory at once, its IndexedDB delete comes after the read.
      const adopting = a._adopt((r) => r.owner != 'A');
      for (let i = 0; i < 5; i++) await Promise.resolve();
      const removing = a._remove(['id-0001']);
      await adopting;
      expect(ids(a)).toEqual([]);
      await removing;
      expect(await storedIds()).toEqual([]);
    });

    it('adopts nothing twice', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A'));
      const b = createQueue('B', WIDE, events());
      await b._adopt(() => true);
      await b._adopt(() => true);
      expect(ids(b)).toEqual(['id-0001']);
    });
  });

  describe('remove', () => {
    it('removes records from the list and from IndexedDB', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q._add(rec(1)), q._add(rec(2)), q._add(rec(3))]);
      await q._remove(['id-0001', 'id-0003']);
      expect(ids(q)).toEqual(['id-0002']);
      expect(await storedIds()).toEqual(['id-0002']);
      const b = createQueue('B', WIDE, events());
      await b._adopt(() => true);
      expect(ids(b)).toEqual(['id-0002']);
    });

    it('does not store a record removed before its write happened', async () => {
      const q = createQueue('A', WIDE, events());
      const added = q._add(rec(1));
      q._remove(['id-0001']);
      await added;
      await q._flushed();
      expect(await storedIds()).toEqual([]);
    });
  });

  describe('failed', () => {
    it('counts a failed delivery of each record, returns the most attempts among them, and stores them', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q._add(rec(1)), q._add(rec(2, 'A', { attempts: 2 })), q._add(rec(3))]);
      expect(q._failed(['id-0001', 'id-0002'])).toBe(3);
      expect(q._list().map((r) => r.attempts)).toEqual([1, 3, 0]);
      await vi.waitFor(async () => expect((await stored()).map((r) => r.attempts)).toEqual([1, 3, 0]));
    });

    it('lets the next page load adopt the records with their attempts, and count on from there', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1));
      a._failed(['id-0001']);
      a._failed(['id-0001']);
      await vi.waitFor(async () => expect((await stored())[0].attempts).toBe(2));
      const b = createQueue('B', WIDE, events());
      await b._adopt((r) => r.owner == 'A');
      expect(b._list().map((r) => r.attempts)).toEqual([2]);
      expect(b._failed(['id-0001'])).toBe(3);
      const [adopted] = b._list();
      await vi.waitFor(async () => expect(await stored()).toEqual([{ ...rec(1, 'B', { queuedAt: adopted.queuedAt }), attempts: 3, claimedAt: adopted.claimedAt }]));
    });

    it('stamps what it adopts with when (claimedAt): without Web Locks, another tab may take it only a lease later (sim seeds 780, 1471)', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A', { queuedAt: Date.now() - 2 * LEASE_MS }));
      const b = createQueue('B', WIDE, events());
      await b._adopt((r) => r.owner == 'A');
      const [adopted] = b._list();
      expect(adopted.claimedAt).toBeGreaterThanOrEqual(Date.now() - 1000);
      expect(leaseOver(adopted, Date.now())).toBe(false);
      expect(leaseOver(adopted, adopted.claimedAt! + LEASE_MS + 1)).toBe(true);
      // a third tab without Web Locks finds no orphan in it, and is told when to look again
      const c = createQueue('C', WIDE, events());
      const seen = await c._adopt((r) => r.owner != 'C' && leaseOver(r, Date.now()));
      expect(c._list()).toEqual([]);
      expect(seen._left).toBe(adopted.claimedAt);
    });

    it('without Web Locks, hands to the browser at an exit none of its records another tab may have taken (older than a lease)', async () => {
      const q = createQueue('A', WIDE, events(), undefined, undefined, () => true);
      await q._add(rec(1, 'A', { queuedAt: Date.now() - 2 * LEASE_MS }));
      await q._add(rec(2));
      expect(q._handable().map((r) => r.id)).toEqual(['id-0002']);
      const locked = createQueue('B', WIDE, events());
      await locked._add(rec(3, 'B', { queuedAt: Date.now() - 2 * LEASE_MS }));
      expect(locked._handable().map((r) => r.id)).toEqual(['id-0003']);
    });

    it('never brings back a record removed before its write ran', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q._add(rec(1)), q._add(rec(2))]);
      q._failed(['id-0001', 'id-0002']);
      await q._remove(['id-0001']);
      await vi.waitFor(async () => expect((await stored()).map((r) => [r.id, r.attempts])).toEqual([['id-0002', 1]]));
      expect(q._failed(['id-0001'])).toBe(0);
    });

    it('counts without writing when told not to', async () => {
      const q = createQueue('A', WIDE, events());
      await q._add(rec(1));
      const transaction = vi.spyOn(IDBDatabase.prototype, 'transaction');
      expect(q._failed(['id-0001'], false)).toBe(1);
      // A write of failed() would have opened its transaction before this removal's.
      await q._remove(['nope']);
      expect(transaction).toHaveBeenCalledTimes(1);
      expect((await stored())[0].attempts).toBe(0);
    });

    it('counts nothing and opens no IndexedDB transaction for records it no longer holds (handed to the browser)', async () => {
      const q = createQueue('A', WIDE, events());
      await q._add(rec(1));
      const [out] = q._takeOut(['id-0001']);
      const transaction = vi.spyOn(IDBDatabase.prototype, 'transaction');
      expect(q._failed(['id-0001', 'nope'])).toBe(0);
      // A write of failed() would have opened its transaction before this removal's.
      await q._remove(['nope']);
      expect(transaction).toHaveBeenCalledTimes(1);
      expect(out.attempts).toBe(0);
      expect((await stored())[0].attempts).toBe(0);
    });
  });

  describe('takeOut', () => {
    it('takes records out of memory and returns them, in order, leaving IndexedDB as it was', async () => {
      const q = createQueue('A', WIDE, events());
      const first = rec(1);
      await Promise.all([q._add(first), q._add(rec(2)), q._add(rec(3))]);
      const out = q._takeOut(['id-0003', 'id-0001']);
      expect(out.map((r) => r.id)).toEqual(['id-0001', 'id-0003']);
      expect(out[0]).toBe(first);
      expect(ids(q)).toEqual(['id-0002']);
      expect(await storedIds()).toEqual(['id-0001', 'id-0002', 'id-0003']);
    });

    it('ignores ids it does not hold, and takes nothing twice', async () => {
      const q = createQueue('A', WIDE, events());
      await q._add(rec(1));
      expect(q._takeOut(['id-0001', 'nope']).map((r) => r.id)).toEqual(['id-0001']);
      expect(q._takeOut(['id-0001'])).toEqual([]);
    });

    it('never lets a write pending from before store a record taken out and then removed (its hand-off confirmed)', async () => {
      const q = createQueue('A', WIDE, events());
      // In the same burst: one write for both records, not yet run.
      q._add(rec(1));
      q._add(rec(2));
      q._takeOut(['id-0002']);
      q._remove(['id-0002']);
      await q._flushed();
      // Queued behind a write that already runs.
      q._add(rec(3));
      await Promise.resolve(); // the first write takes its burst
      q._add(rec(4));
      q._takeOut(['id-0004']);
      q._remove(['id-0004']);
      await q._flushed();
      await q._remove(['nope']); // any delete still running is done
      expect(await storedIds()).toEqual(['id-0001', 'id-0003']);
      expect(ids(q)).toEqual(['id-0001', 'id-0003']);
    });

    it('frees the room the records took in the bounds', async () => {
      const q = createQueue('A', { ...WIDE, maxCount: 2, maxBytes: 200 }, events());
      await q._add(rec(1));
      await q._add(rec(2));
      q._takeOut(['id-0001']);
      await q._add(rec(3));
      expect(ids(q)).toEqual(['id-0002', 'id-0003']);
    });
  });

  describe('putBack', () => {
    it('re-inserts records in id order among those queued meanwhile', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q._add(rec(1)), q._add(rec(3)), q._add(rec(5))]);
      const out = q._takeOut(['id-0001', 'id-0005']);
      await q._add(rec(4));
      await q._add(rec(6));
      q._putBack(out);
      expect(ids(q)).toEqual(['id-0001', 'id-0003', 'id-0004', 'id-0005', 'id-0006']);
      expect(q._list()[0]).toBe(out[0]);
    });

    it('counts the records against the bounds again', async () => {
      const q = createQueue('A', { ...WIDE, maxBytes: 250 }, events());
      await q._add(rec(1));
      const out = q._takeOut(['id-0001']);
      await q._add(rec(2));
      q._putBack(out);
      const e = await refusal(q._add(rec(3)));
      expect(e.code).toBe('queue_full');
      expect(ids(q)).toEqual(['id-0001', 'id-0002']);
    });

    it('still writes a record taken out before its first write, so that the next load adopts it if the hand-off is never confirmed', async () => {
      const a = createQueue('A', WIDE, events());
      const added = a._add(rec(1, 'A'));
      // A page exit takes it out at once, before the IndexedDB write of the add has run.
      expect(a._takeOut(['id-0001']).map((r) => r.id)).toEqual(['id-0001']);
      await added;
      await a._flushed();
      expect(await storedIds()).toEqual(['id-0001']);
      // The page died before it noted the hand-off: the next load, once A is gone, sends it.
      const b = createQueue('B', WIDE, events());
      await b._adopt((r) => r.owner == 'A');
      expect(ids(b)).toEqual(['id-0001']);
      expect(b._list()[0].message).toEqual(rec(1).message);
    });

    it('keeps records that were taken out and put back before their first write', async () => {
      const q = createQueue('A', WIDE, events());
      const added = q._add(rec(1));
      q._putBack(q._takeOut(['id-0001']));
      await added;
      expect(await storedIds()).toEqual(['id-0001']);
    });

    it('still lets a pending write store a record put back while another taken out with it was removed', async () => {
      const q = createQueue('A', WIDE, events());
      q._add(rec(1));
      q._add(rec(2));
      // A page exit takes both out; the browser accepts the beacon of the first and refuses that of the second.
      const [, refused] = q._takeOut(['id-0001', 'id-0002']);
      q._remove(['id-0001']);
      q._putBack([refused]);
      await q._flushed();
      await q._remove(['nope']);
      expect(await storedIds()).toEqual(['id-0002']);
      expect(ids(q)).toEqual(['id-0002']);
    });
  });

  describe('bounds', () => {
    it('has documented defaults', () => {
      expect(DEFAULT_BOUNDS).toEqual({ maxCount: 10000, maxBytes: 5000000, maxAgeMs: 7 * 24 * 3600 * 1000 });
    });

    it('refuses a record past maxCount with queue_full and its id, and keeps every record queued before', async () => {
      const ev = events();
      const q = createQueue('A', { ...WIDE, maxCount: 2 }, ev);
      await q._add(rec(1));
      await q._add(rec(2));
      const e = await refusal(q._add(rec(3)));
      expect(e).toBeInstanceOf(Error);
      expect(e.code).toBe('queue_full');
      expect(e.messageIds).toEqual(['id-0003']);
      expect((await refusal(q._add(rec(4)))).messageIds).toEqual(['id-0004']);
      expect(ids(q)).toEqual(['id-0001', 'id-0002']);
      await q._flushed();
      expect(await storedIds()).toEqual(['id-0001', 'id-0002']);
      expect(ev._expired).not.toHaveBeenCalled();
    });

    it('refuses a record that would pass maxBytes; room freed by a removal is usable again', async () => {
      const q = createQueue('A', { ...WIDE, maxBytes: 250 }, events());
      await q._add(rec(1, 'A', { bytes: 100 }));
      await q._add(rec(2, 'A', { bytes: 100 }));
      const e = await refusal(q._add(rec(3, 'A', { bytes: 100 })));
      expect(e.code).toBe('queue_full');
      expect(e.messageIds).toEqual(['id-0003']);
      // a smaller record still fits: exactly at the bound
      await q._add(rec(4, 'A', { bytes: 50 }));
      expect(ids(q)).toEqual(['id-0001', 'id-0002', 'id-0004']);
      // the byte count follows removals too
      await q._remove(['id-0001']);
      await q._add(rec(5, 'A', { bytes: 100 }));
      expect(ids(q)).toEqual(['id-0002', 'id-0004', 'id-0005']);
    });

    it('counts adopted records against the bounds', async () => {
      const a = createQueue('A', WIDE, events());
      await Promise.all([a._add(rec(1)), a._add(rec(2))]);
      const b = createQueue('B', { ...WIDE, maxCount: 2 }, events());
      await b._adopt(() => true);
      expect((await refusal(b._add(rec(3, 'B')))).code).toBe('queue_full');
    });

    it('drops records older than maxAgeMs and reports them once, with all their ids', async () => {
      const ev = events();
      const now = Date.now();
      const q = createQueue('A', { ...WIDE, maxAgeMs: 1000 }, ev);
      await q._add(rec(1, 'A', { queuedAt: now - 5000 }));
      await q._add(rec(2, 'A', { queuedAt: now - 4000 }));
      await q._add(rec(3, 'A', { queuedAt: now }));
      expect(ids(q)).toEqual(['id-0003']);
      await vi.waitFor(() => expect(ev._expired).toHaveBeenCalledWith(['id-0001', 'id-0002']));
      expect(ev._expired).toHaveBeenCalledTimes(1);
      await vi.waitFor(async () => expect(await storedIds()).toEqual(['id-0003']));
    });

    it('makes room with expired records before it refuses one', async () => {
      const ev = events();
      const now = Date.now();
      const q = createQueue('A', { ...WIDE, maxCount: 2, maxAgeMs: 1000 }, ev);
      await q._add(rec(1, 'A', { queuedAt: now - 5000 }));
      await q._add(rec(2, 'A', { queuedAt: now - 4000 }));
      await q._add(rec(3, 'A', { queuedAt: now }));
      expect(ids(q)).toEqual(['id-0003']);
      await vi.waitFor(() => expect(ev._expired).toHaveBeenCalledWith(['id-0001', 'id-0002']));
    });

    it('drops expired records it adopts', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A', { queuedAt: Date.now() - 60000 }));
      await a._add(rec(2, 'A'));
      const ev = events();
      const b = createQueue('B', { ...WIDE, maxAgeMs: 30000 }, ev);
      await b._adopt(() => true);
      expect(ids(b)).toEqual(['id-0002']);
      await vi.waitFor(() => expect(ev._expired).toHaveBeenCalledWith(['id-0001']));
      await vi.waitFor(async () => expect(await storedIds()).toEqual(['id-0002']));
    });
  });

  describe('adopt', () => {
    it('keeps records in id order after adopting', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(2, 'A'));
      await a._add(rec(4, 'A'));
      const b = createQueue('B', WIDE, events());
      await b._add(rec(1, 'B'));
      await b._add(rec(3, 'B'));
      await b._add(rec(5, 'B'));
      await b._adopt((r) => r.owner == 'A');
      expect(ids(b)).toEqual(['id-0001', 'id-0002', 'id-0003', 'id-0004', 'id-0005']);
    });

    it('without Web Locks, gives an orphan two tabs adopt at once to one of them only (sim seed 13471: both read it before either claimed it, and both handed it to the browser as they went away)', async () => {
      const gone = createQueue('C', WIDE, events(), undefined, undefined, () => true);
      await gone._add(rec(1, 'C', { queuedAt: Date.now() - 2 * LEASE_MS }));
      const a = createQueue('A', WIDE, events(), undefined, undefined, () => true);
      const b = createQueue('B', WIDE, events(), undefined, undefined, () => true);
      // (each tab's test, as tabs.ts `_orphans` makes it without Web Locks)
      const orphanTo = (me: string) => (r: QueueRecord) => r.owner != me && leaseOver(r, Date.now());
      await Promise.all([a._adopt(orphanTo('A')), b._adopt(orphanTo('B'))]);
      expect([...ids(a), ...ids(b)]).toEqual(['id-0001']);
      // what each would hand to the browser at an exit (the exit reads no store)
      expect([...a._handable(), ...b._handable()].map((r) => r.id)).toEqual(['id-0001']);
      const [claimed] = await stored();
      expect(claimed.owner).toBe(ids(a).length ? 'A' : 'B');
    });

    it('leaves the records of a live tab alone', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A'));
      const b = createQueue('B', WIDE, events());
      await b._add(rec(2, 'B'));
      await b._adopt(() => false);
      expect(ids(b)).toEqual(['id-0002']);
      expect((await stored()).find((r) => r.id == 'id-0001')!.owner).toBe('A');
    });

    it("resolves to the queuedAt of the oldest record it left to another tab", async () => {
      const t = Date.now();
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A', { queuedAt: t - 1000 }));
      await a._add(rec(2, 'A', { queuedAt: t - 3000 }));
      const c = createQueue('C', WIDE, events());
      await c._add(rec(3, 'C', { queuedAt: t - 5000 }));
      const b = createQueue('B', WIDE, events());
      await b._add(rec(4, 'B', { queuedAt: t - 9000 }));
      // C's record is adopted, so A's oldest is the one left; B's own record never counts
      expect(await b._adopt((r) => r.owner == 'C')).toEqual({ _left: t - 3000, _due: 0 });
      expect(ids(b)).toEqual(['id-0003', 'id-0004']);
    });

    it('resolves to 0 when it left no record to another tab', async () => {
      const b = createQueue('B', WIDE, events());
      expect(await b._adopt(() => false)).toEqual({ _left: 0, _due: 0 });
      await b._add(rec(1, 'B'));
      expect(await b._adopt(() => false)).toEqual({ _left: 0, _due: 0 });
      const a = createQueue('A', WIDE, events());
      await a._add(rec(2, 'A'));
      expect(await b._adopt(() => true)).toEqual({ _left: 0, _due: 0 });
    });

    it('adopts only the records queued under its own write key and batch URL (CONTRACT section 6)', async () => {
      const k1 = createQueue('A', WIDE, events(), 'K1 https://h1.example/v1/batch');
      await k1._add(rec(1, 'A'));
      const k2 = createQueue('C', WIDE, events(), 'K2 https://h1.example/v1/batch');
      await k2._add(rec(2, 'C'));
      const h2 = createQueue('D', WIDE, events(), 'K1 https://h2.example/v1/batch');
      await h2._add(rec(3, 'D'));
      expect((await stored()).map((r) => r.source)).toEqual(['K1 https://h1.example/v1/batch', 'K2 https://h1.example/v1/batch', 'K1 https://h2.example/v1/batch']);
      // every tab is gone: each page takes only its own source's records
      const b = createQueue('B', WIDE, events(), 'K2 https://h1.example/v1/batch');
      expect(await b._adopt(() => true)).toEqual({ _left: 0, _due: 0 });
      expect(ids(b)).toEqual(['id-0002']);
      const e = createQueue('E', WIDE, events(), 'K1 https://h1.example/v1/batch');
      await e._adopt(() => true);
      expect(ids(e)).toEqual(['id-0001']);
      // the other host's record waits, untouched
      expect((await stored()).find((r) => r.id == 'id-0003')!.owner).toBe('D');
    });

    it("adopts a record of the earlier version (no source) under its own, and deletes another source's expired ones", async () => {
      const old = createQueue('A', WIDE, events());
      await old._add(rec(1, 'A'));
      const other = createQueue('C', WIDE, events(), 'K2 u');
      await other._add(rec(2, 'C', { queuedAt: Date.now() - 2000 }));
      await other._add(rec(3, 'C'));
      const b = createQueue('B', { ...WIDE, maxAgeMs: 1000 }, events(), 'K1 u');
      await b._adopt(() => true);
      expect(ids(b)).toEqual(['id-0001']);
      expect(await storedIds()).toEqual(['id-0001', 'id-0003']);
    });

    it("adopts nothing once the tabs' lock is no longer held (the page left while it read the store)", async () => {
      const a = createQueue('A', WIDE, events());
      await Promise.all([a._add(rec(1, 'A')), a._add(rec(2, 'A'))]);
      const b = createQueue('B', WIDE, events());
      let left = false;
      const adopting = b._adopt(() => true, 0, () => !left);
      left = true;
      await adopting;
      expect(ids(b)).toEqual([]);
      expect((await stored()).map((r) => [r.id, r.owner])).toEqual([
        ['id-0001', 'A'],
        ['id-0002', 'A'],
      ]);
      // Under the lock again (restored), it adopts them.
      await b._adopt(() => true, 0, () => true);
      expect(ids(b)).toEqual(['id-0001', 'id-0002']);
    });

  });

  describe('reconcile', () => {
    it('drops its own records another tab took while this page was away', async () => {
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A'));
      await a._add(rec(2, 'A'));
      // B adopts A's first record (A was in the back/forward cache meanwhile)
      const b = createQueue('B', WIDE, events());
      await b._adopt((r) => r.id == 'id-0001');
      await a._reconcile();
      expect(ids(a)).toEqual(['id-0002']);
    });

    it('without Web Locks, claims what it keeps anew: no other tab adopts for another lease a record it is about to send (sim seed 13657: one adopted and sent it while it was in flight)', async () => {
      const a = createQueue('A', WIDE, events(), undefined, undefined, () => true);
      await a._add(rec(1, 'A', { queuedAt: Date.now() - LEASE_MS - 1 }));
      await a._reconcile();
      const b = createQueue('B', WIDE, events(), undefined, undefined, () => true);
      const now = Date.now();
      await b._adopt((r) => r.owner != 'B' && leaseOver(r, now));
      expect(ids(b)).toEqual([]);
      expect(ids(a)).toEqual(['id-0001']);
    });

    for (const wait of [0, 1, 2, 5, 10, 20])
      it(`without Web Locks, claims what it keeps anew in the transaction that read it: a tab adopting it meanwhile has it alone (the race of sim seed 13471; ${wait} microtasks in)`, async () => {
        const a = createQueue('A', WIDE, events(), undefined, undefined, () => true);
        await a._add(rec(1, 'A', { queuedAt: Date.now() - LEASE_MS - 1 }));
        const b = createQueue('B', WIDE, events(), undefined, undefined, () => true);
        await b._adopt(() => false); // (its store open)
        const reconciled = a._reconcile();
        for (let i = 0; i < wait; i++) await Promise.resolve();
        await Promise.all([reconciled, b._adopt((r) => r.owner != 'B' && leaseOver(r, Date.now()))]);
        expect([...ids(a), ...ids(b)]).toEqual(['id-0001']);
        expect([...a._handable(), ...b._handable()].map((r) => r.id)).toEqual(['id-0001']);
      });

    // e2e/mobile.spec.ts "page hidden ...": a call made as the page is restored, while the store is read, is no record
    // another tab took (it lost 'After Resume' in CI).
    for (const wait of [0, 1, 2, 3, 5, 8])
      it(`keeps a record added while it reads the store (${wait} microtasks in)`, async () => {
        const a = createQueue('A', WIDE, events());
        await a._add(rec(1, 'A'));
        const reconciled = a._reconcile();
        for (let i = 0; i < wait; i++) await Promise.resolve();
        const added = a._add(rec(2, 'A'));
        await Promise.all([reconciled, added]);
        expect(ids(a)).toEqual(['id-0001', 'id-0002']);
        expect(await storedIds()).toEqual(['id-0001', 'id-0002']);
      });
  });

  describe('on a full disk (every put refused with QuotaExceededError, deletes allowed: sim seeds 25, 35, 88)', () => {
    let put: PropertyDescriptor | undefined;
    const fill = (full: boolean) => {
      const proto = (globalThis as any).IDBObjectStore.prototype;
      if (!full) return put && Object.defineProperty(proto, 'put', put);
      put = Object.getOwnPropertyDescriptor(proto, 'put');
      Object.defineProperty(proto, 'put', {
        configurable: true,
        value() {
          throw new DOMException('quota exceeded', 'QuotaExceededError');
        },
      });
    };
    afterEach(() => fill(false));

    it('still deletes what it delivers once a write failed, and reports it', async () => {
      const ev = events();
      const q = createQueue('A', WIDE, ev);
      await q._add(rec(1));
      fill(true);
      await q._add(rec(2));
      expect(ev._fallback).toHaveBeenCalled();
      fill(false);
      await q._remove(['id-0001', 'id-0002']);
      // (the store was dropped after the failed write: id-0001 stayed, and the next page sent it again)
      expect(await storedIds()).toEqual([]);
      await q._add(rec(3));
      expect(await storedIds()).toEqual(['id-0003']);
    });

    it('adopts no orphan it cannot claim in the store, and adopts it once it can', async () => {
      const dead = createQueue('B', WIDE, events());
      await dead._add(rec(1, 'B'));
      const a = createQueue('A', WIDE, events());
      const c = createQueue('C', WIDE, events());
      fill(true);
      const ofB = (r: QueueRecord) => r.owner == 'B';
      const first = await a._adopt(ofB);
      expect(ids(a)).toEqual([]);
      expect(first._due).toBeGreaterThan(0);
      // another tab finds it still an orphan, and it is taken once only
      fill(false);
      await c._adopt(ofB);
      await a._adopt(ofB);
      expect([...ids(a), ...ids(c)]).toEqual(['id-0001']);
    });
  });

  describe('with an IndexedDB whose open never answers (a stalled profile, Safari 14)', () => {
    let saved: unknown;
    beforeEach(() => {
      saved = (globalThis as any).indexedDB;
      // a request that never fires success or error
      (globalThis as any).indexedDB = { open: () => ({}), databases: async () => [] };
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    });
    afterEach(() => {
      vi.useRealTimers();
      (globalThis as any).indexedDB = saved;
    });

    it('counts it a failure after OPEN_TIMEOUT_MS: what waited on it settles, in memory, reported once', async () => {
      const ev = events();
      const q = createQueue('A', WIDE, ev);
      const settled: string[] = [];
      void (q._add(rec(1)) as Promise<void>).then(() => settled.push('add'));
      void q._adopt(() => true).then(() => settled.push('adopt'));
      await vi.advanceTimersByTimeAsync(OPEN_TIMEOUT_MS - 1);
      expect(settled).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(settled.sort()).toEqual(['add', 'adopt']);
      expect(ev._fallback).toHaveBeenCalledTimes(1);
      expect(ids(q)).toEqual(['id-0001']);
      // and from then on in memory at once
      await q._add(rec(2));
      expect(ids(q)).toEqual(['id-0001', 'id-0002']);
      expect(ev._fallback).toHaveBeenCalledTimes(1);
    });
  });

  describe('without IndexedDB', () => {
    let saved: unknown;
    beforeEach(() => {
      saved = (globalThis as any).indexedDB;
      delete (globalThis as any).indexedDB;
    });
    afterEach(() => {
      (globalThis as any).indexedDB = saved;
    });

    it('reports the fallback once and still queues in memory', async () => {
      expect(typeof indexedDB).toBe('undefined');
      const ev = events();
      const q = createQueue('A', { ...WIDE, maxCount: 3 }, ev);
      expect(ev._fallback).toHaveBeenCalledTimes(1);
      await q._add(rec(1));
      await q._add(rec(2));
      await q._flushed();
      expect(ids(q)).toEqual(['id-0001', 'id-0002']);
      await q._remove(['id-0001']);
      expect(ids(q)).toEqual(['id-0002']);
      const out = q._takeOut(['id-0002']);
      expect(ids(q)).toEqual([]);
      q._putBack(out);
      expect(ids(q)).toEqual(['id-0002']);
      await q._remove(['id-0002']);
      await q._adopt(() => true);
      await q._add(rec(3));
      expect(ids(q)).toEqual(['id-0003']);
      expect(ev._fallback).toHaveBeenCalledTimes(1);
    });

    it('still enforces its bounds', async () => {
      const q = createQueue('A', { ...WIDE, maxCount: 1 }, events());
      await q._add(rec(1));
      const e = await refusal(q._add(rec(2)));
      expect(e.code).toBe('queue_full');
      expect(e.messageIds).toEqual(['id-0002']);
      expect(ids(q)).toEqual(['id-0001']);
    });
  });
});
