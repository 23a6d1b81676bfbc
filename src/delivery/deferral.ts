import type { Handoff, HandoffDeps } from './handoff';
import type { QueueRecord } from './queue';
import type { Deferred } from './transport';
import { planBatches, body, BODY_OVERHEAD } from './batch';
import { KEEPALIVE_LIMIT } from './transport';
import { K, D, COVER, UNCOVER } from './ledger';

/** What the deferral needs: what the hand-off needs, and the hand-off (which removes what the browser sent). */
export interface DeferralDeps extends HandoffDeps {
  _handoff: Handoff;
  /** False while nothing may be sent (see `SchedulerDeps.open`): nothing is deferred. */
  open(): boolean;
}

/**
 * The records one deferred request covers: the oldest of those waiting, up to a body of KEEPALIVE_LIMIT bytes with
 * `overhead` (the browser takes at most 64 KiB of deferred requests to one origin, URL and headers included). A
 * request in flight with keepalive (`keptAlive`: ledger state K) outlives the page, so its records are left out; pure.
 */
export const covered = (list: readonly QueueRecord[], keptAlive: (id: string) => unknown, overhead: number) =>
  planBatches(
    list.filter((r) => !keptAlive(r.id)),
    KEEPALIVE_LIMIT,
    overhead,
  )[0] || [];

/**
 * Deferred delivery (CONTRACT section 4): what waits in the queue is also handed to the browser as one deferred
 * request (`Transport._defer`), which the browser sends if the page dies without a page event (a renderer crash, a
 * tab killed in the background). It is replaced as messages are stored or sent, and taken back at every page exit
 * before the hand-off (handoff.ts) sends, so a normal visit sends nothing twice. Where `fetchLater` is missing it
 * does nothing: what waits leaves with the next page load, as before.
 */
export function createDeferral(d: DeferralDeps) {
  const p = d._platform;
  // The deferred request with the browser (the records it carries: ledger state D).
  let pending: Deferred | undefined;
  // The page went away (`pagehide`): what this page defers now would leave with it and with the next load too.
  let gone = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  // Takes the request back; if the browser sent it already, its records leave the queue, and the page hears of it, as
  // of an accepted beacon's.
  const take = () => {
    p._clearTimeout(timer);
    timer = undefined;
    const taken = pending;
    pending = undefined;
    const ids = ledger._marked(D);
    ledger._move(ids, UNCOVER);
    try {
      if (taken && !taken._sent()) taken._abort();
      else if (taken) {
        // (those this page still holds: one delivered meanwhile by a request of its own was said then)
        const messages = d._queue._list().filter((r) => ids.includes(r.id)).map((r) => r.message);
        d._handoff._removed(ids);
        ledger._delivered(messages);
      }
    } catch {
      // (never into the page, nor in the way of the exit hand-off that follows)
    }
  };

  const ledger = d._handoff._ledger;
  const cover = () => {
    take();
    if (gone || !d._transport._defer || !d.open()) return;
    // Over the quota (QuotaExceededError: other requests of the page to that origin, a `deferred-fetch` permissions
    // policy that allows none, a long URL or referrer), or refused for another reason: cover fewer, the oldest first;
    // the rest leaves with this page's own requests, or the next load.
    let group = covered(d._queue._handable(), (id) => ledger._state(id) & K, BODY_OVERHEAD + d.writeKey.length);
    for (; group.length; group = group.slice(0, group.length >> 1)) {
      try {
        // (`sentAt`: now, when it is handed over; the browser may send it later, after a crash)
        const deferred = d._transport._defer(d.url, body(group.map((r) => r.message), new Date(p._now()), d.writeKey));
        pending = deferred;
        ledger._move(
          group.map((r) => r.id),
          COVER,
        );
        return;
      } catch {
        // (never into the page)
      }
    }
  };

  return {
    /**
     * Covers what waits now (`soon`: after this task, once for a burst of calls), but none of the requests in flight
     * with keepalive; replaces the deferred request there was.
     */
    _cover(soon?: boolean) {
      // (nothing to defer with, Firefox and WebKit: no timer on every call)
      if (!d._transport._defer) return;
      if (!soon) return cover();
      timer ||= p._setTimeout(() => {
        timer = undefined;
        cover();
      });
    },

    /**
     * Takes the deferred request back (at a page exit, before the hand-off; at an erasure). `final` (`pagehide`):
     * nothing more is deferred until the page is shown again.
     */
    _take(final?: boolean) {
      take();
      if (final) gone = true;
    },

    /** The page is shown again (or restored from the back/forward cache): it may defer again. */
    _shown() {
      gone = false;
    },
  };
}

/** The deferral's interface. */
export type Deferral = ReturnType<typeof createDeferral>;
