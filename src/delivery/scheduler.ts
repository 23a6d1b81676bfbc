import type { QueueRecord } from './queue';
import { LEASE_MS, type Tabs } from './tabs';
import type { AnalyticsError } from '../message/types';
import type { ExitKind } from './lifecycle';
import type { Handoff, HandoffDeps } from './handoff';
import { planBatches, body } from './batch';
import { createDeferral } from './deferral';
import { classify, createAnswers, nextDelay } from './retry';
import { byteLength } from '../message/validate';
import { analyticsError } from '../message/errors';
import type { Platform } from './platform';

/**
 * What the scheduler needs from the rest of the library: what the hand-off needs (it sends too), and the hand-off.
 * The scheduler makes the deferral (deferral.ts) from them.
 */
export interface SchedulerDeps extends HandoffDeps {
  _handoff: Handoff;
  _tabs: Tabs;
  flushAt: number;
  flushInterval: number;
  report(error: AnalyticsError): void;
  emit(name: 'delivered' | 'retry', ...args: unknown[]): void;
  /**
   * False while nothing may be sent (an opt-out, a withdrawal: start.ts): asked before each request and page exit, since
   * a page frozen as another tab opted out may run its overdue timers before it hears of it (sim seed 7308).
   */
  open(): boolean;
  /** A send failed for lack of a network (src/offline: a service worker of the site may deliver later). */
  _offline?(): void;
}

// One timer that fires at the earliest time it was armed for (never later than asked).
function alarm(fire: () => void, p: Platform) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let due = Infinity;
  return (ms: number) => {
    ms = Math.max(0, ms);
    const at = p._now() + ms;
    if (timer && due <= at) return;
    p._clearTimeout(timer);
    due = at;
    timer = p._setTimeout(() => {
      timer = undefined;
      due = Infinity;
      fire();
    }, ms);
  };
}

/**
 * Decides when to send and owns the retry state: a message stored when nothing is in flight and nothing was sent for
 * `flushInterval` ms goes at once; otherwise a flush starts when `flushAt` messages wait or `flushInterval` ms after
 * the oldest was queued; it sends everything waiting in as few requests as the 500 KB limit allows, one
 * request at a time in each tab. Failures back off (honouring Retry-After) with the messages kept in order;
 * a 400, 413 or 422 splits the batch until the one bad message is found and dropped (see `send`). At page exit it
 * calls the hand-off (handoff.ts) with what it has in flight. What waits is covered by a deferred request (deferral.ts) meanwhile.
 */
export function createScheduler(d: SchedulerDeps) {
  // When this page last sent a request (a message stored after a quiet spell goes out at once), and until when it backs
  // off; what tells a bad message from a failing endpoint (see `send`).
  let sent = -Infinity;
  let retryUntil = 0;
  const answers = createAnswers();
  let chain: Promise<void> = Promise.resolve();
  // Passes queued or running: a message stored meanwhile joins them rather than starting a request of its own.
  let passes = 0;
  // message id → whether its request was sent with keepalive (it survives page exit,
  // https://fetch.spec.whatwg.org/#concept-fetch-group-terminate, so the exit beacon skips it)
  const inflight = new Map<string, boolean>();
  // Erasures so far (see `_erased`): a request sent before one deals with no records and notes nothing as it ends.
  let erasures = 0;
  const { _handoff: handoff, _platform: p } = d;
  const deferral = createDeferral(d);

  const offline = () => !p._onLine();
  const waiting = () => d._queue._list().filter((r) => !inflight.has(r.id));
  const arm = alarm(() => flush(false), p);
  // Runs after every call, so it stays O(1): the oldest record decides the interval.
  const plan = () => {
    // (after this task: once for a burst of calls, and after the requests of a pass)
    deferral._cover(inflight, true);
    const list = d._queue._list();
    const count = list.length - inflight.size;
    if (count <= 0 || !d.open()) return;
    const now = p._now();
    if (now < retryUntil) arm(retryUntil - now);
    // Nothing in flight and nothing sent for an interval: the first message of a quiet spell goes at once (what
    // arrives meanwhile waits for its answer, or for the interval, and goes in one batch).
    else if (count >= d.flushAt || (!inflight.size && !passes && now - sent >= d.flushInterval)) arm(0);
    else {
      // In-flight records are the oldest; the interval runs from the oldest one still waiting.
      let i = 0;
      while (i < list.length - 1 && inflight.has(list[i].id)) i++;
      arm(list[i].queuedAt + d.flushInterval - now);
    }
  };

  const send = async (planned: QueueRecord[]): Promise<boolean> => {
    if (!d.open()) return true;
    // Without Web Locks another tab adopts a record a lease after it was queued or last claimed, even from a tab that
    // lives (in a long outage, offline), and two tabs may adopt one at once: what another tab took is let go first, and
    // the rest claimed anew, before each request of records queued over half a lease ago (a pass of many, a 413 split,
    // outlasts a lease, and a request may take TIMEOUT_MS: sim seed 13657, another tab adopted and sent one in flight).
    if (d._tabs._leased() && planned.some((r) => p._now() - r.queuedAt > LEASE_MS / 2)) await d._queue._reconcile();
    // A page exit (only hidden) may have handed some of them to the browser since this pass planned its batches.
    const queued = new Set(d._queue._list());
    const batch = planned.filter((r) => queued.has(r));
    if (!batch.length) return true;
    const messages = batch.map((r) => r.message);
    const payload = body(messages, new Date(p._now()));
    const bytes = byteLength(payload);
    const ids = batch.map((r) => r.id);
    // The deferred request that carries them holds the page's keepalive budget: taken back first, else the browser may
    // refuse this request, and a page exit before the refusal is heard notes it as handed (sim seed 10764, issue 27).
    deferral._take();
    const keepalive = d._transport._fits(bytes);
    ids.forEach((id) => inflight.set(id, keepalive));
    // A keepalive request outlives the page: the deferred request no longer carries its messages.
    deferral._cover(inflight, true);
    sent = p._now();
    const era = erasures;
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
      // (not once erased meanwhile: nothing erased may leave; sim seed 137, issue 27)
      if (!tookOver && era == erasures) {
        ids.forEach((id) => inflight.set(id, false));
        // (sent without keepalive, it dies with the page: the deferred request covers it again)
        deferral._cover(inflight, true);
        answer = await post(false);
      }
    }
    ids.forEach((id) => inflight.delete(id));
    const verdict = classify(answer._status);
    // Erased meanwhile (consent withdrawn, opt-out): their records are gone, and nothing of them may be stored again
    // (not even in the exit note, which an unfinished delete would leave behind), nor sent again.
    if (era != erasures) {
      if (verdict == 'ok') d.emit('delivered', messages);
      return true;
    }
    // An HTTP answer means this page saw the outcome after all: it deals with noted records itself (removal
    // below, or a retry). A network error keeps the note: the browser may still deliver the request.
    // (a redirect is an answer too: sim seed 232, issue 27)
    if (answer._status || answer._redirected) handoff._answered(ids, verdict == 'ok');
    const now = p._now();
    const answered = answers._next();
    // Only a failed delivery counts as an attempt (never a split that isolates a bad message); the queue stores it, so
    // backoff goes on where it was in the page or tab that sends these records next. That of a request a page exit
    // took over is counted but not stored: the note names its records (the next load deletes them), and the page may
    // be going into the back/forward cache, where IndexedDB work gets it evicted (see handoff.ts).
    const retry = () => {
      const delay = nextDelay(d._queue._failed(ids, !tookOver), answer._retryAfter, now, p._random);
      retryUntil = now + delay;
      d.emit('retry', { status: answer._status, delay, messageIds: ids });
      // (said once a page: the site must point apiHost at the address that answers)
      if (answer._redirected && answers._firstRedirect())
        d.report(analyticsError('delivery_redirected', 'the API answered a redirect, which is not followed: messages stay queued; point apiHost at the address that answers', ids));
    };
    if (verdict == 'ok') {
      retryUntil = 0;
      answers._ok(ids, answered);
      // (the page may go away before the delete commits: the hand-off notes them then)
      await handoff._removed(ids);
      // Not before the call that queued them resolved (its record stored, its own event emitted): the API can answer
      // before a write that waits behind another (store.ts `writeBehind`), and a page that shows its calls would hear
      // of the delivery before the call (issue 27, e2e/demo.spec.ts; test/delivery/delivered-order.test.ts).
      await d._queue._flushed();
      d.emit('delivered', messages);
      return true;
    }
    if (verdict == 'retry') return (!answer._status && offline() && d._offline?.()), retry(), false;
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

  const pass = async (force: boolean) => {
    if (offline()) return void d._offline?.(); // `online` resumes
    if (!force && p._now() < retryUntil) return plan();
    // Each tab sends its own records, so no lock between tabs is needed (asking for one delays the first event: a
    // page's first IndexedDB open holds up Web Locks grants in Chromium, e2e/delivery.spec.ts "the first message of
    // a quiet spell"). Once the page left (it may be restored), the rest waits: another tab may adopt and send them.
    const alive = d._tabs._alive();
    for (const batch of planBatches(waiting())) if (!alive() || !(await send(batch))) break;
    plan();
  };

  /** Sends everything waiting now (even during a backoff); settles once it was handed to the network. */
  function flush(force = true): Promise<void> {
    passes++;
    // (a pass never rejects; the chain must not break if one did)
    return (chain = chain
      .then(() => pass(force))
      .catch(() => {})
      .then(() => void passes--));
  }

  return {
    _flush: flush,
    /** Called after each queued message. */
    _notify: plan,
    /**
     * The page is hidden, or going away: the hand-off (handoff.ts) gives the browser what waits, and what is in flight
     * as far as it must; offline or in a backoff, everything stays queued.
     */
    _exit(how: ExitKind) {
      // The deferred request is taken back first (synchronously: the browser sends what is still deferred as the page
      // goes away), so what the hand-off sends leaves once; what stays queued in a page that lives on is covered again.
      // (Offline or in a backoff the hand-off sends nothing, and what waits stays stored for the next load: a deferred
      // request left with the browser would deliver it too, and that load would send it again.)
      deferral._take(how != 'hidden');
      d.open() && handoff._exit(how, inflight, offline() || p._now() < retryUntil);
      deferral._cover(inflight);
    },
    /**
     * Sends nothing more until `p` settles (a page restored from the back/forward cache: until it knows which of its
     * records another tab adopted and sent meanwhile, see `queue._reconcile`).
     */
    _after(p: Promise<unknown>) {
      chain = chain.then(() => p).then(
        () => {},
        () => {},
      );
    },
    /** The page is shown again (or restored from the back/forward cache): it may send, and defer, again. */
    _shown() {
      handoff._shown();
      deferral._shown();
    },
    /** What was stored was erased (see `handoff._erased`): the requests in flight are noted at no exit. */
    _erased() {
      erasures++;
      inflight.forEach((_, id) => inflight.set(id, false));
      handoff._erased();
      // (nothing erased may leave: the queue is empty now)
      deferral._take();
    },
  };
}

/** The scheduler's interface. */
export type Scheduler = ReturnType<typeof createScheduler>;
