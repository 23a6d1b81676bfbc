// A record and an in-memory queue for the scheduler's and the hand-off's tests (the real queue: test/queue.test.ts).
import { vi } from 'vitest';
import type { QueueRecord } from '../src/delivery/queue';
import type { Message } from '../src/message/types';
import { byteLength } from '../src/message/validate';

let seq = 0;

/** A track record with a `pad` of that many characters in its properties (and `extra` properties). */
export function record(pad = 0, extra: Record<string, unknown> = {}): QueueRecord {
  const id = 'm' + String(++seq).padStart(8, '0');
  const message = { type: 'track', event: 'E', messageId: id, properties: { pad: 'x'.repeat(pad), ...extra } } as unknown as Message;
  return { id, message, bytes: byteLength(JSON.stringify(message)), queuedAt: Date.now(), attempts: 0, owner: 'me' };
}

/** The queue as the scheduler and the hand-off use it, in memory. */
export function fakeQueue() {
  const records: QueueRecord[] = [];
  const drop = (ids: string[]) => {
    for (let i = records.length - 1; i >= 0; i--) if (ids.includes(records[i].id)) records.splice(i, 1);
  };
  return {
    records,
    _list: () => records,
    _handable: () => records,
    // Every record is stored at once here (the real queue's writes: store.ts `writeBehind`).
    _flushed: () => Promise.resolve(),
    // IndexedDB work: the real queue drops the records from memory and from the store.
    _remove: vi.fn(async (ids: string[]) => (drop(ids), true)),
    // Memory only, as the real queue does.
    _takeOut: vi.fn((ids: string[]) => {
      const out = records.filter((r) => ids.includes(r.id));
      drop(ids);
      return out;
    }),
    _putBack: vi.fn((back: QueueRecord[]) => {
      records.push(...back);
      records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }),
    // Counts the attempt on the records and returns the most, as the real queue does (which also stores it).
    _failed: vi.fn((ids: string[]) => Math.max(0, ...records.filter((r) => ids.includes(r.id)).map((r) => ++r.attempts))),
    _keep: vi.fn(),
  };
}
