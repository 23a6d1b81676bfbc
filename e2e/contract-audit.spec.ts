// An audit of the contract's sections 1, 3 (`linkDomains`) and 6, read as a demanding user of analytics.js would:
// each test pins a promise the other specs leave open. The link tests run across two host names of one browser
// (shop.test and checkout.test, resolved to 127.0.0.1 by this browser only), as e2e/link.spec.ts does.
import { chromium, type Browser, type Page } from '@playwright/test';
import { test, expect, ready, quiet, expectExactlyOnce, linkValue, type CollectorHandle, type SiteHandle } from './fixtures';
import { executablePath, args } from '../scripts/chromium.mjs';
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { fileURLToPath } from 'node:url';

/** Bundles e2e/worker/shared-app.js against the built npm entry into e2e/site/.built/shared-worker.js, as e2e/worker/build.ts does for a dedicated worker. */
let shared: Promise<void> | undefined;
const buildShared = () =>
  (shared ||= (async () => {
    const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
    const bundle = await rollup({ input: here('./worker/shared-app.js'), plugins: [nodeResolve({ browser: true })], logLevel: 'silent' });
    await bundle.write({ file: here('./site/.built/shared-worker.js'), format: 'iife', inlineDynamicImports: true });
    await bundle.close();
  })());

let browser: Browser;
test.beforeAll(async () => {
  browser = await chromium.launch({ executablePath, args: [...args, '--host-resolver-rules=MAP *.test 127.0.0.1'] });
});
test.afterAll(async () => browser?.close());

/** The link test page on `host`, with `linkDomains` naming the other host (and `extra` load options). */
const on = (site: SiteHandle, host: 'shop.test' | 'checkout.test', extra: Record<string, unknown> = {}) => {
  const u = new URL(site.page('link.html', { opts: JSON.stringify({ linkDomains: [host == 'shop.test' ? 'checkout.test' : 'shop.test'], ...extra }) }));
  u.hostname = host;
  return u.toString();
};
const anonymousId = (page: Page) => page.evaluate(() => (window as any).analytics.user().anonymousId() as string);
/** The shop page in a new context, ready, with its anonymous id. */
async function shop(site: SiteHandle) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(on(site, 'shop.test'));
  await ready(page);
  return { context, page, id: await anonymousId(page) };
}
/** Goes from `page` to `url` by script, with this page as referrer, and waits for the library there. */
const navigate = (page: Page, url: string) =>
  Promise.all([page.waitForURL((u) => u.hostname == 'checkout.test', { waitUntil: 'load' }), page.evaluate((u) => void setTimeout(() => (location.href = u)), url)]).then(() => ready(page));
/** The page messages sent from the checkout, once there are `min`. */
async function checkoutPages(collector: CollectorHandle, min = 1) {
  let found: any[] = [];
  await expect.poll(async () => (found = (await collector.messages({ type: 'page' })).filter((m) => new URL(m.context.page.url).hostname == 'checkout.test')).length).toBeGreaterThanOrEqual(min);
  return found;
}

// Section 3: "adopts the id and removes every such parameter from its address bar and from its messages". The
// parameter as the browser reads it (URLSearchParams: a percent-encoded name is the same name), repeated, or in a
// route fragment: none is left in the address bar, none goes on the wire.
for (const [name, make] of [
  ['a percent-encoded name (svc%5Flink)', (v: string) => `&svc%5Flink=${encodeURIComponent(v)}`],
  ['the name twice, the second encoded', (v: string) => `&svc_link=${encodeURIComponent(v)}&x=1&svc%5flink=${encodeURIComponent(v)}`],
  ['a route fragment carrying it', (v: string) => `&svc_link=${encodeURIComponent(v)}#/pay?svc_link=${encodeURIComponent(v)}&step=2`],
] as const) {
  test(`linkDomains: ${name}: adopted from a listed referrer, and no occurrence stays in the address bar or the messages`, async ({ site, collector }) => {
    const { context, page, id } = await shop(site);
    const value = await linkValue(page, id);
    await navigate(page, on(site, 'checkout.test') + make(value));
    expect(await anonymousId(page)).toBe(id);
    expect(decodeURIComponent(page.url())).not.toContain('svc_link');
    const [m] = await checkoutPages(collector);
    expect(m.anonymousId).toBe(id);
    expect(decodeURIComponent(JSON.stringify(m))).not.toContain('svc_link');
    await context.close();
  });
}

// Section 3, with section 1's "a chunk that cannot load": the page that cannot adopt (its lazy chunk fails) still
// takes the parameter off its address bar, as it does for a parameter it refuses (too old, another browser).
test('linkDomains: a checkout whose lazy chunk cannot load keeps its own id and still takes the parameter off its address bar', async ({ site, collector }) => {
  const { context, page, id } = await shop(site);
  await context.route('**/dist/analytics.debug.min.js*', (route) => route.fulfill({ status: 404, body: '' }));
  await navigate(page, on(site, 'checkout.test') + '&svc_link=' + encodeURIComponent(await linkValue(page, id)) + '#pay');
  expect(await anonymousId(page)).not.toBe(id);
  expect(page.url()).not.toContain('svc_link');
  expect(new URL(page.url()).hash).toBe('#pay');
  const [m] = await checkoutPages(collector);
  expect(JSON.stringify(m)).not.toContain('svc_link');
  await context.close();
});

// Sections 3 (`consent` and `linkDomains`): a checkout in consent-pending mode adopts the id at once, in memory; the
// held calls go at the grant under it, and it then persists; before the grant nothing is stored.
test('linkDomains with consent pending: the held calls go at the grant under the adopted id, which then persists; nothing stored before', async ({ site, collector }) => {
  const { context, page, id } = await shop(site);
  const opts = { consent: { categories: ['analytics'] } };
  const u = new URL(on(site, 'checkout.test'));
  u.searchParams.set('opts', JSON.stringify({ linkDomains: ['shop.test'], ...opts }));
  await navigate(page, u.toString() + '&svc_link=' + encodeURIComponent(await linkValue(page, id)));
  expect(page.url()).not.toContain('svc_link');
  expect(await anonymousId(page)).toBe(id);
  expect((await context.cookies('http://checkout.test')).map((c) => c.name)).toEqual([]);
  expect(await page.evaluate(() => localStorage.length)).toBe(0);
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  const [m] = await checkoutPages(collector);
  expect(m.anonymousId).toBe(id);
  await page.reload();
  await ready(page);
  expect(await anonymousId(page)).toBe(id);
  await context.close();
});

// Section 1, workers and extensions: the npm entry in a shared worker (one library for every page that connects): no
// DOM touched, no `page` or `screen` in the context, each message once, and the anonymous id kept in IndexedDB (a
// shared worker has no localStorage or cookie): a new shared worker, after every page closed, has the same.
test('a shared worker tracks for the pages that connect: each message once, no page context, the anonymous id kept in IndexedDB', async ({ context, page, site, collector }) => {
  await buildShared();
  const run = (p: Page, name: string, n: number) =>
    p.evaluate(
      ([api, name, n]) =>
        new Promise<any>((resolve) => {
          const w = new SharedWorker('/.built/shared-worker.js');
          w.onerror = () => resolve({ error: 'shared worker error' });
          w.port.onmessage = (e) => resolve(e.data);
          w.port.postMessage({ api, name, n });
        }),
      [collector.url, name, n] as const,
    );
  await page.goto(site.page('/worker.html'));
  const second = await context.newPage();
  await second.goto(site.page('/worker.html'));
  const [a, b] = await Promise.all([run(page, 'Shared A', 3), run(second, 'Shared B', 2)]);
  for (const r of [a, b]) expect(r.error).toBeUndefined();
  expect(a.errors).toEqual([]);
  expect(b.anonymousId).toBe(a.anonymousId);
  const ids = [...a.events, ...b.events].map((m: any) => m.messageId);
  await collector.waitFor(ids.length, { anonymousId: a.anonymousId });
  await quiet(collector);
  const got = await collector.messages({ anonymousId: a.anonymousId });
  expectExactlyOnce(got, ids);
  for (const m of got) {
    expect(m.context.page, m.type).toBeUndefined();
    expect(m.context.screen, m.type).toBeUndefined();
  }
  expect(got.find((m: any) => m.type == 'page').name).toBe('Shared Worker View');
  // Every page closed, the shared worker ends; a page opened later starts a new one: same anonymous id.
  await second.close();
  await page.goto('about:blank');
  // (a page that still finds the old worker, not yet ended, closes and tries again)
  await expect
    .poll(
      async () => {
        const p = await context.newPage();
        await p.goto(site.page('/worker.html'));
        const r = await run(p, 'Shared C', 1);
        await p.close();
        return r.started == a.started ? 'the same worker' : r.anonymousId;
      },
      { timeout: 20_000 },
    )
    .toBe(a.anonymousId);
});


// Section 1 ("a call that needs a chunk keeps its place") with section 2 (`optOut`) and section 3 (`consent`): what
// waits for the middleware chunk is the visitor's too. An opt-out or a withdrawal of consent made while it waits
// erases it (the page's wait and the copy kept for a later page): nothing of it is sent when the chunk comes, nor by
// a later page.
for (const [label, opts, revoke] of [
  ['an opt-out', {}, 'optOut'],
  ['a withdrawal of consent', { consent: { categories: ['analytics'] } }, 'withdraw'],
] as const) {
  test(`middleware chunk: ${label} while messages wait for it sends none of them, on this page or a later one`, async ({ page, site, collector }) => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    await page.route('**/dist/analytics.extend.min.js*', async (route) => {
      await released;
      await route.continue().catch(() => {});
    });
    const url = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50, ...opts }) });
    await page.goto(url);
    await ready(page);
    if (revoke == 'withdraw') await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
    await page.evaluate(() => {
      const a = (window as any).analytics;
      a.addSourceMiddleware(({ payload, next }: any) => next(payload));
      for (const n of ['Waiting 1', 'Waiting 2']) void a.track(n).catch(() => {});
    });
    await page.evaluate((revoke) => {
      const a = (window as any).analytics;
      revoke == 'optOut' ? a.optOut() : a.consent({ analytics: false });
    }, revoke);
    expect(await page.evaluate(() => localStorage.getItem('svc_wait'))).toBeNull();
    release();
    await page.waitForFunction(() => (window as any).svcAnalyticsExtend);
    await page.evaluate(() => (window as any).analytics.track('After Revoke').catch(() => {}));
    // A later page of the site (opted in, or granted) finds nothing of them either.
    await page.goto(url);
    await ready(page);
    await page.evaluate((revoke) => {
      const a = (window as any).analytics;
      revoke == 'optOut' ? a.optIn() : a.consent({ analytics: true });
      return a.track('Later Page');
    }, revoke);
    await collector.waitFor(1, { event: 'Later Page' });
    await quiet(collector);
    expect((await collector.messages({ type: 'track' })).map((m: any) => m.event)).toEqual(['Later Page']);
  });
}

// Section 1: "messages ... pass every middleware added before them; what waits is kept where a later page of the site
// finds it". A site adds its middleware (a scrubber, say) in its snippet on every page: what a page left waiting for
// the chunk goes from the next page through that page's middleware too, never without it.
test('middleware chunk: what a page left waiting goes from the next page through the middleware its snippet adds', async ({ page, site, collector }) => {
  await page.route('**/dist/analytics.extend.min.js*', () => {});
  const url = site.page('/startup-mw.html');
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(() => (window as any).analytics?.initialized);
  await page.evaluate(() => {
    for (const n of ['Left 1', 'Left 2']) void (window as any).analytics.track(n);
  });
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.goto(url);
  const got = await collector.waitFor(2, { type: 'track' }, 15_000).then(() => collector.messages({ type: 'track' }));
  await quiet(collector);
  expect(got.map((m: any) => [m.event, m.properties.mw])).toEqual([
    ['Left 1', true],
    ['Left 2', true],
  ]);
});

// The same with the npm entry, as an app writes it: `AnalyticsBrowser.load(...)`, then its middleware, in the same
// script. What the page before left waiting (its middleware still had it: an answer that comes later) goes through it.
// (served by a route, a page is not of the loopback address space: it sends through the site's /ingest proxy)
test('npm entry: what a page left waiting for its middleware goes from the next page through the middleware added right after load', async ({ page, site, collector }) => {
  const app = (slow: boolean) => `<!doctype html><html><head><meta charset="utf-8"><title>npm middleware</title>
<script type="importmap">{ "imports": { "idb-keyval": "/node_modules/idb-keyval/dist/index.js" } }</script>
<script type="module">
  import { AnalyticsBrowser } from '/dist/index.mjs';
  const analytics = AnalyticsBrowser.load({ writeKey: 'dev-write-key' }, { apiHost: '/ingest', flushInterval: 50 });
  window.analytics = analytics;
  // (the site's scrubber, on every page; the first page's check answers late)
  analytics.addSourceMiddleware(({ payload, next }) => ((payload.obj.properties.scrubbed = true), ${slow ? 'setTimeout(() => next(payload), 5000)' : 'next(payload)'}));
</script></head><body>npm</body></html>`;
  for (const [path, slow] of [['/audit-npm-slow.html', true], ['/audit-npm.html', false]] as const)
    await page.route((u) => u.pathname == path, (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/html' }, body: app(slow) }));
  await page.goto(site.page('/audit-npm-slow.html'));
  await page.waitForFunction(() => (window as any).analytics?.initialized);
  await page.evaluate(() => void (window as any).analytics.track('Left Waiting', { email: 'x@y.z' }));
  await expect.poll(() => page.evaluate(() => localStorage.getItem('svc_wait'))).toContain('Left Waiting');
  await page.goto(site.page('/audit-npm.html'));
  const [m] = await collector.waitFor(1, { event: 'Left Waiting' });
  await quiet(collector);
  expect(await collector.messages({ event: 'Left Waiting' })).toHaveLength(1);
  expect(m.properties.scrubbed).toBe(true);
});

// Section 6: "Stored messages and recorded stub calls are bound to the write key and apiHost they were made under. A
// page that loads with another write key or host never sends them; they wait for a page with theirs." What a page
// left for a later one (the stub's calls, the bundle never came; messages waiting for the middleware chunk), then a
// page of another write key, or of another apiHost (the site's /ingest proxy: the same collector, so any leak shows),
// then a page of their own, which sends each once.
for (const [left, other] of [
  ['the stub\'s recorded calls', { key: 'other-write-key' }],
  ['the stub\'s recorded calls', { apiHost: '/ingest' }],
  ['messages waiting for the middleware chunk', { key: 'other-write-key' }],
  ['messages waiting for the middleware chunk', { apiHost: '/ingest' }],
] as const) {
  test(`binding: ${left} are not sent by a page of ${'key' in other ? 'another write key' : 'another apiHost'}, and are by a page of theirs`, async ({ page, site, collector }) => {
    const own = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) });
    let ids: string[] = [];
    if (left == 'the stub\'s recorded calls') {
      await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50, cdnUrl: '/never-arrives.js' }) }));
      await page.evaluate(() => ['Left 1', 'Left 2'].forEach((n) => (window as any).analytics.track(n)));
    } else {
      await page.route('**/dist/analytics.extend.min.js*', () => {});
      await page.goto(own, { waitUntil: 'domcontentloaded' });
      await ready(page);
      await page.evaluate(() => {
        const a = (window as any).analytics;
        a.addSourceMiddleware(({ payload, next }: any) => next(payload));
        ['Left 1', 'Left 2'].forEach((n) => void a.track(n));
      });
      ids = await page.evaluate(() => JSON.parse(localStorage.getItem('svc_wait') || '[]').map((e: any) => e[0].messageId));
      expect(ids).toHaveLength(2);
      // (the chunk never comes: the pages after this one add no middleware, and need none)
    }
    // The other page: its own call goes; the left ones do not.
    const params: Record<string, string> = { opts: JSON.stringify({ flushInterval: 50, ...('apiHost' in other ? { apiHost: other.apiHost } : {}) }) };
    if ('key' in other) params.key = other.key;
    await page.goto(site.page('/basic.html', params));
    await ready(page);
    await page.evaluate(() => (window as any).analytics.track('Other Binding'));
    // (every request the collector received, whatever its key: the collector accepts only the tests' one, and answers
    // the other 401, which the library retries)
    const received = async () => (await collector.requests()).flatMap((r: any) => r.messages || []).filter((m: any) => m.type == 'track').map((m: any) => m.event);
    await expect.poll(received).toContain('Other Binding');
    await quiet(collector, 1000);
    expect([...new Set(await received())]).toEqual(['Other Binding']);
    // A page of their own sends them, once.
    await page.goto(own);
    await ready(page);
    await collector.waitFor(1, { event: 'Left 2' });
    await quiet(collector);
    const sent = (await collector.messages({ type: 'track' })).filter((m: any) => m.event.startsWith('Left'));
    expect(sent.map((m: any) => m.event).sort()).toEqual(['Left 1', 'Left 2']);
    if (ids.length) expect(sent.map((m: any) => m.messageId).sort()).toEqual([...ids].sort());
  });
}

// Section 3 `trackPageViews` ("on every same-document URL change") with section 1 ("a page that ends first loses
// nothing"; "a chunk that cannot load loses no call"): a route change made while the sources chunk is still loading,
// on a page then left before it came, or whose chunk failed, is still a page view.
// (Until the chunk is here, and for good if it cannot load, the bundle's own wrap of history.pushState makes the page
// view at once: src/api/analytics.ts `watchPages`. Both tests failed before it: the chunk alone wrapped pushState.)
// (A chunk slow to come: answered 10 s later, long after the page was left. A route held unanswered for good lost the
// resolved page view in 1 of 8 runs (and once in a clean-clone CI): an open question, noted for delivery.)
for (const how of ['left before the chunk came', 'whose chunk failed'] as const) {
  test(`trackPageViews: a route change on a page ${how} is a page view`, async ({ page, site, collector }) => {
    await page.route('**/dist/analytics.sources.min.js*', (route) => (how == 'whose chunk failed' ? route.fulfill({ status: 404, body: '' }) : setTimeout(() => route.continue().catch(() => {}), 10_000)));
    await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50, trackPageViews: true }) }), { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => (window as any).analytics?.initialized);
    await collector.waitFor(1, { type: 'page' });
    // (left once the page view's call resolved, durably queued: CONTRACT section 4 promises its delivery from then on;
    // left sooner, it may still be on its way to storage as the page goes, and a clean-clone CI run lost it once)
    await page.evaluate(() => new Promise((resolve) => ((window as any).analytics.once('page', resolve), history.pushState({}, '', '/basic.html?step=2'))));
    if (how == 'left before the chunk came') await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) }), { waitUntil: 'domcontentloaded' });
    await expect.poll(async () => (await collector.messages({ type: 'page' })).map((m: any) => m.properties.search)).toContain('?step=2');
  });
}

// Sections 2 (`optOut`), 3 (`respectGPC`, `consent`) and 3 (`linkDomains`): a visitor who opted out (or whose browser
// sends Global Privacy Control to a site that respects it, or who denied consent) is not carried to the other domain:
// links there are left as they are.
for (const [label, extra, before] of [
  ['opted out', {}, 'optOut'],
  ['under Global Privacy Control', { respectGPC: true }, 'gpc'],
  ['who denied consent', { consent: { categories: ['analytics'] } }, 'deny'],
] as const) {
  test(`linkDomains: a visitor ${label} is not carried by a link to a listed domain`, async ({ site }) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    if (before == 'gpc') await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true, configurable: true }));
    await page.goto(on(site, 'shop.test', extra));
    await ready(page);
    // (opted out after load: the decoration's chunk, asked for at load, is here and listening)
    if (before == 'optOut') await page.waitForFunction(() => (window as any).svcAnalyticsDebug);
    await page.evaluate((before) => {
      const a = (window as any).analytics;
      if (before == 'optOut') a.optOut();
      if (before == 'deny') a.consent({ analytics: false });
    }, before);
    const target = on(site, 'checkout.test') + '&step=2';
    await page.evaluate((href) => {
      const a = Object.assign(document.createElement('a'), { id: 'go', textContent: 'go', href });
      a.addEventListener('click', (e) => e.preventDefault());
      document.body.append(a);
    }, target);
    await page.click('#go');
    expect(await page.getAttribute('#go', 'href')).toBe(target);
    await context.close();
  });
}

// Section 3 `linkDomains`: "A link ... from the page to one of them carries the anonymous id": a link opened from its
// context menu ("Open link in new tab", "Open in new window") too. The browser's menu takes the href as the menu opens
// (the `contextmenu` event; no click follows): the tab it opens, with this page as referrer, adopts the id.
test('linkDomains: a link opened from its context menu carries the id, and the tab it opens adopts it', async ({ site }) => {
  const { context, page, id } = await shop(site);
  await page.waitForFunction(() => (window as any).svcAnalyticsDebug);
  const target = on(site, 'checkout.test') + '&step=2';
  await page.evaluate((href) => document.body.append(Object.assign(document.createElement('a'), { id: 'go', textContent: 'go', href })), target);
  // (the event alone, as the native menu gets it: no auxclick follows where the menu opens, as it does in a headless
  // right click)
  await page.dispatchEvent('#go', 'contextmenu', { button: 2 });
  const href = (await page.getAttribute('#go', 'href'))!;
  expect(href).toContain('svc_link=');
  // (what the menu's "Open link in new tab" does: a new tab at that URL, with the shop's origin as referrer)
  const tab = await context.newPage();
  await tab.goto(href, { referer: new URL(page.url()).origin + '/' });
  await ready(tab);
  expect(await anonymousId(tab)).toBe(id);
  expect(tab.url()).not.toContain('svc_link');
  await context.close();
});

// Sections 1 and 3 (`consent`): a consent-pending page whose calls wait for the middleware chunk keeps them in memory
// only (nothing in localStorage, no cookie); at a grant they go once the chunk is here, through the middleware, in
// call order, under the anonymous id that then persists; at a denial nothing is sent or stored.
for (const decision of ['grant', 'deny'] as const) {
  test(`consent pending with the middleware chunk still loading: ${decision}`, async ({ page, site, collector }) => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    await page.route('**/dist/analytics.extend.min.js*', async (route) => {
      await released;
      await route.continue().catch(() => {});
    });
    await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50, consent: { categories: ['analytics'] } }) }));
    await ready(page);
    await page.evaluate(() => {
      const a = (window as any).analytics;
      void a.track('Before Middleware').catch(() => {});
      a.addSourceMiddleware(({ payload, next }: any) => ((payload.obj.properties.mw = true), next(payload)));
      for (const n of ['Held 1', 'Held 2']) void a.track(n).catch(() => {});
    });
    const stored = () => page.evaluate(() => ({ local: Object.keys(localStorage), cookie: document.cookie }));
    expect(await stored()).toEqual({ local: [], cookie: '' });
    await page.evaluate((d) => (window as any).analytics.consent({ analytics: d == 'grant' }), decision);
    release();
    await page.waitForFunction(() => (window as any).svcAnalyticsExtend);
    if (decision == 'deny') {
      await quiet(collector, 1000);
      expect(await collector.messages()).toEqual([]);
      expect(await stored()).toEqual({ local: [], cookie: '' });
      return;
    }
    await collector.waitFor(3, { type: 'track' });
    await quiet(collector);
    const got = await collector.messages({ type: 'track' });
    expect(got.map((m: any) => [m.event, m.properties.mw])).toEqual([
      ['Before Middleware', undefined],
      ['Held 1', true],
      ['Held 2', true],
    ]);
    expect(new Set(got.map((m: any) => m.anonymousId))).toEqual(new Set([await page.evaluate(() => (window as any).analytics.user().anonymousId())]));
    expect(await page.evaluate(() => localStorage.getItem('svc_wait'))).toBeNull();
  });
}

// Section 1 ("a chunk that cannot load loses no call ... reported through 'error'") with section 2 ("none throws"):
// a host that answers a missing file with its HTML page (a single-page app's fallback) and 200: the middleware chunk
// is refused (not the library's), reported, and what waits is held; nothing else.
test('a middleware chunk answered 200 with an HTML page: reported, the calls held, then sent once a real chunk comes', async ({ page, site, collector }) => {
  let html = true;
  await page.route('**/dist/analytics.extend.min.js*', (route) =>
    html ? route.fulfill({ status: 200, headers: { 'Content-Type': 'text/html' }, body: '<!doctype html><html><body>Not found</body></html>' }) : route.continue(),
  );
  const thrown: string[] = [];
  page.on('pageerror', (e) => thrown.push(e.message));
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) }));
  await ready(page);
  const codes: string[] = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const codes: string[] = [];
    a.on('error', (e: any) => codes.push(e.code));
    a.addSourceMiddleware(({ payload, next }: any) => ((payload.obj.properties.mw = true), next(payload)));
    void a.track('Held By Chunk');
    for (let i = 0; i < 100 && !codes.length; i++) await new Promise((r) => setTimeout(r, 20));
    return codes;
  });
  expect(codes).toEqual(['middleware_error']);
  await quiet(collector, 500, 3000);
  expect(await collector.messages()).toEqual([]);
  html = false;
  await page.evaluate(() => (window as any).analytics.track('After'));
  await collector.waitFor(2, { type: 'track' });
  await quiet(collector);
  expect((await collector.messages({ type: 'track' })).map((m: any) => [m.event, m.properties.mw])).toEqual([
    ['Held By Chunk', true],
    ['After', true],
  ]);
  // (the browser itself reports the HTML's SyntaxError, "Unexpected token '<'", as an uncaught error of the page: the
  // library inserted the script but never ran it; see the h50 report)
  expect(thrown.every((m) => /Unexpected token/.test(m))).toBe(true);
});

// Section 1, workers and extensions ("no DOM touched where there is none"): a site shares its load options between its
// pages and its worker. In a dedicated worker, options about the page (trackPageViews, linkDomains) throw nothing,
// there or uncaught, and the worker's events still go.
let optionsWorker: Promise<void> | undefined;
const buildOptionsWorker = () =>
  (optionsWorker ||= (async () => {
    const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
    const bundle = await rollup({ input: here('./worker/options-app.js'), plugins: [nodeResolve({ browser: true })], logLevel: 'silent' });
    await bundle.write({ file: here('./site/.built/options-worker.js'), format: 'iife', inlineDynamicImports: true });
    await bundle.close();
  })());
for (const [label, opts, calls] of [
  ['trackPageViews', { trackPageViews: true }],
  ['linkDomains', { linkDomains: ['shop.test'] }],
  ['serverCookies (a first-party path)', { serverCookies: true, apiHost: '/ingest' }],
  ['debug', { debug: true }],
  ['trackLink, trackForm, pageview, page and screen called', {}, ['trackLink', 'trackForm', 'trackClick', 'trackSubmit', 'pageview', 'page', 'screen']],
] as [string, object, string[]?][]) {
  test(`a dedicated worker loaded with ${label}: nothing thrown, its events go`, async ({ page, site, collector }) => {
    await buildOptionsWorker();
    await page.goto(site.page('/basic.html', { noload: '1' }));
    const answer = await page.evaluate(
      ([api, opts, calls]) =>
        new Promise<any>((resolve) => {
          const w = new Worker('/.built/options-worker.js');
          w.onmessage = (e) => resolve(e.data);
          w.onerror = (e) => resolve({ thrown: ['worker error: ' + e.message] });
          w.postMessage({ api, opts, calls, name: 'Worker With Options' });
        }),
      [collector.url, opts, calls || []] as const,
    );
    expect(answer.thrown).toEqual([]);
    await collector.waitFor(1, { messageId: answer.id });
  });
}
