import { setMany, delMany, clear } from 'idb-keyval';
import { openStore, readWrite, writeBehind } from './store';
import { browserPlatform, type Platform } from './platform';
import type { AnalyticsError } from '../message/errors';
import { analyticsError } from '../message/errors';

import type { QueueBounds, QueueRecord } from './records';
import { overBounds } from './records';
import { leaseOver } from './records';

export type { QueueBounds, QueueRecord } from './records';
export { DEFAULT_BOUNDS, overBounds } from './records';
export { clearStored, DB } from './store';

/** What the queue tells its owner about. */
export interface QueueEvents {
  /** Messages dropped because they grew older than `maxAgeMs` (once per pass over the queue, with all their ids). */
  _expired(ids: string[]): void;
  /** IndexedDB is unusable; the queue now lives in memory. */
  _fallback(error: unknown): void;
}

// When each orphan was first seen: one is adopted only `graceMs` later (see `adopt`). Says when it may be (0: now,
// and it is forgotten).
function orphanClock() {
  const seen = new Map<string, number>();
  return (id: string, now: number, graceMs: number): number => {
    const since = seen.get(id) ?? seen.set(id, now).get(id)!;
    if (now - since < graceMs) return since + graceMs;
    seen.delete(id);
    return 0;
  };
}

/**
 * What `_adopt` does with the store as read at `now` (pure but for `dueOf`, the orphan clock, asked once per orphan):
 * another write key's or host's records (`source`) are not ours to send, or to count: they wait for a page with
 * theirs, and are deleted (`stale`) once older than this page's `maxAgeMs` (none may come again). Only orphans are
 * adopted: this tab's own records live in memory, which is authoritative (one of ours read here may be one just
 * delivered whose delete has not committed yet; taking it back would send it twice). `left`: when the lease of the
 * oldest record left to other tabs began (tabs.ts `leaseOver`); `due`: when an orphan seen but not yet adopted may be.
 */
function planAdoption(all: QueueRecord[], mine: QueueRecord[], owner: string, source: string | undefined, maxAgeMs: number, now: number, isOrphan: (r: QueueRecord) => boolean, dueOf: (r: QueueRecord) => number) {
  const foreign = all.filter((r) => r.source && r.source != source);
  const ids = new Set(mine.map((r) => r.id));
  const others = all.filter((r) => !foreign.includes(r) && !ids.has(r.id) && r.owner != owner);
  const orphans = others.filter(isOrphan);
  let due = Infinity;
  // (the grace asked once per orphan and read: `dueOf` is the orphan clock)
  const adopted = orphans.filter((r) => {
    const at = dueOf(r);
    if (at) due = Math.min(due, at);
    return !at;
  });
  const left = others.filter((r) => !orphans.includes(r)).reduce((oldest, r) => Math.min(oldest, r.claimedAt || r.queuedAt), Infinity);
  return { stale: foreign.filter((r) => now - r.queuedAt > maxAgeMs).map((r) => r.id), adopted, left, due };
}

/**
 * This tab's queue: an ordered in-memory list of its records, written through to IndexedDB (one transaction per
 * burst of calls) so a closed page's messages are sent by the next load; falls back to memory when IndexedDB fails.
 */
export function createQueue(owner: string, bounds: QueueBounds, events: QueueEvents, source?: string, p: Platform = browserPlatform(), leased = () => false) {
  const records: QueueRecord[] = [];
  const persist = openStore(events._fallback, p);
  let bytes = 0;
  const orphanDue = orphanClock();
  // Records removed for good (delivered, refused, expired): a pending write must not bring them back.
  const removed = new WeakSet<QueueRecord>();
  // Writes records through to IndexedDB, all but those removed by the time the write runs (one sent or dropped must
  // not come back; one taken out at a page exit is written: if its hand-off is never confirmed, the next load sends it).
  const save = (list: QueueRecord[]) => {
    const kept = list.filter((r) => !removed.has(r));
    return persist((idb) => setMany(kept.map((r) => [r.id, r]), idb).then(() => void wrote(kept)));
  };
  // Records the store held once (written, or read and claimed): only those can another tab have adopted since. One a
  // full disk never let be written lives in this page's memory only, and `_reconcile` keeps it.
  const written = new WeakSet<QueueRecord>();
  const wrote = (list: QueueRecord[]) => (list.forEach((r) => written.add(r)), 1);
  const writer = writeBehind(save);
  // This page's records with these ids, in order.
  const pick = (ids: string[]) => {
    const wanted = new Set(ids);
    return records.filter((r) => wanted.has(r.id));
  };
  // Memory only: IndexedDB keeps them.
  const takeOut = (ids: string[]) => {
    const takenOut = pick(ids);
    for (const r of takenOut) {
      records.splice(records.indexOf(r), 1);
      bytes -= r.bytes;
    }
    return takenOut;
  };
  const putBack = (back: QueueRecord[]) => {
    records.push(...back);
    records.sort(byId);
    for (const r of back) bytes += r.bytes;
  };
  // Records taken out of memory for a page-exit hand-off and not put back: a pending write stores them (an
  // unconfirmed hand-off is sent again by the next load) unless they are removed for good meanwhile.
  const handedOut = new Map<string, QueueRecord>();
  // IndexedDB only. Resolves to whether they are deleted (a page whose store never opened deletes nothing).
  const forget = (ids: string[]) => persist((idb) => delMany(ids, idb).then(() => true));
  const drop = (ids: string[]) => {
    for (const r of takeOut(ids)) removed.add(r);
    for (const id of ids) {
      const r = handedOut.get(id);
      if (r) removed.add(r), handedOut.delete(id);
    }
    // (a store that never answered holds nothing of this page's: they are gone, and the exit note lets go of them)
    return persist._open() ? forget(ids) : Promise.resolve(true);
  };

  // Records are in id (call time) order, so expired ones are a prefix: cheap on every call.
  const expire = (now: number) => {
    if (!records.length || now - records[0].queuedAt <= bounds.maxAgeMs) return; // the common case: nothing to do
    const expired: string[] = [];
    for (const r of records) {
      if (now - r.queuedAt <= bounds.maxAgeMs) break;
      expired.push(r.id);
    }
    if (expired.length) drop(expired).then(() => events._expired(expired));
  };

  return {
    /** Removes every record, this tab's and other tabs', from memory and IndexedDB (consent withdrawn, opt-out): resolves true once that committed. */
    _clear() {
      for (const r of takeOut(records.map((r) => r.id))) removed.add(r);
      for (const r of handedOut.values()) removed.add(r);
      handedOut.clear();
      return persist((idb) => clear(idb).then(() => true));
    },

    /** This tab's records, oldest first (a live array: do not mutate). */
    _list: (): readonly QueueRecord[] => records,

    /**
     * This tab's records it may hand to the browser without reading the store first (at a page exit, or deferred).
     * Without Web Locks (`leased`), another tab adopts a stored record older than LEASE_MS even from a tab that lives
     * (tabs.ts): such a record stays stored, for the tab that owns it now or the next load, rather than being sent
     * twice (sim seeds 25, 325, 502, 771, 780, 1294, 1298). A pass reads the store first (`_reconcile`); a page
     * exit has no time to.
     */
    _handable: (): readonly QueueRecord[] =>
      leased() && persist._open() ? records.filter((r) => !leaseOver(r, p._now())) : records,

    /**
     * Queues a record and returns a promise that resolves (never rejects) once it is durably stored (one IndexedDB
     * transaction per burst of calls). A record that would pass a bound is refused: the `queue_full` error is
     * returned at once, and what was queued is never dropped to make room.
     */
    _add(record: QueueRecord): Promise<void> | AnalyticsError {
      expire(record.queuedAt);
      if (overBounds(bounds, records.length, bytes + record.bytes))
        return analyticsError('queue_full', `the queue is full (${records.length} messages, ${bytes} bytes)`, [record.id]);
      record.source = source;
      records.push(record);
      bytes += record.bytes;
      return writer._write(record);
    },

    /** Resolves when every record added so far is stored. */
    _flushed: writer._flushed,

    /** Deletes these records from IndexedDB only (what an exit note names: see exit-note.ts `finishHandoffs`). */
    _forget: forget,

    /** Removes delivered or refused records. */
    _remove: (ids: string[]) => (ids.length ? drop(ids) : Promise.resolve()),

    /**
     * Counts a failed delivery of these records (of those still in this page's memory) and, unless `write` is false,
     * writes it through, so the tab or page load that adopts them next backs off from there. Returns the most
     * attempts among them.
     */
    _failed(ids: string[], write = true): number {
      const failing = pick(ids);
      const most = Math.max(0, ...failing.map((r) => ++r.attempts));
      // Not even an empty transaction when none is left (all handed to the browser at a page exit).
      if (write && failing.length) save(failing);
      return most;
    },

    /** Writes this page's records of these ids through again (another page may have deleted them: handoff.ts). */
    _keep(ids: string[]) {
      const kept = pick(ids);
      if (kept.length) save(kept);
    },

    /**
     * Takes records out of this page's memory before they are handed to the browser at page exit, so that a second
     * exit on this page (Firefox fires `visibilitychange` after a `pagehide` it cut off, scripts/exit-closes.mjs) never
     * sends them again. They stay in IndexedDB: if the hand-off is never confirmed, the next load sends them (at least
     * once).
     */
    _takeOut(ids: string[]): QueueRecord[] {
      const takenOut = takeOut(ids);
      for (const r of takenOut) handedOut.set(r.id, r);
      return takenOut;
    },

    /** Puts back records the browser refused at page exit, in id order. */
    _putBack(back: QueueRecord[]) {
      for (const r of back) handedOut.delete(r.id);
      putBack(back);
    },

    /**
     * Reads the shared store (once the page-exit hand-offs of earlier pages are finished: start.ts `adoptOrphans`),
     * drops expired records, and adopts the records whose owner `isOrphan` says is gone (this tab becomes their owner)
     * once they were seen orphaned `graceMs` ago: the note of a page that just closed can reach this page late (Firefox: a localStorage write made as a tab closes shows in another page only
     * some hundreds of ms later, measured by scripts/exit-closes.mjs), and what it names must not be sent again.
     * Resolves to `_left`, when the lease of the oldest record left to other tabs began (its `claimedAt` or `queuedAt`), and `due`, when an orphan seen but
     * not yet adopted may be (`_due`, 0 when none): the caller looks again then.
     */
    async _adopt(isOrphan: (r: QueueRecord) => boolean, graceMs = 0, held: () => boolean = () => true): Promise<{ _left: number; _due: number }> {
      const now = p._now();
      let plan: ReturnType<typeof planAdoption> | undefined;
      // Read and claimed in one transaction (store.ts `readWrite`): without Web Locks two tabs may adopt at once.
      const claimed = await persist((idb) =>
        readWrite(idb, (all) => {
          plan = planAdoption(all.filter((r) => r && r.id && r.message), records, owner, source, bounds.maxAgeMs, now, isOrphan, (r) => orphanDue(r.id, now, graceMs));
          // (not once the page left, and may be restored, since the tabs' lock was granted: another tab may adopt them now)
          const adopted = held() ? plan.adopted : [];
          for (const r of adopted) (r.owner = owner), (r.claimedAt = now);
          return adopted;
        }),
      );
      if (!plan) return { _left: 0, _due: 0 };
      let { stale, adopted, left, due } = plan;
      if (stale.length) forget(stale);
      // Claimed in the store before they are this tab's: one it cannot mark as its own (a full disk) stays an
      // orphan to every other tab too, which would send it again; it is looked at again later instead.
      if (claimed?.length) wrote(claimed), putBack(claimed), expire(now);
      else if (!claimed && adopted.length) due = Math.min(due, now + graceMs + CLAIM_RETRY_MS);
      return { _left: left < Infinity ? left : 0, _due: due < Infinity ? due : 0 };
    },

    /**
     * Keeps this tab's own records only (after a bfcache restore, or without Web Locks a lease on, another tab may have
     * adopted some); without Web Locks, claims them anew, so that no other tab adopts them for another lease.
     */
    async _reconcile(): Promise<void> {
      // Only records stored before the read can be missing from it: one added meanwhile (a call made as the page is
      // restored) is written after it, and no other tab has seen it.
      const before = records.slice();
      await writer._flushed();
      const now = p._now();
      // (claimed in the transaction that read them, store.ts `readWrite`: a tab that adopted one meanwhile has it alone)
      await persist((idb) =>
        readWrite(idb, (stored) => {
          const mineInStore = new Set(stored.filter((r) => r.owner == owner).map((r) => r.id));
          // (a record never written is in memory only: no other tab has seen it; a full disk must not lose it)
          takeOut(before.filter((r) => written.has(r) && !mineInStore.has(r.id)).map((r) => r.id));
          return leased() ? records.map((r) => ((r.claimedAt = now), r)) : [];
        }).then(wrote),
      );
    },
  };
}

/** How long after a failed claim of orphans (see `_adopt`) they are looked at again. */
const CLAIM_RETRY_MS = 1000;

const byId = (a: QueueRecord, b: QueueRecord) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The queue's interface. */
export type Queue = ReturnType<typeof createQueue>;
