import type { Tabs } from './tabs';
import type { AnalyticsError } from '../message/errors';
import type { ExitKind } from './lifecycle';
import type { Handoff, HandoffDeps } from './handoff';
import { planFlush } from './flush-plan';
import { createRequests } from './request';
import { createDeferral } from './deferral';
import { nextDelay } from './retry';
import { S, K } from './ledger';
import type { Platform } from './platform';
import type { Answer } from './transport';

/**
 * What the scheduler needs from the rest of the library: what the hand-off needs (it sends too), and the hand-off.
 * The scheduler makes the deferral (deferral.ts) and the requests (request.ts) from them.
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

const noop = () => {};

// One timer that fires at the earliest time it was armed for (never later than asked): a flush that keeps the backoff.
// (`flush` itself, not a function that calls it: one step less from a call to its request, issue 28)
function alarm(p: Platform, flush: (force: boolean) => void) {
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
      flush(false);
    }, ms);
  };
}

/**
 * Decides when to send and owns the retry state: a message stored when nothing is in flight and nothing was sent for
 * `flushInterval` ms goes at once; otherwise a flush starts when `flushAt` messages wait or `flushInterval` ms after
 * the oldest was queued; it sends everything waiting in as few requests as the 500 KB limit allows, one
 * request at a time in each tab. Failures back off (honouring Retry-After) with the messages kept in order;
 * a 400, 413 or 422 splits the batch until the one bad message is found and dropped (answer.ts). At page exit it
 * calls the hand-off (handoff.ts) with what it has in flight. What waits is covered by a deferred request (deferral.ts) meanwhile.
 */
export function createScheduler(d: SchedulerDeps) {
  let retryUntil = 0; // until when this page backs off
  let chain: Promise<void> = Promise.resolve();
  // Passes queued or running: a message stored meanwhile joins them rather than starting a request of its own.
  let passes = 0;
  const { _handoff: handoff, _platform: p } = d;
  const deferral = createDeferral(d);
  // A failed delivery: the next attempt waits (Retry-After, else backoff from the attempts the records carry).
  const backoff = (ids: string[], answer: Answer, store: boolean) => {
    const now = p._now();
    const delay = nextDelay(d._queue._failed(ids, store), answer._retryAfter, now, p._random);
    retryUntil = now + delay;
    d.emit('retry', { status: answer._status, delay, messageIds: ids });
  };
  const requests = createRequests({ ...d, _deferral: deferral, _resume: () => void (retryUntil = 0), _backoff: backoff });
  // What is in flight: the ledger's states S and K.
  const ledger = handoff._ledger;
  const offline = () => !p._onLine();
  const arm = alarm(p, flush);
  // Runs after every call, so it stays O(1): the oldest record decides the interval. Then what waits is covered
  // (after this task: once for a burst of calls, and after the requests of a pass), by a timer armed after the send's:
  // a send due at once leaves first, and takes that cover back before it is made (issue 28: at 4x CPU, a deferred
  // request made and taken back held the first event back by 15 ms).
  // (one function, not two: the send's timer is on the call path from track() to fetch, e2e/call-path.spec.ts)
  const plan = () => {
    const list = d._queue._list();
    const inflight = ledger._flying();
    const count = list.length - inflight;
    if (count <= 0 || !d.open()) return deferral._cover(true);
    const now = p._now();
    if (now < retryUntil) arm(retryUntil - now);
    // Nothing in flight and nothing sent for an interval: the first message of a quiet spell goes at once (what
    // arrives meanwhile waits for its answer, or for the interval, and goes in one batch).
    else if (count >= d.flushAt || (!inflight && !passes && now - requests._sent() >= d.flushInterval)) arm(0);
    else {
      // In-flight records are the oldest; the interval runs from the oldest one still waiting.
      let i = 0;
      while (i < list.length - 1 && ledger._state(list[i].id) & (S | K)) i++;
      arm(list[i].queuedAt + d.flushInterval - now);
    }
    deferral._cover(true);
  };

  const pass = async (force: boolean) => {
    if (offline()) return void d._offline?.(); // `online` resumes
    if (!force && p._now() < retryUntil) return plan();
    // Each tab sends its own records, so no lock between tabs is needed (asking for one delays the first event: a
    // page's first IndexedDB open holds up Web Locks grants in Chromium, e2e/delivery.spec.ts "the first message of
    // a quiet spell"). Once the page left (it may be restored), the rest waits: another tab may adopt and send them.
    const alive = d._tabs._alive();
    for (const batch of planFlush(d._queue._list())) if (!alive() || !(await requests._send(batch))) break;
    plan();
  };

  /** Sends everything waiting now (even during a backoff); settles once it was handed to the network. */
  function flush(force = true): Promise<void> {
    passes++;
    // (a pass never rejects; the chain must not break if one did)
    return (chain = chain.then(() => pass(force)).catch(noop).then(() => void passes--));
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
      // (Offline or in a backoff it sends nothing, and what waits stays stored for the next load: a deferred request
      // left with the browser would deliver it too, and that load would send it again.)
      deferral._take(how != 'hidden');
      d.open() && handoff._exit(how, offline() || p._now() < retryUntil);
      deferral._cover();
    },
    /**
     * Sends nothing more until `p` settles (a page restored from the back/forward cache: until it knows which of its
     * records another tab adopted and sent meanwhile, see `queue._reconcile`).
     */
    _after(p: Promise<unknown>) {
      chain = chain.then(() => p).then(noop, noop);
    },
    /** The page is shown again (or restored from the back/forward cache): it may send, and defer, again. */
    _shown: () => (handoff._shown(), deferral._shown(), requests._shown()),
    /** Another page erased these records (start.ts): they leave the queue unsent, and the deferred request. */
    _drop(ids: string[]) {
      if (ids.length) handoff._removed(ids), deferral._cover();
    },
    /** What was stored was erased (see `handoff._erased`): the requests in flight are noted at no exit. */
    _erased() {
      requests._erased();
      handoff._erased();
      // (nothing erased may leave: the queue is empty now)
      deferral._take();
    },
  };
}

/** The scheduler's interface. */
export type Scheduler = ReturnType<typeof createScheduler>;
