import { LEASE_MS, type QueueRecord } from './records';
import { planBatches } from './batch';

// What a pass of the scheduler sends and how it splits it; pure (the scheduler decides when).

/** What one pass sends. */
export interface FlushPlan {
  /** Another tab may have taken some of the records: the queue lets go of them first (`_reconcile`), then plans again. */
  _reconcile: boolean;
  /** The requests to send in turn, oldest records first (none while `_reconcile`). */
  _batches: QueueRecord[][];
}

/**
 * What a pass sends now: every record queued, in order, in as few requests as the 500 KB limit allows (batch.ts).
 * Nothing of the page is in flight as a pass plans (passes run one at a time, test/delivery/scheduler-passes.test.ts).
 * With `leased` tabs (no Web Locks, tabs.ts), another tab adopts a record once it is older than the lease, even from a
 * tab that lives (a long outage, offline): with such a record queued (only those can have been taken), nothing is planned before the queue reconciles.
 */
export function planFlush(list: readonly QueueRecord[], now: number, leased: boolean): FlushPlan {
  return leased && list.some((r) => now - r.queuedAt > LEASE_MS)
    ? { _reconcile: true, _batches: [] }
    : { _reconcile: false, _batches: planBatches(list) };
}

/**
 * The records of a planned batch still queued when its turn comes (a page exit that only hid the page may have
 * handed some to the browser since the pass planned its batches).
 */
export const stillQueued = (planned: readonly QueueRecord[], queued: readonly QueueRecord[]) => {
  const q = new Set(queued);
  return planned.filter((r) => q.has(r));
};

/**
 * The halves of a batch the API refused (400, 413, 422), the first one the larger: each goes out at once, until the
 * message it blames is alone.
 */
export const halves = (batch: QueueRecord[]) => {
  const half = Math.ceil(batch.length / 2);
  return [batch.slice(0, half), batch.slice(half)];
};
