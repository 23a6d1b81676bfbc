import { afterEach, beforeEach, vi } from 'vitest';
import { browserPlatform } from '../../src/delivery/platform';
import { createScheduler, type SchedulerDeps } from '../../src/delivery/scheduler';
import { createHandoff } from '../../src/delivery/handoff';
import type { Queue, QueueRecord } from '../../src/delivery/queue';
import type { Tabs } from '../../src/delivery/tabs';
import { createTransport, type Transport } from '../../src/delivery/transport';
import type { AnalyticsError } from '../../src/message/errors';
import { fakeQueue } from '../fake-queue';

// A scheduler on a fake queue and tabs, with the real hand-off and transport (scheduler.test.ts,
// scheduler-mutants.test.ts). `leased`: tabs without Web Locks.

export const URL_ = 'https://api.test/v1/batch';
export const KEY = 'wk_test_1234567890';

export function setup(over: Partial<Omit<SchedulerDeps, '_handoff'>> & { leased?: boolean } = {}) {
  const queue = Object.assign(fakeQueue(), { _reconcile: vi.fn(async () => {}) });
  const tabs = { id: 'me', _alive: () => () => true, _leased: () => !!over.leased } as unknown as Tabs;
  const report = vi.fn<(e: AnalyticsError) => void>();
  const emit = vi.fn();
  const transport: Transport = over._transport || createTransport();
  const deps = {
    _queue: queue as unknown as Queue,
    _tabs: tabs,
    _transport: transport,
    _platform: browserPlatform(),
    url: URL_,
    writeKey: KEY,
    flushAt: 20,
    flushInterval: 1000,
    report,
    emit,
    open: () => true,
    ...over,
  };
  const scheduler = createScheduler({ ...deps, _handoff: createHandoff(deps) });
  const add = (...rs: QueueRecord[]) => {
    for (const r of rs) {
      queue.records.push(r);
      scheduler._notify();
    }
    return rs;
  };
  return { queue, scheduler, report, emit, add, transport };
}

/** Lets the IndexedDB-less promise chains of a pass settle (a few macrotasks). */
export const drain = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};
/** Moves the fake clock on by `ms`, then lets what it started settle. */
export const advance = async (ms: number) => {
  await vi.advanceTimersByTimeAsync(ms);
  await drain();
};
/** The scheduler tests' clock: fake timers and Date from 2026-01-01, a clean localStorage, and everything restored after. */
export function useSchedulerClock() {
  beforeEach(() => {
    localStorage.clear();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
  });
  afterEach(() => {
    localStorage.clear();
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });
}
