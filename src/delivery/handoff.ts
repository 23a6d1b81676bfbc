import type { Queue } from './queue';
import type { Transport } from './transport';
import type { ExitKind } from './lifecycle';
import type { Message } from '../message/types';
import { planBatches, body, BODY_OVERHEAD } from './batch';
import { KEEPALIVE_LIMIT } from './transport';
import type { Platform } from './platform';
import { createLedger, S, K, N, HANDED, KEPT, REMOVE, REMOVE_NOTED, UNHAND, type Ledger } from './ledger';

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
  /** The page's ledger (ledger.ts), shared with the requests and the deferral; one of its own by default. */
  _ledger?: Ledger;
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
  // (the state of each record handed to the browser or being removed, and the exit note: ledger.ts)
  const ledger = d._ledger || createLedger(d.emit, p._storage);
  // `pagehide` ran: this page hands nothing more to the browser until it is shown again (see `exit`).
  let gone = false;

  // The one path by which records leave IndexedDB for good (delivered, refused, or handed to the browser): until
  // their delete commits, a page exit notes them (ledger state R, then M), so the next load deletes them rather than
  // sends them again; once it committed, the note of those noted (`noted`: all of them were noted already) is taken
  // back (a delete that failed keeps the note: the next load deletes them).
  const remove = (ids: string[], noted: boolean, removal: Promise<unknown> = d._queue._remove(ids)) => {
    ledger._move(ids, noted ? REMOVE_NOTED : REMOVE);
    // (the queue's removal settles, never rejects: queue.ts `persist`)
    return removal.then((done) => ledger._removed(ids, done));
  };

  return {
    _ledger: ledger,
    /**
     * The page is hidden, or going away (`pagehide`): hand every waiting message to the browser (sendBeacon, at
     * most 64 KB a request: beacons share the keepalive budget, https://w3c.github.io/beacon/#sendbeacon-method and
     * https://fetch.spec.whatwg.org/#http-network-or-cache-fetch "inflight keepalive bytes"). What is in flight, and
     * whether with keepalive, the ledger says (states S and K); `hold` (offline, or in a retry backoff) keeps
     * everything queued.
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
    _exit(how: ExitKind, hold: boolean) {
      const final = how != 'hidden';
      // A keepalive request in flight outlives the page: the browser has accepted it. Its ids, and those of beacons
      // accepted at an earlier exit of this page, are noted (again: the write may have been cut off) so that the
      // next load does not send them again. Not when `hold` (offline, or the API failing): it is likely to fail
      // with no one to see it, and the next load (or the site's service worker) sends it again, with the same
      // message ids (e2e/service-worker.spec.ts: a page offline under its service worker left with a request in
      // flight, which the next page took as handed and deleted: lost).
      const keptAlive = hold ? [] : ledger._marked(K);
      ledger._move(keptAlive, KEPT);
      ledger._noteAll();
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
      const waiting = d._queue._handable().filter((r) => !(ledger._state(r.id) & (final ? K : S | K)));
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
        ledger._move(ids, HANDED);
        // Still alive (only hidden), discarded for good, or no note could be written: remove them from IndexedDB now.
        if (!ledger._note(ids) || how != 'cached') {
          remove(ids, true);
          ledger._move(ids, UNHAND);
        }
        ledger._delivered(messages);
      }
    },

    /**
     * This page removes the records of these ids for good (delivered, or refused): see `remove`. `removal` is the
     * queue's delete of them, started here unless given.
     */
    _removed: (ids: string[], removal?: Promise<unknown>) => remove(ids, false, removal),

    /**
     * What the library stored was erased (consent withdrawn or denied, opt-out): an exit notes nothing more of what
     * this page sent before (its requests in flight count as without keepalive: ledger.ts `_erased`), so storage stays
     * empty. Their records are gone already, so there is nothing for a next load to send again.
     */
    _erased() {
      ledger._erased();
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
      const notedIds = ids.filter((id) => ledger._state(id) & N);
      if (gone || !notedIds.length) return !!notedIds.length;
      // Noted at an exit that only hid the page, which lives on: the failure is real, and this page sends them
      // again, so the note is taken back (else a page killed while hidden would have the next load delete them), and
      // they are written again: another page may have deleted what the note named meanwhile (sim seed 10322: this one
      // frozen, then gone offline, kept them in memory only), as in `answered`.
      ledger._move(notedIds, UNHAND);
      ledger._unnote(notedIds);
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
      const notedIds = ids.filter((id) => ledger._state(id) & N);
      ledger._move(notedIds, UNHAND);
      if (notedIds.length) delivered ? remove(notedIds, true) : (ledger._unnote(notedIds), d._queue._keep(notedIds));
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
