import type { Page, Platform } from './platform';
import type { Loop } from './loop';
import type { Net } from './net';
import type { Rng } from './rng';

/** What the worker needs of the simulated browser (world.ts). */
interface Browser {
  rng: Rng;
  loop: Loop;
  net: Net;
  platform: Platform;
  pages: { life: string }[];
  say(s: string): void;
}

// The site's service worker (issue 30, `svc-analytics/service-worker`: src/offline/deliver.ts), as one more agent of
// the simulated browser: the pages' Background Sync requests (src/offline/sync-request.ts `requestSync`) and exit
// notes (`mirrored`, posted to the controller) reach it; Background Sync keeps its rules
// (https://wicg.github.io/background-sync/spec/): a sync fires once the browser thinks it is online, possibly late,
// possibly more than once, or never (the browser may give up); a run that fails is tried again later. The worker
// answers a sync only with no page of the site open (src/entry/service-worker.ts `onSync`), and the browser may stop
// it in the middle of a run (an idle or long-running worker is stopped: its memory is lost, its locks released).

/** What the simulator runs in the worker (loaded from src, or a mutant's copy). */
export interface WorkerModule {
  deliverStored(post: typeof fetch): Promise<{ delivered: number; failed: boolean }>;
  keepNote(note: unknown): Promise<void>;
}

export function createServiceWorker(w: Browser & { platform: { sw: { leave(): void } } }, mod: WorkerModule) {
  let agent: Page | undefined;
  let pending = false;
  let fires = 0;
  const live = () => (agent && !agent.dead ? agent : (agent = w.platform.makePage(900 + ++fires, -2, false)));

  // A sync the browser fires (at `ms`), if it does: with a page of the site open the worker leaves it to the pages.
  const fire = (ms: number) =>
    w.loop.at(ms, () => {
      if (!pending || !w.net.state.online) return fire(w.rng.int(1000, 30000));
      if (w.pages.some((p) => p.life == 'live' || p.life == 'frozen')) return void (pending = false);
      const sw = live();
      w.say(`service worker sync (${sw.id})`);
      if (w.rng.chance(0.15)) w.loop.at(w.rng.int(0, 3000), () => stop(sw), null);
      w.loop.dispatch(sw, () =>
        mod.deliverStored(sw.fetch).then((run) => {
          if (sw.dead) return;
          w.say(`service worker delivered ${run.delivered}${run.failed ? ', the rest left' : ''}`);
          // a failed run is tried again later; a finished one, sometimes, fires again anyway
          if (run.failed || w.rng.chance(0.1)) fire(w.rng.int(5000, 60000));
          else pending = false;
        }),
      );
    }, null);

  const stop = (sw: Page) => {
    if (sw.dead) return;
    w.say(`service worker ${sw.id} stopped by the browser`);
    w.net.handOver(sw);
    w.platform.bury(sw);
    if (pending) fire(w.rng.int(1000, 20000));
  };

  return {
    /** A page asked for a sync (SyncManager.register): fired later, or never. */
    register() {
      if (pending) return;
      pending = true;
      if (!w.rng.chance(0.1)) fire(w.rng.int(0, 20000));
      // The case the worker is for: the visitor, offline, leaves the site (every tab of it closed) soon after.
      if (w.rng.chance(0.5)) w.loop.at(w.rng.int(100, 8000), () => w.platform.sw.leave(), null);
    },
    /** A page posted its exit note to the worker. */
    message(data: unknown) {
      const note = (data as Record<string, unknown> | null)?.svcAnalyticsNote;
      if (note === undefined) return;
      const sw = live();
      w.loop.dispatch(sw, () => void mod.keepNote(note));
    },
  };
}
