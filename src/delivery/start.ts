import type { AnalyticsError } from '../message/errors';
import type { Identity } from '../identity/identity';
import { analyticsError, describe } from '../message/errors';
import { clearStored, createQueue, type Queue, type QueueBounds, type QueueRecord } from './queue';
import { createTabs, LEASE_MS, ORPHAN_GRACE_MS } from './tabs';
import { createTransport } from './transport';
import { createHandoff } from './handoff';
import { createScheduler, type Scheduler } from './scheduler';
import { finishHandoffs, noted, tellErased, unnote } from './exit-note';
import { browserPlatform, type NoteStorage, type Platform } from './platform';
import { createLedger } from './ledger';
// (offline, under a service worker of the site: src/offline/sync-request.ts)
import { mirrored, requestSync } from '../offline/sync-request';

/** What delivery needs to start: where and how to send, and who to tell. */
export interface DeliverySettings {
  /** This tab's id (the owner of the records it queues). */
  owner: string;
  writeKey: string;
  /** `{apiHost}/v1/batch` */
  url: string;
  flushAt: number;
  flushInterval: number;
  bounds: QueueBounds;
  identity: Identity;
  /** False while nothing may be stored or sent (a withdrawal, an opt-out): other tabs' records are not adopted. */
  open(): boolean;
  report(error: AnalyticsError): void;
  emit(name: string, ...args: unknown[]): void;
  /** The built-ins delivery uses (platform.ts); the browser's by default. */
  platform?: Platform;
  /** Hears of a move the ledger's table refused (ledger.ts; `move` indexes MOVES): the simulator fails the run on it. */
  illegal?(id: string, state: number, move: number): void;
}

/** Storage and delivery, started: `ready` resolves once the stored queue was read (and orphans adopted). */
export interface Delivery {
  _queue: Queue;
  _scheduler: Scheduler;
  _ready: Promise<void>;
}

/**
 * Adopts what gone tabs left (see `queue._adopt`), once the page-exit hand-offs of earlier pages are finished: their
 * notes name records the browser was given, which must be deleted, not adopted and sent again. Runs under the tabs'
 * lock (`tabs._exclusive`), which gives `held`.
 */
export async function adoptOrphans(queue: Queue, isOrphan: (r: QueueRecord) => boolean, graceMs = 0, held?: () => boolean, note?: NoteStorage) {
  await finishHandoffs(queue._forget, note);
  return queue._adopt(isOrphan, graceMs, held);
}

/**
 * Erases what delivery stored (consent withdrawn or denied, opt-out): the queue (`delivery`'s, or before delivery
 * started the store as it is), and the ids the exit note holds, once that clear committed: until then the records they
 * name, handed to the browser already, may still be stored, and a later page would adopt and send them again (sim seed
 * 16471: consent withdrawn in a page whose IndexedDB never opened took the note, and the next page sent them). The
 * site's other pages are told at once (exit-note.ts `tellErased`): they drop what they hold of it (sim seed 5046). Never
 * rejects.
 */
export function eraseDelivery(delivery?: Delivery, note?: NoteStorage): Promise<void> {
  const ids = noted(note);
  tellErased(note);
  const cleared = delivery ? delivery._queue._clear() : clearStored();
  delivery?._scheduler._erased();
  return cleared.then((done) => void (done && unnote(ids, note)));
}

/**
 * Starts storage and delivery (once storing is allowed): persists the identity, opens the queue, joins the tabs,
 * adopts what closed tabs left, and listens to the page's lifecycle.
 */
export function startDelivery(s: DeliverySettings): Delivery {
  const { identity, owner, report } = s;
  const given = s.platform || browserPlatform();
  // (the exit note told to the site's service worker too: src/offline/sync-request.ts)
  const p: Platform = { ...given, _storage: mirrored(given._storage) };
  // (at once, not after the first request: a page that ends before that, or another tab opened meanwhile, keeps the
  // visitor's id; its writes cost about 15 ms at 4x CPU, measured by bench/ttfe-trace.mjs)
  identity._persist();
  // Another tab's lock was released (that tab is gone): its records are orphans, adopted now.
  const tabs = createTabs(owner, () => adopt().then(scheduler._notify), p);
  let fellBack = false;
  const queue = createQueue(
    owner,
    s.bounds,
    {
      _expired: (ids) => report(analyticsError('expired', `${ids.length} queued message(s) older than queue.maxAgeMs dropped`, ids)),
      _fallback: (e) => {
        if (!fellBack) report(analyticsError('storage_unavailable', `IndexedDB is unusable (${describe(e)}): messages are kept in this page's memory`));
        fellBack = true;
      },
    },
    // The records' binding (CONTRACT section 6): the write key is in the page's source already, so kept as it is.
    s.writeKey + ' ' + s.url,
    p,
    tabs._leased,
  );
  const transport = createTransport(p);
  // (what this page knows of each record's delivery, the exit note, and 'delivered', said once per message: ledger.ts)
  const ledger = createLedger(s.emit, p._storage, s.illegal);
  const handoff = createHandoff({ ...s, _ledger: ledger, _queue: queue, _transport: transport, _platform: p });
  const scheduler = createScheduler({ ...s, _queue: queue, _tabs: tabs, _transport: transport, _handoff: handoff, _platform: p, _offline: requestSync });
  tabs._enter();
  // Under the tabs' lock, so two tabs never adopt the same orphan, and only after ORPHAN_GRACE_MS (see
  // `queue._adopt`). Without Web Locks nothing tells us when a tab dies: look again when the oldest record left to
  // another tab comes to the end of its lease, and at least every half lease (a tab that closes later leaves
  // records this one has not seen yet).
  let adoptTimer: ReturnType<typeof setTimeout> | undefined;
  const adopt = (graceMs = ORPHAN_GRACE_MS): Promise<void> =>
    // (not while nothing may be stored or sent: a withdrawal, an opt-out)
    !s.open()
      ? Promise.resolve()
      : tabs
          ._exclusive((held) => tabs._orphans().then((isOrphan) => adoptOrphans(queue, isOrphan, graceMs, held, p._storage)))
          .then(({ _left: left, _due: due }) => {
            p._clearTimeout(adoptTimer);
            const now = p._now();
            let at = due || Infinity;
            // (a random delay past the end of a lease: two tabs whose timers fell due at once both read an orphan
            // before either claimed it, and both sent it, sim seed 9706)
            if (tabs._leased()) at = Math.min(at, now + LEASE_MS / 2, left ? left + LEASE_MS * (1 + p._random() / 60) : Infinity);
            if (at < Infinity) adoptTimer = p._setTimeout(() => adopt().then(scheduler._notify), at - now);
          })
          .catch(() => {}); // the store is unusable: the queue lives in memory (reported as storage_unavailable)
  // A page that replaces a discarded one (the same tab) adopts what that page left at once: it ended without a page
  // event, so no note of it can come late.
  // (what it adopts at once is planned too: a page that makes no call would else keep it until it goes, sim seed 3035)
  const ready = adopt(p._wasDiscarded ? 0 : ORPHAN_GRACE_MS).then(scheduler._notify);
  p._listen({
    _exit(how) {
      scheduler._exit(how);
      if (how != 'hidden') tabs._leave();
    },
    _resume(restored) {
      identity._reload();
      // A restored page sends nothing before it knows which of its records another tab adopted and sent meanwhile (an
      // overdue retry timer, or a call made at once, would send them again).
      const reconciled = restored ? queue._reconcile() : Promise.resolve();
      scheduler._after(reconciled);
      scheduler._shown();
      if (restored) tabs._enter();
      reconciled.then(() => adopt()).then(scheduler._notify);
    },
    _online: () => scheduler._flush(),
    // Another page erased what was stored (consent withdrawn or denied there, an opt-out): what this page holds of the
    // records stored before goes too, copies it adopted from that page included (CONTRACT section 3: a withdrawal
    // removes the queue; sim seeds 5046, 11960, 12506: adopted without Web Locks from a tab that then withdrew).
    _erased: (at) => scheduler._drop(queue._list().filter((r) => r.queuedAt < at).map((r) => r.id)),
  });
  return { _queue: queue, _scheduler: scheduler, _ready: ready };
}
