// More of the queue's contract (found missing by mutation testing, `npm run mutate`); the setup is queue.test.ts's.
import 'fake-indexeddb/auto';
import { IDBDatabase, IDBFactory } from 'fake-indexeddb';
import { createStore, setMany, values, type UseStore } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createQueue, type QueueBounds, type QueueRecord } from '../../src/delivery/queue';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

const WIDE: QueueBounds = { maxCount: 1000, maxBytes: 1e9, maxAgeMs: 1e9 };

function rec(n: number, owner = 'A', extra: Partial<QueueRecord> = {}): QueueRecord {
  const id = 'id-' + String(n).padStart(4, '0');
  return { id, message: { type: 'track', event: 'e' + n, messageId: id } as unknown as Message, bytes: 100, queuedAt: Date.now(), attempts: 0, owner, ...extra };
}
const events = () => ({ _expired: vi.fn(), _fallback: vi.fn() });

let inspect: UseStore;
const storedIds = async () => ((await values<QueueRecord>(inspect)) as QueueRecord[]).map((r) => r.id).sort();
const ids = (q: { _list(): readonly QueueRecord[] }) => q._list().map((r) => r.id);

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  inspect = createStore('svc-analytics', 'queue');
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('queue: clear (consent withdrawn, opt-out)', () => {
  it("removes every record, this tab's, those handed out at an exit, and other tabs', from memory and IndexedDB", async () => {
    const other = createQueue('B', WIDE, events());
    await other._add(rec(9, 'B'));
    const q = createQueue('A', WIDE, events());
    await Promise.all([q._add(rec(1)), q._add(rec(2)), q._add(rec(3))]);
    q._takeOut(['id-0002']); // handed to the browser at an exit, not yet confirmed
    expect(await storedIds()).toEqual(['id-0001', 'id-0002', 'id-0003', 'id-0009']);
    await q._clear();
    expect(ids(q)).toEqual([]);
    expect(await storedIds()).toEqual([]);
  });

  it('a write pending when the queue is cleared stores nothing of what it cleared', async () => {
    const q = createQueue('A', WIDE, events());
    await q._add(rec(1));
    // a burst: the second write waits behind the first
    const w2 = q._add(rec(2));
    const w3 = q._add(rec(3));
    const out = q._takeOut(['id-0003']);
    expect(out).toHaveLength(1);
    await q._clear();
    await Promise.all([w2, w3, q._flushed()]);
    expect(await storedIds()).toEqual([]);
    expect(ids(q)).toEqual([]);
  });
});

describe('queue: bounds and expiry', () => {
  it('says how full the queue is when it refuses a record', async () => {
    const q = createQueue('A', { ...WIDE, maxCount: 2 }, events());
    await q._add(rec(1));
    await q._add(rec(2));
    const e = q._add(rec(3)) as AnalyticsError;
    expect(e.code).toBe('queue_full');
    expect(e.message).toBe('the queue is full (2 messages, 200 bytes)');
  });

  it('keeps a record exactly maxAgeMs old, and drops the older one before it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t = Date.now();
    const ev = events();
    const q = createQueue('A', { ...WIDE, maxAgeMs: 1000 }, ev);
    await q._add(rec(1, 'A', { queuedAt: t - 1 }));
    await q._add(rec(2, 'A', { queuedAt: t }));
    await q._add(rec(3, 'A', { queuedAt: t + 1000 }));
    await q._flushed();
    await vi.waitFor(() => expect(ev._expired).toHaveBeenCalledWith(['id-0001']));
    expect(ids(q)).toEqual(['id-0002', 'id-0003']);
  });
});

describe('queue: keep', () => {
  it('writes records of this page through again after another page deleted them from the store', async () => {
    const q = createQueue('A', WIDE, events());
    await Promise.all([q._add(rec(1)), q._add(rec(2))]);
    // a page loaded meanwhile finished this page's exit hand-off: it deleted what the note named
    await createQueue('B', WIDE, events())._forget(['id-0001', 'id-0002']);
    expect(await storedIds()).toEqual([]);
    q._keep(['id-0001', 'id-0404']);
    await vi.waitFor(async () => expect(await storedIds()).toEqual(['id-0001']));
  });

  it('writes nothing for ids it no longer holds', async () => {
    const q = createQueue('A', WIDE, events());
    await q._add(rec(1));
    await q._remove(['id-0001']);
    const tx = vi.spyOn(IDBDatabase.prototype, 'transaction');
    q._keep(['id-0001']);
    await new Promise((r) => setTimeout(r, 20));
    expect(tx).not.toHaveBeenCalled();
  });
});

describe('queue: adopt', () => {
  it('ignores what in the store is no record (another library, a damaged entry)', async () => {
    const q = createQueue('A', WIDE, events());
    const good = rec(1, 'B');
    await setMany(
      [
        ['junk-null', null],
        ['junk-no-message', { id: 'junk-no-message', owner: 'B', queuedAt: 0 }],
        ['junk-no-id', { message: { messageId: 'x' }, owner: 'B', queuedAt: 0 }],
        [good.id, good],
      ],
      inspect,
    );
    await q._adopt(() => true);
    expect(ids(q)).toEqual([good.id]);
  });

  it('never adopts a record it holds, even one the store names another owner of', async () => {
    const q = createQueue('A', WIDE, events());
    const mine = rec(1);
    await q._add(mine);
    // (another tab adopted it while this page was in the back/forward cache, and its owner is gone by now)
    await setMany([[mine.id, { ...mine, owner: 'B' }]], inspect);
    await q._adopt((r) => r.owner == 'B');
    expect(ids(q)).toEqual([mine.id]);
  });

  it('counts none of its own records as left to another tab (one handed out at an exit still in the store)', async () => {
    const q = createQueue('A', WIDE, events());
    await q._add(rec(1, 'A', { queuedAt: 5000 }));
    q._takeOut(['id-0001']);
    expect(await q._adopt((r) => r.owner != 'A')).toEqual({ _left: 0, _due: 0 });
    expect(ids(q)).toEqual([]);
  });

  it('deletes records of another write key older than its bound, and keeps one exactly that old', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = Date.now();
    const q = createQueue('A', { ...WIDE, maxAgeMs: 1000 }, events(), 'wk1 https://a.test/v1/batch');
    const other = 'wk2 https://a.test/v1/batch';
    await setMany(
      [
        ['f1', { ...rec(1, 'B'), id: 'f1', source: other, queuedAt: now - 1001 }],
        ['f2', { ...rec(2, 'B'), id: 'f2', source: other, queuedAt: now - 1000 }],
      ],
      inspect,
    );
    await q._adopt(() => true);
    await vi.waitFor(async () => expect(await storedIds()).toEqual(['f2']));
    expect(ids(q)).toEqual([]);
  });

  it('an orphan it could not claim (a full disk) is looked at again CLAIM_RETRY_MS (1 s) after the grace', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = Date.now();
    await createQueue('B', WIDE, events())._add(rec(1, 'B'));
    const q = createQueue('A', WIDE, events());
    const proto = (globalThis as any).IDBObjectStore.prototype;
    vi.spyOn(proto, 'put').mockImplementation(() => {
      throw new DOMException('quota exceeded', 'QuotaExceededError');
    });
    expect(await q._adopt((r) => r.owner == 'B', 0)).toEqual({ _left: 0, _due: now + 1000 });
    // with a grace (first sight now, adopted after it): 1 s after the grace
    const r = createQueue('C', WIDE, events());
    expect((await r._adopt((x) => x.owner == 'B', 500))._due).toBe(now + 500);
    vi.setSystemTime(now + 500);
    expect((await r._adopt((x) => x.owner == 'B', 500))._due).toBe(now + 500 + 500 + 1000);
  });

  it('puts adopted records back in id order among its own', async () => {
    const q = createQueue('A', WIDE, events());
    await q._add(rec(2));
    await q._add(rec(5));
    const out = q._takeOut(['id-0002', 'id-0005']);
    await q._add(rec(4));
    q._putBack(out.reverse());
    await q._add(rec(6));
    expect(ids(q)).toEqual(['id-0002', 'id-0004', 'id-0005', 'id-0006']);
    const b = createQueue('B', WIDE, events());
    await Promise.all([b._add(rec(3, 'B')), b._add(rec(1, 'B')), b._add(rec(7, 'B'))]);
    await q._adopt((r) => r.owner == 'B');
    expect(ids(q)).toEqual(['id-0001', 'id-0002', 'id-0003', 'id-0004', 'id-0005', 'id-0006', 'id-0007']);
  });
});

describe('queue: reconcile', () => {
  it('without a usable store, keeps every record (nothing tells it another tab took one)', async () => {
    delete (globalThis as any).indexedDB;
    const q = createQueue('A', WIDE, events());
    await q._add(rec(1));
    await q._add(rec(2));
    await expect(q._reconcile()).resolves.toBeUndefined();
    expect(ids(q)).toEqual(['id-0001', 'id-0002']);
  });
});
