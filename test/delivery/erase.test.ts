// What an erasure (consent withdrawn or denied, opt-out) does to delivery's storage: start.ts `eraseDelivery`.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { createStore, setMany, values } from 'idb-keyval';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createQueue, type Queue, type QueueRecord } from '../../src/delivery/queue';
import { adoptOrphans, eraseDelivery } from '../../src/delivery/start';
import { note, noted } from '../../src/delivery/exit-note';
import { OPEN_TIMEOUT_MS } from '../../src/delivery/store';
import type { Message } from '../../src/message/types';

const WIDE = { maxCount: 1000, maxBytes: 1e9, maxAgeMs: 1e9 };
const rec = (id: string, owner: string): QueueRecord => ({ id, message: { type: 'track', messageId: id } as unknown as Message, bytes: 40, queuedAt: Date.now(), attempts: 0, owner });
const events = () => ({ _expired: vi.fn(), _fallback: vi.fn() });
// (a started delivery as eraseDelivery uses it)
const delivery = (q: Queue) => ({ _queue: q, _scheduler: { _erased: vi.fn() } }) as unknown as Parameters<typeof eraseDelivery>[0];
const shared = () => createStore('svc-analytics', 'queue');
// A page that went away handed r1 to the browser and noted it; its record's delete was cut off with the page.
const handedAway = async () => {
  await setMany([['r1', rec('r1', 'gone-tab')]], shared());
  note(['r1']);
};

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  localStorage.clear();
});
afterEach(() => {
  vi.useRealTimers();
  localStorage.clear();
});

it('clears the store, and once that committed takes out of the exit note what it named: nothing stays stored', async () => {
  await handedAway();
  const d = delivery(createQueue('A', WIDE, events()));
  await eraseDelivery(d);
  expect(await values(shared())).toEqual([]);
  expect(localStorage.getItem('svc_sent')).toBeNull();
  expect(d!._scheduler._erased).toHaveBeenCalledTimes(1);
});

it("keeps the exit note where this page's store never opened: the next page deletes what it names rather than sending it again (sim seed 16471)", async () => {
  await handedAway();
  const idb = (globalThis as any).indexedDB;
  // this page's open never answers (a stalled profile, a blocked open)
  (globalThis as any).indexedDB = { open: () => ({}), databases: async () => [] };
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const erased = eraseDelivery(delivery(createQueue('A', WIDE, events())));
  await vi.advanceTimersByTimeAsync(OPEN_TIMEOUT_MS);
  await erased;
  vi.useRealTimers();
  expect(noted()).toEqual(['r1']);
  // the next page, whose store opens, finishes that hand-off before it adopts: r1 is deleted, not sent
  (globalThis as any).indexedDB = idb;
  const next = createQueue('B', WIDE, events());
  await adoptOrphans(next, () => true);
  expect(next._list()).toEqual([]);
  expect(await values(shared())).toEqual([]);
  expect(noted()).toEqual([]);
});

it('before delivery started, empties the store as it is, and then the note', async () => {
  await handedAway();
  await eraseDelivery();
  expect(await values(shared())).toEqual([]);
  expect(localStorage.getItem('svc_sent')).toBeNull();
});

it('before delivery started, keeps the note where whether the store exists is unknown (no indexedDB.databases)', async () => {
  await handedAway();
  const idb = (globalThis as any).indexedDB;
  (globalThis as any).indexedDB = { open: idb.open.bind(idb) };
  await eraseDelivery();
  expect(noted()).toEqual(['r1']);
});

it('keeps what another page notes while the clear runs', async () => {
  await handedAway();
  const erased = eraseDelivery(delivery(createQueue('A', WIDE, events())));
  note(['r2']);
  await erased;
  expect(noted()).toEqual(['r2']);
});
