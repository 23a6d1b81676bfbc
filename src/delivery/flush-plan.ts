import { LEASE_MS, type QueueRecord } from './records';
import { planBatches } from './batch';

// What a pass of the scheduler sends and how it splits it; pure (the scheduler decides when).

/**
 * What a pass sends now: every record queued, in order, in as few requests as the 500 KB limit allows (batch.ts).
 * Nothing of the page is in flight as a pass plans (passes run one at a time, test/delivery/scheduler-passes.test.ts).
 * With `leased` tabs (no Web Locks, tabs.ts), another tab adopts a record once it is older than the lease, even from a
 * tab that lives (a long outage, offline): with such a record queued (only those can have been taken), nothing is
 * planned (undefined) until the queue has let go of what was taken (`_reconcile`) and the pass plans again.
 */
export function planFlush(list: readonly QueueRecord[], now: number, leased: false): QueueRecord[][];
export function planFlush(list: readonly QueueRecord[], now: number, leased: boolean): QueueRecord[][] | undefined;
export function planFlush(list: readonly QueueRecord[], now: number, leased: boolean) {
  if (!leased || !list.some((r) => now - r.queuedAt > LEASE_MS)) return planBatches(list);
}

/**
 * The records of a planned batch still queued when its turn comes (a page exit that only hid the page may have
 * handed some to the browser since the pass planned its batches).
 */
export const stillQueued = (planned: readonly QueueRecord[], queued: readonly QueueRecord[]) => {
  const q = new Set(queued);
  return planned.filter((r) => q.has(r));
};
