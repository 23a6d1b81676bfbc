import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { createStore, values, type UseStore } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createQueue, DEFAULT_BOUNDS, type QueueBounds, type QueueRecord } from '../src/queue';
import type { Message } from '../src/types';

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
  return { dropped: vi.fn(), fallback: vi.fn() };
}

// What the shared IndexedDB store holds, read the way another page would.
let inspect: UseStore;
const stored = async () => ((await values<QueueRecord>(inspect)) as QueueRecord[]).sort((a, b) => (a.id < b.id ? -1 : 1));
const storedIds = async () => (await stored()).map((r) => r.id);
const ids = (q: { list(): readonly QueueRecord[] }) => q.list().map((r) => r.id);

beforeEach(() => {
  // A fresh, empty IndexedDB for every test.
  (globalThis as any).indexedDB = new IDBFactory();
  inspect = createStore('svc-analytics', 'queue');
  localStorage.clear();
});
afterEach(() => {
  localStorage.clear();
});

describe('createQueue', () => {
  describe('add', () => {
    it('keeps records in the order they were added', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q.add(rec(1)), q.add(rec(2)), q.add(rec(3))]);
      expect(ids(q)).toEqual(['id-0001', 'id-0002', 'id-0003']);
    });

    it('resolves once the record is in IndexedDB', async () => {
      const q = createQueue('A', WIDE, events());
      await q.add(rec(1));
      expect(await storedIds()).toEqual(['id-0001']);
    });

    it('stores a whole burst of calls', async () => {
      const q = createQueue('A', WIDE, events());
      const all = [1, 2, 3, 4, 5].map((n) => q.add(rec(n)));
      await all[all.length - 1];
      await q.flushed();
      expect(await storedIds()).toEqual(['id-0001', 'id-0002', 'id-0003', 'id-0004', 'id-0005']);
    });

    it('persists records so a queue of another owner can adopt them once they are orphans', async () => {
      const a = createQueue('A', WIDE, events());
      await a.add(rec(1, 'A'));
      await a.add(rec(2, 'A'));

      const b = createQueue('B', WIDE, events());
      await b.adopt(() => false);
      expect(b.list()).toEqual([]);

      await b.adopt((r) => r.owner == 'A');
      expect(ids(b)).toEqual(['id-0001', 'id-0002']);
      expect(b.list().every((r) => r.owner == 'B')).toBe(true);
      expect(b.list()[0].message).toEqual(rec(1).message);
      expect((await stored()).map((r) => r.owner)).toEqual(['B', 'B']);
    });

    it("never takes back one of its own records that left memory (delivered, its delete not yet committed)", async () => {
      const a = createQueue('A', WIDE, events());
      await a.add(rec(1, 'A'));
      // The adoption's read of the store starts first; the delivery lands while that read is in flight: the record
      // leaves memory at once, its IndexedDB delete comes after the read.
      const adopting = a.adopt((r) => r.owner != 'A');
      for (let i = 0; i < 5; i++) await Promise.resolve();
      const removing = a.remove(['id-0001']);
      await adopting;
      expect(ids(a)).toEqual([]);
      await removing;
      expect(await storedIds()).toEqual([]);
    });

    it('adopts nothing twice', async () => {
      const a = createQueue('A', WIDE, events());
      await a.add(rec(1, 'A'));
      const b = createQueue('B', WIDE, events());
      await b.adopt(() => true);
      await b.adopt(() => true);
      expect(ids(b)).toEqual(['id-0001']);
    });
  });

  describe('remove', () => {
    it('removes records from the list and from IndexedDB', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q.add(rec(1)), q.add(rec(2)), q.add(rec(3))]);
      await q.remove(['id-0001', 'id-0003']);
      expect(ids(q)).toEqual(['id-0002']);
      expect(await storedIds()).toEqual(['id-0002']);
      const b = createQueue('B', WIDE, events());
      await b.adopt(() => true);
      expect(ids(b)).toEqual(['id-0002']);
    });

    it('does not store a record removed before its write happened', async () => {
      const q = createQueue('A', WIDE, events());
      const added = q.add(rec(1));
      q.remove(['id-0001']);
      await added;
      await q.flushed();
      expect(await storedIds()).toEqual([]);
    });
  });

  describe('removeOnExit', () => {
    it('notes the ids in localStorage synchronously and removes the records', async () => {
      const q = createQueue('A', WIDE, events());
      await Promise.all([q.add(rec(1)), q.add(rec(2))]);
      q.removeOnExit(['id-0001']);
      expect(JSON.parse(localStorage.getItem('svc_sent')!)).toEqual(['id-0001']);
      expect(ids(q)).toEqual(['id-0002']);
      await vi.waitFor(async () => expect(await storedIds()).toEqual(['id-0002']));
      // once IndexedDB caught up, the note is no longer needed
      await vi.waitFor(() => expect(JSON.parse(localStorage.getItem('svc_sent') || '[]')).toEqual([]));
    });

    it('keeps notes of earlier exits', () => {
      const q = createQueue('A', WIDE, events());
      q.removeOnExit(['x1']);
      q.removeOnExit(['x2']);
      expect(JSON.parse(localStorage.getItem('svc_sent')!)).toEqual(['x1', 'x2']);
    });

    it("lets the next instance's adopt delete records the page died before deleting", async () => {
      const a = createQueue('A', WIDE, events());
      await Promise.all([a.add(rec(1)), a.add(rec(2))]);
      // The page went away right after noting the ids: IndexedDB still holds the record.
      localStorage.setItem('svc_sent', JSON.stringify(['id-0001']));
      expect(await storedIds()).toEqual(['id-0001', 'id-0002']);

      const b = createQueue('B', WIDE, events());
      await b.adopt(() => true);
      expect(ids(b)).toEqual(['id-0002']);
      expect(await storedIds()).toEqual(['id-0002']);
      expect(localStorage.getItem('svc_sent')).toBeNull();
    });

    it('never lets the next load adopt a record handed to the browser, even while the delete is pending', async () => {
      const a = createQueue('A', WIDE, events());
      await Promise.all([a.add(rec(1)), a.add(rec(2))]);
      a.removeOnExit(['id-0001']);
      const b = createQueue('B', WIDE, events());
      await b.adopt(() => true);
      expect(ids(b)).toEqual(['id-0002']);
    });
  });

  describe('bounds', () => {
    it('has documented defaults', () => {
      expect(DEFAULT_BOUNDS).toEqual({ maxCount: 10000, maxBytes: 5000000, maxAgeMs: 7 * 24 * 3600 * 1000 });
    });

    it('drops the oldest records past maxCount and reports overflow with their ids', async () => {
      const ev = events();
      const q = createQueue('A', { ...WIDE, maxCount: 2 }, ev);
      await q.add(rec(1));
      await q.add(rec(2));
      await q.add(rec(3));
      await q.add(rec(4));
      expect(ids(q)).toEqual(['id-0003', 'id-0004']);
      await vi.waitFor(() => expect(ev.dropped).toHaveBeenCalledTimes(2));
      expect(ev.dropped).toHaveBeenNthCalledWith(1, 'overflow', ['id-0001']);
      expect(ev.dropped).toHaveBeenNthCalledWith(2, 'overflow', ['id-0002']);
      await vi.waitFor(async () => expect(await storedIds()).toEqual(['id-0003', 'id-0004']));
    });

    it('drops the oldest records past maxBytes and reports overflow', async () => {
      const ev = events();
      const q = createQueue('A', { ...WIDE, maxBytes: 250 }, ev);
      await q.add(rec(1, 'A', { bytes: 100 }));
      await q.add(rec(2, 'A', { bytes: 100 }));
      expect(ev.dropped).not.toHaveBeenCalled();
      await q.add(rec(3, 'A', { bytes: 100 }));
      expect(ids(q)).toEqual(['id-0002', 'id-0003']);
      await vi.waitFor(() => expect(ev.dropped).toHaveBeenCalledWith('overflow', ['id-0001']));
      // the byte count follows removals too
      await q.remove(['id-0002']);
      await q.add(rec(4, 'A', { bytes: 100 }));
      expect(ids(q)).toEqual(['id-0003', 'id-0004']);
      expect(ev.dropped).toHaveBeenCalledTimes(1);
    });

    it('drops records older than maxAgeMs and reports them as expired', async () => {
      const ev = events();
      const now = Date.now();
      const q = createQueue('A', { ...WIDE, maxAgeMs: 1000 }, ev);
      await q.add(rec(1, 'A', { queuedAt: now - 5000 }));
      await q.add(rec(2, 'A', { queuedAt: now }));
      expect(ids(q)).toEqual(['id-0002']);
      await vi.waitFor(() => expect(ev.dropped).toHaveBeenCalledWith('expired', ['id-0001']));
      expect(ev.dropped).not.toHaveBeenCalledWith('overflow', expect.anything());
      await vi.waitFor(async () => expect(await storedIds()).toEqual(['id-0002']));
    });

    it('drops expired records it adopts', async () => {
      const a = createQueue('A', WIDE, events());
      await a.add(rec(1, 'A', { queuedAt: Date.now() - 60000 }));
      await a.add(rec(2, 'A'));
      const ev = events();
      const b = createQueue('B', { ...WIDE, maxAgeMs: 30000 }, ev);
      await b.adopt(() => true);
      expect(ids(b)).toEqual(['id-0002']);
      await vi.waitFor(() => expect(ev.dropped).toHaveBeenCalledWith('expired', ['id-0001']));
    });
  });

  describe('adopt', () => {
    it('keeps records in id order after adopting', async () => {
      const a = createQueue('A', WIDE, events());
      await a.add(rec(2, 'A'));
      await a.add(rec(4, 'A'));
      const b = createQueue('B', WIDE, events());
      await b.add(rec(1, 'B'));
      await b.add(rec(3, 'B'));
      await b.add(rec(5, 'B'));
      await b.adopt((r) => r.owner == 'A');
      expect(ids(b)).toEqual(['id-0001', 'id-0002', 'id-0003', 'id-0004', 'id-0005']);
    });

    it('leaves the records of a live tab alone', async () => {
      const a = createQueue('A', WIDE, events());
      await a.add(rec(1, 'A'));
      const b = createQueue('B', WIDE, events());
      await b.add(rec(2, 'B'));
      await b.adopt(() => false);
      expect(ids(b)).toEqual(['id-0002']);
      expect((await stored()).find((r) => r.id == 'id-0001')!.owner).toBe('A');
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
      expect(ev.fallback).toHaveBeenCalledTimes(1);
      await q.add(rec(1));
      await q.add(rec(2));
      await q.flushed();
      expect(ids(q)).toEqual(['id-0001', 'id-0002']);
      await q.remove(['id-0001']);
      expect(ids(q)).toEqual(['id-0002']);
      q.removeOnExit(['id-0002']);
      expect(ids(q)).toEqual([]);
      await q.adopt(() => true);
      await q.add(rec(3));
      expect(ids(q)).toEqual(['id-0003']);
      expect(ev.fallback).toHaveBeenCalledTimes(1);
    });

    it('still enforces its bounds', async () => {
      const ev = events();
      const q = createQueue('A', { ...WIDE, maxCount: 1 }, ev);
      await q.add(rec(1));
      await q.add(rec(2));
      expect(ids(q)).toEqual(['id-0002']);
      await vi.waitFor(() => expect(ev.dropped).toHaveBeenCalledWith('overflow', ['id-0001']));
    });
  });
});
