import type { AnswerDeps } from './answer';
import type { Deferral } from './deferral';
import type { QueueRecord } from './records';
import { createAnswer } from './answer';
import { body } from './batch';
import { staleClaims, stillQueued } from './flush-plan';
import type { Tabs } from './tabs';
import { byteLength } from '../message/validate';
import { END, KEEP, SEND, UNKEEP } from './ledger';

/** What sending needs: what acting on the answers needs (answer.ts), and the deferral. */
export interface RequestDeps extends AnswerDeps {
  _deferral: Deferral;
  _tabs: Tabs;
  /** False while nothing may be sent (scheduler.ts `SchedulerDeps.open`). */
  open(): boolean;
}

/**
 * The requests of a page, one at a time (the scheduler's passes run in turn): what is in flight, how it goes (with
 * keepalive when it fits the page's budget; again without it when the browser refused it), and when the last one
 * went; their answers go to answer.ts.
 */
export function createRequests(d: RequestDeps) {
  // When this page last sent a request (the scheduler sends a message stored after a quiet spell at once).
  let sent = -Infinity;
  // Erasures so far (see `_erased`): a request sent before one deals with no records and notes nothing as it ends.
  let erasures = 0;
  // Times the page was shown again so far (see `_shown`).
  let shows = 0;
  const { _handoff: handoff, _deferral: deferral, _platform: p } = d;
  // What is in flight (ledger states S and K: a request with keepalive survives page exit,
  // https://fetch.spec.whatwg.org/#concept-fetch-group-terminate, so the exit beacon skips it).
  const ledger = handoff._ledger;
  const settle = createAnswer(d, send);

  /** Sends the records of a planned batch still queued: false once a delivery failed and backs off. */
  async function send(planned: QueueRecord[]): Promise<boolean> {
    // (nothing may be sent: an opt-out or a withdrawal this page has not heard of yet, sim seed 7308)
    if (!d.open()) return true;
    // (without Web Locks, what another tab took is let go first: see `staleClaims`)
    if (staleClaims(planned, p._now(), d._tabs._leased())) await d._queue._reconcile();
    // The deferred request holds the page's keepalive budget: taken back first, else the browser may refuse this
    // request, and a page exit before the refusal is heard notes it as handed (sim seed 10764, issue 27). Before the
    // batch is read: if the browser sent it meanwhile (its deadline came), its records leave the queue as it is taken
    // back, and this request must not carry them again (sim seeds 21500, 21964).
    deferral._take();
    const batch = stillQueued(planned, d._queue._list());
    // (nothing left to send: what waits is covered again)
    if (!batch.length) return deferral._cover(true), true;
    const messages = batch.map((r) => r.message);
    const payload = body(messages, new Date(p._now()));
    const bytes = byteLength(payload);
    const ids = batch.map((r) => r.id);
    const keepalive = d._transport._fits(bytes);
    ledger._move(ids, keepalive ? KEEP : SEND);
    // A keepalive request outlives the page: the deferred request no longer carries its messages.
    deferral._cover(true);
    sent = p._now();
    const era = erasures;
    const seen = shows;
    const post = (keepalive: boolean) => d._transport._post(d.url, d.writeKey, payload, bytes, keepalive);
    let answer = await post(keepalive);
    // Whether a page exit took over this keepalive request, which failed without an answer (see `handoff._tookOver`).
    let tookOver = false;
    // (a redirect is the API's answer, not the browser refusing a keepalive request: nothing to send again)
    if (!answer._status && keepalive && !answer._redirected) {
      tookOver = await handoff._tookOver(ids);
      // Otherwise the browser may have refused the request itself (its keepalive budget, shared with beacons,
      // https://fetch.spec.whatwg.org/#http-network-or-cache-fetch "inflight keepalive bytes"): that is not the
      // server failing, so it goes again at once, without keepalive.
      // (not once erased meanwhile: nothing erased may leave; sim seed 137, issue 27. Nor once the page was shown again
      // meanwhile: restored from the back/forward cache, or thawed, it may not have heard yet of an erasure another
      // page made while it ran no script (its storage event comes in a task of its own), and a pass sends only after
      // the restore's reconcile; the failure is counted and retried as any other: h47's sim seed 11960)
      if (!tookOver && era == erasures && seen == shows) {
        ledger._move(ids, UNKEEP);
        // (sent without keepalive, it dies with the page: the deferred request covers it again)
        deferral._cover(true);
        answer = await post(false);
      }
    }
    // (before `send` settles, on every path: a pass plans only with nothing in flight, flush-plan.ts)
    ledger._move(ids, END);
    return settle(batch, answer, tookOver, era != erasures);
  }

  return {
    _send: send,
    /** When this page last sent a request (ms, the platform's clock). */
    _sent: () => sent,
    /** What was stored was erased: a request in flight deals with no records as it ends, and none is sent again. */
    _erased() {
      erasures++;
    },
    /** The page is shown again: a keepalive request it sent before and that fails is not sent again at once. */
    _shown() {
      shows++;
    },
  };
}
