import { LEASE_MS, type QueueRecord } from './records';
import { planBatches } from './batch';

// What a pass of the scheduler sends and how it splits it; pure (the scheduler decides when).

/**
 * What a pass sends now: every record queued, in order, in as few requests as the 500 KB limit allows (batch.ts).
 * Nothing of the page is in flight as a pass plans (passes run one at a time, test/delivery/scheduler-passes.test.ts).
 */
export const planFlush = (list: readonly QueueRecord[]): QueueRecord[][] => planBatches(list);

/**
 * Whether the records of a request must be reconciled before it goes (`queue._reconcile`: what another tab took is let
 * go, the rest claimed anew). With `leased` tabs (no Web Locks, tabs.ts) another tab adopts a record a lease after it
 * was queued or last claimed, even from a tab that lives (a long outage, offline), and two tabs may adopt one at once:
 * so before each request that carries a record queued over half a lease ago (a pass of many requests, a 413 split,
 * outlasts a lease, and a request may take its whole timeout: sim seed 13657, another tab adopted and sent one in flight).
 */
export const staleClaims = (planned: readonly QueueRecord[], now: number, leased: boolean): boolean =>
  leased && planned.some((r) => now - r.queuedAt > LEASE_MS / 2);

/**
 * The records of a planned batch still queued when its turn comes (a page exit that only hid the page may have
 * handed some to the browser since the pass planned its batches).
 */
export const stillQueued = (planned: readonly QueueRecord[], queued: readonly QueueRecord[]) => {
  const q = new Set(queued);
  return planned.filter((r) => q.has(r));
};
