// More of the scheduler's contract (when it sends, what it tells, what an exit notes), found missing by mutation
// testing (StrykerJS, `npm run mutate`). The setup is that of scheduler.test.ts.
import { describe, expect, it, vi } from 'vitest';
import { LEASE_MS } from '../../src/delivery/tabs';
import type { Message } from '../../src/message/types';
import { record } from '../fake-queue';
import { advance, setup, useSchedulerClock } from './scheduler-setup';


const note = () => JSON.parse(localStorage.getItem('svc_sent') || 'null') as string[] | null;
const batchIds = (text: string) => (JSON.parse(text).batch as Message[]).map((m) => m.messageId);
const reply = (status: number, retryAfter: string | null = null) => ({ status, headers: { get: (n: string) => (n.toLowerCase() == 'retry-after' ? retryAfter : null) } });

// fetch whose answers the test gives, one request at a time (`answer(i, status)`); `sent(i)` the ids of request i.
function slowFetch() {
  const answers: ((v: unknown) => void)[] = [];
  const fetch = vi.fn((_u: string, _init: RequestInit) => new Promise((r) => answers.push(r)));
  vi.stubGlobal('fetch', fetch);
  return {
    fetch,
    answer: (i: number, status = 200, retryAfter: string | null = null) => answers[i](reply(status, retryAfter)),
    sent: (i: number) => batchIds(String(fetch.mock.calls[i][1].body)),
  };
}



useSchedulerClock();

describe('scheduler: when it sends', () => {
  it('a message stored while a slow request is in flight waits for its interval, not just for that answer', async () => {
    const f = slowFetch();
    const { add } = setup({ flushAt: 20, flushInterval: 1000 });
    add(record());
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    await advance(1500);
    const [b] = add(record()); // due at 2,500 ms
    await advance(500); // 2,000 ms: the first request is answered
    f.answer(0);
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    await advance(499);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    await advance(1);
    expect(f.fetch).toHaveBeenCalledTimes(2);
    expect(f.sent(1)).toEqual([b.id]);
    f.answer(1);
  });

  it('what is in flight does not count toward flushAt', async () => {
    const f = slowFetch();
    const { add } = setup({ flushAt: 3, flushInterval: 1000 });
    add(record(), record());
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(1); // both, at once (the first of a quiet spell)
    await advance(50);
    const [c] = add(record()); // one waits: not flushAt, due at 1,050 ms
    await advance(50);
    f.answer(0);
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    await advance(949);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    await advance(1);
    expect(f.sent(1)).toEqual([c.id]);
    f.answer(1);
  });

  it('a message stored exactly flushInterval after the last request goes at once', async () => {
    const f = slowFetch();
    const { add } = setup({ flushAt: 20, flushInterval: 1000 });
    add(record());
    await advance(0);
    f.answer(0);
    await advance(1000);
    const [b] = add(record());
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(2);
    expect(f.sent(1)).toEqual([b.id]);
    f.answer(1);
  });

  it('being told of a call when nothing waits (everything delivered) sends nothing and never throws', async () => {
    const f = slowFetch();
    const { add, scheduler, queue } = setup();
    add(record());
    await advance(0);
    f.answer(0);
    await advance(100);
    expect(queue.records).toEqual([]);
    expect(() => scheduler._notify()).not.toThrow();
    await advance(5000);
    expect(f.fetch).toHaveBeenCalledTimes(1);
  });

  it('a backoff that starts while a message waits for its interval holds that message back too, until it ends', async () => {
    const f = slowFetch();
    const { add, queue } = setup({ flushAt: 20, flushInterval: 1000 });
    const [a] = add(record());
    await advance(100);
    const [b] = add(record()); // due at 1,100 ms
    await advance(200);
    f.answer(0, 503, '5'); // at 300 ms: back off until 5,300 ms
    await advance(0);
    await advance(1000); // 1,300 ms: b's interval is over, the backoff is not
    expect(f.fetch).toHaveBeenCalledTimes(1);
    await advance(3999);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    await advance(1);
    expect(f.fetch).toHaveBeenCalledTimes(2);
    expect(f.sent(1)).toEqual([a.id, b.id]);
    f.answer(1);
    await advance(0);
    expect(queue.records).toEqual([]);
  });

  it('a restored page sends nothing until it knows which of its records another tab took (`_after`)', async () => {
    const f = slowFetch();
    const { scheduler, queue } = setup();
    let known!: () => void;
    scheduler._after(new Promise<void>((r) => (known = r)));
    queue.records.push(record());
    const flushed = scheduler._flush();
    await advance(1000);
    expect(f.fetch).not.toHaveBeenCalled();
    known();
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    f.answer(0);
    await flushed;
  });

  it('without Web Locks, lets go of what another tab adopted before it sends records older than the lease', async () => {
    const f = slowFetch();
    const { queue, scheduler } = setup({ leased: true });
    const old = record();
    old.queuedAt = Date.now() - LEASE_MS - 1;
    const fresh = record();
    queue.records.push(old, fresh);
    // another tab adopted the old one (its lease ran out in a long outage)
    queue._reconcile.mockImplementation(async () => void queue.records.splice(queue.records.indexOf(old), 1));
    const flushed = scheduler._flush();
    await advance(0);
    expect(queue._reconcile).toHaveBeenCalledTimes(1);
    expect(f.sent(0)).toEqual([fresh.id]);
    f.answer(0);
    await flushed;
  });
  it('without Web Locks, lets go of what another tab adopted before each request of a pass, not once a pass: a pass of splits outlasts a lease (sim seed 13657)', async () => {
    const f = slowFetch();
    const { queue, scheduler } = setup({ leased: true });
    // (queued just under half a lease ago: a request may take TIMEOUT_MS, so past half a lease another tab may adopt
    // a record while it is in flight)
    const rs = [record(), record()];
    rs.forEach((r) => (r.queuedAt = Date.now() - LEASE_MS / 2 + 1000));
    queue.records.push(...rs);
    const flushed = scheduler._flush();
    await advance(0);
    expect(f.sent(0)).toEqual(rs.map((r) => r.id));
    expect(queue._reconcile).not.toHaveBeenCalled();
    // the API blames a message of the batch 2 s later: each half is sent after a reconcile
    await advance(2000);
    f.answer(0, 400);
    await advance(0);
    expect(queue._reconcile).toHaveBeenCalledTimes(1);
    expect(f.sent(1)).toEqual([rs[0].id]);
    f.answer(1, 200);
    await advance(0);
    expect(queue._reconcile).toHaveBeenCalledTimes(2);
    expect(f.sent(2)).toEqual([rs[1].id]);
    f.answer(2, 200);
    await flushed;
  });
});

describe('scheduler: offline', () => {
  // A request that fails for lack of a network: the site's service worker (src/offline) may deliver it later.
  async function failWith(status: number | 'network', online: boolean, withHook = true) {
    const fetch = vi.fn(async () => {
      onLine = online; // the network goes while the request is out
      if (status == 'network') throw new TypeError('Failed to fetch');
      return reply(status);
    });
    vi.stubGlobal('fetch', fetch);
    let onLine = true;
    vi.spyOn(navigator, 'onLine', 'get').mockImplementation(() => onLine);
    const offline = vi.fn();
    const s = setup(withHook ? { _offline: offline } : {});
    vi.spyOn(s.transport, '_fits').mockReturnValue(false); // no keepalive: no second try at once
    s.queue.records.push(record());
    await s.scheduler._flush();
    return { ...s, offline, fetch };
  }

  it('a request that fails without an answer while offline tells the offline fallback', async () => {
    const { offline, emit } = await failWith('network', false);
    expect(offline).toHaveBeenCalledTimes(1);
    expect(emit).toHaveBeenCalledWith('retry', expect.objectContaining({ status: 0 }));
  });

  it('a request answered with a failure while offline does not (the API was reached)', async () => {
    const { offline, emit } = await failWith(503, false);
    expect(offline).not.toHaveBeenCalled();
    expect(emit).toHaveBeenCalledWith('retry', expect.objectContaining({ status: 503 }));
  });

  it('a request that fails without an answer while online does not', async () => {
    const { offline, emit } = await failWith('network', true);
    expect(offline).not.toHaveBeenCalled();
    expect(emit).toHaveBeenCalledWith('retry', expect.objectContaining({ status: 0 }));
  });

  it('without an offline fallback, a request that fails offline is still retried after a backoff', async () => {
    const { emit, queue, fetch } = await failWith('network', false, false);
    expect(emit).toHaveBeenCalledWith('retry', expect.objectContaining({ status: 0 }));
    expect(queue._failed).toHaveBeenCalledTimes(1);
    expect(queue.records).toHaveLength(1);
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});

describe('scheduler: answers and exits', () => {
  it('the delivery_redirected error tells the site what to fix (point apiHost at the address that answers)', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => ({ status: 0, type: 'opaqueredirect', body: null, headers: { get: () => null } })));
    const { report, queue, scheduler } = setup();
    const r = record();
    queue.records.push(r);
    await scheduler._flush();
    expect(report).toHaveBeenCalledTimes(1);
    const [e] = report.mock.calls[0];
    expect(e.code).toBe('delivery_redirected');
    expect(e.message).toMatch(/apiHost/);
    expect(e.message).toMatch(/stay queued/);
  });

  it('a 2xx to a request an exit noted keeps the note until the delete of its records is done (a page killed before would adopt them)', async () => {
    vi.spyOn(navigator, 'sendBeacon').mockReturnValue(true);
    const f = slowFetch();
    const { scheduler, queue } = setup();
    let deleted!: () => void;
    queue._remove.mockImplementation((_ids: string[]) => new Promise<boolean>((r) => (deleted = () => (queue.records.splice(0), r(true)))));
    const rec = record();
    queue.records.push(rec);
    const flushed = scheduler._flush();
    await advance(0);
    scheduler._exit('hidden'); // the keepalive request in flight is noted as with the browser
    expect(note()).toEqual([rec.id]);
    scheduler._shown();
    f.answer(0, 200);
    await advance(0);
    expect(queue._remove).toHaveBeenCalled();
    expect(queue._keep).not.toHaveBeenCalled();
    expect(note()).toEqual([rec.id]);
    deleted();
    await flushed;
    expect(note()).toBeNull();
  });

  it('after an erasure, an exit notes nothing of a keepalive request still in flight: storage stays empty', async () => {
    const beacon = vi.spyOn(navigator, 'sendBeacon').mockReturnValue(true);
    const f = slowFetch();
    const { scheduler, queue } = setup();
    queue.records.push(record());
    const flushed = scheduler._flush();
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(1);
    queue.records.length = 0; // consent withdrawn: the queue is emptied, then the scheduler told
    scheduler._erased();
    scheduler._exit('discarded');
    expect(note()).toBeNull();
    expect(beacon).not.toHaveBeenCalled();
    f.answer(0);
    await flushed;
    expect(note()).toBeNull();
  });

  it('a backoff is over at its end: an exit at that very moment hands the waiting messages to the browser', async () => {
    const beacon = vi.spyOn(navigator, 'sendBeacon').mockReturnValue(true);
    const t0 = Date.now();
    vi.stubGlobal('fetch', vi.fn(async () => reply(503, '1'))); // back off until t0 + 1,000 ms
    const { scheduler, queue } = setup();
    const r = record();
    queue.records.push(r);
    await scheduler._flush();
    vi.setSystemTime(t0 + 999);
    scheduler._exit('discarded');
    expect(beacon).not.toHaveBeenCalled();
    scheduler._shown();
    vi.setSystemTime(t0 + 1000);
    scheduler._exit('discarded');
    expect(beacon).toHaveBeenCalledTimes(1);
    expect(batchIds(String(beacon.mock.calls[0][1]))).toEqual([r.id]);
  });

  it('a flush whose next batch an exit handed to the browser meanwhile still sends the batch after it at once', async () => {
    // (beacons over the browser's 64 KiB are refused)
    const beacon = vi.spyOn(navigator, 'sendBeacon').mockImplementation((_u, body) => String(body).length < 65536);
    const f = slowFetch();
    const { scheduler, queue } = setup({ flushInterval: 60000 });
    // three requests under the 500 KB limit: [big], [small], [big]
    const [big1, small, big2] = [record(480000), record(40000), record(470000)];
    queue.records.push(big1, small, big2);
    const flushed = scheduler._flush();
    await advance(0);
    expect(f.sent(0)).toEqual([big1.id]);
    // hidden with the first in flight: the small one leaves by beacon, the big one is refused and stays queued
    scheduler._exit('hidden');
    expect(beacon).toHaveBeenCalledTimes(2);
    expect(queue.records.map((r) => r.id)).toEqual([big1.id, big2.id]);
    scheduler._shown();
    f.answer(0);
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(2);
    expect(f.sent(1)).toEqual([big2.id]);
    f.answer(1);
    await flushed;
  });

  it('records adopted from another tab, older than the request in flight, are sent once it is answered, and telling the scheduler of them never throws', async () => {
    const f = slowFetch();
    const { scheduler, queue } = setup({ flushInterval: 1000 });
    const adopted = record(); // queued earlier in a tab that is gone: its id sorts first
    adopted.owner = 'gone-tab';
    await advance(5000);
    const mine = record();
    queue.records.push(mine);
    scheduler._notify();
    await advance(0);
    expect(f.sent(0)).toEqual([mine.id]);
    // adopted meanwhile (start.ts: `adopt().then(scheduler._notify)`), put back in id order
    queue.records.unshift(adopted);
    expect(() => scheduler._notify()).not.toThrow();
    f.answer(0);
    await advance(0);
    expect(f.fetch).toHaveBeenCalledTimes(2);
    expect(f.sent(1)).toEqual([adopted.id]);
    f.answer(1);
  });
});
