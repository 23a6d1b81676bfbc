// Deferred delivery (CONTRACT section 4, issue 20): what waits in the queue is also handed to the browser with
// fetchLater (Chromium 135 and later), which sends it when the page dies without a page event: here a renderer crash
// (DevTools' Page.crash), with no page of the site open afterwards. A normal exit sends nothing twice; the 64 KiB
// quota is respected; nothing is deferred while consent is pending, or after an opt-out or a withdrawal. Freeze
// (Page Lifecycle) is handled like a hide.
import { chromium, type BrowserContext, type Page } from '@playwright/test';
import { executablePath, args } from '../scripts/chromium.mjs';
import { test, expect, open, ready, quiet, expectExactlyOnce, sendFirst, type CollectorHandle, type SiteHandle } from './fixtures';

test.describe.configure({ timeout: 30_000 });

// Nothing leaves while the page lives: only the exit hand-off, the deferred request or the next load can deliver.
const LONG = JSON.stringify({ flushAt: 1000, flushInterval: 60000 });

/** Tracks `n` events named `event` (with a pad of `pad` characters) and resolves with their ids once stored. */
function track(page: Page, event: string, n: number, pad = 0): Promise<string[]> {
  return page.evaluate(
    async ({ event, n, pad }) => {
      const a = (window as any).analytics;
      const rs = await Promise.all(Array.from({ length: n }, (_, i) => a.track(event, { i, pad: 'p'.repeat(pad) })));
      // One task later: the library covers what was stored after the task that stored it (a timer set before this
      // one, with no delay, runs first).
      await new Promise((r) => setTimeout(r));
      return rs.map((r: any) => r.event.messageId);
    },
    { event, n, pad },
  );
}

/** Kills the page's renderer, as a phone's system kills a tab: no page event runs. */
async function crash(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  const crashed = page.waitForEvent('crash');
  cdp.send('Page.crash').catch(() => {}); // (never answered: the renderer is gone)
  await crashed;
}

/** The requests that carried messages of `event`. */
async function requestsOf(collector: CollectorHandle, event: string) {
  return (await collector.requests()).filter((r) => r.messages.some((m: any) => m.event === event));
}

/** A page of the site with the library and a short interval: the next visit. */
async function revisit(context: BrowserContext, site: SiteHandle) {
  const next = await context.newPage();
  await open(next, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }), next: '1' }));
  return next;
}

test('fetchLater is there (Chromium 135 and later): the tests below cover what it gives', async ({ page, site }) => {
  await open(page, site.page('/basic.html'));
  expect(await page.evaluate(() => typeof (window as any).fetchLater)).toBe('function');
});

test('events stored with a long flush interval reach the API within seconds of a renderer crash, with no page of the site open', async ({ page, context, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: LONG }));
  await sendFirst(page, collector);
  const ids = await track(page, 'Before Crash', 20);
  const crashedAt = Date.now();
  await crash(context, page);
  const msgs = await collector.waitFor(20, { event: 'Before Crash' }, 5_000);
  expect(msgs.length, 'delivered within 5 s of the crash').toBe(20);
  await quiet(collector, 1000, 10_000, crashedAt);
  expectExactlyOnce(await collector.messages({ event: 'Before Crash' }), ids);
  // One request, as a beacon is: the write key in a text/plain body, to the batch URL.
  const reqs = await requestsOf(collector, 'Before Crash');
  expect(reqs).toHaveLength(1);
  expect(reqs[0]).toMatchObject({ auth: 'body', status: 200, path: '/v1/batch' });
  expect(reqs[0].contentType).toMatch(/^text\/plain\b/);
});

test('their records stay stored: the next page of the site sends them again, with the same messageIds (at least once)', async ({ page, context, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: LONG }));
  await sendFirst(page, collector);
  const ids = await track(page, 'Crash Then Back', 5);
  await crash(context, page);
  expect(await collector.waitFor(5, { event: 'Crash Then Back' }, 5_000)).toHaveLength(5);
  await revisit(context, site);
  const twice = await collector.waitFor(10, { event: 'Crash Then Back' }, 10_000);
  expect(new Set(twice.map((m) => m.messageId))).toEqual(new Set(ids));
});

for (const exit of ['navigate', 'close'] as const) {
  test(`a normal visit then exit (${exit}) sends nothing twice: the deferred request is taken back before the exit beacon`, async ({ page, context, site, collector }) => {
    await open(page, site.page('/basic.html', { opts: LONG }));
    await sendFirst(page, collector);
    const ids = await track(page, 'Normal Exit', 20, 500);
    const leftAt = Date.now();
    if (exit == 'navigate') {
      await page.goto(site.page('/core-blank.html'));
    } else {
      await page.close();
    }
    await collector.waitFor(20, { event: 'Normal Exit' }, 10_000);
    await quiet(collector, 2000, 15_000, leftAt);
    expectExactlyOnce(await collector.messages({ event: 'Normal Exit' }), ids);
    // And the next visit sends nothing of them again.
    await revisit(context, site);
    await quiet(collector, 2500, 15_000, Date.now());
    expectExactlyOnce(await collector.messages({ event: 'Normal Exit' }), ids);
  });
}

test('a queue over 64 KB: no deferred request over 64 KB, and what did not fit arrives with the next visit', async ({ page, context, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: LONG }));
  await sendFirst(page, collector);
  // ~5 KB each: about 100 KB waiting, more than the browser takes in deferred requests to one origin
  const ids = await track(page, 'Heavy Crash', 20, 5000);
  await crash(context, page);
  const first = await collector.waitFor(1, { event: 'Heavy Crash' }, 5_000);
  expect(first.length).toBeGreaterThan(0);
  const deferred = await requestsOf(collector, 'Heavy Crash');
  for (const r of deferred) expect(r.bytes, 'a deferred request body').toBeLessThanOrEqual(65536);
  const sent = new Set(deferred.flatMap((r) => r.messageIds));
  expect(sent.size).toBeGreaterThan(5);
  expect(sent.size).toBeLessThan(20);
  // the oldest first
  expect([...sent].sort()).toEqual(ids.slice(0, sent.size));
  await revisit(context, site);
  const all = await collector.waitFor(20 + sent.size, { event: 'Heavy Crash' }, 15_000);
  expect(new Set(all.map((m) => m.messageId))).toEqual(new Set(ids));
  expect((await collector.requests()).filter((r) => r.overLimit)).toEqual([]);
});

test("over the quota left by the page's own deferred requests to that origin, what fits is deferred, and nothing is thrown into the page", async ({ page, context, site, collector }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await open(page, site.page('/basic.html', { opts: LONG }));
  await sendFirst(page, collector);
  // Another script of the page defers 40,000 bytes to the same origin: about 25 KB of the 64 KiB are left.
  await page.evaluate((api) => void (window as any).fetchLater(api + '/favicon.ico', { method: 'POST', body: 'o'.repeat(40000) }), collector.url);
  const ids = await track(page, 'Quota Crash', 20, 5000);
  await crash(context, page);
  await collector.waitFor(1, { event: 'Quota Crash' }, 5_000);
  const deferred = await requestsOf(collector, 'Quota Crash');
  const sent = deferred.flatMap((r) => r.messageIds);
  expect(sent.length).toBeGreaterThan(0);
  expect(deferred.reduce((n, r) => n + r.bytes, 0)).toBeLessThanOrEqual(65536 - 40000);
  expect(sent.sort()).toEqual(ids.slice(0, sent.length));
  await revisit(context, site);
  const all = await collector.waitFor(20 + sent.length, { event: 'Quota Crash' }, 15_000);
  expect(new Set(all.map((m) => m.messageId))).toEqual(new Set(ids));
  expect(errors).toEqual([]);
});

test('consent pending: nothing is deferred, and a crash sends nothing', async ({ page, context, site, collector }) => {
  await page.goto(site.page('/consent.html', { opts: JSON.stringify({ consent: { categories: ['analytics'] }, flushInterval: 60000 }) }));
  await ready(page);
  await track(page, 'Pending Crash', 10);
  const crashedAt = Date.now();
  await crash(context, page);
  await quiet(collector, 2500, 15_000, crashedAt);
  expect(await collector.messages()).toEqual([]);
});

for (const how of ['optOut', 'withdraw'] as const) {
  test(`${how}: the deferred request is taken back, and a crash sends nothing of what was stored`, async ({ page, context, site, collector }) => {
    const cmp = how == 'withdraw' ? { cmp: JSON.stringify({ analytics: true }) } : {};
    const consent = how == 'withdraw' ? { consent: { categories: ['analytics'] } } : {};
    await page.goto(site.page('/consent.html', { opts: JSON.stringify({ ...consent, flushAt: 1000, flushInterval: 60000 }), ...cmp }));
    await ready(page);
    await sendFirst(page, collector);
    await track(page, 'Erased Crash', 10);
    await page.evaluate((how) => {
      const a = (window as any).analytics;
      return how == 'optOut' ? a.optOut() : a.consent({ analytics: false });
    }, how);
    await page.evaluate(() => new Promise((r) => setTimeout(r)));
    const crashedAt = Date.now();
    await crash(context, page);
    await quiet(collector, 2500, 15_000, crashedAt);
    expect(await collector.messages({ event: 'Erased Crash' })).toEqual([]);
  });
}

test('a page that goes into the back/forward cache sends its deferred messages once (beacon), and defers again once restored', async ({ site, collector }) => {
  // Playwright launches Chromium with the cache off (see e2e/bfcache.spec.ts); Chromium sends what is still deferred
  // as a page enters the cache, so the library must take it back at pagehide.
  const browser = await chromium.launch({ executablePath, args, ignoreDefaultArgs: ['--disable-back-forward-cache'] });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await open(page, site.page('/basic.html', { opts: LONG, cache: 'revalidate' }));
    await page.evaluate(() => ((window as any).__kept = 'same document'));
    await sendFirst(page, collector);
    const ids = await track(page, 'Before Cache', 10);
    const leftAt = Date.now();
    await page.goto(site.page('/core-blank.html', { cache: 'revalidate' }));
    await collector.waitFor(10, { event: 'Before Cache' }, 10_000);
    await page.goBack({ waitUntil: 'commit' });
    await page.waitForFunction(() => document.readyState == 'complete' && (window as any).analytics?.initialized);
    expect(await page.evaluate(() => (window as any).__kept), 'restored from the back/forward cache').toBe('same document');
    await quiet(collector, 1500, 10_000, leftAt);
    expectExactlyOnce(await collector.messages({ event: 'Before Cache' }), ids);
    // Restored: what is stored now is deferred again.
    const after = await track(page, 'After Restore', 5);
    await crash(context, page);
    expectExactlyOnce(await collector.waitFor(5, { event: 'After Restore' }, 5_000), after);
  } finally {
    await browser.close();
  }
});

// Playwright keeps its pages visible (DevTools' Page.setWebLifecycleState freezes none of them), so this test drives
// the same Chromium with puppeteer-core, where a tab brought behind another is hidden and can be frozen.
test('freeze is handled like a hide: what was stored while hidden leaves before the page is frozen, once', async ({ site, collector }) => {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({ executablePath, args, headless: true });
  try {
    const page = await browser.newPage();
    await page.goto(site.page('/basic.html', { opts: LONG }));
    await page.waitForFunction(() => (window as any).analytics && (window as any).analytics.initialized);
    await page.evaluate(() => (window as any).analytics.ready());
    const firstId = await page.evaluate(async () => (await (window as any).analytics.track('First Of The Spell')).event.messageId);
    await collector.waitFor(1, { messageId: firstId }, 10_000);
    // Another tab in front: this one is hidden (its exit hand-off has nothing to send), and lives on.
    const other = await browser.newPage();
    await other.bringToFront();
    await expect.poll(() => page.evaluate(() => document.visibilityState)).toBe('hidden');
    const ids: string[] = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => a.track('Stored While Hidden', { i })));
      return rs.map((r: any) => r.event.messageId);
    });
    const cdp = await page.createCDPSession();
    await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
    // Frozen, the page runs no timer: only what left at the freeze event arrives.
    const msgs = await collector.waitFor(10, { event: 'Stored While Hidden' }, 5_000);
    expect(msgs.length, 'delivered while frozen').toBe(10);
    await cdp.send('Page.setWebLifecycleState', { state: 'active' });
    await quiet(collector, 1500, 10_000, Date.now());
    expectExactlyOnce(await collector.messages({ event: 'Stored While Hidden' }), ids);
  } finally {
    await browser.close();
  }
});
