import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { createStore, values, type UseStore } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createQueue, type QueueBounds, type QueueRecord } from '../../src/delivery/queue';
import { adoptOrphans } from '../../src/delivery/start';
import type { Message } from '../../src/message/types';

const WIDE: QueueBounds = { maxCount: 1000, maxBytes: 1e9, maxAgeMs: 1e9 };

function rec(n: number, owner = 'A'): QueueRecord {
  const id = 'id-' + String(n).padStart(4, '0');
  return { id, message: { type: 'track', event: 'e' + n, messageId: id } as unknown as Message, bytes: 100, queuedAt: Date.now(), attempts: 0, owner };
}
const events = () => ({ _expired: vi.fn(), _fallback: vi.fn() });

// What the shared IndexedDB store holds, read the way another page would.
let inspect: UseStore;
const storedIds = async () => ((await values<QueueRecord>(inspect)) as QueueRecord[]).map((r) => r.id).sort();
const ids = (q: { _list(): readonly QueueRecord[] }) => q._list().map((r) => r.id);

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  inspect = createStore('svc-analytics', 'queue');
  localStorage.clear();
});
afterEach(() => {
  localStorage.clear();
  vi.restoreAllMocks();
});

describe('adoptOrphans', () => {
  it('first deletes the records an exit noted as handed to the browser (the page died before deleting them)', async () => {
    const a = createQueue('A', WIDE, events());
    await Promise.all([a._add(rec(1)), a._add(rec(2))]);
    // The page went away right after noting the ids: IndexedDB still holds the record.
    localStorage.setItem('svc_sent', JSON.stringify(['id-0001']));
    expect(await storedIds()).toEqual(['id-0001', 'id-0002']);

    const b = createQueue('B', WIDE, events());
    await adoptOrphans(b, () => true);
    expect(ids(b)).toEqual(['id-0002']);
    expect(await storedIds()).toEqual(['id-0002']);
    expect(localStorage.getItem('svc_sent')).toBeNull();
  });

  it('never adopts a record handed to the browser (taken out and noted, never deleted)', async () => {
    const a = createQueue('A', WIDE, events());
    await Promise.all([a._add(rec(1)), a._add(rec(2))]);
    a._takeOut(['id-0001']);
    localStorage.setItem('svc_sent', JSON.stringify(['id-0001']));
    const b = createQueue('B', WIDE, events());
    await adoptOrphans(b, () => true);
    expect(ids(b)).toEqual(['id-0002']);
    expect(await storedIds()).toEqual(['id-0002']);
  });

  it("with no grace (a page that replaces a discarded one: start.ts passes 0 when document.wasDiscarded), adopts an orphan at first sight", async () => {
    const a = createQueue('A', WIDE, events());
    await a._add(rec(1, 'A'));
    const b = createQueue('B', WIDE, events());
    expect(await adoptOrphans(b, () => true, 0)).toEqual({ _left: 0, _due: 0 });
    expect(ids(b)).toEqual(['id-0001']);
  });

  it('adopts an orphan only graceMs after it first saw it, and reads the exit note again first', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const t = Date.now();
      const a = createQueue('A', WIDE, events());
      await a._add(rec(1, 'A'));
      await a._add(rec(2, 'A'));
      const b = createQueue('B', WIDE, events());
      // first sight: nothing adopted yet, and B is told when to look again
      expect(await adoptOrphans(b, () => true, 1500)).toEqual({ _left: 0, _due: t + 1500 });
      expect(ids(b)).toEqual([]);
      // A's note that it handed id-0001 to the browser arrives late (another page's localStorage write)
      localStorage.setItem('svc_sent', JSON.stringify(['id-0001']));
      vi.setSystemTime(t + 1500);
      expect(await adoptOrphans(b, () => true, 1500)).toEqual({ _left: 0, _due: 0 });
      expect(ids(b)).toEqual(['id-0002']);
    } finally {
      vi.useRealTimers();
    }
  });
});
