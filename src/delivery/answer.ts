import type { Handoff, HandoffDeps } from './handoff';
import type { QueueRecord } from './records';
import type { Answer } from './transport';
import type { AnalyticsError } from '../message/errors';
import { classify, createAnswers } from './retry';
import { analyticsError } from '../message/errors';

/**
 * What acting on an answer needs: the hand-off (every removal for good goes through it), the queue, the page's
 * events, and the scheduler's retry state.
 */
export interface AnswerDeps extends HandoffDeps {
  _handoff: Handoff;
  report(error: AnalyticsError): void;
  /** A send failed for lack of a network (src/offline: a service worker of the site may deliver later). */
  _offline?(): void;
  /** A 2xx: the backoff is over (scheduler.ts). */
  _resume(): void;
  /** A failed delivery of `ids`: back off (scheduler.ts); `store`: the attempt is stored with the records. */
  _backoff(ids: string[], answer: Answer, store: boolean): void;
}

/**
 * Acts on the answer to one request of `batch`: a 2xx removes its records and tells the page (`'delivered'`); a
 * 400, 413 or 422 splits it until the one bad message is found and dropped; anything else (408, 429, 5xx, a network
 * error, a redirect, reported once a page as `delivery_redirected`) backs off with the messages kept in order.
 * `tookOver`: a page exit took the request over (see `handoff._tookOver`); `erased`: what was stored was erased
 * since it was sent. Resolves whether the pass goes on (false once it backs off). `send` sends the halves of a refused
 * batch (request.ts), resolving false once a delivery failed.
 */
export function createAnswer(d: AnswerDeps, send: (batch: QueueRecord[]) => Promise<boolean>) {
  // What tells a bad message from a failing endpoint, and whether a redirect was reported.
  const answers = createAnswers();
  const handoff = d._handoff;

  return async function settle(batch: QueueRecord[], answer: Answer, tookOver: boolean, erased: boolean): Promise<boolean> {
    const ids = batch.map((r) => r.id);
    const messages = batch.map((r) => r.message);
    const verdict = classify(answer._status);
    // Erased meanwhile (consent withdrawn, opt-out): their records are gone, and nothing of them may be stored again
    // (not even in the exit note, which an unfinished delete would leave behind), nor sent again.
    if (erased) {
      if (verdict == 'ok') handoff._ledger._delivered(messages);
      return true;
    }
    // An HTTP answer means this page saw the outcome after all: it deals with noted records itself (removal
    // below, or a retry). A network error keeps the note: the browser may still deliver the request.
    // (a redirect is an answer too: sim seed 232, issue 27)
    if (answer._status || answer._redirected) handoff._answered(ids, verdict == 'ok');
    const answered = answers._next();
    // Only a failed delivery counts as an attempt (never a split that isolates a bad message); the queue stores it, so
    // backoff goes on where it was in the page or tab that sends these records next. That of a request a page exit
    // took over is counted but not stored: the note names its records (the next load deletes them), and the page may
    // be going into the back/forward cache, where IndexedDB work gets it evicted (see handoff.ts).
    const retry = () => {
      d._backoff(ids, answer, !tookOver);
      // (said once a page: the site must point apiHost at the address that answers)
      if (answer._redirected && answers._firstRedirect())
        d.report(analyticsError('delivery_redirected', 'the API answered a redirect, which is not followed: messages stay queued; point apiHost at the address that answers', ids));
    };
    if (verdict == 'ok') {
      d._resume();
      answers._ok(ids, answered);
      // (the page may go away before the delete commits: the hand-off notes them then)
      await handoff._removed(ids);
      // Not before the call that queued them resolved (its record stored, its own event emitted): the API can answer
      // before a write that waits behind another (store.ts `writeBehind`), and a page that shows its calls would hear
      // of the delivery before the call (issue 27, e2e/demo.spec.ts; test/delivery/delivered-order.test.ts).
      await d._queue._flushed();
      handoff._ledger._delivered(messages);
      return true;
    }
    if (verdict == 'retry') return (!answer._status && !d._platform._onLine() && d._offline?.()), retry(), false;
    // A 400, 413 or 422 blames a message: halves go out at once until the bad one is alone; good ones are delivered
    // meanwhile.
    answers._refused(ids, answered);
    if (batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      return (await send(batch.slice(0, half))) && send(batch.slice(half));
    }
    // Alone, it is the bad one only if the API accepted a request sent since it was first refused (another half of
    // its batch, or a later message): until then the endpoint may be what fails (a proxy, a gateway), and it is kept
    // and retried (a message leaves the queue only after a 2xx); the rest of the pass goes on.
    if (!answers._bad(ids[0])) return retry(), true;
    await handoff._removed(ids);
    d.report(analyticsError('delivery_rejected', `status ${answer._status}: the API refused message ${ids[0]}; dropped`, ids));
    return true;
  };
}

