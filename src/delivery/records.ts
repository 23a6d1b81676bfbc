import type { Message } from '../message/types';

// What the queue stores and its bounds: the records' schema (read by other tabs and later pages) and a pure check.

/** One queued message; records describe themselves so any tab (or the next page load) can send them. */
export interface QueueRecord {
  /** The message id (a ULID, so keys sort in call order). */
  id: string;
  message: Message;
  /** Serialised bytes of `message`. */
  bytes: number;
  /** ms since epoch when it was queued. */
  queuedAt: number;
  /** Failed deliveries so far (see queue.ts `_failed`; a split that isolates a bad message is none). */
  attempts: number;
  /** The tab that sends it (see tabs.ts); another tab adopts it only when that tab is gone. */
  owner: string;
  /**
   * When a tab adopted it (ms since epoch): without Web Locks, it counts as orphaned a lease after that (else after
   * `queuedAt`), so that a record just adopted is not adopted again by a third tab (tabs.ts `_orphans`).
   */
  claimedAt?: number;
  /**
   * Where it may be sent: the write key and batch URL it was queued under (`source` of `createQueue`), set by `add`.
   * Only a page with the same ones adopts it (CONTRACT section 6). A record of an earlier version has none: the page
   * that adopts it sends it, as that version did.
   */
  source?: string;
}

/** Queue bounds: a call that would pass the count or bytes bound is refused (`queue_full`); older records expire. */
export interface QueueBounds {
  maxCount: number;
  maxBytes: number;
  maxAgeMs: number;
}

/** Defaults of `LoadOptions.queue` (README "Queue bounds" says how they were sized). */
export const DEFAULT_BOUNDS: QueueBounds = { maxCount: 10000, maxBytes: 5000000, maxAgeMs: 7 * 864e5 };

/** Whether one more message would pass the bounds, with `count` messages held and `bytes` with it; pure. */
export const overBounds = (b: QueueBounds, count: number, bytes: number) => count >= b.maxCount || bytes > b.maxBytes;

/** How long a tab's records are its own without Web Locks (tabs.ts). */
export const LEASE_MS = 60000;
/** Without Web Locks: whether another tab may take this record now (a lease since it was queued, or last adopted). */
export const leaseOver = (r: QueueRecord, now: number) => now - (r.claimedAt || r.queuedAt) > LEASE_MS;
