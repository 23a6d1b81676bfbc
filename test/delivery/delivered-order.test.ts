import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createQueue, DEFAULT_BOUNDS, type QueueRecord } from '../../src/delivery/queue';
import { createHandoff } from '../../src/delivery/handoff';
import { createScheduler } from '../../src/delivery/scheduler';
import { createTransport } from '../../src/delivery/transport';
import { browserPlatform } from '../../src/delivery/platform';
import type { Tabs } from '../../src/delivery/tabs';
import type { Message } from '../../src/message/types';

// Issue 27's flaky check (e2e/demo.spec.ts "a hostile ?api= ...": a row of the demo's events panel never marked
// sent). A call's own event (and its promise) comes once its record is stored; the demo adds the row then, and marks
// it at 'delivered'. A fast API answered before the record's write, which waited behind an earlier one (the queue
// writes in bursts, store.ts `writeBehind`); the delete of the delivered record ran first, so 'delivered' came before
// the call resolved, and the row, added after, was never marked.

const rec = (n: number): QueueRecord => {
  const id = 'm' + n;
  return { id, message: { type: 'track', event: 'E', messageId: id } as unknown as Message, bytes: 50, queuedAt: Date.now(), attempts: 0, owner: 'me' };
};

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  localStorage.clear();
});
afterEach(() => vi.unstubAllGlobals());

describe("'delivered'", () => {
  it('comes after the record was stored (the call resolved), even when the API answers before its write', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => ({ status: 200, headers: { get: () => null } })));
    const order: string[] = [];
    const queue = createQueue('me', DEFAULT_BOUNDS, { _expired: vi.fn(), _fallback: vi.fn() });
    const deps = {
      _queue: queue,
      _tabs: { _alive: () => () => true, _leased: () => false } as unknown as Tabs,
      _transport: createTransport(),
      _platform: browserPlatform(),
      url: 'https://api.test/v1/batch',
      writeKey: 'wk',
      flushAt: 20,
      flushInterval: 1000,
      open: () => true,
      report: vi.fn(),
      emit: (name: string, messages?: unknown) => {
        if (name == 'delivered') order.push('delivered ' + (messages as Message[]).map((m) => m.messageId).join());
      },
    };
    const scheduler = createScheduler({ ...deps, _handoff: createHandoff(deps) });
    // The first record's write is under way; the second's waits for it (one transaction per burst).
    const first = queue._add(rec(1)) as Promise<void>;
    await Promise.resolve();
    const second = queue._add(rec(2)) as Promise<void>;
    first.then(() => order.push('stored m1'));
    second.then(() => order.push('stored m2'));
    scheduler._notify();
    await vi.waitFor(() => expect(order.filter((o) => o.startsWith('delivered'))).toHaveLength(1));
    await second;
    expect(order).toEqual(['stored m1', 'stored m2', 'delivered m1,m2']);
  });
});
