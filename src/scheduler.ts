import type { Queue, QueueRecord } from './queue';
import type { Tabs } from './locks';
import type { AnalyticsError, Message } from './types';
import { planBatches, body, BODY_OVERHEAD } from './batch';
import { classify, nextDelay } from './retry';
import { KEEPALIVE_LIMIT, type Transport } from './transport';
import { byteLength } from './validate';
import { analyticsError } from './errors';
import type { ExitKind } from './lifecycle';

/** What the scheduler needs from the rest of the library. */
export interface SchedulerDeps {
  queue: Queue;
  tabs: Tabs;
  transport: Transport;
  /** `{apiHost}/v1/batch` */
  url: string;
  writeKey: string;
  flushAt: number;
  flushInterval: number;
  report(error: AnalyticsError): void;
  emit(name: 'delivered' | 'retry', ...args: unknown[]): void;
  log(...args: unknown[]): void;
}

/**
 * Decides when to send and owns the retry state: a message stored when nothing is in flight and nothing was sent for
 * `flushInterval` ms goes at once; otherwise a flush starts when `flushAt` messages wait or `flushInterval` ms after
 * the oldest was queued; it sends everything waiting in as few requests as the 500 KB limit allows, one
 * request at a time across all tabs. Failures back off (honouring Retry-After) with the messages kept in order;
 * a 4xx splits the batch until the one bad message is found and dropped.
 */
export function createScheduler(d: SchedulerDeps) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let due = Infinity;
  let retryUntil = 0;
  // When this page last sent a request: a message stored after a quiet spell goes out at once.
  let lastSent = -Infinity;
  let chain: Promise<void> = Promise.resolve();
  // `pagehide` ran: this page sends nothing more until it is shown again (see `exit`).
  let gone = false;
  // message id → whether its request was sent with keepalive (it survives page exit, so the exit beacon skips it)
  const inflight = new Map<string, boolean>();
  // ids noted as handed to the browser at a page exit (see `exit`): in-flight keepalive requests (un-noted when
  // their answer arrives) and accepted beacons
  const marked = new Set<string>();

  const offline = () => !navigator.onLine;
  const waiting = () => d.queue.list().filter((r) => !inflight.has(r.id));
  const arm = (ms: number) => {
    ms = Math.max(0, ms);
    const at = Date.now() + ms;
    if (timer && due <= at) return;
    clearTimeout(timer);
    due = at;
    timer = setTimeout(() => {
      timer = undefined;
      due = Infinity;
      flush(false);
    }, ms);
  };
  // Runs after every call, so it stays O(1): the oldest record decides the interval.
  const plan = () => {
    const list = d.queue.list();
    const count = list.length - inflight.size;
    if (count <= 0) return;
    const now = Date.now();
    if (now < retryUntil) arm(retryUntil - now);
    // Nothing in flight and nothing sent for an interval: the first message of a quiet spell goes at once (what
    // arrives meanwhile waits for its answer, or for the interval, and goes in one batch).
    else if (count >= d.flushAt || (!inflight.size && now - lastSent >= d.flushInterval)) arm(0);
    else {
      // In-flight records are the oldest; the interval runs from the oldest one still waiting.
      let i = 0;
      while (i < list.length - 1 && inflight.has(list[i].id)) i++;
      arm(list[i].queuedAt + d.flushInterval - now);
    }
  };

  const send = async (planned: QueueRecord[]): Promise<boolean> => {
    // A page exit (only hidden) may have handed some of them to the browser since this pass planned its batches.
    const queued = new Set(d.queue.list());
    const batch = planned.filter((r) => queued.has(r));
    if (!batch.length) return true;
    const messages = batch.map((r) => r.message);
    const text = body(messages, new Date());
    const bytes = byteLength(text);
    const ids = batch.map((r) => r.id);
    const keepalive = d.transport.fits(bytes);
    ids.forEach((id) => inflight.set(id, keepalive));
    lastSent = Date.now();
    d.log('sending', messages.length, 'messages,', bytes, 'bytes');
    let answer = await d.transport.post(d.url, d.writeKey, text, bytes, keepalive);
    if (!answer.status && keepalive) {
      // Chromium rejects a keepalive fetch as the page unloads, just before `pagehide`, yet still delivers it.
      // Waiting a task lets that `pagehide` note the request as handed to the browser (see `exit`) first.
      await new Promise((r) => setTimeout(r));
      // Otherwise the browser may have refused the request itself (its keepalive budget, shared with beacons):
      // that is not the server failing, so it goes again at once, without keepalive.
      if (!ids.some((id) => marked.has(id))) {
        ids.forEach((id) => inflight.set(id, false));
        answer = await d.transport.post(d.url, d.writeKey, text, bytes, false);
      }
    }
    ids.forEach((id) => inflight.delete(id));
    const verdict = classify(answer.status);
    // An HTTP answer means this page saw the outcome after all: it deals with noted records itself (removal
    // below, or a retry). A network error keeps the note: the browser may still deliver the request.
    const noted = answer.status ? ids.filter((id) => marked.delete(id)) : [];
    if (noted.length) (verdict == 'ok' ? d.queue.remove(noted) : Promise.resolve()).then(() => d.queue.unmarkSent(noted));
    if (verdict == 'ok') {
      retryUntil = 0;
      await d.queue.remove(ids);
      d.emit('delivered', messages);
      return true;
    }
    if (verdict == 'retry') {
      // Only a failed delivery counts as an attempt (never a split that isolates a bad message); the queue stores
      // it, so backoff goes on where it was in the page or tab that sends these records next.
      const delay = nextDelay(d.queue.failed(ids), answer.retryAfter, Date.now());
      retryUntil = Date.now() + delay;
      d.log('status', answer.status, '- retrying in', Math.round(delay), 'ms');
      d.emit('retry', { status: answer.status, delay, messageIds: ids });
      return false;
    }
    // A 4xx blames a message: halves go out at once until the bad one is alone; good ones are delivered meanwhile.
    if (batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      return (await send(batch.slice(0, half))) && send(batch.slice(half));
    }
    await d.queue.remove(ids);
    d.report(analyticsError('delivery_rejected', `status ${answer.status}: the API refused message ${ids[0]}; dropped`, ids));
    return true;
  };

  const pass = async (force: boolean) => {
    if (offline()) return; // `online` resumes
    if (!force && Date.now() < retryUntil) return plan();
    await d.queue.flushed();
    await d.tabs.exclusive(async () => {
      for (const batch of planBatches(waiting())) if (!(await send(batch))) break;
    });
    plan();
  };

  /** Sends everything waiting now (even during a backoff); settles once it was handed to the network. */
  function flush(force = true): Promise<void> {
    return (chain = chain.then(() => pass(force)).catch((e) => d.log('flush failed', e)));
  }

  return {
    flush,
    /** Called after each queued message. */
    notify: plan,
    /**
     * The page is hidden, or going away (`pagehide`): hand every waiting message to the browser (sendBeacon, at most
     * 64 KB a request). Correct wherever it is cut off: when a page unloads, `visibilitychange` fires after
     * `pagehide` (https://github.com/whatwg/html/pull/5949), and Firefox 153 can stop the `pagehide` handler
     * part-way and still fire it (reproduced by scripts/exit-closes.mjs); a beacon sent then is accepted and never
     * leaves. So records leave this page's memory before the beacon, are noted as sent only once the browser
     * accepted it (else the next load sends them again), and after `pagehide` this page sends nothing until it is
     * shown again. No IndexedDB work when the page goes into the back/forward cache: a transaction left running gets
     * it evicted when the next page uses the store (Chromium's reason "masked", e2e/conditions.spec.ts); the next
     * load (or this page, if restored) deletes what the note names. A page discarded for good deletes them too,
     * since its note may not outlive it (Firefox loses a localStorage write made as a tab closes).
     */
    exit(how: ExitKind) {
      const final = how != 'hidden';
      // A keepalive request in flight outlives the page: the browser has accepted it. Its ids, and those of beacons
      // accepted at an earlier exit of this page, are noted (again: the write may have been cut off) so that the
      // next load does not send them again.
      for (const [id, keepalive] of inflight) if (keepalive) marked.add(id);
      if (marked.size) d.queue.markSent([...marked]);
      if (gone) return;
      gone = final;
      const flying = [...inflight].filter(([, keepalive]) => keepalive).map(([id]) => id);
      if (how == 'discarded' && flying.length) d.queue.remove(flying);
      // Offline, a beacon would be lost; during a backoff the API is failing and a beacon's answer cannot be
      // seen. Either way the messages stay queued for the next load (or this page, if it lives on).
      if (offline() || Date.now() < retryUntil) return;
      // A request in flight without keepalive dies with the page: its messages go by beacon too (same ids).
      const recs = d.queue.list().filter((r) => !inflight.has(r.id) || (final && !inflight.get(r.id)));
      for (const group of planBatches(recs, KEEPALIVE_LIMIT, BODY_OVERHEAD + d.writeKey.length)) {
        const ids = group.map((r) => r.id);
        const messages: Message[] = group.map((r) => r.message);
        const taken = d.queue.takeOut(ids);
        if (!d.transport.beacon(d.url, body(messages, new Date(), d.writeKey))) {
          d.queue.putBack(taken);
          break;
        }
        ids.forEach((id) => marked.add(id));
        // Still alive (only hidden), discarded for good, or no note could be written: remove them from IndexedDB now.
        if (!d.queue.markSent(ids) || how != 'cached')
          d.queue.remove(ids).then(() => {
            ids.forEach((id) => marked.delete(id));
            d.queue.unmarkSent(ids);
          });
        d.emit('delivered', messages);
      }
    },
    /** The page is shown again (or restored from the back/forward cache): it may send again. */
    shown() {
      gone = false;
    },
  };
}

/** The scheduler's interface. */
export type Scheduler = ReturnType<typeof createScheduler>;
