// svc-analytics/service-worker (CONTRACT section 1; section 4): a page under the site's own service worker
// (e2e/site/sw.js) that tracks offline asks for a Background Sync; with every page of the site closed and the
// browser online again, the sync (fired over the DevTools protocol: the browser's own fires as soon as it thinks it is
// online, which DevTools' offline emulation does not change: the worker's requests are not offline, so the API answers
// them 503 while the pages are offline, as it is out of reach) makes the worker deliver what the pages stored, each
// message once with its original timestamp; pages and the worker racing send nothing twice.
import type { BrowserContext, Page } from '@playwright/test';
import { test, expect, open, quiet, expectExactlyOnce, sleep, type CollectorHandle } from './fixtures';

// Which tags the page asked a Background Sync for (SyncManager.register, spied on before the page's scripts run).
const spySync = (page: Page) =>
  page.addInitScript(() => {
    const proto = (globalThis as any).SyncManager?.prototype;
    if (!proto) return;
    const register = proto.register;
    proto.register = function (this: unknown, tag: string) {
      ((window as any).__syncTags ||= []).push(tag);
      return register.call(this, tag);
    };
  });

/**
 * The pages offline (DevTools' emulation) and the API out of reach for the worker too (a 503: the emulation leaves
 * the worker's requests be, and the browser fires the sync it was asked for at once, online as far as it knows).
 */
async function offline(context: BrowserContext, collector: CollectorHandle, off: boolean) {
  if (off) await collector.fault({ status: 503 });
  await context.setOffline(off);
  if (!off) await collector.fault({});
}

/**
 * Ends a page of the site while the context is offline: it navigates away first (a page closed under DevTools'
 * offline emulation is told it is online again as the emulation ends with it, and sends before it goes: no browser
 * does that to a page closed offline), then its tab is closed.
 */
async function leave(page: Page) {
  await page.goto('about:blank');
  await page.close();
}

/** Opens a page of the site and waits until the site's service worker controls it and the library is ready. */
async function openControlled(context: BrowserContext, url: string, page?: Page) {
  page ||= await context.newPage();
  await spySync(page);
  await open(page, url);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  return page;
}

/** Tracks `n` events on `page`; their ids and timestamps. */
const trackSome = (page: Page, name: string, n: number) =>
  page.evaluate(
    async ([name, n]) => {
      const out: { id: string; timestamp: string }[] = [];
      for (let i = 0; i < n; i++) {
        const r = await (window as any).analytics.track(name, { i });
        out.push({ id: r.event.messageId, timestamp: r.event.timestamp });
      }
      return out;
    },
    [name, n] as const,
  );

/**
 * The site's service worker over the DevTools protocol, from a page of no origin (about:blank is no client of the
 * site): `sync` fires our sync event, after stopping the worker with `stop` (it wakes for the event, as after an idle
 * stop) once nothing is in flight to the API (a worker stopped between the API's answer and the delete that follows
 * leaves the records for the next sender, which sends them again: at least once).
 */
async function workerControl(context: BrowserContext, collector: CollectorHandle, origin: string) {
  const blank = await context.newPage();
  const cdp = await context.newCDPSession(blank);
  const registration = new Promise<string>((resolve) =>
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }: any) => {
      const r = registrations.find((r: any) => r.scopeURL.startsWith(origin) && !r.isDeleted);
      if (r) resolve(r.registrationId);
    }),
  );
  await cdp.send('ServiceWorker.enable');
  const registrationId = await registration;
  return {
    async sync(stop = false) {
      if (stop) await quiet(collector, 300), await cdp.send('ServiceWorker.stopAllWorkers');
      await cdp.send('ServiceWorker.dispatchSyncEvent', { origin, registrationId, tag: 'svc-analytics', lastChance: false });
    },
  };
}

test('offline, every page closed, back online: the worker delivers each message once with its original timestamp', async ({ context, page, site, collector }) => {
  const url = site.page('/offline.html');
  await openControlled(context, url, page);
  const second = await openControlled(context, url);
  await offline(context, collector, true);
  const tracked = [...(await trackSome(page, 'Offline A', 4)), ...(await trackSome(second, 'Offline B', 4))];
  // Each page asked the worker for a sync as its send failed offline.
  for (const p of [page, second]) await expect.poll(() => p.evaluate(() => (window as any).__syncTags || [])).toContain('svc-analytics');
  await leave(page);
  await leave(second);
  expect(await collector.messages()).toEqual([]);
  await offline(context, collector, false);
  const worker = await workerControl(context, collector, new URL(url).origin);
  const from = Date.now();
  // (not stopped first: a sync of the browser's own may be delivering as the API comes back, and a stop between an
  // answer and the delete after it leaves those messages to be sent again, at least once, which is not this test's
  // case; the last test stops the worker before its sync)
  await worker.sync();
  const got = await collector.waitFor(8, {}, 15000);
  expect(got.length).toBe(8);
  await quiet(collector, 1500, 15000, from);
  const all = await collector.messages();
  expectExactlyOnce(
    all,
    tracked.map((t) => t.id),
  );
  // the time of each call, not of the delivery
  const times = new Map(all.map((m) => [m.messageId, m.timestamp]));
  for (const t of tracked) expect(times.get(t.id)).toBe(t.timestamp);
  // The next page of the site sends none of them again.
  const next = await openControlled(context, url);
  await quiet(collector, 2000, 15000, Date.now());
  expectExactlyOnce(
    await collector.messages(),
    tracked.map((t) => t.id),
  );
  await next.close();
});

test('pages and the worker racing over many offline visits send no message twice', async ({ context, page, site, collector }) => {
  test.setTimeout(150_000);
  const url = site.page('/offline.html');
  await openControlled(context, url, page);
  const worker = await workerControl(context, collector, new URL(url).origin);
  const ids: string[] = [];
  let visit: Page = page;
  for (let run = 0; run < 8; run++) {
    await offline(context, collector, true);
    ids.push(...(await trackSome(visit, 'Race ' + run, 3)).map((t) => t.id));
    await leave(visit);
    await offline(context, collector, false);
    // The worker's sync and the next page of the site, which adopts what the closed page left, start together,
    // one or the other first by up to 1.5 s (a page's adoption waits ORPHAN_GRACE_MS after it first sees an orphan).
    const lead = Math.random() * 1500;
    const [, next] = await Promise.all([
      sleep(run % 2 ? lead : 0).then(() => worker.sync()),
      sleep(run % 2 ? 0 : lead).then(() => openControlled(context, url)),
    ]);
    visit = next;
    await collector.waitFor(ids.length, {}, 20000);
  }
  await quiet(collector, 2000, 20000, Date.now());
  expectExactlyOnce(await collector.messages(), ids);
});

test('what a page handed to the browser as it went away is not sent again by the worker', async ({ context, page, site, collector }) => {
  const url = site.page('/offline.html');
  await openControlled(context, url, page);
  const worker = await workerControl(context, collector, new URL(url).origin);
  // Answers come late: the page's request is still in flight (with keepalive) when it goes, and its exit note names
  // it; the records stay stored for the next page, which deletes what the note names. The worker cannot read the
  // note (localStorage): the page tells it.
  await collector.fault({ delayMs: 2500 });
  const tracked = await trackSome(page, 'Handed', 3);
  await expect.poll(() => collector.requests().then((r: any[]) => r.length), { timeout: 10000 }).toBeGreaterThan(0);
  await leave(page);
  await collector.waitFor(3, {}, 15000);
  await collector.fault({});
  const from = Date.now();
  await worker.sync(true);
  await quiet(collector, 2000, 15000, from);
  expectExactlyOnce(
    await collector.messages(),
    tracked.map((t) => t.id),
  );
  // nor does the next page
  const next = await openControlled(context, url);
  await quiet(collector, 2500, 15000, Date.now());
  expectExactlyOnce(
    await collector.messages(),
    tracked.map((t) => t.id),
  );
  await next.close();
});
