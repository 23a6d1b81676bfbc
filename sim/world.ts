import { IDBFactory } from 'fake-indexeddb';
import { createRng } from './rng';
import { createLoop } from './loop';
import { createNet, type Phase } from './net';
import { createPlatform, type Page } from './platform';
import { createServiceWorker, type WorkerModule } from './worker';

// One simulated browser of one site: its loop, network and API, platform, and the delivery code each page runs
// (loaded from `src`, or from a mutant's copy: mutants.mjs). What every page accepted, erased, or was told.

/** The delivery code's entry points this simulator drives (what the API layer does to delivery). */
export interface DeliveryModule {
  startDelivery(settings: Record<string, unknown>): {
    _queue: { _add(r: unknown): Promise<void> | Error; _clear(): Promise<unknown>; _list(): readonly { id: string }[] };
    _scheduler: { _notify(): void; _erased(): void };
    _ready: Promise<void>;
  };
  /** What the API layer does to delivery at an erasure (consent withdrawn or denied, opt-out): start.ts. */
  eraseDelivery(delivery: unknown): Promise<void>;
  /** The site's service worker's delivery (src/offline/deliver.ts): sim/worker.ts. */
  worker?: WorkerModule;
}

export interface SimPage extends Page {
  binding: string;
  delivery?: ReturnType<DeliveryModule['startDelivery']>;
  /** It reported storage_unavailable: its queue lived in memory. */
  fellBack?: boolean;
  /** It got an 'online' event: its next flush is forced (see the backoff check in `open`). */
  /** `online` events the page got whose forced flush has not failed yet (each may send once within a backoff). */
  onlineFlush?: number;
  /** Until when the page backs off, as its scheduler does (a 'retry' sets it, a 2xx ends it): see `exit` in actors.ts. */
  retryUntil?: number;
}

export interface Accepted {
  id: string;
  page: SimPage;
  binding: string;
  at: number;
  resolved?: boolean;
}

export const BINDINGS = ['wk1 https://api.one.test/v1/batch', 'wk2 https://api.one.test/v1/batch', 'wk1 https://api.two.test/v1/batch'];
export const START = Date.UTC(2026, 10, 28, 12);

export function createWorld(seed: number, mod: DeliveryModule) {
  const rng = createRng(seed);
  const errors: string[] = [];
  const loop = createLoop(START, (e, a) => errors.push(`threw into page ${a?.id}: ${(e as Error)?.stack || e}`));
  const net = createNet(loop, rng);
  const options = { fetchLater: rng.chance(0.7), locks: rng.chance(0.7), flushAt: rng.pick([1, 5, 20]), flushInterval: rng.pick([200, 1000, 10000]), maxCount: rng.pick([30, 10000]), sw: false };
  // (the service worker draws from a generator of its own: the schedules of the other actors stay those of each seed)
  const swRng = createRng(seed * 7919 + 17);
  options.sw = !!mod.worker && swRng.chance(0.5);
  const platform = createPlatform(loop, net, rng, options, new IDBFactory());
  const w = {
    seed,
    rng,
    loop,
    net,
    platform,
    options,
    errors,
    pages: [] as SimPage[],
    binding: BINDINGS[0],
    accepted: new Map<string, Accepted>(),
    /** Ids a page may lose by rule: erased, expired, refused by the API, cleared with site data, held in memory only. */
    excused: new Map<string, string>(),
    /** Ids erased (consent withdrawn, opt-out): none may be sent by a request started after `erasedAt`. */
    erased: new Map<string, number>(),
    optedOutAt: Infinity,
    /** Pages frozen or cached when an erasure was made, and when each was (see `erase`). */
    unreachable: new Map<SimPage, number[]>(),
    /** Message id → until when its backoff forbids sending it again (cleared by an 'online' event: a forced flush). */
    backoff: new Map<string, number>(),
    /** Ids whose duplicates a schedule event makes unknowable, beside those of unknowable requests. */
    trace: [] as string[],
    ids: 0,
  };
  net.onSend = (r) => {
    if (r.via != 'fetch' && r.via != 'keepalive') return;
    for (const id of r.ids) {
      const until = w.backoff.get(r.page.id + id);
      if (until != null && until > loop.now()) errors.push(`backoff: ${id} sent by ${r.page.id} ${until - loop.now()} ms before its backoff ended`);
    }
  };
  platform.locks.onContention = (holder) => kill(holder as SimPage, 'evicted (lock contention)');

  function say(s: string) {
    w.trace.push(`${((loop.now() - START) / 1000).toFixed(3)}s ${s}`);
  }

  /** Opens a page in `tab` and starts its delivery (what load() does once storing is allowed). */
  function open(tab: number, wasDiscarded = false, binding = w.binding): SimPage {
    const page = platform.makePage(w.pages.length + 1, tab, wasDiscarded) as SimPage;
    page.binding = binding;
    w.pages.push(page);
    say(`open ${page.id} tab ${tab} ${binding}${wasDiscarded ? ' (after discard)' : ''}`);
    if (w.optedOutAt < Infinity) return page; // (an opted-out visitor's pages store and send nothing)
    const [writeKey, url] = binding.split(' ');
    loop.dispatch(page, () => {
      page.delivery = mod.startDelivery({
        owner: page.id + '-' + seed,
        writeKey,
        url,
        flushAt: options.flushAt,
        flushInterval: options.flushInterval,
        bounds: { maxCount: options.maxCount, maxBytes: 5e6, maxAgeMs: 7 * 864e5 },
        identity: { _persist() {}, _reload() {} },
        open: () => w.optedOutAt == Infinity,
        // (no transition outside the ledger's table: src/delivery/ledger.ts)
        illegal: (id: string, state: number, move: number) => errors.push(`ledger: ${page.id} moved ${id} by move ${move} (src/delivery/ledger.ts MOVES) from state ${state}, outside the table`),
        report(e: { code: string; messageIds?: string[] }) {
          if (e.code == "storage_unavailable") (page.fellBack = true), process.env.SIM_DEBUG && console.log(page.id, (e as any).message);
          if (e.code == 'expired' || e.code == 'delivery_rejected') for (const id of e.messageIds || []) w.excused.set(id, e.code);
        },
        emit(name: string, payload: unknown) {
          // The backoff rules (retry.ts, CONTRACT section 4): after a failed attempt a message waits at least half the
          // first delay, or what Retry-After asked (a 429 here), before its page sends it again (a page that adopts it
          // later knows its attempts, not the answer's Retry-After).
          // (a 2xx says the endpoint is well again: the page's backoff ends, and a blamed message is tried alone)
          if (name == 'delivered') for (const k of [...w.backoff.keys()]) if (k.startsWith(page.id + '01')) w.backoff.delete(k);
          if (name == 'delivered') page.retryUntil = 0;
          if (name == 'retry') {
            const r = payload as { status: number; delay: number; messageIds: string[] };
            page.retryUntil = loop.now() + r.delay;
            // (an 'online' the page got forces one flush, which may wait behind the pass that ends in this retry)
            if (page.onlineFlush) return void page.onlineFlush--;
            // (the Retry-After of the answer it heard: the API's phase may have changed since it answered, sim seed 15387)
            const heard = net.log.filter((q) => q.page == page && q.status == 429 && q.ids.includes(r.messageIds[0])).pop();
            const wait = r.status == 429 ? Math.min(Number(heard?.retryAfter ?? net.state.retryAfter) * 1000, 3600000) : 500;
            for (const id of r.messageIds) w.backoff.set(page.id + id, loop.now() + wait);
          }
        },
      });
    });
    return page;
  }

  /** A call (track, identify, page, reset's next call): a record queued, as the API layer's `queueTo` (src/api/calls.ts). */
  function call(page: SimPage) {
    // (an opted-out visitor's calls are refused by the API layer, before delivery)
    if (!page.delivery || page.dead || page.frozen || w.optedOutAt < Infinity) return;
    const n = ++w.ids;
    const id = '01SIM' + String(n).padStart(21, '0');
    const type = w.rng.pick(['track', 'identify', 'page', 'track', 'track', 'group', 'alias']);
    const size = w.rng.chance(0.1) ? w.rng.int(5000, 30000) : w.rng.int(50, 600);
    const message = { type, messageId: id, event: type == 'track' ? 'Event ' + n : undefined, properties: { pad: 'x'.repeat(size) }, timestamp: new Date(loop.now()).toISOString() };
    const bytes = Buffer.byteLength(JSON.stringify(message));
    // (a message the API refuses: 400 for any batch that holds it)
    if (w.rng.chance(0.02)) net.poison.add(id);
    loop.dispatch(page, () => {
      const stored = page.delivery!._queue._add({ id, message, bytes, queuedAt: Date.now(), attempts: 0, owner: page.id + '-' + seed });
      if (stored instanceof Error) return say(`${page.id} ${type} ${id} refused (${(stored as { code?: string }).code})`);
      const a: Accepted = { id, page, binding: page.binding, at: loop.now() };
      w.accepted.set(id, a);
      stored.then(() => (a.resolved = true));
      page.delivery!._scheduler._notify();
    });
    say(`${page.id} ${type} ${id} (${bytes} B)`);
  }

  /** Consent withdrawn or denied on `page` (opt-out: on every page): what was stored is erased. */
  function erase(page: SimPage, why: string) {
    if (!page.delivery || page.dead) return;
    const now = loop.now();
    // Every record stored before it is gone from IndexedDB (any tab's): they may be lost.
    for (const a of w.accepted.values()) if (a.at <= now && !w.excused.has(a.id)) w.excused.set(a.id, why);
    for (const r of page.delivery._queue._list()) w.erased.set(r.id, now);
    if (process.env.SIM_DEBUG) for (const q of w.pages) if (q.delivery && !q.dead) console.log("at erasure", q.id, q.life, q.delivery._queue._list().map((r) => r.id.slice(-3) + ":" + (r as { owner?: string }).owner).join(" "));
    // A frozen or cached page runs no script: the erasure reaches it when it runs again (the API layer's consent
    // check on resume), and what the browser sends for it meanwhile (a deferred request it handed over before, at its
    // discard) cannot be taken back: a limitation of deferred fetching, excused here and written up in sim-findings.md.
    // So for any other page frozen or cached then, which may hold copies of the erased records in a deferred request
    // (without Web Locks another tab adopts a frozen page's records once their lease ended: sim seed 404; and a
    // withdrawal reaches the other pages by a storage event, exit-note.ts `tellErased`, which a frozen page gets only
    // once it runs again).
    for (const q of w.pages) if (q.frozen && !q.dead) w.unreachable.set(q, [...(w.unreachable.get(q) || []), now]);
    loop.dispatch(page, () => void mod.eraseDelivery(page.delivery));
    say(`${page.id} ${why}`);
  }

  /** The page is gone without a page event (a crash, a kill of a frozen or hidden page, an eviction). */
  function kill(page: SimPage, how: string) {
    if (page.dead) return;
    say(`${page.id} ${how}`);
    net.handOver(page);
    platform.activate(page, true);
    platform.bury(page);
  }

  function setPhase(p: Phase) {
    net.state.phase = p;
    if (p == 'r429') net.state.retryAfter = String(w.rng.int(0, 20));
    say(`api ${p}${p == 'r429' ? ' Retry-After ' + net.state.retryAfter : ''}`);
  }

  const world = Object.assign(w, { say, open, call, erase, kill, setPhase });
  if (options.sw && mod.worker) Object.assign(platform.sw, createServiceWorker({ ...world, rng: swRng, pages: world.pages }, mod.worker));
  return world;
}
export type World = ReturnType<typeof createWorld>;
