import type { Queue } from './queue';
import type { Transport } from './transport';
import type { ExitKind } from './lifecycle';
import type { Message } from '../message/types';
import { planBatches, body, BODY_OVERHEAD } from './batch';
import { KEEPALIVE_LIMIT } from './transport';
import { note, unnote } from './exit-note';
import type { Platform } from './platform';

/** What the hand-off needs from the rest of the library. */
export interface HandoffDeps {
  _queue: Queue;
  _transport: Transport;
  /** `{apiHost}/v1/batch` */
  url: string;
  writeKey: string;
  /** The browser's built-ins (platform.ts). */
  _platform: Platform;
  emit(name: 'delivered', messages: Message[]): void;
}

/** The hand-off's interface (the scheduler takes it as a dependency). */
export type Handoff = ReturnType<typeof createHandoff>;

/**
 * The page-exit hand-off: what this page hands to the browser as it is hidden or goes away, the note of it, and
 * what becomes of the note when this page sees an answer after all; correct if cut off at any statement (see
 * `exit`). Every removal of records for good goes through it (`remove`). The scheduler, which keeps when to send
 * and the retry state, calls it.
 */
export function createHandoff(d: HandoffDeps) {
  const p = d._platform;
  const store = p._storage;
  // `pagehide` ran: this page hands nothing more to the browser until it is shown again (see `exit`).
  let gone = false;
  // Ids this page noted as handed to the browser: in-flight keepalive requests (until their answer arrives) and
  // accepted beacons (until their records are deleted from IndexedDB).
  const handed = new Set<string>();
  // Ids delivered (or refused) whose records' delete from IndexedDB has not committed yet, and whether an exit noted
  // them: a page that goes away meanwhile cuts the delete off, and the next load would adopt and send them again.
  const removing = new Map<string, boolean>();

  // The one path by which records leave IndexedDB for good (delivered, refused, or handed to the browser): until
  // their delete commits, a page exit notes them, so the next load deletes them rather than sends them again; once it
  // committed, the note of those noted (`noted`: all of them were noted already) is taken back.
  const remove = (ids: string[], noted: boolean, removal: Promise<unknown> = d._queue._remove(ids)) => {
    ids.forEach((id) => removing.set(id, noted || !!removing.get(id)));
    // (the queue's removal settles, never rejects: queue.ts `persist`)
    return removal.then((done) => {
      const notedIds = ids.filter((id) => removing.get(id));
      ids.forEach((id) => removing.delete(id));
      // (a delete that failed keeps the note: the next load deletes them)
      if (done && notedIds.length) unnote(notedIds, store);
    });
  };

  return {
    /**
     * The page is hidden, or going away (`pagehide`): hand every waiting message to the browser (sendBeacon, at
     * most 64 KB a request: beacons share the keepalive budget, https://w3c.github.io/beacon/#sendbeacon-method and
     * https://fetch.spec.whatwg.org/#http-network-or-cache-fetch "inflight keepalive bytes"). `inflight` maps the ids
     * of this page's requests in flight to whether they were sent with keepalive; `hold` (offline, or in a retry
     * backoff) keeps everything queued.
     *
     * Correct wherever it is cut off: when a page unloads, `visibilitychange` fires after `pagehide`
     * (https://github.com/whatwg/html/pull/5949), and Firefox 153 can stop the `pagehide` handler part-way and still
     * fire it (reproduced by scripts/exit-closes.mjs); a beacon sent then is accepted and never leaves. So records
     * leave this page's memory before the beacon, are noted as sent only once the browser accepted it (else the next
     * load sends them again), and after `pagehide` this page sends nothing until it is shown again. No IndexedDB work
     * when the page goes into the back/forward cache: a transaction left running gets it evicted when the next page
     * uses the store (Chromium's reason "masked", e2e/conditions.spec.ts; https://github.com/w3c/IndexedDB/issues/381);
     * the next load (or this page, if restored) deletes what the note names. A page discarded for good deletes them
     * too, since its note may not outlive it (Firefox loses a localStorage write made as a tab closes, measured by
     * scripts/exit-closes.mjs).
     */
    _exit(how: ExitKind, inflight: ReadonlyMap<string, boolean>, hold: boolean) {
      const final = how != 'hidden';
      // A keepalive request in flight outlives the page: the browser has accepted it. Its ids, and those of beacons
      // accepted at an earlier exit of this page, are noted (again: the write may have been cut off) so that the
      // next load does not send them again. Not when `hold` (offline, or the API failing): it is likely to fail
      // with no one to see it, and the next load (or the site's service worker) sends it again, with the same
      // message ids (e2e/service-worker.spec.ts: a page offline under its service worker left with a request in
      // flight, which the next page took as handed and deleted: lost).
      const keptAlive = hold ? [] : [...inflight.keys()].filter((id) => inflight.get(id));
      keptAlive.forEach((id) => handed.add(id));
      removing.forEach((_, id) => removing.set(id, true));
      if (handed.size || removing.size) note([...handed, ...removing.keys()], store);
      if (gone) return;
      gone = final;
      // (they stay handed to the browser, and noted at every exit, until their answer: see `tookOver`)
      if (how == 'discarded') remove(keptAlive, false);
      // Offline, a beacon would be lost; during a backoff the API is failing and a beacon's answer cannot be seen
      // (sendBeacon only says whether the request was queued, https://w3c.github.io/beacon/#sendbeacon-method).
      // Either way the messages stay queued for the next load (or this page, if it lives on).
      if (hold) return;
      // A request in flight without keepalive dies with the page
      // (https://fetch.spec.whatwg.org/#concept-fetch-group-terminate): at a final exit its messages go by beacon too
      // (same ids).
      const waiting = d._queue._handable().filter((r) => !inflight.has(r.id) || (final && !inflight.get(r.id)));
      for (const group of planBatches(waiting, KEEPALIVE_LIMIT, BODY_OVERHEAD + d.writeKey.length)) {
        const ids = group.map((r) => r.id);
        const messages = group.map((r) => r.message);
        const takenOut = d._queue._takeOut(ids);
        const payload = body(messages, new Date(p._now()), d.writeKey);
        // A beacon the browser refused (the keepalive budget is full) is deferred instead where the page is going
        // away: a deferred request has a budget of its own, and the browser sends it as the page goes.
        if (!d._transport._beacon(d.url, payload) && !(final && deferred(d._transport, d.url, payload))) {
          d._queue._putBack(takenOut);
          break;
        }
        ids.forEach((id) => handed.add(id));
        // Still alive (only hidden), discarded for good, or no note could be written: remove them from IndexedDB now.
        if (!note(ids, store) || how != 'cached') {
          remove(ids, true);
          ids.forEach((id) => handed.delete(id));
        }
        d.emit('delivered', messages);
      }
    },

    /**
     * This page removes the records of these ids for good (delivered, or refused): see `remove`. `removal` is the
     * queue's delete of them, started here unless given.
     */
    _removed: (ids: string[], removal?: Promise<unknown>) => remove(ids, false, removal),

    /**
     * What the library stored was erased (consent withdrawn or denied, opt-out): an exit notes nothing more of what
     * this page sent before (the scheduler stops counting its requests in flight as kept alive too), so storage stays
     * empty. Their records are gone already, so there is nothing for a next load to send again.
     */
    _erased() {
      handed.clear();
      removing.clear();
    },

    /** The page is shown again (or restored from the back/forward cache): it may hand messages over again. */
    _shown() {
      gone = false;
    },

    /**
     * Whether a page exit took over the keepalive request for these ids that just failed without an answer: Chromium
     * rejects a keepalive fetch as the page unloads, just before `pagehide`, yet still delivers it (reproduced by
     * e2e/delivery.spec.ts, "events tracked offline are delivered exactly once after coming back online and
     * reloading"). Waiting a task lets that `pagehide` note the request as handed to the browser first.
     */
    async _tookOver(ids: string[]): Promise<boolean> {
      await new Promise<void>((r) => p._setTimeout(r));
      const notedIds = ids.filter((id) => handed.has(id));
      if (gone || !notedIds.length) return !!notedIds.length;
      // Noted at an exit that only hid the page, which lives on: the failure is real, and this page sends them
      // again, so the note is taken back (else a page killed while hidden would have the next load delete them), and
      // they are written again: another page may have deleted what the note named meanwhile (sim seed 10322: this one
      // frozen, then gone offline, kept them in memory only), as in `answered`.
      notedIds.forEach((id) => handed.delete(id));
      unnote(notedIds, store);
      d._queue._keep(notedIds);
      return false;
    },

    /**
     * This page saw an HTTP answer to its request for these ids after all (`delivered`: a 2xx): it deals with their
     * records itself (removal, or a retry), so what an exit noted of them is taken back, after the removal. Refused
     * or failed, they are written again: a page loaded meanwhile (this one frozen, or hidden) may have deleted what
     * the note named, and this page's memory would be their only copy (sim seed 1304: a 400 split them, one half
     * failed, and the other was lost with the page).
     */
    _answered(ids: string[], delivered: boolean) {
      const notedIds = ids.filter((id) => handed.delete(id));
      if (notedIds.length) delivered ? remove(notedIds, true) : (unnote(notedIds, store), d._queue._keep(notedIds));
    },
  };
}

/** Hands `payload` to the browser as a deferred request (see `Transport._defer`): whether it took it. */
function deferred(transport: Transport, url: string, payload: string): boolean {
  try {
    return !!transport._defer?.(url, payload);
  } catch {
    return false; // over its quota, or no deferred fetching here
  }
}
