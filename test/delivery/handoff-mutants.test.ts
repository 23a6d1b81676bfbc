// More of the page-exit hand-off's contract (found missing by mutation testing, `npm run mutate`); the setup is
// handoff.test.ts's.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { browserPlatform } from '../../src/delivery/platform';
import { createHandoff } from '../../src/delivery/handoff';
import type { Queue } from '../../src/delivery/queue';
import type { Transport } from '../../src/delivery/transport';
import type { Message } from '../../src/message/types';
import { byteLength } from '../../src/message/validate';
import { fakeQueue, record } from '../fake-queue';

const URL_ = 'https://api.test/v1/batch';

function setup(transport: Partial<Record<'_beacon' | '_defer', (url: string, body: string) => unknown>>, writeKey = 'wk_test_1234567890') {
  const queue = fakeQueue();
  const emit = vi.fn();
  const t = { _beacon: vi.fn(transport._beacon || (() => true)), _defer: transport._defer && vi.fn(transport._defer) };
  const handoff = createHandoff({ _queue: queue as unknown as Queue, _transport: t as unknown as Transport, _platform: browserPlatform(), url: URL_, writeKey, emit });
  return { queue, emit, handoff, transport: t };
}
const note = () => JSON.parse(localStorage.getItem('svc_sent') || 'null') as string[] | null;
const batchIds = (text: string) => (JSON.parse(text).batch as Message[]).map((m) => m.messageId);
const drain = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

beforeEach(() => localStorage.clear());
afterEach(() => {
  localStorage.clear();
  vi.restoreAllMocks();
});

describe('handoff: exit', () => {
  it('with a long write key, every beacon body still stays within 60,000 bytes, and every message leaves once', () => {
    const { queue, handoff, transport } = setup({}, 'k'.repeat(6000));
    const rs = Array.from({ length: 60 }, () => record(900));
    queue.records.push(...rs);
    handoff._exit('hidden', false);
    expect(transport._beacon.mock.calls.length).toBeGreaterThan(1);
    for (const [, body] of transport._beacon.mock.calls) expect(byteLength(body as string)).toBeLessThanOrEqual(60000);
    expect(transport._beacon.mock.calls.flatMap(([, body]) => batchIds(body as string))).toEqual(rs.map((r) => r.id));
  });

  it('once what a hide handed over is deleted, a later exit notes none of it again', async () => {
    const { queue, handoff } = setup({});
    const r = record();
    queue.records.push(r);
    handoff._exit('hidden', false);
    await drain();
    expect(queue._remove).toHaveBeenCalledWith([r.id]);
    expect(note()).toBeNull();
    handoff._exit('hidden', false);
    handoff._exit('cached', false);
    expect(note()).toBeNull();
  });

  it('at a final exit, a beacon refused and a deferred request refused too (over its quota) leave the messages queued', () => {
    const { queue, handoff, emit } = setup({
      _beacon: () => false,
      _defer: () => {
        throw new DOMException('over the quota', 'QuotaExceededError');
      },
    });
    const rs = [record(), record()];
    queue.records.push(...rs);
    handoff._exit('discarded', false);
    expect(queue.records).toEqual(rs);
    expect(note()).toBeNull();
    expect(emit).not.toHaveBeenCalled();
  });
});
