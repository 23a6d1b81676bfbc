// An API for the delivery tests that run real queues and schedulers over fake IndexedDB: fetch answers `api.status`
// (and `Retry-After: api.retryAfter`, if set), and `api.bodies` keeps every request body; reset before each test.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, vi } from 'vitest';
import type { Message } from '../../src/message/types';

export const URL_ = 'https://api.test/v1/batch';
export const api = { status: 503, retryAfter: null as string | null, bodies: [] as string[] };
/** The message ids of each request, in order. */
export const sentIds = () => api.bodies.map((b) => JSON.parse(b).batch.map((m: Message) => m.messageId));

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  localStorage.clear();
  Object.assign(api, { status: 503, retryAfter: null, bodies: [] });
  vi.stubGlobal(
    'fetch',
    vi.fn(async (_u: string, init: RequestInit) => (api.bodies.push(String(init.body)), { status: api.status, headers: { get: (n: string) => (n == 'Retry-After' ? api.retryAfter : null) } })),
  );
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});
