// The queue's IndexedDB store (store.ts): emptying a store this page never opened, writes in bursts, and what the
// fallback is told (found missing by mutation testing, `npm run mutate`).
import 'fake-indexeddb/auto';
import { IDBFactory, IDBTransaction } from 'fake-indexeddb';
import { createStore, keys, set, values } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearStored, DB, OPEN_TIMEOUT_MS, openStore, writeBehind } from '../../src/delivery/store';
import { createQueue, type QueueRecord } from '../../src/delivery/queue';
import { browserPlatform } from '../../src/delivery/platform';
import type { Message } from '../../src/message/types';

const rec = (id: string): QueueRecord => ({ id, message: { type: 'track', event: 'E', messageId: id } as unknown as Message, bytes: 10, queuedAt: Date.now(), attempts: 0, owner: 'A' });
const databases = async () => (await indexedDB.databases()).map((d) => d.name).sort();

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('clearStored', () => {
  it("empties the queue's store where it exists, and leaves the page's own databases alone", async () => {
    await set('r1', rec('r1'), createStore(DB, 'queue'));
    await set('k', 'host page data', createStore('host-db', 'kv'));
    await clearStored();
    expect(await keys(createStore(DB, 'queue'))).toEqual([]);
    expect(await values(createStore('host-db', 'kv'))).toEqual(['host page data']);
  });

  it('creates no database where the queue never stored anything', async () => {
    await set('k', 'host page data', createStore('host-db', 'kv'));
    await clearStored();
    expect(await databases()).toEqual(['host-db']);
  });

  it('opens nothing where indexedDB.databases() is missing (opening would create the store)', async () => {
    const open = vi.spyOn(indexedDB, 'open');
    (indexedDB as any).databases = undefined;
    await expect(clearStored()).resolves.toBeUndefined();
    expect(open).not.toHaveBeenCalled();
  });

  it('never rejects, even where indexedDB.databases() fails', async () => {
    (indexedDB as any).databases = () => Promise.reject(new DOMException('blocked', 'SecurityError'));
    await expect(clearStored()).resolves.toBeUndefined();
  });
});

describe('openStore', () => {
  it('writes and reads where IDBTransaction.commit is missing (browsers before it), as where it exists', async () => {
    const commit = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, 'commit');
    delete (IDBTransaction.prototype as any).commit;
    try {
      const fallback = vi.fn();
      const q = createQueue('A', { maxCount: 100, maxBytes: 1e6, maxAgeMs: 1e9 }, { _expired: vi.fn(), _fallback: fallback });
      await q._add(rec('r1'));
      expect(fallback).not.toHaveBeenCalled();
      expect(await keys(createStore(DB, 'queue'))).toEqual(['r1']);
    } finally {
      if (commit) Object.defineProperty(IDBTransaction.prototype, 'commit', commit);
    }
  });

  it('tells the fallback why: no IndexedDB at all', () => {
    delete (globalThis as any).indexedDB;
    const fallback = vi.fn();
    openStore(fallback, browserPlatform());
    expect(fallback).toHaveBeenCalledTimes(1);
    expect(String(fallback.mock.calls[0][0])).toMatch(/no IndexedDB/);
  });

  it('tells the fallback why: a store that never answered within OPEN_TIMEOUT_MS', async () => {
    (globalThis as any).indexedDB = { open: () => ({}) };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const fallback = vi.fn();
    const persist = openStore(fallback, browserPlatform());
    const done = persist(() => new Promise<never>(() => {})); // (as an open that never settles leaves it)
    await vi.advanceTimersByTimeAsync(OPEN_TIMEOUT_MS);
    await done;
    expect(fallback).toHaveBeenCalledTimes(1);
    expect(String(fallback.mock.calls[0][0])).toMatch(`no answer within ${OPEN_TIMEOUT_MS} ms`);
  });
});

describe('writeBehind', () => {
  it('writes a burst of calls in one transaction, and what comes while it runs in the next', async () => {
    const batches: string[][] = [];
    let finish!: () => void;
    const save = vi.fn((list: QueueRecord[]) => (batches.push(list.map((r) => r.id)), new Promise<void>((r) => (finish = r))));
    const w = writeBehind(save);
    const burst = [w._write(rec('a')), w._write(rec('b')), w._write(rec('c'))];
    await Promise.resolve();
    await Promise.resolve();
    expect(batches).toEqual([['a', 'b', 'c']]);
    const later = [w._write(rec('d')), w._write(rec('e'))];
    finish();
    await Promise.all(burst);
    await vi.waitFor(() => expect(batches).toEqual([['a', 'b', 'c'], ['d', 'e']]));
    finish();
    await Promise.all(later);
    await w._flushed();
    expect(save).toHaveBeenCalledTimes(2);
  });
});
