// More of the deferral's contract (found missing by mutation testing, `npm run mutate`); the setup is
// deferral.test.ts's.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { browserPlatform } from '../../src/delivery/platform';
import { createDeferral } from '../../src/delivery/deferral';
import { createLedger } from '../../src/delivery/ledger';
import type { Handoff } from '../../src/delivery/handoff';
import type { Queue } from '../../src/delivery/queue';
import type { Transport } from '../../src/delivery/transport';
import type { Message } from '../../src/message/types';
import { byteLength } from '../../src/message/validate';
import { fakeQueue, record } from '../fake-queue';


function setup(writeKey: string, missing = false) {
  const queue = fakeQueue();
  const bodies: string[] = [];
  const defer = vi.fn((_url: string, body: string) => (bodies.push(body), { _abort: () => {}, _sent: () => false }));
  const deferral = createDeferral({
    _queue: queue as unknown as Queue,
    _transport: { _defer: missing ? undefined : defer } as unknown as Transport,
    _platform: browserPlatform(),
    _handoff: { _removed: vi.fn(), _ledger: createLedger(vi.fn()) } as unknown as Handoff,
    url: 'https://api.test/v1/batch',
    writeKey,
    emit: vi.fn(),
    open: () => true,
  });
  return { queue, bodies, deferral };
}

beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('createDeferral', () => {
  it('with a long write key, the deferred body still stays within 60,000 bytes, covering the oldest messages', () => {
    const { queue, bodies, deferral } = setup('k'.repeat(6000));
    queue.records.push(...Array.from({ length: 80 }, () => record(900)));
    deferral._cover();
    expect(bodies).toHaveLength(1);
    expect(byteLength(bodies[0])).toBeLessThanOrEqual(60000);
    const ids = (JSON.parse(bodies[0]).batch as Message[]).map((m) => m.messageId);
    expect(ids).toEqual(queue.records.slice(0, ids.length).map((r) => r.id));
  });

  it('where there is no deferred fetching (Firefox, WebKit), a call costs no timer', () => {
    const { queue, deferral } = setup('wk', true);
    queue.records.push(record());
    deferral._cover(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
