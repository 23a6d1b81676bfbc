// Without Web Locks (an http:// page: they are [SecureContext]; or a lock manager that throws), another tab adopts a
// record once it is older than the lease, even from a tab that still lives and holds it (a long outage, offline). The
// tab that held it must then not send it too (found by review 5, finding 3).
import { URL_, api, sentIds } from './api-stub';
import { browserPlatform } from '../../src/delivery/platform';
import { expect, it, vi } from 'vitest';
import { createQueue, DEFAULT_BOUNDS } from '../../src/delivery/queue';
import { createTabs, LEASE_MS } from '../../src/delivery/tabs';
import { createTransport } from '../../src/delivery/transport';
import { createHandoff } from '../../src/delivery/handoff';
import { createScheduler } from '../../src/delivery/scheduler';
import { adoptOrphans } from '../../src/delivery/start';
import type { Message } from '../../src/message/types';

function tab(owner: string) {
  const queue = createQueue(owner, DEFAULT_BOUNDS, { _expired: vi.fn(), _fallback: vi.fn() }, 'wk ' + URL_);
  const tabs = createTabs(owner, () => {});
  const deps = { _queue: queue, _tabs: tabs, _transport: createTransport(), _platform: browserPlatform(), url: URL_, writeKey: 'wk', flushAt: 20, flushInterval: 1000, report: vi.fn(), emit: vi.fn(), open: () => true };
  const scheduler = createScheduler({ ...deps, _handoff: createHandoff(deps) });
  tabs._enter();
  return { queue, tabs, scheduler };
}

it('a live tab whose record another tab adopted at the end of the lease lets it go, and does not send it again', async () => {
  expect((navigator as { locks?: unknown }).locks).toBeFalsy(); // as on an http:// page
  vi.useFakeTimers({ toFake: ['Date'] });
  const t0 = Date.now();
  const A = tab('A');
  const B = tab('B');
  expect(A.tabs._leased()).toBe(true);
  const id = '01JZZZZZZZZZZZZZZZZZZZZZZZ';
  const message = { type: 'track', event: 'Order Completed', messageId: id } as unknown as Message;
  await A.queue._add({ id, message, bytes: 80, queuedAt: t0, attempts: 0, owner: 'A' });
  await A.scheduler._flush(); // 503: A keeps it for its next retry
  expect(A.queue._list().map((r) => r.id)).toEqual([id]);
  // the outage outlasts the lease: B adopts the record (what B's lease timer does) and delivers it
  vi.setSystemTime(t0 + LEASE_MS + 1000);
  api.status = 200;
  await adoptOrphans(B.queue, await B.tabs._orphans(), 0);
  expect(B.queue._list().map((r) => r.id)).toEqual([id]);
  await B.scheduler._flush();
  // A's retry comes: it lets the record go rather than send it a third time
  await A.scheduler._flush();
  expect(sentIds()).toEqual([[id], [id]]);
  expect(A.queue._list()).toEqual([]);
  // and what A queues afterwards goes as before
  const id2 = '01JZZZZZZZZZZZZZZZZZZZZZZY';
  await A.queue._add({ id: id2, message: { ...message, messageId: id2 }, bytes: 80, queuedAt: Date.now(), attempts: 0, owner: 'A' });
  await A.scheduler._flush();
  expect(sentIds()).toEqual([[id], [id], [id2]]);
});
