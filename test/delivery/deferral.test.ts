import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { browserPlatform } from '../../src/delivery/platform';
import { covered, createDeferral } from '../../src/delivery/deferral';
import { createLedger } from '../../src/delivery/ledger';
import { BODY_OVERHEAD } from '../../src/delivery/batch';
import type { Handoff } from '../../src/delivery/handoff';
import type { Queue } from '../../src/delivery/queue';
import type { Transport } from '../../src/delivery/transport';
import type { Message } from '../../src/message/types';
import { byteLength } from '../../src/message/validate';
import { fakeQueue, record } from '../fake-queue';

const URL_ = 'https://api.test/v1/batch';
const KEY = 'wk_test_1234567890';
const batchIds = (text: string) => (JSON.parse(text).batch as Message[]).map((m) => m.messageId);

// A deferred request as the fake browser holds it.
interface Held {
  url: string;
  body: string;
  aborted: boolean;
  sent: boolean;
}

// `refuse` says whether the browser refuses a body (throws, as fetchLater over its quota does).
function setup(refuse: (body: string) => boolean = () => false, missing = false) {
  const queue = fakeQueue();
  const held: Held[] = [];
  const defer = vi.fn((url: string, body: string) => {
    if (refuse(body)) throw new DOMException('over the quota', 'QuotaExceededError');
    const h: Held = { url, body, aborted: false, sent: false };
    held.push(h);
    return { _abort: () => void (h.aborted = true), _sent: () => h.sent };
  });
  const emit = vi.fn();
  // ('delivered' is said by the ledger: ledger.ts)
  const handoff = { _removed: vi.fn((ids: string[]) => queue._remove(ids)), _ledger: createLedger(emit) };
  const deferral = createDeferral({
    _queue: queue as unknown as Queue,
    _transport: { _defer: missing ? undefined : defer } as unknown as Transport,
    _platform: browserPlatform(),
    _handoff: handoff as unknown as Handoff,
    url: URL_,
    writeKey: KEY,
    emit,
    open: () => true,
  });
  // The requests the browser would send if the page died now.
  const live = () => held.filter((h) => !h.aborted && !h.sent);
  return { queue, held, live, defer, handoff, deferral, emit };
}

beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('covered', () => {
  it('takes the oldest waiting records whose body fits 60,000 bytes, in order', () => {
    const rs = Array.from({ length: 10 }, () => record(9000));
    const out = covered(rs, () => false, BODY_OVERHEAD + KEY.length);
    expect(out).toEqual(rs.slice(0, out.length));
    const bytes = out.reduce((n, r) => n + r.bytes + 1, BODY_OVERHEAD + KEY.length);
    expect(bytes).toBeLessThanOrEqual(60000);
    expect(bytes + rs[out.length].bytes).toBeGreaterThan(60000);
  });

  it('leaves out records in flight with keepalive (they outlive the page), not those in flight without', () => {
    const [a, b, c] = [record(), record(), record()];
    expect(covered([a, b, c], (id) => id == a.id, 100)).toEqual([b, c]);
  });

  it('covers nothing when nothing waits', () => {
    expect(covered([], () => false, 100)).toEqual([]);
  });
});

describe('createDeferral', () => {
  describe('cover', () => {
    it('defers every waiting message in one text body carrying writeKey, to the batch URL', () => {
      const { deferral, queue, live } = setup();
      queue.records.push(record(), record());
      deferral._cover();
      expect(live()).toHaveLength(1);
      const [h] = live();
      expect(h.url).toBe(URL_);
      expect(batchIds(h.body)).toEqual(queue.records.map((r) => r.id));
      expect(JSON.parse(h.body).writeKey).toBe(KEY);
      // CONTRACT section 4's body: sentAt is when the library handed it over
      expect(new Date(JSON.parse(h.body).sentAt).toISOString()).toBe(JSON.parse(h.body).sentAt);
    });

    it('replaces the deferred request as messages are stored or sent: one request, with what waits now', () => {
      const { deferral, queue, held, live } = setup();
      const [a, b] = [record(), record()];
      queue.records.push(a);
      deferral._cover();
      queue.records.push(b);
      deferral._cover();
      expect(held[0].aborted).toBe(true);
      expect(live().map((h) => batchIds(h.body))).toEqual([[a.id, b.id]]);
      queue.records.splice(0, 1); // a delivered
      deferral._cover();
      expect(live().map((h) => batchIds(h.body))).toEqual([[b.id]]);
      queue.records.length = 0;
      deferral._cover();
      expect(live()).toEqual([]);
    });

    it('covers a burst once, after the task (soon)', async () => {
      const { deferral, queue, defer, live } = setup();
      for (let i = 0; i < 50; i++) {
        queue.records.push(record());
        deferral._cover(true);
      }
      expect(defer).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(0);
      expect(defer).toHaveBeenCalledTimes(1);
      expect(batchIds(live()[0].body)).toHaveLength(50);
    });

    it('never defers a body over 60,000 bytes: a queue over 64 KB is covered from its oldest message', () => {
      const { deferral, queue, live } = setup();
      queue.records.push(...Array.from({ length: 20 }, () => record(5000)));
      deferral._cover();
      const [h] = live();
      expect(byteLength(h.body)).toBeLessThanOrEqual(60000);
      const ids = batchIds(h.body);
      expect(ids).toEqual(queue.records.slice(0, ids.length).map((r) => r.id));
      expect(ids.length).toBeLessThan(20);
    });

    it('covers what fits when the browser refuses a request over its quota, and never throws', () => {
      // (another script's deferred requests to the same origin, or the URL and referrer, use part of the 64 KiB)
      const { deferral, queue, live, defer } = setup((body) => byteLength(body) > 20000);
      queue.records.push(...Array.from({ length: 10 }, () => record(5000)));
      expect(() => deferral._cover()).not.toThrow();
      expect(defer.mock.calls.length).toBeGreaterThan(1);
      const [h] = live();
      expect(byteLength(h.body)).toBeLessThanOrEqual(20000);
      expect(batchIds(h.body)).toEqual(queue.records.slice(0, batchIds(h.body).length).map((r) => r.id));
    });

    it('defers nothing, and never throws, when the browser refuses every request (a permissions policy without deferred-fetch)', () => {
      const { deferral, queue, live, defer } = setup(() => true);
      queue.records.push(...Array.from({ length: 64 }, () => record()));
      expect(() => deferral._cover()).not.toThrow();
      expect(live()).toEqual([]);
      // halving: a bounded number of tries, down to one message
      expect(defer.mock.calls.length).toBeLessThanOrEqual(8);
      expect(batchIds(defer.mock.calls.at(-1)![1])).toHaveLength(1);
    });

    it('does nothing where fetchLater is missing', () => {
      const { deferral, queue } = setup(undefined, true);
      queue.records.push(record());
      expect(() => deferral._cover()).not.toThrow();
    });
  });

  describe('take', () => {
    it('takes the deferred request back, and after a final exit defers nothing until the page is shown again', async () => {
      const { deferral, queue, live } = setup();
      queue.records.push(record());
      deferral._cover();
      deferral._cover(true); // one pending for after the task
      deferral._take(true);
      expect(live()).toEqual([]);
      await vi.advanceTimersByTimeAsync(0);
      deferral._cover();
      expect(live()).toEqual([]);
      deferral._shown();
      deferral._cover();
      expect(live()).toHaveLength(1);
    });

    it('after an exit that only hid the page, defers again', () => {
      const { deferral, queue, live } = setup();
      queue.records.push(record());
      deferral._take(false);
      deferral._cover();
      expect(live()).toHaveLength(1);
    });

    it("removes the records of a request the browser sent already, and does not send them again; the page hears 'delivered'", () => {
      const { deferral, queue, held, handoff, live, emit } = setup();
      const [a, b] = [record(), record()];
      queue.records.push(a);
      deferral._cover();
      held[0].sent = true; // activated
      queue.records.push(b);
      deferral._cover();
      expect(handoff._removed).toHaveBeenCalledWith([a.id]);
      expect(emit.mock.calls).toEqual([['delivered', [a.message]]]);
      expect(held[0].aborted).toBe(false);
      expect(queue.records).toEqual([b]);
      expect(live().map((h) => batchIds(h.body))).toEqual([[b.id]]);
    });
  });
});
