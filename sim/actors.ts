import type { World, SimPage } from './world';
import type { Phase } from './net';

// The schedule: a seeded sequence of what visitors, the browser, the network and the API do, one action at a time,
// then the end (network healthy, every other page gone, one page per write key and host left open until quiet).

const live = (w: World) => w.pages.filter((p) => p.life == 'live');

/** The page is hidden (a tab switch, a minimised window): visibilitychange. */
function hide(w: World, p: SimPage) {
  if (p.visibility == 'hidden') return;
  p.visibility = 'hidden';
  w.platform.fire(p, 'doc', 'visibilitychange');
}
function show(w: World, p: SimPage) {
  if (p.visibility == 'visible') return;
  p.visibility = 'visible';
  w.platform.fire(p, 'doc', 'visibilitychange');
}

/**
 * The page goes away (a navigation, a closed tab): pagehide, then visibilitychange (https://github.com/whatwg/html/pull/5949).
 * Into the back/forward cache only without a request of its own in flight (Chromium's NotRestoredReason
 * "outstanding-network-request-fetch"). Deferred requests the page did not take back are sent then.
 */
function exit(w: World, p: SimPage, cache: boolean) {
  const persisted = cache && ![...p.inflight].some((r) => r.via == 'fetch');
  w.say(`${p.id} pagehide persisted=${persisted}`);
  // A page that leaves offline, or in its backoff (the API failing: a request in flight then was forced, by an
  // 'online' or a flush), takes no request in flight as handed to the browser (it is likely to fail, with no one to
  // see it): the next load, or another tab once this one left, sends it again, and whether it arrived first no one can
  // know (handoff.ts `_exit`, its `hold`; sim seed 15430: an 'online' flush in a backoff, then the back/forward cache).
  if (!w.net.state.online || w.loop.now() < (p.retryUntil ?? 0)) for (const r of p.inflight) r.unknowable = true;
  w.net.handOver(p);
  w.platform.fire(p, 'win', 'pagehide', { persisted });
  hide(w, p);
  w.platform.activate(p, false);
  if (persisted) (p.frozen = true), (p.life = 'cached');
  else w.platform.bury(p);
}

/** Back to a page in the back/forward cache: pageshow and visibilitychange, in either order (engines differ). */
function restore(w: World, p: SimPage) {
  w.say(`${p.id} restored from bfcache`);
  p.life = 'live';
  w.loop.thaw(p);
  const first = w.rng.chance(0.5);
  if (first) w.platform.fire(p, 'win', 'pageshow', { persisted: true });
  show(w, p);
  if (!first) w.platform.fire(p, 'win', 'pageshow', { persisted: true });
}

const PHASES: Record<Phase, number> = { ok: 6, err5xx: 2, r429: 1, r408: 1, redirect: 1, neterr: 1, blackhole: 1, slow: 1, lostAnswer: 1, r413: 1 };

/** One action of the schedule. */
function act(w: World) {
  const { rng } = w;
  const pages = live(w);
  const any = pages.length ? rng.pick(pages) : undefined;
  const kind = rng.weighted({ open: pages.length < 3 ? 3 : 0.3, call: 14, hide: 1.5, show: 1.5, freeze: 1, navigate: 2, back: 2, close: 1.5, crash: 1, thaw: 1.5, discard: 0.7, evict: 0.5, net: 1.5, api: 2, storage: 0.6, consent: 0.25, optout: 0.05, binding: 0.2 });
  if (kind == 'open' || !any) return void w.open(Math.max(0, ...w.pages.map((p) => p.tab)) + 1);
  const frozen = w.pages.filter((p) => p.life == 'frozen');
  const cached = w.pages.filter((p) => p.life == 'cached');
  switch (kind) {
    case 'call':
      for (let i = rng.chance(0.2) ? rng.int(2, 30) : 1; i > 0; i--) w.call(any);
      return;
    case 'hide':
      return w.say(`${any.id} hidden`), hide(w, any);
    case 'show':
      return w.say(`${any.id} shown`), show(w, any);
    case 'freeze':
      // Page Lifecycle (https://wicg.github.io/page-lifecycle/#freezing): hidden first, then freeze; then no script runs.
      hide(w, any);
      w.say(`${any.id} frozen`);
      w.platform.fire(any, 'doc', 'freeze');
      any.frozen = true;
      any.life = 'frozen';
      return;
    case 'thaw': {
      const p = frozen.length ? rng.pick(frozen) : undefined;
      if (!p) return;
      w.say(`${p.id} resumed`);
      p.life = 'live';
      w.loop.thaw(p);
      w.platform.fire(p, 'doc', 'resume');
      return show(w, p);
    }
    case 'discard': {
      // A frozen page discarded to save memory: no event; its tab reloads it when the visitor comes back
      // (document.wasDiscarded, https://wicg.github.io/page-lifecycle/#dom-document-wasdiscarded).
      const p = frozen.length ? rng.pick(frozen) : undefined;
      if (!p) return;
      w.kill(p, 'discarded');
      if (rng.chance(0.6)) w.loop.at(rng.int(100, 20000), () => w.pages.some((q) => q.tab == p.tab && q.life != 'dead' && q.life != 'cached') || w.open(p.tab, true), null);
      return;
    }
    case 'evict': {
      const p = cached.length ? rng.pick(cached) : undefined;
      return p && w.kill(p, 'evicted from bfcache');
    }
    case 'navigate':
      exit(w, any, rng.chance(0.5));
      return void w.open(any.tab);
    case 'back': {
      // Back to a cached page: the page its tab shows now (if any) goes away first.
      const p = cached.length ? rng.pick(cached) : undefined;
      if (!p) return;
      const now = pages.find((q) => q.tab == p.tab);
      if (now) exit(w, now, rng.chance(0.5));
      return restore(w, p);
    }
    case 'close':
      return exit(w, any, false);
    case 'crash':
      return w.kill(any, rng.chance(0.5) ? 'crashed' : 'killed');
    case 'net':
      w.net.state.online = !w.net.state.online;
      w.say(w.net.state.online ? 'online' : 'offline');
      if (w.net.state.online) {
        // ('online' flushes at once, backoff or not: as the page gets the event, which a frozen page gets later)
        for (const p of w.pages)
          if (!p.dead) w.loop.dispatch(p, () => ((p.onlineFlush = (p.onlineFlush || 0) + 1), w.backoff.forEach((_, k) => k.startsWith(p.id + '01') && w.backoff.delete(k)))), w.platform.fire(p, 'win', 'online');
      }
      return;
    case 'api':
      return w.setPhase(rng.weighted(PHASES));
    case 'storage': {
      const f = rng.weighted({ full: 1, block: 1, clear: 0.5 });
      if (f == 'full') (w.platform.faults.full = !w.platform.faults.full), w.say(`storage full=${w.platform.faults.full}`);
      if (f == 'block') (w.platform.faults.blockNextOpen = true), w.say('next IndexedDB open blocked');
      if (f == 'clear') clearSiteData(w);
      return;
    }
    case 'consent':
      return w.erase(any, 'consent withdrawn');
    case 'optout':
      w.optedOutAt = w.loop.now();
      for (const p of w.pages) if (!p.dead) w.erase(p, 'opt-out');
      return;
    case 'binding':
      w.binding = rng.pick(['wk1 https://api.one.test/v1/batch', 'wk2 https://api.one.test/v1/batch', 'wk1 https://api.two.test/v1/batch']);
      return w.say(`binding now ${w.binding}`);
  }
}

// The visitor clears the site's data (both stores at once): what was stored before may be lost.
function clearSiteData(w: World) {
  w.say('site data cleared');
  w.platform.storage.clear();
  for (const a of w.accepted.values()) if (!w.excused.has(a.id)) w.excused.set(a.id, 'site data cleared');
  const req = w.platform.makePage(0, -1, false).idb.open('svc-analytics');
  req.onsuccess = () => {
    const db = req.result;
    if (db.objectStoreNames.contains('queue')) {
      const t = db.transaction('queue', 'readwrite');
      t.objectStore('queue').clear();
      // The clear commits some IndexedDB tasks later (its open, then its transaction, may wait behind a partial drain):
      // a call stored meanwhile is cleared too (sim seed 19133: stored 18 ms after the visitor cleared the site's data).
      t.oncomplete = () => {
        for (const a of w.accepted.values()) if (a.resolved && !w.excused.has(a.id)) w.excused.set(a.id, 'site data cleared');
      };
    }
    db.close();
  };
}

/** Schedules `count` actions, then the end; resolves the time the run ends. */
export function schedule(w: World, count: number): { endAt: number } {
  const end = { endAt: Infinity };
  const next = (left: number) =>
    w.loop.at(w.rng.chance(0.3) ? w.rng.int(0, 50) : w.rng.int(50, 8000), () => (left ? (act(w), next(left - 1)) : finish()), null);
  const finish = () => {
    w.say('end: network healthy, one page per binding left open');
    // (the visitor leaves the site no more: the last pages stay open until quiet)
    w.platform.sw.leave = () => {};
    w.net.state.online = true;
    w.setPhase('ok');
    w.platform.faults.full = false;
    w.platform.faults.blockNextOpen = false;
    w.backoff.clear();
    for (const p of w.pages) {
      if (p.life == 'live') exit(w, p, false);
      else if (!p.dead) w.kill(p, 'discarded at the end');
    }
    const bindings = new Set([...w.accepted.values()].map((a) => a.binding));
    let tab = 1000;
    for (const b of bindings) w.open(tab++, false, b);
    for (const p of w.pages) if (!p.dead) w.platform.fire(p, 'win', 'online');
    // (past the lease, LEASE_MS, after which a tab without Web Locks adopts, and the longest backoff, 60 s)
    end.endAt = w.loop.now() + 3 * 60000;
  };
  // (the site's service worker, if it has one, may see every tab of the site closed: sim/worker.ts)
  w.platform.sw.leave = () => {
    w.say('the visitor leaves the site');
    for (const p of w.pages) if (p.life == 'live') exit(w, p, false);
  };
  w.open(1);
  next(count);
  return end;
}
