// @vitest-environment node
// The service worker's claim of what closed pages left (src/offline/deliver.ts) where Web Locks are missing: the pages
// then tell a record's owner is gone by its lease (delivery/records.ts `leaseOver`, from `claimedAt`, else
// `queuedAt`). A claim that kept the record's old `queuedAt` as its lease left it an orphan to the first page that
// opened while the worker still sent it: that page adopted and sent it too (the simulator, seed 103 with a start-up
// order h47 tried first).
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { createStore, get, setMany } from 'idb-keyval';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { deliverStored } from '../../src/offline/deliver';
import { DB } from '../../src/delivery/store';
import { LEASE_MS, leaseOver, type QueueRecord } from '../../src/delivery/records';

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  // a browser without Web Locks
  vi.stubGlobal('navigator', {});
});
afterEach(() => vi.unstubAllGlobals());

it('without Web Locks, a record the worker claims starts a lease of its own: no page adopts it while the worker sends it', async () => {
  const queuedAt = Date.now() - LEASE_MS - 5000;
  const record: QueueRecord = { id: 'r1', message: { type: 'track', event: 'E', messageId: 'r1' } as never, bytes: 40, queuedAt, attempts: 0, owner: 'closed-page', source: 'wk https://api.test/v1/batch' };
  const store = createStore(DB, 'queue');
  await setMany([[record.id, record]], store);
  // the worker's request is still on its way (a slow API)
  let posted!: () => void;
  const sending = new Promise<void>((r) => (posted = r));
  const post = vi.fn(() => (posted(), new Promise<Response>(() => {})));
  void deliverStored(post as unknown as typeof fetch);
  await sending;
  const claimed = (await get<QueueRecord>('r1', store))!;
  expect(claimed.owner).toMatch(/^worker-/);
  // what a page's adoption asks of a record without Web Locks (delivery/tabs.ts `_orphans`)
  expect(leaseOver(claimed, Date.now())).toBe(false);
});
