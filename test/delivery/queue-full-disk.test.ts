// A record whose write failed (a full disk) is in this page's memory only; reconcile must not take it out.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createQueue, type QueueRecord } from '../../src/delivery/queue';
import type { Message } from '../../src/message/types';

const WIDE = { maxCount: 1000, maxBytes: 1e9, maxAgeMs: 1e9 };
const rec = (n: number): QueueRecord => {
  const id = 'id-' + String(n).padStart(4, '0');
  return { id, message: { type: 'track', event: 'e', messageId: id } as unknown as Message, bytes: 100, queuedAt: Date.now(), attempts: 0, owner: 'A' };
};
let put: PropertyDescriptor | undefined;
const proto = () => (globalThis as any).IDBObjectStore.prototype;
beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  put = Object.getOwnPropertyDescriptor(proto(), 'put');
});
afterEach(() => put && Object.defineProperty(proto(), 'put', put));

it('reconcile keeps a record of this page whose write a full disk refused (its only copy is in memory)', async () => {
  const fallback = vi.fn();
  const q = createQueue('A', WIDE, { _expired: vi.fn(), _fallback: fallback });
  await q._add(rec(1));
  Object.defineProperty(proto(), 'put', { configurable: true, value() { throw new DOMException('quota exceeded', 'QuotaExceededError'); } });
  await q._add(rec(2));
  expect(fallback).toHaveBeenCalled();
  // (a page restored from the back/forward cache, or one without Web Locks with a record older than a lease)
  await q._reconcile();
  expect(q._list().map((r) => r.id)).toEqual(['id-0001', 'id-0002']);
});
