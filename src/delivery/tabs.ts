import type { QueueRecord } from './records';
import { browserPlatform, type Platform } from './platform';

const PREFIX = 'svc-analytics:';
// (LEASE_MS: without Web Locks, another tab's record is taken over after this long; a live tab sends well within it)
export { LEASE_MS, leaseOver } from './records';
import { leaseOver } from './records';
/**
 * A gone tab's records are taken over this long after they were first seen orphaned, so that its page-exit note,
 * which can reach other pages late (Firefox, measured with scripts/exit-closes.mjs), is read first.
 */
export const ORPHAN_GRACE_MS = 1500;

// The Web Locks API where it works: a lock manager (created at load, in a browser only) that is dropped, as if
// missing, once a request or query rejects or throws before it was granted (a SecurityError where storage is
// blocked: sandboxed frames, "block all cookies").
function lockManager(p: Platform) {
  let locks = p._locks;
  const unusable = () => (locks = undefined);
  return {
    _usable: () => !!locks,
    /** The locks held and asked for; none where Web Locks are unusable. */
    _query: async () => locks && (await locks.query().catch(unusable)),
    /** Runs `fn` under the lock `name` (an abort is just an ended watch). Never rejects. */
    _request: (name: string, options: LockOptions, fn: () => unknown) =>
      new Promise<void>((ok) => {
        let granted = false;
        const failed = (e: unknown) => {
          if (!granted && (e as Error)?.name != 'AbortError') unusable();
          ok();
        };
        try {
          locks!.request(name, options, () => ((granted = true), fn())).then(() => ok(), failed);
        } catch (e) {
          failed(e);
        }
      }),
  };
}
type Locks = ReturnType<typeof lockManager>;

// This tab's watches on the other tabs' locks (pending lock requests, ended when this page leaves), learnt of from the
// lock manager and a BroadcastChannel: `gone` runs once one is granted (that tab is gone).
function watchTabs(id: string, locks: Locks, gone: () => void, p: Platform) {
  let channel: BroadcastChannel | undefined;
  let watches: AbortController | undefined;
  const watched = new Set<string>();
  const watch = (tab: string) => {
    if (!locks._usable() || !watches || tab == id || watched.has(tab)) return;
    watched.add(tab);
    // Granted once that tab's page is gone (or, for a moment, in the back/forward cache): its records are orphans.
    // `gone` runs once our hold on its lock is released, so that the lock no longer looks alive.
    let granted = false;
    locks
      ._request(tabLock(tab), { signal: watches.signal }, () => {
        granted = true;
        watched.delete(tab);
      })
      .then(() => granted && gone());
  };
  return {
    /** Watches may begin (this page entered). */
    _start() {
      watches = new AbortController();
    },
    /** Says hello to the other tabs (they watch us, and we them), and watches the tabs the lock manager knows of. */
    _hello() {
      try {
        channel?.close();
        channel = p._channel(PREFIX + 'tabs');
        channel.onmessage = (e) => {
          const m = e.data;
          if (m && typeof m.hello == 'string') {
            watch(m.hello);
            // so that the newcomer watches us too
            if (!m.reply) channel?.postMessage({ hello: id, reply: 1 });
          }
        };
        channel.postMessage({ hello: id });
      } catch {
        channel = undefined; // no BroadcastChannel: tabs that load later are found when they are gone
      }
      locks._query().then((s) => s && (s.held || []).forEach((l) => l.name!.startsWith(PREFIX + 'tab:') && watch(l.name!.slice(PREFIX.length + 4))));
    },
    /** Ends the watches and the channel. */
    _stop() {
      watches?.abort();
      watches = undefined;
      watched.clear();
      channel?.close();
      channel = undefined;
    },
  };
}

const tabLock = (tab: string) => PREFIX + 'tab:' + tab;

/**
 * Tabs sharing the queue, through the Web Locks API (https://w3c.github.io/web-locks/): each tab holds a lock named
 * after itself while it lives, so the browser itself tells which tabs are gone (their records are orphans); adoption
 * is serialised by one more lock. A living tab waits on the other tabs' locks (it learns of them from the lock
 * manager and a BroadcastChannel), so the browser calls `gone` within moments of a tab's death.
 * Where Web Locks are missing, or exist and reject (a SecurityError where storage is blocked: sandboxed frames,
 * "block all cookies"), a record of another tab counts as orphaned once it is older than `LEASE_MS`.
 */
export function createTabs(id: string, gone: () => void, p: Platform = browserPlatform()) {
  const locks = lockManager(p);
  const others = watchTabs(id, locks, gone, p);
  let release: (() => void) | undefined;
  // Settles when this page leaves: work still running then lets go of the lock (see `exclusive`).
  let left!: Promise<void>;
  let letGo: (() => void) | undefined;
  const stay = () => void (left = new Promise<void>((r) => (letGo = r)));
  stay();
  // How many times this page left: work that began under a lock before a leave no longer holds it.
  let leaves = 0;

  return {
    /** Holds this tab's life lock (until `leave`) and watches the others'; says hello to the other tabs. */
    _enter() {
      if (!locks._usable() || release) return;
      if (!letGo) stay();
      others._start();
      const held = new Promise<void>((r) => (release = r));
      // Other tabs hear of us only once our lock is held: one that asked for it before would be granted it at once.
      locks._request(tabLock(id), {}, () => release && (others._hello(), held));
    },
    /**
     * Releases this tab's lock and ends its watches and channel, as the page leaves: a page holding a lock, a lock
     * request or an open channel may be kept out of the back/forward cache (https://web.dev/articles/bfcache).
     */
    _leave() {
      leaves++;
      letGo?.();
      letGo = undefined;
      release?.();
      release = undefined;
      others._stop();
    },
    /** A test of whether a record's owner is gone (so this tab may adopt it). */
    async _orphans(): Promise<(r: QueueRecord) => boolean> {
      const now = p._now();
      const snapshot = await locks._query();
      if (!snapshot) return (r) => r.owner != id && leaseOver(r, now);
      const alive = new Set((snapshot.held || []).map((l) => l.name));
      return (r) => r.owner != id && !alive.has(tabLock(r.owner));
    },
    /**
     * A test that stays true until this page leaves (it may be restored, and start again with a new test): work that
     * began before must start nothing more (another tab may adopt this page's records once it left, and send them).
     */
    _alive(): () => boolean {
      const at = leaves;
      return () => leaves == at;
    },
    /** True when there is no lock manager to tell when a tab dies: the caller polls at the lease instead. */
    _leased: () => !locks._usable(),
    /**
     * Runs `fn` while no other tab of this site adopts records (so no two tabs adopt the same orphan); where Web
     * Locks are unusable it just runs it. The lock is
     * let go when this page leaves, even if `fn` still runs (a request in flight): a page in the back/forward cache
     * that holds a lock another page asks for is evicted (Chromium's reason "weblocks-contention", seen in
     * e2e/conditions.spec.ts; https://developer.mozilla.org/en-US/docs/Web/API/NotRestoredReasonDetails/reason).
     * `fn` gets `held`, false from then on: it must start nothing more that needs the lock (another tab may adopt
     * this page's records once it left, and send them).
     */
    _exclusive<T>(fn: (held: () => boolean) => Promise<T>): Promise<T> {
      const at = leaves;
      const held = () => leaves == at;
      if (!locks._usable()) return fn(held);
      let result: Promise<T> | undefined;
      return locks._request(PREFIX + 'adopt', {}, () => Promise.race([(result = new Promise<T>((r) => r(fn(held)))).catch(() => {}), left])).then(
        () => result || fn(held),
      );
    },
  };
}

/** The tabs interface. */
export type Tabs = ReturnType<typeof createTabs>;
