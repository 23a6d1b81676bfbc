// A page restored from the back/forward cache must not send records that another tab adopted and delivered while it
// was cached: nothing of it is sent before `queue._reconcile()` has read the store, not even by a retry timer that
// became overdue in the cache (found by review 5, finding 2).
import { URL_, api, sentIds } from './api-stub';
import { browserPlatform } from '../../src/delivery/platform';
import { afterEach, expect, it, vi } from 'vitest';
import { createQueue, DEFAULT_BOUNDS } from '../../src/delivery/queue';
import { createTabs } from '../../src/delivery/tabs';
import { createTransport } from '../../src/delivery/transport';
import { createHandoff } from '../../src/delivery/handoff';
import { createScheduler } from '../../src/delivery/scheduler';
import { adoptOrphans, startDelivery } from '../../src/delivery/start';
import { createIdentity } from '../../src/identity/identity';
import type { Message } from '../../src/message/types';

afterEach(() => Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true }));
const lifecycle = (type: string, persisted: boolean) => Object.assign(new Event(type), { persisted });

it('a page cached in a backoff, whose record another tab adopted and delivered, does not send it again once restored', async () => {
  api.retryAfter = '30';
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  const t0 = Date.now();
  const A = startDelivery({
    owner: 'A', writeKey: 'wk', url: URL_, flushAt: 20, flushInterval: 1000, bounds: DEFAULT_BOUNDS,
    identity: createIdentity({}), open: () => true, report: vi.fn(), emit: vi.fn(),
  });
  const id = '01JZZZZZZZZZZZZZZZZZZZZZZZ';
  const message = { type: 'track', event: 'Order Completed', messageId: id } as unknown as Message;
  await A._queue._add({ id, message, bytes: 80, queuedAt: t0, attempts: 0, owner: 'A' });
  await A._scheduler._flush(); // 503 with Retry-After 30: A's retry timer is armed for t0 + 30 s
  expect(sentIds()).toEqual([[id]]);
  // A goes into the back/forward cache during its backoff
  Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
  window.dispatchEvent(lifecycle('pagehide', true));
  // tab B adopts A's record (A's lock was released; without Web Locks here, the lease stands in for it) and delivers it
  vi.setSystemTime(t0 + 61000);
  api.status = 200;
  const qB = createQueue('B', DEFAULT_BOUNDS, { _expired: vi.fn(), _fallback: vi.fn() }, 'wk ' + URL_);
  const tB = createTabs('B', () => {});
  const dB = { _queue: qB, _tabs: tB, _transport: createTransport(), _platform: browserPlatform(), url: URL_, writeKey: 'wk', flushAt: 20, flushInterval: 1000, report: vi.fn(), emit: vi.fn(), open: () => true };
  const sB = createScheduler({ ...dB, _handoff: createHandoff(dB) });
  await adoptOrphans(qB, await tB._orphans(), 0);
  await sB._flush();
  expect(sentIds()).toEqual([[id], [id]]);
  // A is restored: its retry timer is long overdue and fires in the next task, before IndexedDB answers the read
  window.dispatchEvent(lifecycle('pageshow', true));
  Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
  vi.advanceTimersByTime(30000);
  // once the read answered, A knows the record is another tab's: it is out of A's memory, and was not sent again
  await vi.waitFor(() => expect(A._queue._list()).toEqual([]), { timeout: 5000, interval: 20 });
  await A._scheduler._flush();
  expect(sentIds()).toEqual([[id], [id]]);
});
