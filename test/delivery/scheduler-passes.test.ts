// One pass at a time, one request at a time in a page: a pass plans its batches only when none of this page's
// requests is in flight, so what it plans needs no in-flight filter (flush-plan.ts).
import { describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/message/types';
import { record } from '../fake-queue';
import { advance, setup, useSchedulerClock } from './scheduler-setup';


// fetch whose answers the test gives, one at a time; counts the requests open at once.
function slowFetch() {
  const answers: ((status: number) => void)[] = [];
  let open = 0;
  const seen = { most: 0, bodies: [] as string[][] };
  const fn = vi.fn((_url: string, init: RequestInit) => {
    seen.most = Math.max(seen.most, ++open);
    seen.bodies.push((JSON.parse(String(init.body)).batch as Message[]).map((m) => m.messageId));
    // (status 0: a network error)
    return new Promise((resolve, reject) =>
      answers.push((status) => (open--, status ? resolve({ status, headers: { get: () => null } }) : reject(new TypeError('Failed to fetch')))),
    );
  });
  vi.stubGlobal('fetch', fn);
  return { fn, seen, answer: (status = 200) => answers.shift()!(status) };
}

useSchedulerClock();

describe('createScheduler: passes', () => {
  it('starts a flush asked for while a request is in flight only after its answer, and sends none of its messages again', async () => {
    const fetch = slowFetch();
    const { add, scheduler } = setup({ flushAt: 1 });
    const [a] = add(record());
    await advance(0);
    expect(fetch.seen.bodies).toEqual([[a.id]]);
    const [b] = add(record()); // flushAt 1: due at once, but a is in flight
    const flushes = [scheduler._flush(), scheduler._flush(), scheduler._flush()];
    await advance(5000);
    expect(fetch.fn).toHaveBeenCalledTimes(1);
    fetch.answer(500); // a failed: it waits for its backoff, but the flushes asked for send it now, with b
    await advance(0);
    expect(fetch.seen.bodies).toEqual([[a.id], [a.id, b.id]]);
    fetch.answer(200);
    await Promise.all(flushes);
    await advance(60000);
    expect(fetch.seen.bodies).toEqual([[a.id], [a.id, b.id]]);
    expect(fetch.seen.most).toBe(1);
  });

  it('keeps one request at a time across a hidden exit and a failed keepalive request sent again without keepalive', async () => {
    const fetch = slowFetch();
    const { add, scheduler, queue } = setup({ flushAt: 1 });
    const [a] = add(record());
    await advance(0);
    scheduler._exit('hidden'); // a is in flight with keepalive: noted, not beaconed
    // (still hidden: a page shown again meanwhile retries a failed keepalive request after a backoff instead, see
    // scheduler.test.ts "shown again")
    const [b] = add(record());
    const flushed = scheduler._flush();
    fetch.answer(0); // a network error the browser gave, not the server: sent again at once without keepalive
    await advance(0);
    expect(fetch.seen.bodies).toEqual([[a.id], [a.id]]);
    fetch.answer(200);
    await advance(0);
    expect(fetch.seen.bodies).toEqual([[a.id], [a.id], [b.id]]);
    fetch.answer(200);
    await flushed;
    await advance(0);
    expect(fetch.seen.most).toBe(1);
    expect(queue.records).toEqual([]);
  });
});
