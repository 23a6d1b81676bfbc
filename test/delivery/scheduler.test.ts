import { afterEach, describe, expect, it, vi } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { createStore, values } from 'idb-keyval';
import type { SchedulerDeps } from '../../src/delivery/scheduler';
import { createQueue, DEFAULT_BOUNDS, type QueueRecord } from '../../src/delivery/queue';
import type { Tabs } from '../../src/delivery/tabs';
import type { Message } from '../../src/message/types';
import { byteLength } from '../../src/message/validate';
import { record } from '../fake-queue';
import { KEY, URL_, advance, drain, setup, useSchedulerClock } from './scheduler-setup';


interface Reply {
  status: number;
  retryAfter?: string;
}

// fetch answers with the replies given, in turn (the last one repeats), or with a function of the body.
function mockFetch(replies: Reply[] | ((body: string) => Reply)) {
  let i = 0;
  const fn = vi.fn(async (_url: string, init: RequestInit) => {
    const r = typeof replies == 'function' ? replies(String(init.body)) : replies[Math.min(i++, replies.length - 1)];
    return { status: r.status, headers: { get: (n: string) => (n.toLowerCase() == 'retry-after' ? (r.retryAfter ?? null) : null) } };
  });
  vi.stubGlobal('fetch', fn);
  return fn;
}

// The note of what this page handed to the browser at an exit (localStorage), or null when there is none.
const note = () => JSON.parse(localStorage.getItem('svc_sent') || 'null') as string[] | null;
const bodies = (f: ReturnType<typeof mockFetch>) => f.mock.calls.map((c) => String(c[1].body));
const batchIds = (text: string) => (JSON.parse(text).batch as Message[]).map((m) => m.messageId);

// Stub fetch (and sendBeacon) first: the transport takes them when it is created, here.

function stubBeacon(beacon: (...a: any[]) => boolean, online = true) {
  vi.spyOn(navigator, 'sendBeacon').mockImplementation(beacon as any);
  vi.spyOn(navigator, 'onLine', 'get').mockReturnValue(online);
}

// Two requests with the same body, the first with keepalive and the second without, and nothing left queued.
function expectSentAgainWithoutKeepalive(fetch: { mock: { calls: unknown[][] } }, left: QueueRecord[]) {
  expect(fetch.mock.calls).toHaveLength(2);
  const [first, second] = fetch.mock.calls.map((c) => c[1] as RequestInit);
  expect(first.keepalive).toBe(true);
  expect(second.keepalive).toBe(false);
  expect(second.body).toBe(first.body);
  expect(left).toEqual([]);
}

// Lets pending promise chains (fetch answers, queue removals) run without moving the fake clock.

useSchedulerClock();

describe('createScheduler', () => {
  describe('notify', () => {
    // The first message of a quiet spell goes at once; the tests of batching send one first, so the next ones wait.
    const primed = async (over: Partial<SchedulerDeps>) => {
      const fetch = mockFetch([{ status: 200 }]);
      const s = setup(over);
      s.add(record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1);
      fetch.mockClear();
      return { ...s, fetch };
    };

    it('sends the first message of a quiet spell at once, and batches what follows within the interval', async () => {
      const fetch = mockFetch([{ status: 200 }]);
      const { add } = setup({ flushAt: 20, flushInterval: 1000 });
      const [first] = add(record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(batchIds(bodies(fetch)[0])).toEqual([first.id]);
      await advance(100);
      const [second] = add(record());
      const [third] = add(record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1); // sent 100 ms ago: these wait for the interval
      await advance(999);
      expect(fetch).toHaveBeenCalledTimes(1);
      await advance(1);
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(batchIds(bodies(fetch)[1])).toEqual([second.id, third.id]);
      await advance(5000); // quiet again
      const [fourth] = add(record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(3);
      expect(batchIds(bodies(fetch)[2])).toEqual([fourth.id]);
    });

    it('sends a burst stored in one go at once, in one request', async () => {
      const fetch = mockFetch([{ status: 200 }]);
      const { queue, scheduler } = setup({ flushAt: 20 });
      const rs = Array.from({ length: 50 }, () => record());
      queue.records.push(...rs);
      scheduler._notify();
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(batchIds(bodies(fetch)[0])).toEqual(rs.map((r) => r.id));
    });

    it('holds what arrives while a request is in flight, and the interval counts from the oldest one waiting', async () => {
      let answer!: (v: unknown) => void;
      const fetch = vi.fn(() => new Promise((r) => (answer = r)));
      vi.stubGlobal('fetch', fetch);
      const { add } = setup({ flushAt: 20, flushInterval: 1000 });
      const [a] = add(record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1); // a is in flight, its answer slow
      expect(batchIds(String((fetch.mock.calls[0] as any)[1].body))).toEqual([a.id]);
      await advance(200);
      const [b] = add(record()); // queued at 200 ms while a is in flight: due at 1,200 ms
      await advance(300);
      answer({ status: 200, headers: { get: () => null } });
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1);
      await advance(600); // 1,100 ms
      expect(fetch).toHaveBeenCalledTimes(1);
      await advance(100); // 1,200 ms
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(batchIds(String((fetch.mock.calls[1] as any)[1].body))).toEqual([b.id]);
      answer({ status: 200, headers: { get: () => null } });
    });

    it('sends once flushAt messages wait', async () => {
      const { add, queue, emit, fetch } = await primed({ flushAt: 3, flushInterval: 60000 });
      const rs = add(record(), record());
      await advance(5000);
      expect(fetch).not.toHaveBeenCalled();
      rs.push(...add(record()));
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(batchIds(bodies(fetch)[0])).toEqual(rs.map((r) => r.id));
      expect(queue.records).toEqual([]);
      expect(emit).toHaveBeenCalledWith('delivered', rs.map((r) => r.message));
    });

    it('sends flushInterval ms after the oldest waiting message was queued', async () => {
      const { add, fetch } = await primed({ flushAt: 20, flushInterval: 1000 });
      const [first] = add(record());
      await advance(600);
      const [second] = add(record());
      await advance(399);
      expect(fetch).not.toHaveBeenCalled();
      await advance(1);
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(batchIds(bodies(fetch)[0])).toEqual([first.id, second.id]);
    });

    it('sends nothing when nothing waits', async () => {
      const fetch = mockFetch([{ status: 200 }]);
      const { scheduler } = setup();
      scheduler._notify();
      await advance(10000);
      expect(fetch).not.toHaveBeenCalled();
    });
  });

  describe('flush', () => {
    it('POSTs JSON with Basic auth to the batch URL', async () => {
      const fetch = mockFetch([{ status: 200 }]);
      const { add, scheduler } = setup();
      const [r] = add(record());
      await scheduler._flush();
      expect(fetch).toHaveBeenCalledTimes(1);
      const [url, init] = fetch.mock.calls[0];
      expect(url).toBe(URL_);
      expect(init.method).toBe('POST');
      const headers = new Headers(init.headers as HeadersInit);
      expect(headers.get('Content-Type')).toBe('application/json');
      expect(headers.get('Authorization')).toBe('Basic ' + btoa(KEY + ':'));
      const sent = JSON.parse(String(init.body));
      expect(sent.batch).toEqual([r.message]);
      expect(new Date(sent.sentAt).toISOString()).toBe(sent.sentAt);
    });

    it('sends everything waiting in one request when it fits', async () => {
      const fetch = mockFetch([{ status: 200 }]);
      const { scheduler, queue } = setup({ flushAt: 20 });
      const rs = Array.from({ length: 50 }, () => record(100));
      queue.records.push(...rs);
      await scheduler._flush();
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(batchIds(bodies(fetch)[0])).toEqual(rs.map((r) => r.id));
    });

    it('never sends a body over 500,000 bytes, and sends every message once, in order', async () => {
      const fetch = mockFetch([{ status: 200 }]);
      const { scheduler, queue } = setup();
      const rs = Array.from({ length: 60 }, (_, i) => record(20000 + ((i * 7919) % 11000)));
      queue.records.push(...rs);
      await scheduler._flush();
      const sent = bodies(fetch);
      expect(sent.length).toBeGreaterThan(1);
      for (const b of sent) expect(byteLength(b)).toBeLessThanOrEqual(500000);
      expect(sent.flatMap(batchIds)).toEqual(rs.map((r) => r.id));
      expect(queue.records).toEqual([]);
    });

    it('sends no further batch of a pass once the page left (another tab may adopt and send them)', async () => {
      // Tabs as locks.ts has them: `alive` turns false once the page leaves after the work began.
      let leaves = 0;
      const tabs = {
        id: 'me',
        _alive: () => {
          const at = leaves;
          return () => leaves == at;
        },
        _leased: () => false,
      } as unknown as Tabs;
      // The page leaves (and is restored) while the first batch is in flight.
      let requests = 0;
      const fetch = vi.fn(async (..._a: unknown[]) => {
        if (++requests == 1) leaves++;
        return { status: 200, headers: { get: () => null } };
      });
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue } = setup({ _tabs: tabs });
      // About 800 KB: the pass plans two batches under the 500 KB limit.
      const rs = Array.from({ length: 40 }, () => record(20000));
      queue.records.push(...rs);
      await scheduler._flush();
      expect(fetch).toHaveBeenCalledTimes(1);
      const first = batchIds(String((fetch.mock.calls[0][1] as RequestInit).body));
      expect(first.length).toBeGreaterThan(0);
      expect(first.length).toBeLessThan(rs.length);
      expect(queue.records).toEqual(rs.slice(first.length));
      // The next pass sends the rest.
      await scheduler._flush();
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(batchIds(String((fetch.mock.calls[1][1] as RequestInit).body))).toEqual(rs.slice(first.length).map((r) => r.id));
      expect(queue.records).toEqual([]);
    });

    it('retries a 500 with the same messages after a backoff', async () => {
      const fetch = mockFetch([{ status: 500 }, { status: 200 }]);
      const { add, queue, emit } = setup({ flushAt: 2 });
      const rs = add(record(), record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(queue.records).toEqual(rs);
      expect(emit).toHaveBeenCalledWith('retry', expect.objectContaining({ status: 500, messageIds: rs.map((r) => r.id) }));
      expect(queue._failed).toHaveBeenCalledWith(rs.map((r) => r.id), true);
      await advance(499);
      expect(fetch).toHaveBeenCalledTimes(1);
      await advance(501);
      expect(fetch).toHaveBeenCalledTimes(2);
      const [a, b] = bodies(fetch).map((t) => JSON.parse(t).batch);
      expect(b).toEqual(a);
      expect(batchIds(bodies(fetch)[1])).toEqual(rs.map((r) => r.id));
      expect(queue.records).toEqual([]);
    });

    it('retries a network error after a backoff, counting one attempt', async () => {
      const ok = { status: 200, headers: { get: () => null } };
      // the keepalive request and its immediate re-send without keepalive both fail
      const fn = vi.fn().mockRejectedValueOnce(new TypeError('Failed to fetch')).mockRejectedValueOnce(new TypeError('Failed to fetch')).mockResolvedValue(ok);
      vi.stubGlobal('fetch', fn);
      const { add, queue, emit } = setup({ flushAt: 1 });
      const [r] = add(record());
      await advance(0);
      expect(fn).toHaveBeenCalledTimes(1);
      await advance(1); // the re-send waits one task (a fake timer set during a tick is due 1 ms later)
      expect(fn).toHaveBeenCalledTimes(2);
      expect(queue.records).toEqual([r]);
      expect(r.attempts).toBe(1);
      expect(emit).toHaveBeenCalledWith('retry', expect.objectContaining({ status: 0, messageIds: [r.id] }));
      await advance(1000);
      expect(fn).toHaveBeenCalledTimes(3);
      expect(queue.records).toEqual([]);
    });

    it('sends a keepalive request the browser failed again at once, without keepalive, after one task', async () => {
      const ok = { status: 200, headers: { get: () => null } };
      const fn = vi.fn().mockRejectedValueOnce(new TypeError('Failed to fetch')).mockResolvedValue(ok);
      vi.stubGlobal('fetch', fn);
      const { scheduler, queue, emit } = setup();
      const r = record();
      queue.records.push(r);
      const done = scheduler._flush();
      await drain();
      expect(fn).toHaveBeenCalledTimes(1);
      await advance(0);
      await done;
      expectSentAgainWithoutKeepalive(fn, queue.records);
      expect(r.attempts).toBe(0);
      expect(emit).not.toHaveBeenCalledWith('retry', expect.anything());
    });

    it('retries a network error of a request without keepalive after a backoff, not at once', async () => {
      const ok = { status: 200, headers: { get: () => null } };
      const fn = vi.fn().mockRejectedValueOnce(new TypeError('Failed to fetch')).mockResolvedValue(ok);
      vi.stubGlobal('fetch', fn);
      const { scheduler, queue } = setup();
      const rs = Array.from({ length: 4 }, () => record(20000)); // over the 60,000-byte keepalive budget together
      queue.records.push(...rs);
      await scheduler._flush();
      await advance(0);
      expect(fn).toHaveBeenCalledTimes(1);
      expect((fn.mock.calls[0][1] as RequestInit).keepalive).toBe(false);
      expect(queue.records).toEqual(rs);
      await advance(1000);
      expect(fn).toHaveBeenCalledTimes(2);
      expect(queue.records).toEqual([]);
    });

    it('sends with keepalive only what fits the keepalive budget', async () => {
      const fetch = mockFetch([{ status: 200 }]);
      const { scheduler, queue } = setup();
      queue.records.push(record(100));
      await scheduler._flush();
      queue.records.push(record(30000), record(30000));
      await scheduler._flush();
      expect(fetch.mock.calls.map((c) => c[1].keepalive)).toEqual([true, false]);
    });

    it('waits as long as Retry-After says', async () => {
      const fetch = mockFetch([{ status: 503, retryAfter: '5' }, { status: 200 }]);
      const { add, queue } = setup({ flushAt: 1 });
      add(record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(1);
      await advance(4999);
      expect(fetch).toHaveBeenCalledTimes(1);
      await advance(1);
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(queue.records).toEqual([]);
    });

    it('does not send new messages before Retry-After has passed', async () => {
      const fetch = mockFetch([{ status: 429, retryAfter: '10' }, { status: 200 }]);
      const { add } = setup({ flushAt: 1, flushInterval: 0 });
      const [a] = add(record());
      await advance(0);
      const [b] = add(record());
      await advance(9000);
      expect(fetch).toHaveBeenCalledTimes(1);
      await advance(1000);
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(batchIds(bodies(fetch)[1])).toEqual([a.id, b.id]);
    });

    it('sends at once when flush() is called during a backoff', async () => {
      const fetch = mockFetch([{ status: 503, retryAfter: '60' }, { status: 200 }]);
      const { add, scheduler, queue } = setup({ flushAt: 1 });
      add(record());
      await advance(0);
      await scheduler._flush();
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(queue.records).toEqual([]);
    });

    it('ends the backoff at a 2xx: a message queued after it goes at once, not when the Retry-After runs out', async () => {
      const fetch = mockFetch([{ status: 503, retryAfter: '60' }, { status: 200 }]);
      const { add, scheduler } = setup({ flushAt: 1 });
      add(record());
      await advance(0);
      await scheduler._flush();
      await drain();
      expect(fetch).toHaveBeenCalledTimes(2);
      const [b] = add(record());
      await advance(0);
      expect(fetch).toHaveBeenCalledTimes(3);
      expect(batchIds(bodies(fetch)[2])).toEqual([b.id]);
    });

    it('keeps every message through 404s (a proxy route missing for a while) and delivers them once it answers 2xx', async () => {
      const fetch = mockFetch([{ status: 404 }, { status: 405 }, { status: 410 }, { status: 200 }]);
      const { scheduler, queue, report, emit } = setup();
      const rs = [record(), record(), record()];
      queue.records.push(...rs);
      for (let i = 0; i < 4; i++) await scheduler._flush();
      // one request per attempt (nothing split: these statuses blame no message), then the 2xx delivers all three
      expect(fetch).toHaveBeenCalledTimes(4);
      for (const b of bodies(fetch)) expect(batchIds(b).sort()).toEqual(rs.map((r) => r.id).sort());
      expect(queue.records).toEqual([]);
      expect(report).not.toHaveBeenCalled();
      expect(emit.mock.calls.filter((c) => c[0] == 'retry')).toHaveLength(3);
    });

    it('keeps a message answered 400 alone while no request sent since was accepted: the endpoint may be what fails', async () => {
      // every request refused (a gateway answering 400 to everything), then the endpoint is fixed
      let broken = true;
      const fetch = mockFetch(() => ({ status: broken ? 400 : 200 }));
      const { scheduler, queue, report } = setup();
      const rs = [record(), record(), record()];
      queue.records.push(...rs);
      await scheduler._flush();
      // split down to each message alone; none dropped
      expect(fetch.mock.calls.length).toBeGreaterThan(1);
      expect(queue.records.map((r) => r.id)).toEqual(rs.map((r) => r.id));
      expect(report).not.toHaveBeenCalled();
      broken = false;
      await scheduler._flush();
      expect(queue.records).toEqual([]);
      expect(report).not.toHaveBeenCalled();
      const delivered = bodies(fetch).slice(-1).flatMap(batchIds);
      expect(delivered.sort()).toEqual(rs.map((r) => r.id).sort());
    });

    it('a single message answered 400 once (the next answer 2xx) is delivered, not dropped, even after earlier 2xx answers', async () => {
      const fetch = mockFetch([{ status: 200 }, { status: 400 }, { status: 200 }]);
      const { scheduler, queue, report } = setup();
      queue.records.push(record());
      await scheduler._flush();
      const m = record();
      queue.records.push(m);
      await scheduler._flush();
      expect(queue.records.map((r) => r.id)).toEqual([m.id]);
      await scheduler._flush();
      expect(queue.records).toEqual([]);
      expect(report).not.toHaveBeenCalled();
      expect(batchIds(bodies(fetch)[2])).toEqual([m.id]);
    });

    it('drops a message refused alone once a request sent after its first refusal was accepted (the first of a batch)', async () => {
      const fetch = mockFetch((body) => ({ status: body.includes('"BAD"') ? 400 : 200 }));
      const { scheduler, queue, report } = setup();
      const bad = record(0, { marker: 'BAD' });
      const rs = [bad, record()];
      queue.records.push(...rs);
      // [bad, good] refused; [bad] alone refused before any accepted request: kept; [good] accepted
      await scheduler._flush();
      expect(queue.records.map((r) => r.id)).toEqual([bad.id]);
      expect(report).not.toHaveBeenCalled();
      // alone again, after an accepted request: it is the bad one
      await scheduler._flush();
      expect(queue.records).toEqual([]);
      expect(report).toHaveBeenCalledTimes(1);
      expect(report.mock.calls[0][0]).toMatchObject({ code: 'delivery_rejected', messageIds: [bad.id] });
      expect(fetch.mock.calls.filter((c) => String(c[1].body).includes('"BAD"'))).toHaveLength(3);
    });

    it('isolates and drops only the one bad message of a batch answered 400', async () => {
      const fetch = mockFetch((body) => ({ status: body.includes('"BAD"') ? 400 : 200 }));
      const { scheduler, queue, report, emit } = setup();
      const rs = [record(), record(), record(0, { marker: 'BAD' }), record()];
      const bad = rs[2];
      queue.records.push(...rs);
      await scheduler._flush();
      expect(queue.records).toEqual([]);
      expect(report).toHaveBeenCalledTimes(1);
      const err = report.mock.calls[0][0];
      expect(err.code).toBe('delivery_rejected');
      expect(err.messageIds).toEqual([bad.id]);
      const accepted = fetch.mock.calls
        .map((c) => String(c[1].body))
        .filter((b) => !b.includes('"BAD"'))
        .flatMap(batchIds);
      expect(accepted.sort()).toEqual([rs[0].id, rs[1].id, rs[3].id].sort());
      const delivered = emit.mock.calls.filter((c) => c[0] == 'delivered').flatMap((c) => (c[1] as Message[]).map((m) => m.messageId));
      expect(delivered.sort()).toEqual([rs[0].id, rs[1].id, rs[3].id].sort());
    });

    it('splits a batch answered 400 at once, without counting an attempt or waiting', async () => {
      const fetch = mockFetch((body) => ({ status: body.includes('"BAD"') ? 400 : 200 }));
      const { scheduler, queue, report, emit } = setup();
      const rs = [record(), record(0, { marker: 'BAD' }), record(), record(), record()];
      const [a, bad, c, d, e] = rs;
      queue.records.push(...rs);
      // No timer runs inside flush(): every half goes out before it settles.
      await scheduler._flush();
      expect(bodies(fetch).map(batchIds)).toEqual([
        rs.map((r) => r.id),
        [a.id, bad.id, c.id],
        [a.id, bad.id],
        [a.id],
        [bad.id],
        [c.id],
        [d.id, e.id],
      ]);
      expect(rs.map((r) => r.attempts)).toEqual([0, 0, 0, 0, 0]);
      expect(emit).not.toHaveBeenCalledWith('retry', expect.anything());
      expect(queue.records).toEqual([]);
      expect(report).toHaveBeenCalledTimes(1);
      expect(report.mock.calls[0][0].message).toContain(bad.id);
    });

    it('counts only a failed delivery after a split as an attempt, with the first backoff', async () => {
      const fetch = mockFetch((body) => ({ status: body.includes('"BAD"') ? 400 : 503 }));
      const { scheduler, queue, emit } = setup();
      const [good, bad] = [record(), record(0, { marker: 'BAD' })];
      queue.records.push(good, bad);
      await scheduler._flush();
      expect(bodies(fetch).map(batchIds)).toEqual([[good.id, bad.id], [good.id]]);
      expect(good.attempts).toBe(1);
      expect(bad.attempts).toBe(0);
      const retry = emit.mock.calls.find((c) => c[0] == 'retry')![1] as { delay: number; messageIds: string[] };
      expect(retry.messageIds).toEqual([good.id]);
      expect(retry.delay).toBeLessThanOrEqual(1000);
      expect(queue.records).toEqual([good, bad]);
    });

    it('backs off from the attempts stored with a record adopted from an earlier page, and stores the next one', async () => {
      (globalThis as any).indexedDB = new IDBFactory();
      const events = { _expired: () => {}, _fallback: () => {} };
      // An earlier page failed to deliver it three times, then closed.
      const r = { ...record(), attempts: 3, owner: 'gone' };
      await createQueue('gone', DEFAULT_BOUNDS, events)._add(r);
      const queue = createQueue('me', DEFAULT_BOUNDS, events);
      await queue._adopt(() => true);
      expect(queue._list().map((q) => q.attempts)).toEqual([3]);
      mockFetch([{ status: 503 }]);
      vi.spyOn(Math, 'random').mockReturnValue(0);
      const { scheduler, emit } = setup({ _queue: queue });
      await scheduler._flush();
      // The fourth attempt's backoff: 1 s doubled three times, halved by the jitter (the first would be 500 ms).
      expect(emit).toHaveBeenCalledWith('retry', expect.objectContaining({ status: 503, delay: 4000, messageIds: [r.id] }));
      const store = createStore('svc-analytics', 'queue');
      await vi.waitFor(async () => expect((await values<QueueRecord>(store)).map((q) => q.attempts)).toEqual([4]));
    });

    it('keeps the whole batch and retries it on 401 (the key is refused, not a message)', async () => {
      const fetch = mockFetch([{ status: 401 }, { status: 200 }]);
      const { scheduler, queue, report } = setup();
      const rs = [record(), record(), record()];
      queue.records.push(...rs);
      await scheduler._flush();
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(queue.records).toEqual(rs);
      expect(report).not.toHaveBeenCalled();
      await advance(120000);
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(queue.records).toEqual([]);
    });

    it('sends nothing while offline and keeps the messages', async () => {
      vi.spyOn(navigator, 'onLine', 'get').mockReturnValue(false);
      const fetch = mockFetch([{ status: 200 }]);
      const { add, scheduler, queue } = setup({ flushAt: 1 });
      const rs = add(record(), record());
      await advance(5000);
      await scheduler._flush();
      expect(fetch).not.toHaveBeenCalled();
      expect(queue.records).toEqual(rs);
    });
  });

  describe('exit', () => {
    // The hand-off itself is tested in handoff.test.ts; these tests cover what the scheduler gives it (its requests
    // in flight, a backoff, being offline) and what it does with the hand-off's answers.
    it('hands a request in flight without keepalive to a beacon at a final exit only (it dies with the page)', async () => {
      const beacon = vi.fn((..._a: unknown[]) => true);
      stubBeacon(beacon);
      let answer!: (v: unknown) => void;
      const fetch = vi.fn((..._a: unknown[]) => new Promise((r) => (answer = r)));
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue, transport } = setup();
      vi.spyOn(transport, '_fits').mockReturnValue(false); // the keepalive budget is used up
      const inflight = record();
      queue.records.push(inflight);
      const done = scheduler._flush();
      await drain();
      expect((fetch.mock.calls[0][1] as RequestInit).keepalive).toBe(false);
      // Only hidden: the page lives on and sees the answer.
      scheduler._exit('hidden');
      expect(beacon).not.toHaveBeenCalled();
      expect(note()).toBeNull();
      scheduler._exit('cached');
      expect(beacon).toHaveBeenCalledTimes(1);
      expect(batchIds(beacon.mock.calls[0][1] as string)).toEqual([inflight.id]);
      expect(note()).toEqual([inflight.id]);
      answer({ status: 200, headers: { get: () => null } });
      await done;
    });

    it('a 2xx answer that arrives after an erasure removes nothing and leaves no note at the next exit', async () => {
      stubBeacon(vi.fn(() => true));
      let answer!: (v: unknown) => void;
      vi.stubGlobal('fetch', vi.fn((..._a: unknown[]) => new Promise((r) => (answer = r))));
      const { scheduler, queue, emit } = setup();
      const sent = record();
      queue.records.push(sent);
      const done = scheduler._flush();
      await drain();
      // consent withdrawn: the store is emptied (by the queue), then the scheduler is told
      queue.records.length = 0;
      scheduler._erased();
      answer({ status: 200, headers: { get: () => null } });
      await done;
      // (a removal started now would be cut off by the exit below and leave its ids noted)
      expect(queue._remove).not.toHaveBeenCalled();
      scheduler._exit('cached');
      expect(note()).toBeNull();
      expect(emit).toHaveBeenCalledWith('delivered', [sent.message]);
    });

    it('a keepalive request that fails without an answer after an erasure is not sent again without keepalive (sim seed 137, issue 27)', async () => {
      let fail!: (e: unknown) => void;
      const fetch = vi.fn((..._a: unknown[]) => new Promise((_r, reject) => (fail = reject)));
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue, emit } = setup();
      queue.records.push(record());
      const done = scheduler._flush();
      await drain();
      expect(fetch).toHaveBeenCalledTimes(1);
      // consent withdrawn while it is in flight
      queue.records.length = 0;
      scheduler._erased();
      fail(new TypeError('Failed to fetch'));
      await advance(1);
      await done;
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(emit).not.toHaveBeenCalledWith('delivered', expect.anything());
    });

    it('a keepalive request that fails after the page was shown again (restored from the back/forward cache) is not sent again at once: counted and retried after the restore\'s reconcile (an erasure elsewhere may not be heard yet; h47 sim seed 11960)', async () => {
      stubBeacon(vi.fn(() => true));
      let fail!: (e: unknown) => void;
      const fetch = vi.fn((..._a: unknown[]) => new Promise((_r, reject) => (fail = reject)));
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue, emit } = setup();
      const inflight = record();
      queue.records.push(inflight);
      const done = scheduler._flush();
      await drain();
      expect(fetch).toHaveBeenCalledTimes(1);
      scheduler._exit('cached');
      scheduler._shown();
      fail(new TypeError('Failed to fetch'));
      await advance(1);
      await done;
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(inflight.attempts).toBe(1);
      expect(emit).toHaveBeenCalledWith('retry', expect.anything());
      expect(queue.records).toEqual([inflight]);
    });

    it('a redirect answering a keepalive request an exit noted takes the note back: the page keeps the records to retry (sim seed 232, issue 27)', async () => {
      stubBeacon(vi.fn(() => true));
      let answer!: (v: unknown) => void;
      vi.stubGlobal('fetch', vi.fn((..._a: unknown[]) => new Promise((r) => (answer = r))));
      const { scheduler, queue } = setup();
      const r = record();
      queue.records.push(r);
      const done = scheduler._flush();
      await drain();
      // hidden with the keepalive request in flight: noted as with the browser
      scheduler._exit('hidden');
      expect(note()).toEqual([r.id]);
      scheduler._shown();
      answer({ status: 0, type: 'opaqueredirect', body: null, headers: { get: () => null } });
      await done;
      // (else a page killed now would have the next load delete records never delivered)
      expect(note()).toBeNull();
      expect(queue.records).toEqual([r]);
    });

    it('keeps the messages queued during a backoff', async () => {
      const beacon = vi.fn(() => true);
      stubBeacon(beacon);
      mockFetch([{ status: 503 }]);
      const { add, scheduler, queue } = setup({ flushAt: 1 });
      const rs = add(record());
      await advance(0);
      scheduler._exit('hidden');
      scheduler._shown();
      scheduler._exit('cached');
      expect(beacon).not.toHaveBeenCalled();
      expect(queue._takeOut).not.toHaveBeenCalled();
      expect(queue.records).toEqual(rs);
    });

    it('sends nothing while offline', () => {
      const beacon = vi.fn(() => true);
      stubBeacon(beacon, false);
      const fetch = mockFetch([{ status: 200 }]);
      const { scheduler, queue } = setup();
      const rs = [record()];
      queue.records.push(...rs);
      scheduler._exit('cached');
      expect(beacon).not.toHaveBeenCalled();
      expect(fetch).not.toHaveBeenCalled();
      expect(queue.records).toEqual(rs);
    });

    it('removes records in flight with keepalive from IndexedDB when the page is discarded for good', async () => {
      stubBeacon(() => true);
      vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
      const { scheduler, queue } = setup();
      const inflight = record();
      queue.records.push(inflight);
      scheduler._flush();
      await drain();
      scheduler._exit('discarded');
      expect(note()).toEqual([inflight.id]);
      expect(queue._remove).toHaveBeenCalledWith([inflight.id]);
    });

    it('skips messages already in flight with keepalive', async () => {
      const beacon = vi.fn(() => true);
      stubBeacon(beacon);
      let answer!: (v: unknown) => void;
      vi.stubGlobal('fetch', vi.fn(() => new Promise((r) => (answer = r))));
      const { scheduler, queue } = setup();
      const inflight = record();
      queue.records.push(inflight);
      const done = scheduler._flush();
      await drain();
      const later = record();
      queue.records.push(later);
      scheduler._exit('cached');
      const beaconed = beacon.mock.calls.flatMap((c: unknown[]) => batchIds(c[1] as string));
      expect(beaconed).toEqual([later.id]);
      // The keepalive request outlives the page: its ids are noted as handed to the browser, synchronously.
      expect(note()).toEqual([inflight.id, later.id]);
      answer({ status: 200, headers: { get: () => null } });
      await done;
      await drain();
      expect(queue.records).toEqual([]);
      // The page lived to see the answer: its note is taken back (the beacon's stays for the next load).
      expect(note()).toEqual([later.id]);
    });

    it('keeps the note when the noted request fails with a network error (the browser may still deliver it)', async () => {
      stubBeacon(vi.fn(() => true));
      let fail!: (e: unknown) => void;
      const fetch = vi.fn(() => new Promise((_, r) => (fail = r)));
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue } = setup();
      const inflight = record();
      queue.records.push(inflight);
      const done = scheduler._flush();
      await drain();
      // Chromium rejects the fetch as the page unloads, before pagehide reaches us: the exit still notes it.
      fail(new TypeError('Failed to fetch'));
      await drain();
      scheduler._exit('cached');
      expect(note()).toEqual([inflight.id]);
      await advance(10);
      await done;
      // not sent again without keepalive: the browser has it
      expect(fetch).toHaveBeenCalledTimes(1);
      expect(note()).toEqual([inflight.id]);
      // Counted, but no IndexedDB work: the note names the record, and the page may be going into the cache.
      expect(queue._failed).toHaveBeenCalledWith([inflight.id], false);
      expect(inflight.attempts).toBe(1);
      // the page lived on (a bfcache restore): the record is still queued for a retry
      expect(queue.records).toEqual([inflight]);
    });

    it('sends a keepalive request noted at an exit that only hid the page, which then fails, again at once without keepalive', async () => {
      stubBeacon(vi.fn(() => true));
      let fail!: (e: unknown) => void;
      const ok = { status: 200, headers: { get: () => null } };
      const fetch = vi
        .fn()
        .mockImplementationOnce(() => new Promise((_, r) => (fail = r)))
        .mockResolvedValue(ok);
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue, emit } = setup();
      const inflight = record();
      queue.records.push(inflight);
      const done = scheduler._flush();
      await drain();
      scheduler._exit('hidden');
      expect(note()).toEqual([inflight.id]);
      // The page lives on: the failure is real, not the browser taking the request over.
      fail(new TypeError('Failed to fetch'));
      await advance(10);
      await done;
      expectSentAgainWithoutKeepalive(fetch, queue.records);
      expect(emit).toHaveBeenCalledWith('delivered', [inflight.message]);
      expect(note()).toBeNull();
    });

    it('keeps a noted in-flight message queued for retry when its answer is a failure', async () => {
      stubBeacon(vi.fn(() => true));
      let answer!: (v: unknown) => void;
      vi.stubGlobal('fetch', vi.fn(() => new Promise((r) => (answer = r))));
      const { scheduler, queue } = setup();
      const inflight = record();
      queue.records.push(inflight);
      const done = scheduler._flush();
      await drain();
      scheduler._exit('hidden');
      expect(note()).toEqual([inflight.id]);
      answer({ status: 503, headers: { get: () => null } });
      await done;
      await drain();
      expect(queue.records).toEqual([inflight]);
      expect(note()).toBeNull();
    });

    it('never POSTs again what an exit beaconed while a 400 split was in flight (the second half was planned before)', async () => {
      const beacon = vi.fn((..._a: unknown[]) => true);
      stubBeacon(beacon);
      // Each request waits for its answer, given by hand.
      const answers: ((status: number) => void)[] = [];
      const fetch = vi.fn(
        (..._a: unknown[]) => new Promise((r) => answers.push((status) => r({ status, headers: { get: () => null } })))
      );
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue, report, emit } = setup();
      const rs = [record(), record(0, { marker: 'BAD' }), record(), record()];
      const [a, bad, c, d] = rs;
      queue.records.push(...rs);
      const posted = () => fetch.mock.calls.map((call) => batchIds(String((call[1] as RequestInit).body)));
      const done = scheduler._flush();
      await drain();
      expect(posted()).toEqual([rs.map((r) => r.id)]);
      answers[0](400); // the split plans [a, bad] and then [c, d]
      await drain();
      expect(posted()).toEqual([rs.map((r) => r.id), [a.id, bad.id]]);
      // The page is hidden while [a, bad] is in flight (with keepalive): c and d go by beacon.
      scheduler._exit('hidden');
      expect(beacon).toHaveBeenCalledTimes(1);
      expect(batchIds(beacon.mock.calls[0][1] as string)).toEqual([c.id, d.id]);
      answers[1](400);
      await drain();
      answers[2](200); // [a]
      await drain();
      answers[3](400); // [bad]
      await drain();
      expect(posted()).toEqual([rs.map((r) => r.id), [a.id, bad.id], [a.id], [bad.id]]);
      await done;
      expect(beacon).toHaveBeenCalledTimes(1);
      expect(queue.records).toEqual([]);
      expect(report).toHaveBeenCalledTimes(1);
      expect(report.mock.calls[0][0].messageIds).toEqual([bad.id]);
      const delivered = emit.mock.calls.filter((e) => e[0] == 'delivered').flatMap((e) => (e[1] as Message[]).map((m) => m.messageId));
      expect(delivered.sort()).toEqual([a.id, c.id, d.id].sort());
    });

    it('writes back what an exit noted as handed when its request is then refused (another page may have deleted it: sim seed 1304)', async () => {
      stubBeacon(() => true);
      const answers: ((status: number) => void)[] = [];
      vi.stubGlobal('fetch', vi.fn(() => new Promise((r) => answers.push((status) => r({ status, headers: { get: () => null } })))));
      const { scheduler, queue } = setup();
      const rs = [record(), record(), record()];
      queue.records.push(...rs);
      void scheduler._flush();
      await drain();
      // frozen while the keepalive request is in flight: the note names its records, and the next page deletes them
      scheduler._exit('frozen');
      expect(JSON.parse(localStorage.getItem('svc_sent') || '[]')).toEqual(rs.map((r) => r.id));
      answers[0](400);
      await drain();
      expect(localStorage.getItem('svc_sent')).toBeNull();
      expect(queue._keep).toHaveBeenCalledWith(rs.map((r) => r.id));
    });

    it('never POSTs a planned batch whose records an exit beaconed while an earlier batch of the pass was in flight', async () => {
      const beacon = vi.fn((..._a: unknown[]) => true);
      stubBeacon(beacon);
      const answers: ((status: number) => void)[] = [];
      const fetch = vi.fn(
        (..._a: unknown[]) => new Promise((r) => answers.push((status) => r({ status, headers: { get: () => null } })))
      );
      vi.stubGlobal('fetch', fetch);
      const { scheduler, queue, emit } = setup();
      // About 800 KB: the pass plans two batches under the 500 KB limit.
      const rs = Array.from({ length: 40 }, () => record(20000));
      queue.records.push(...rs);
      const done = scheduler._flush();
      await drain();
      expect(fetch).toHaveBeenCalledTimes(1);
      const first = batchIds(String((fetch.mock.calls[0][1] as RequestInit).body));
      const second = rs.map((r) => r.id).filter((id) => !first.includes(id));
      expect(first).toEqual(rs.slice(0, first.length).map((r) => r.id));
      expect(second.length).toBeGreaterThan(0);
      // Hidden while the first batch is in flight (too big for keepalive, and the page lives on): only the second
      // batch's records go by beacon.
      scheduler._exit('hidden');
      const beaconed = beacon.mock.calls.flatMap((b) => batchIds(b[1] as string));
      expect(beaconed).toEqual(second);
      answers[0](200);
      await drain();
      expect(fetch).toHaveBeenCalledTimes(1);
      await done;
      expect(beacon.mock.calls.flatMap((b) => batchIds(b[1] as string))).toEqual(second);
      expect(queue.records).toEqual([]);
      const delivered = emit.mock.calls.filter((e) => e[0] == 'delivered').flatMap((e) => (e[1] as Message[]).map((m) => m.messageId));
      expect(delivered.sort()).toEqual(rs.map((r) => r.id).sort());
    });
  });

  it('sends, hands over and defers nothing while nothing may be sent: a page frozen as another tab opted out runs its overdue timers before it hears of it (sim seed 7308)', async () => {
    const fetch = mockFetch([{ status: 200 }]);
    const beacon = vi.fn(() => true);
    stubBeacon(beacon);
    const fetchLater = vi.fn(() => ({ activated: false }));
    (window as any).fetchLater = fetchLater.bind(null);
    let open = true;
    const { add, scheduler, queue } = setup({ flushAt: 1, open: () => open });
    open = false;
    const rs = add(record(), record());
    await advance(1000);
    await scheduler._flush();
    scheduler._exit('hidden');
    scheduler._exit('discarded');
    delete (window as any).fetchLater;
    expect(fetch).not.toHaveBeenCalled();
    expect(beacon).not.toHaveBeenCalled();
    expect(fetchLater).not.toHaveBeenCalled();
    expect(queue.records).toEqual(rs);
    expect(note()).toBeNull();
  });

  describe('deferral', () => {
    // The deferral itself is tested in deferral.test.ts; these tests cover when the scheduler defers and takes back.
    // fetchLater as the browser holds its requests: `live` are those it would send if the page died now. (A timer
    // set during a tick of the fake clock is due 1 ms later, even with no delay: hence `advance(1)`.)
    function stubFetchLater() {
      const held: { body: string; signal: AbortSignal; result: { activated: boolean } }[] = [];
      const fetchLater = vi.fn((_url: string, init: RequestInit) => {
        const h = { body: String(init.body), signal: init.signal!, result: { activated: false } };
        held.push(h);
        return h.result;
      });
      // (bound: it reads as native code, as the browser's own does)
      (window as any).fetchLater = fetchLater.bind(null);
      const live = () => held.filter((h) => !h.signal.aborted && !h.result.activated).map((h) => batchIds(h.body));
      return { held, live, fetchLater };
    }
    afterEach(() => delete (window as any).fetchLater);
    // A scheduler with a long interval whose first message left at once (the first of a quiet spell) and two that
    // wait (`rs`).
    async function twoWaiting() {
      const s = setup({ flushInterval: 60000 });
      await advance(1);
      s.add(record());
      await advance(1);
      const rs = s.add(record(), record());
      await advance(1);
      return { ...s, rs };
    }

    it('defers what is stored, after the task, and what a request without keepalive carries', async () => {
      const { live } = stubFetchLater();
      vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
      const { add, transport } = setup({ flushInterval: 60000 });
      vi.spyOn(transport, '_fits').mockReturnValue(false);
      const rs = add(record(), record(), record());
      expect(live()).toEqual([]);
      await advance(1);
      // the first went at once, without keepalive: it dies with a crashed page, so it stays deferred
      expect(live()).toEqual([rs.map((r) => r.id)]);
    });

    it('leaves out what is in flight with keepalive', async () => {
      const { live } = stubFetchLater();
      vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
      const { add } = setup({ flushInterval: 60000 });
      const [first] = add(record());
      await advance(1); // the first of a quiet spell leaves at once, and gets no answer
      const rest = add(record(), record());
      await advance(1);
      expect(live()).toEqual([rest.map((r) => r.id)]);
      expect(live().flat()).not.toContain(first.id);
    });

    it('takes the deferred request back before a request with keepalive leaves: both hold the page\'s keepalive budget, and a refusal not yet heard at a page exit is noted as handed, then deleted by the next load (sim seed 10764)', async () => {
      const { live } = stubFetchLater();
      const atFetch: string[][][] = [];
      const fetch = mockFetch([{ status: 200 }]);
      const { rs, scheduler } = await twoWaiting();
      expect(live()).toEqual([rs.map((r) => r.id)]);
      fetch.mockImplementation(async (_url: string, init: RequestInit) => (atFetch.push(init.keepalive ? live() : []), { status: 200, headers: { get: () => null } }));
      await scheduler._flush();
      expect(fetch.mock.calls.at(-1)![1].keepalive).toBe(true);
      expect(atFetch).toEqual([[]]);
    });

    it('does not send again what the browser sent meanwhile as the deferred request (its deadline came): a planned batch drops the records the take-back removed (sim seeds 21500, 21964)', async () => {
      const { held } = stubFetchLater();
      const fetch = mockFetch([{ status: 200 }]);
      const { rs, scheduler } = await twoWaiting();
      const before = fetch.mock.calls.length;
      // (the browser sent it: its records are delivered, and leave the queue as the request is taken back)
      held.at(-1)!.result.activated = true;
      await scheduler._flush();
      const sent = fetch.mock.calls.slice(before).flatMap((c: any[]) => batchIds(String(c[1].body)));
      expect(sent.filter((id: string) => rs.some((r) => r.id == id))).toEqual([]);
    });

    it('takes the deferred request back before the exit beacon leaves, and defers nothing after pagehide until shown', async () => {
      const { held, live } = stubFetchLater();
      const atBeacon: string[][][] = [];
      stubBeacon(() => (atBeacon.push(live()), true));
      mockFetch([{ status: 200 }]);
      const { rs, scheduler, queue } = await twoWaiting();
      expect(live()).toEqual([rs.map((r) => r.id)]);
      scheduler._exit('discarded');
      expect(atBeacon).toEqual([[]]);
      expect(held.every((h) => h.signal.aborted)).toBe(true);
      // stored after pagehide (the page is going away): not deferred, it waits for the next load
      queue.records.push(record());
      scheduler._notify();
      scheduler._exit('hidden');
      await advance(1);
      expect(live()).toEqual([]);
      scheduler._shown();
      scheduler._notify();
      await advance(1);
      expect(live()).toHaveLength(1);
    });

    it('after a hide in a backoff, covers again what stays queued', async () => {
      const { live, held } = stubFetchLater();
      const beacon = vi.fn(() => true);
      stubBeacon(beacon);
      mockFetch([{ status: 503 }]);
      const { add, scheduler } = setup({ flushAt: 1 });
      const rs = add(record());
      await advance(1);
      const before = held.length;
      scheduler._exit('hidden');
      expect(beacon).not.toHaveBeenCalled();
      expect(held.length).toBe(before + 1);
      expect(live()).toEqual([rs.map((r) => r.id)]);
    });

    it('an API that answers with a redirect: one request per attempt (no second one without keepalive), the messages stay queued, and one delivery_redirected error a page (review 12)', async () => {
      const fetch = vi.fn(async () => ({ status: 0, type: 'opaqueredirect', body: null, headers: { get: () => null } }));
      vi.stubGlobal('fetch', fetch);
      const { add, report, queue, scheduler } = setup({ flushAt: 1 });
      const rs = add(record());
      await advance(1);
      expect(fetch).toHaveBeenCalledTimes(1);
      await scheduler._flush();
      expect(fetch).toHaveBeenCalledTimes(2);
      expect(queue.records.map((r) => r.id)).toEqual(rs.map((r) => r.id));
      expect(report.mock.calls.map(([e]) => e.code)).toEqual(['delivery_redirected']);
    });

    it('a page that goes away for good in a backoff takes its deferred request back: what waits stays stored for the next load, which sends it once (e2e/engines/delivery.spec.ts "API unreachable")', async () => {
      const { live } = stubFetchLater();
      stubBeacon(vi.fn(() => true));
      mockFetch([{ status: 503 }]);
      const { add, scheduler, queue } = setup({ flushAt: 1 });
      const rs = add(record());
      await advance(1);
      expect(live()).toEqual([rs.map((r) => r.id)]);
      scheduler._exit('discarded');
      expect(live()).toEqual([]);
      expect(queue.records.map((r) => r.id)).toEqual(rs.map((r) => r.id));
    });

    it('a page that enters the back/forward cache in a backoff takes its deferred request back (the browser would send it then, and the restored page count it as sent), and defers again once shown', async () => {
      const { live } = stubFetchLater();
      stubBeacon(vi.fn(() => true));
      mockFetch([{ status: 503 }]);
      const { add, scheduler, queue } = setup({ flushAt: 1 });
      const rs = add(record());
      await advance(1);
      scheduler._exit('cached');
      scheduler._exit('hidden');
      expect(live()).toEqual([]);
      expect(queue.records.map((r) => r.id)).toEqual(rs.map((r) => r.id));
      scheduler._shown();
      scheduler._notify();
      await advance(1);
      expect(live()).toEqual([rs.map((r) => r.id)]);
    });

    it('a beacon the browser refuses at a final exit is deferred instead, and leaves the queue as an accepted one would (found by review 10)', async () => {
      const { live } = stubFetchLater();
      stubBeacon(() => false);
      mockFetch([{ status: 200 }]);
      const { rs, scheduler, queue } = await twoWaiting();
      scheduler._exit('discarded');
      expect(live()).toEqual([rs.map((r) => r.id)]);
      expect(queue.records.map((r) => r.id).filter((id) => rs.some((r) => r.id == id))).toEqual([]);
    });

    it('a keepalive request the browser refused, sent again without keepalive, is covered again while in flight (found by review 10)', async () => {
      const { live } = stubFetchLater();
      let calls = 0;
      vi.stubGlobal('fetch', vi.fn(() => (calls++ ? new Promise(() => {}) : Promise.reject(new TypeError('keepalive budget')))));
      const { add } = setup({ flushInterval: 60000 });
      const rs = add(record());
      await advance(1);
      await advance(1);
      expect(calls).toBe(2);
      expect(live()).toEqual([rs.map((r) => r.id)]);
    });

    it('an erasure takes the deferred request back', async () => {
      const { live } = stubFetchLater();
      vi.stubGlobal('fetch', vi.fn(() => new Promise(() => {})));
      const { add, scheduler, queue } = setup({ flushInterval: 60000 });
      add(record());
      await advance(1);
      add(record(), record());
      await advance(1);
      expect(live()).toHaveLength(1);
      queue.records.length = 0;
      scheduler._erased();
      expect(live()).toEqual([]);
      await advance(1);
      expect(live()).toEqual([]);
    });
  });
});
