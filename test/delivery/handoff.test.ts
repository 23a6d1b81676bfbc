import 'fake-indexeddb/auto';
import { browserPlatform } from '../../src/delivery/platform';
import { IDBFactory } from 'fake-indexeddb';
import { createStore, values } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { K, KEEP, S, SEND } from '../../src/delivery/ledger';
import { createHandoff, type Handoff, type HandoffDeps } from '../../src/delivery/handoff';
import { finishHandoffs } from '../../src/delivery/exit-note';
import { adoptOrphans } from '../../src/delivery/start';
import { createQueue, type Queue, type QueueRecord } from '../../src/delivery/queue';
import type { Transport } from '../../src/delivery/transport';
import type { Message } from '../../src/message/types';
import { byteLength } from '../../src/message/validate';
import { fakeQueue, record } from '../fake-queue';

const URL_ = 'https://api.test/v1/batch';
const KEY = 'wk_test_1234567890';

// `beacon` says whether the browser accepted the body (sendBeacon's answer).
function setup(beacon: (url: string, body: string) => boolean = () => true, over: Partial<HandoffDeps> = {}) {
  const queue = fakeQueue();
  const transport = { _beacon: vi.fn(beacon) };
  const emit = vi.fn();
  const handoff = createHandoff({
    _queue: queue as unknown as Queue,
    _transport: transport as unknown as Transport,
    _platform: browserPlatform(),
    url: URL_,
    writeKey: KEY,
    emit,
    ...over,
  });
  return { queue, transport, emit, handoff };
}

// Requests in flight, as the ledger knows them (ledger.ts): id → with keepalive.
const fly = (h: Handoff, entries: [string, boolean][]) => {
  for (const [id, keep] of entries) if (!(h._ledger._state(id) & (S | K))) h._ledger._move([id], keep ? KEEP : SEND);
};
const batchIds = (text: string) => (JSON.parse(text).batch as Message[]).map((m) => m.messageId);
const beaconed = (beacon: ReturnType<typeof vi.fn>) => beacon.mock.calls.flatMap((c) => batchIds(c[1] as string));
// The note the next load reads (localStorage), or null when there is none.
const note = () => JSON.parse(localStorage.getItem('svc_sent') || 'null') as string[] | null;
const drain = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

beforeEach(() => localStorage.clear());
afterEach(() => {
  localStorage.clear();
  vi.restoreAllMocks();
});

describe('createHandoff', () => {
  describe('exit', () => {
    it('hands every waiting message to the browser as string bodies of at most 60,000 bytes carrying writeKey', () => {
      const { handoff, queue, transport, emit } = setup();
      const rs = Array.from({ length: 12 }, (_, i) => record(9000 + ((i * 3571) % 9000)));
      queue.records.push(...rs);
      handoff._exit('hidden', false);
      expect(transport._beacon.mock.calls.length).toBeGreaterThan(1);
      for (const [url, data] of transport._beacon.mock.calls) {
        expect(url).toBe(URL_);
        expect(typeof data).toBe('string');
        expect(byteLength(data)).toBeLessThanOrEqual(60000);
        expect(JSON.parse(data).writeKey).toBe(KEY);
      }
      expect(beaconed(transport._beacon)).toEqual(rs.map((r) => r.id));
      expect(queue.records).toEqual([]);
      const delivered = emit.mock.calls.filter((c) => c[0] == 'delivered').flatMap((c) => (c[1] as Message[]).map((m) => m.messageId));
      expect(delivered).toEqual(rs.map((r) => r.id));
    });

    it('takes the records out of memory before the beacon, and notes them as sent only once it is accepted', () => {
      let queue!: ReturnType<typeof fakeQueue>;
      // What the queue held, and what was noted, at the moment the browser got the beacon.
      const atBeacon: { queued: string[]; noted: string[] | null }[] = [];
      const s = setup(() => (atBeacon.push({ queued: queue.records.map((r) => r.id), noted: note() }), true));
      queue = s.queue;
      const rs = [record(), record()];
      queue.records.push(...rs);
      s.handoff._exit('hidden', false);
      expect(atBeacon).toEqual([{ queued: [], noted: null }]);
      expect(queue._takeOut).toHaveBeenCalledWith(rs.map((r) => r.id));
      expect(note()).toEqual(rs.map((r) => r.id));
    });

    it('sends nothing twice when a second exit follows one cut off right after the beacon', () => {
      let accepted = 0;
      // The browser takes the beacon, then stops the handler (Firefox can stop a pagehide handler part-way).
      const { handoff, queue } = setup(() => {
        if (accepted++) return true;
        throw new Error('handler stopped');
      });
      const rs = [record(), record()];
      queue.records.push(...rs);
      expect(() => handoff._exit('hidden', false)).toThrow('handler stopped');
      // Firefox fires visibilitychange after a pagehide it cut off (or here: pagehide after a cut-off hidden exit).
      handoff._exit('cached', false);
      expect(accepted).toBe(1);
      // Never noted: the next load sends them again (at least once), this page never does.
      expect(note()).toBeNull();
    });

    it('adds to the notes of earlier exits and pages', () => {
      localStorage.setItem('svc_sent', JSON.stringify(['x0']));
      const { handoff, queue } = setup();
      const rs = [record(), record()];
      queue.records.push(...rs);
      handoff._exit('cached', false);
      expect(note()).toEqual(['x0', ...rs.map((r) => r.id)]);
    });

    it('writes the note without JSON.stringify (a page may have replaced it)', () => {
      const { handoff, queue } = setup();
      const r = record();
      queue.records.push(r);
      const original = JSON.stringify;
      JSON.stringify = () => {
        throw new Error('replaced by the page');
      };
      try {
        handoff._exit('cached', false);
      } finally {
        JSON.stringify = original;
      }
      expect(note()).toEqual([r.id]);
    });

    it('finishes the removal when the page is only hidden: IndexedDB delete, then the note is taken back', async () => {
      const { handoff, queue } = setup();
      let removed!: () => void;
      queue._remove.mockImplementationOnce(() => new Promise<boolean>((r) => (removed = () => r(true))));
      const rs = [record(), record()];
      queue.records.push(...rs);
      handoff._exit('hidden', false);
      const ids = rs.map((r) => r.id);
      expect(queue._remove).toHaveBeenCalledWith(ids);
      await drain();
      expect(note()).toEqual(ids);
      removed();
      await drain();
      expect(note()).toBeNull();
    });

    it('does no IndexedDB work at a pagehide into the back/forward cache: only the synchronous note', async () => {
      const { handoff, queue, transport } = setup();
      const rs = [record(), record()];
      queue.records.push(...rs);
      handoff._exit('cached', false);
      await drain();
      expect(transport._beacon).toHaveBeenCalledTimes(1);
      expect(note()).toEqual(rs.map((r) => r.id));
      expect(queue._remove).not.toHaveBeenCalled();
      expect(queue.records).toEqual([]);
    });

    it('removes the beaconed records from IndexedDB too when the page is discarded for good (its note may not outlive it)', () => {
      const { handoff, queue } = setup();
      const rs = [record(), record()];
      queue.records.push(...rs);
      handoff._exit('discarded', false);
      expect(note()).toEqual(rs.map((r) => r.id));
      expect(queue._remove).toHaveBeenCalledWith(rs.map((r) => r.id));
      expect(queue.records).toEqual([]);
    });

    it('removes from IndexedDB at a final exit after all when no note could be written', () => {
      const { handoff, queue } = setup();
      const rs = [record(), record()];
      queue.records.push(...rs);
      // localStorage unusable: the next load would never learn of the hand-off.
      const setItem = vi.spyOn(localStorage, 'setItem').mockImplementation(() => {
        throw new DOMException('blocked', 'SecurityError');
      });
      try {
        handoff._exit('cached', false);
      } finally {
        setItem.mockRestore();
      }
      expect(queue._remove).toHaveBeenCalledWith(rs.map((r) => r.id));
      expect(note()).toBeNull();
    });

    it('sends nothing more after a final exit until the page is shown again', () => {
      const { handoff, queue, transport } = setup();
      const a = record();
      queue.records.push(a);
      handoff._exit('cached', false);
      expect(transport._beacon).toHaveBeenCalledTimes(1);
      const b = record();
      queue.records.push(b);
      handoff._exit('hidden', false);
      handoff._exit('cached', false);
      expect(transport._beacon).toHaveBeenCalledTimes(1);
      expect(queue.records).toEqual([b]);
      handoff._shown();
      handoff._exit('hidden', false);
      expect(transport._beacon).toHaveBeenCalledTimes(2);
      expect(batchIds(transport._beacon.mock.calls[1][1])).toEqual([b.id]);
    });

    it('puts the records back, in order, when the browser refuses the beacon', () => {
      const { handoff, queue, transport, emit } = setup(() => false);
      const rs = [record(), record()];
      queue.records.push(...rs);
      handoff._exit('cached', false);
      expect(transport._beacon).toHaveBeenCalledTimes(1);
      expect(queue._putBack).toHaveBeenCalledWith(rs);
      expect(queue.records).toEqual(rs);
      expect(note()).toBeNull();
      expect(queue._remove).not.toHaveBeenCalled();
      expect(emit).not.toHaveBeenCalled();
    });

    it('removes only what the browser accepted before a refusal, and tries no group after it', () => {
      let calls = 0;
      const { handoff, queue, transport } = setup(() => calls++ == 0);
      const rs = Array.from({ length: 6 }, () => record(25000));
      queue.records.push(...rs);
      handoff._exit('hidden', false);
      expect(transport._beacon).toHaveBeenCalledTimes(2);
      const accepted = batchIds(transport._beacon.mock.calls[0][1]);
      expect(accepted.length).toBeGreaterThan(0);
      expect(queue.records.map((r) => r.id)).toEqual(rs.map((r) => r.id).filter((id) => !accepted.includes(id)));
      expect(note()).toEqual(accepted);
    });

    it('hands over a request in flight without keepalive at a final exit only (it dies with the page)', () => {
      const { handoff, queue, transport } = setup();
      const flying = record();
      queue.records.push(flying);
      fly(handoff, [[flying.id, false]]);
      // Only hidden: the page lives on and sees the answer.
      handoff._exit('hidden', false);
      expect(transport._beacon).not.toHaveBeenCalled();
      expect(note()).toBeNull();
      handoff._exit('cached', false);
      expect(beaconed(transport._beacon)).toEqual([flying.id]);
      expect(note()).toEqual([flying.id]);
    });

    it('notes a request in flight with keepalive without sending it again, and removes its records when discarded for good', () => {
      const { handoff, queue, transport } = setup();
      const flying = record();
      const later = record();
      queue.records.push(flying, later);
      (fly(handoff, [[flying.id, true]]), handoff._exit('discarded', false));
      expect(beaconed(transport._beacon)).toEqual([later.id]);
      expect(note()).toEqual([flying.id, later.id]);
      expect(queue._remove).toHaveBeenCalledWith([flying.id]);
    });

    it('notes again, at every exit, what this page handed over (an earlier write may have been cut off)', () => {
      const { handoff, queue } = setup();
      const r = record();
      queue.records.push(r);
      (fly(handoff, [['k1', true]]), handoff._exit('cached', false));
      localStorage.clear();
      handoff._exit('hidden', false);
      expect(note()).toEqual(['k1', r.id]);
    });

    it('keeps everything queued when held (offline, or in a backoff), and notes no request in flight: the next load sends it again', () => {
      const { handoff, queue, transport } = setup();
      const rs = [record(), record()];
      queue.records.push(...rs);
      (fly(handoff, [['k1', true]]), handoff._exit('cached', true));
      expect(transport._beacon).not.toHaveBeenCalled();
      expect(queue._takeOut).not.toHaveBeenCalled();
      expect(queue.records).toEqual(rs);
      // offline, a keepalive request is likely to fail with no one to see it: taken as handed, it would be lost
      expect(note()).toBeNull();
      (fly(handoff, [['k1', true]]), handoff._exit('discarded', true));
      expect(queue._remove).not.toHaveBeenCalled();
    });

    it('still notes what it handed over at an earlier exit when a later one is held', () => {
      const { handoff } = setup();
      (fly(handoff, [['k1', true]]), handoff._exit('hidden', false));
      (fly(handoff, [['k1', true], ['k2', true]]), handoff._exit('cached', true));
      expect(note()).toEqual(['k1']);
    });
  });

  describe('tookOver', () => {
    it('says, a task later, whether an exit noted the request as handed to the browser', async () => {
      const { handoff } = setup();
      const noted = handoff._tookOver(['k1', 'k2']);
      // Chromium: the rejection comes just before pagehide.
      (fly(handoff, [['k2', true]]), handoff._exit('cached', false));
      expect(await noted).toBe(true);
      expect(await handoff._tookOver(['k3'])).toBe(false);
    });

    it('takes the note back and says no when the exit that noted the request only hid the page (it sends them again)', async () => {
      const { handoff } = setup();
      localStorage.setItem('svc_sent', JSON.stringify(['x1']));
      (fly(handoff, [['k1', true], ['k2', true]]), handoff._exit('hidden', false));
      expect(note()).toEqual(['x1', 'k1', 'k2']);
      expect(await handoff._tookOver(['k1'])).toBe(false);
      // what another page noted, and this page's other request, stay noted
      expect(note()).toEqual(['x1', 'k2']);
      // a later exit notes it no more: this page sends it again itself
      handoff._exit('cached', true);
      expect(note()).toEqual(['x1', 'k2']);
    });

    it('keeps the note and says yes after a final exit (the page is going away)', async () => {
      for (const how of ['cached', 'discarded'] as const) {
        localStorage.clear();
        const { handoff } = setup();
        (fly(handoff, [['k1', true]]), handoff._exit('hidden', false));
        (fly(handoff, [['k1', true]]), handoff._exit(how, false));
        expect(await handoff._tookOver(['k1'])).toBe(true);
        expect(note()).toEqual(['k1']);
      }
    });
  });

  describe('removed', () => {
    it('notes at a page exit the records whose delete has not committed (the next load deletes them), and takes the note back once it did', async () => {
      const { handoff } = setup();
      let commit!: () => void;
      const removal = new Promise<boolean>((r) => (commit = () => r(true)));
      handoff._removed(['d1', 'd2'], removal);
      handoff._exit('discarded', false);
      expect(note()).toEqual(['d1', 'd2']);
      commit();
      await drain();
      expect(note()).toBeNull();
    });

    it('keeps the note of records whose delete failed (the store never opened: sim seed 669)', async () => {
      const { handoff } = setup();
      let fail!: () => void;
      handoff._removed(['d1'], new Promise<undefined>((r) => (fail = () => r(undefined))));
      handoff._exit('discarded', false);
      fail();
      await drain();
      expect(note()).toEqual(['d1']);
    });

    it('notes nothing after an erasure (consent withdrawn, opt-out): neither removals pending nor requests kept alive', () => {
      const { handoff } = setup();
      handoff._removed(['d1'], new Promise(() => {}));
      (fly(handoff, [['k1', true]]), handoff._exit('hidden', false));
      expect(note()).toEqual(['k1', 'd1']);
      localStorage.clear(); // the erasure removes the note
      handoff._erased();
      handoff._exit('discarded', false);
      expect(note()).toBeNull();
    });

    it('notes nothing once the delete committed', async () => {
      const { handoff } = setup();
      await handoff._removed(['d1'], Promise.resolve());
      handoff._exit('discarded', false);
      expect(note()).toBeNull();
    });
  });

  describe('answered', () => {
    it('takes back the note of a delivered request after its records are removed', async () => {
      const { handoff, queue } = setup();
      (fly(handoff, [['k1', true], ['k2', true]]), handoff._exit('hidden', false));
      expect(note()).toEqual(['k1', 'k2']);
      handoff._answered(['k1'], true);
      expect(queue._remove).toHaveBeenCalledWith(['k1']);
      await drain();
      expect(note()).toEqual(['k2']);
      handoff._answered(['k2'], true);
      await drain();
      expect(note()).toBeNull();
    });

    it('takes back the note of a failed request without removing its records (the page retries them)', async () => {
      const { handoff, queue } = setup();
      (fly(handoff, [['k1', true]]), handoff._exit('hidden', true));
      handoff._answered(['k1'], false);
      await drain();
      expect(queue._remove).not.toHaveBeenCalled();
      expect(note()).toBeNull();
    });

    it('leaves alone what it did not note (another page may have)', async () => {
      localStorage.setItem('svc_sent', JSON.stringify(['x1']));
      const { handoff, queue } = setup();
      handoff._answered(['x1'], true);
      await drain();
      expect(queue._remove).not.toHaveBeenCalled();
      expect(note()).toEqual(['x1']);
    });
  });
});

describe('finishHandoffs', () => {
  it('ignores a note that is not a list of ids, and a later exit writes a fresh one', async () => {
    localStorage.setItem('svc_sent', '{"x1":true}');
    const forget = vi.fn(async () => {});
    await finishHandoffs(forget);
    expect(forget).not.toHaveBeenCalled();
    const { handoff, queue } = setup();
    const r = record();
    queue.records.push(r);
    handoff._exit('cached', false);
    expect(note()).toEqual([r.id]);
  });
});

describe('the hand-off with the queue', () => {
  beforeEach(() => {
    (globalThis as any).indexedDB = new IDBFactory();
  });
  const WIDE = { maxCount: 100, maxBytes: 1e9, maxAgeMs: 1e9 };
  const events = () => ({ _expired: vi.fn(), _fallback: vi.fn() });

  it('a request noted at a hide that then failed is written again: another load deleted what the note named meanwhile, and the page that sends it again may go away offline (sim seed 10322)', async () => {
    const a = createQueue('A', WIDE, events());
    const r = { ...record(), owner: 'A' };
    await a._add(r);
    const { handoff } = setup(() => true, { _queue: a });
    (fly(handoff, [[r.id, true]]), handoff._exit('hidden', false));
    // Another page loads while this one is frozen: it deletes what the note names.
    await finishHandoffs((ids) => createQueue('B', WIDE, events())._forget(ids));
    const stored = () => values<QueueRecord>(createStore('svc-analytics', 'queue'));
    expect(await stored()).toEqual([]);
    // This page runs again and hears its request failed: it sends the record again, and stores it again.
    expect(await handoff._tookOver([r.id])).toBe(false);
    await drain();
    expect((await stored()).map((s) => [s.id, s.owner])).toEqual([[r.id, 'A']]);
  });

  it('the next load deletes what a page going into the back/forward cache handed to the browser, and sends none of it', async () => {
    const a = createQueue('A', WIDE, events());
    const [beaconed, flying, refused] = [record(), record(), record(70000)].map((r) => ({ ...r, owner: 'A' }));
    await Promise.all([a._add(beaconed), a._add(flying), a._add(refused)]);
    // The beacon carrying `refused` is refused (it is alone in its group: too big to share one).
    const { handoff } = setup((_url, body) => !batchIds(body).includes(refused.id), { _queue: a });
    (fly(handoff, [[flying.id, true]]), handoff._exit('cached', false));
    expect(note()).toEqual([flying.id, beaconed.id]);
    expect(a._list().map((r) => r.id)).toEqual([flying.id, refused.id]);
    // The page never comes back; the next load adopts its records once it is gone.
    const b = createQueue('B', WIDE, events());
    await adoptOrphans(b, (r) => r.owner == 'A');
    expect(b._list().map((r) => r.id)).toEqual([refused.id]);
    expect(note()).toBeNull();
    const stored = await values<QueueRecord>(createStore('svc-analytics', 'queue'));
    expect(stored.map((r) => [r.id, r.owner])).toEqual([[refused.id, 'B']]);
  });
});
