import type { QueueRecord } from './queue';

const PREFIX = 'svc-analytics:';
/** Without Web Locks, another tab's record is taken over after this long (a live tab sends well within it). */
export const LEASE_MS = 60000;

/**
 * Tabs sharing the queue, through the Web Locks API: each tab holds a lock named after itself while it lives, so
 * the browser itself tells which tabs are gone (their records are orphans); sends are serialised by one more lock.
 * Where Web Locks are missing, a record of another tab counts as orphaned once it is older than `LEASE_MS`.
 */
export function createTabs(id: string) {
  const locks: LockManager | undefined = navigator.locks; // created at load, in a browser only
  let release: (() => void) | undefined;

  return {
    id,
    /** Holds this tab's life lock (until `leave`); released on page exit so the back/forward cache stays usable. */
    enter() {
      if (!locks || release) return;
      locks.request(PREFIX + 'tab:' + id, () => new Promise<void>((r) => (release = r))).catch(() => {});
    },
    leave() {
      release?.();
      release = undefined;
    },
    /** A test of whether a record's owner is gone (so this tab may adopt it). */
    async orphans(): Promise<(r: QueueRecord) => boolean> {
      const now = Date.now();
      if (!locks) return (r) => r.owner != id && now - r.queuedAt > LEASE_MS;
      const held = await locks.query().catch(() => ({ held: [] }) as LockManagerSnapshot);
      const alive = new Set((held.held || []).map((l) => l.name));
      return (r) => r.owner != id && !alive.has(PREFIX + 'tab:' + r.owner);
    },
    /** Runs `fn` while no other tab of this site is sending. */
    exclusive<T>(fn: () => Promise<T>): Promise<T> {
      return locks ? (locks.request(PREFIX + 'send', fn) as Promise<T>) : fn();
    },
  };
}

/** The tabs interface. */
export type Tabs = ReturnType<typeof createTabs>;
