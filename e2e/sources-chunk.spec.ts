import type { Page, Route } from '@playwright/test';
import { test, expect, open, quiet, type CollectorHandle } from './fixtures';

// CONTRACT section 1, core and edges: trackLink/trackForm (and their aliases trackClick/trackSubmit) come in a chunk
// of their own (dist/analytics.sources.min.js), fetched on the first of those calls. The elements are bound once it is
// here, in call order, and `ready()` waits for it; a chunk that cannot load is reported (`chunk_unavailable`), never
// thrown, and what waits is bound once a later call fetches it again.

const SOURCES = '**/dist/analytics.sources.min.js*';

const openBasic = (page: Page, site: { page(p: string, q?: Record<string, string>): string }) => open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) }));

/** The URLs of the sources chunk the page fetches. */
function sourcesFetches(page: Page): string[] {
  const fetched: string[] = [];
  page.on('request', (r) => void (r.url().includes('analytics.sources.min.js') && fetched.push(r.url())));
  return fetched;
}

/** Adds two clickable elements without a link (a click on them navigates nowhere), `#a` and `#b`. */
const addTargets = (page: Page) =>
  page.evaluate(() => {
    for (const id of ['a', 'b']) {
      const el = document.createElement('button');
      el.id = id;
      el.textContent = id;
      document.body.appendChild(el);
    }
  });

test('trackLink and trackForm fetch the sources chunk once, ready() waits for it, and a click right after is tracked once', async ({ page, site, collector }) => {
  const fetched = sourcesFetches(page);
  await openBasic(page, site);
  expect(fetched, 'a page that calls neither fetches nothing').toEqual([]);
  await addTargets(page);
  // The chunk is held until both calls were made: neither binds before it is here.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route(SOURCES, async (route: Route) => {
    await held;
    await route.continue();
  });
  await page.evaluate(() => {
    const a = (window as any).analytics;
    a.trackLink(document.getElementById('a'), 'Clicked A', { which: 'a' });
    a.trackClick(document.getElementById('b'), (el: Element) => 'Clicked ' + el.id.toUpperCase());
    (window as any).__ready = false;
    a.ready(() => ((window as any).__ready = true));
  });
  await expect.poll(() => fetched.length).toBe(1);
  expect(await page.evaluate(() => (window as any).__ready), 'ready() waits for the chunk').toBe(false);
  release();
  await page.waitForFunction(() => (window as any).__ready === true);
  await page.click('#a');
  await page.click('#b');
  const msgs = await collector.waitFor(2, { type: 'track' });
  await quiet(collector, 500);
  expect((await collector.messages({ type: 'track' })).map((m) => [m.event, m.properties])).toEqual([
    ['Clicked A', { which: 'a' }],
    ['Clicked B', {}],
  ]);
  expect(msgs).toHaveLength(2);
  expect(fetched).toHaveLength(1);
});

test('a sources chunk that cannot load is reported, never thrown, and a later call fetches it again and binds what waited', async ({ page, site, collector }) => {
  const fetched = sourcesFetches(page);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  let failures = 1;
  await page.route(SOURCES, (route: Route) => (failures-- > 0 ? route.fulfill({ status: 404, body: '' }) : route.continue()));
  await openBasic(page, site);
  await addTargets(page);
  const first = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const errors: string[] = ((window as any).__errors = []);
    a.on('error', (e: any) => errors.push(e.code));
    const returned = a.trackLink(document.getElementById('a'), 'Clicked A') === a;
    await a.ready();
    return { returned, errors: errors.slice() };
  });
  expect(first).toEqual({ returned: true, errors: ['chunk_unavailable'] });
  // The next call fetches the chunk again: both elements are bound, in call order.
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    a.trackLink(document.getElementById('b'), 'Clicked B');
    await a.ready();
  });
  await page.click('#a');
  await page.click('#b');
  await collector.waitFor(2, { type: 'track' });
  await quiet(collector, 500);
  expect((await collector.messages({ type: 'track' })).map((m) => m.event)).toEqual(['Clicked A', 'Clicked B']);
  expect(fetched).toHaveLength(2);
  expect(pageErrors).toEqual([]);
});

test('a sources chunk the network never answers holds ready() for 3 s at most', async ({ page, site }) => {
  await page.route(SOURCES, () => {}); // never answered
  await openBasic(page, site);
  await addTargets(page);
  const waited = await page.evaluate(async () => {
    const a = (window as any).analytics;
    a.trackLink(document.getElementById('a'), 'Clicked A');
    const t0 = performance.now();
    await a.ready();
    return performance.now() - t0;
  });
  expect(waited).toBeGreaterThanOrEqual(2900);
  expect(waited).toBeLessThan(6000);
});

// trackPageViews: the page view at load is the bundle's own (it never waits for the chunk); the watch of later URL
// changes comes with the sources chunk, and a change made while it loads is seen once it is here.
const openPageViews = (page: Page, site: { page(p: string, q?: Record<string, string>): string }) =>
  page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50, trackPageViews: true }) }));

/** Holds the sources chunk's response until the returned function is called. */
async function holdSources(page: Page) {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route(SOURCES, async (route: Route) => {
    await held;
    await route.continue();
  });
  return release;
}

test('trackPageViews: the page view at load leaves before the sources chunk is here; a route change made meanwhile is a page view once it is', async ({ page, site, collector }) => {
  const fetched = sourcesFetches(page);
  const release = await holdSources(page);
  await openPageViews(page, site);
  // (the chunk is held: the load's page view is delivered without it)
  const first = await collector.waitFor(1, { type: 'page' });
  expect(first[0].properties?.path).toBe('/basic.html');
  await expect.poll(() => fetched.length).toBe(1);
  await page.evaluate(() => history.pushState({}, '', '/basic.html?step=2'));
  release();
  const views = await collector.waitFor(2, { type: 'page' });
  await quiet(collector, 500);
  const all = await collector.messages({ type: 'page' });
  expect(all.map((m) => m.properties?.search)).toEqual([expect.stringContaining('trackPageViews'), '?step=2']);
  expect(all[1].properties?.referrer).toContain('/basic.html');
  expect(views).toHaveLength(2);
  // once here, later changes are seen as before
  await page.evaluate(() => history.pushState({}, '', '/basic.html?step=3'));
  await collector.waitFor(3, { type: 'page' });
  expect(fetched).toHaveLength(1);
});

test('trackPageViews with a sources chunk that cannot load: the page view at load is sent, the failure reported, nothing thrown', async ({ page, site, collector }) => {
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.addInitScript(() => {
    const errors: string[] = ((window as any).__errors = []);
    // (on the stub, before the bundle: the load's error is heard)
    const w = window as any;
    const hook = () => w.analytics && w.analytics.on && w.analytics.on('error', (e: any) => errors.push(e.code));
    document.addEventListener('DOMContentLoaded', hook);
  });
  await page.route(SOURCES, (route: Route) => route.fulfill({ status: 404, body: '' }));
  await openPageViews(page, site);
  const first = await collector.waitFor(1, { type: 'page' });
  expect(first[0].properties?.path).toBe('/basic.html');
  await page.waitForFunction(() => (window as any).__errors.includes('chunk_unavailable'));
  expect(pageErrors).toEqual([]);
});

// Back, forward, then a hash change (a popstate too), each waited for by the app's route event (see the router below);
// then quiet.
async function backForwardHash(page: Page, collector: CollectorHandle) {
  await page.goBack();
  await collector.waitFor(1, { event: 'Route Viewed' });
  await page.goForward();
  await collector.waitFor(2, { event: 'Route Viewed' });
  await page.evaluate(() => (location.hash = 'part'));
  await collector.waitFor(1, { event: 'Hash Viewed' });
  await quiet(collector, 300);
}

test('trackPageViews: on back, forward and hash changes the page view comes before the events of an app listening since before the chunk came, a frame after the change', async ({ page, site, collector }) => {
  const fetched = sourcesFetches(page);
  const release = await holdSources(page);
  await openPageViews(page, site);
  await collector.waitFor(1, { type: 'page' });
  await expect.poll(() => fetched.length).toBe(1);
  // The app's router, as the demo's: it starts listening while the chunk loads, and tracks its route's event a frame
  // after the change (once the page view is sent, as it expects).
  await page.evaluate(() => {
    const later = (name: string) => requestAnimationFrame(() => setTimeout(() => (window as any).analytics.track(name, { at: location.search + location.hash })));
    addEventListener('popstate', () => later('Route Viewed'));
    addEventListener('hashchange', () => later('Hash Viewed'));
  });
  release();
  await page.evaluate(() => history.pushState({}, '', '/basic.html?step=2'));
  await collector.waitFor(2, { type: 'page' });
  await page.evaluate(() => history.pushState({}, '', '/basic.html?step=3'));
  await collector.waitFor(3, { type: 'page' });
  await backForwardHash(page, collector);
  const label = (m: any) => (m.type == 'page' ? 'page ' + m.properties.search + m.properties.url.replace(/^[^#]*/, '') : m.event + ' ' + m.properties.at);
  const all = (await collector.messages()).filter((m: any) => m.type == 'page' || m.event).map(label);
  expect(all.slice(3)).toEqual(['page ?step=2', 'Route Viewed ?step=2', 'page ?step=3', 'Route Viewed ?step=3', 'page ?step=3#part', 'Route Viewed ?step=3#part', 'Hash Viewed ?step=3#part']);
  expect(fetched).toHaveLength(1);
});

test('trackPageViews: on back, forward and hash changes the page view comes before the events of an app that listened before the bundle ran (the bundle came late), a frame after the change', async ({ page, site, collector }) => {
  // The app's router listens from the start of the document, before the bundle runs: listeners run in the order they
  // were added, so the bundle's own must not depend on coming first (it reads the change in the next frame itself).
  await page.addInitScript(() => {
    const later = (name: string) => requestAnimationFrame(() => setTimeout(() => (window as any).analytics.track(name, { at: location.search + location.hash })));
    addEventListener('popstate', () => later('Route Viewed'));
    addEventListener('hashchange', () => later('Hash Viewed'));
  });
  await openPageViews(page, site);
  await collector.waitFor(1, { type: 'page' });
  await page.evaluate(() => history.pushState({}, '', '/basic.html?step=2'));
  await collector.waitFor(2, { type: 'page' });
  await backForwardHash(page, collector);
  // (where: the step of the URL, or 'start' for the page's own URL, and its fragment)
  const where = (s: string) => (s.match(/step=\d/)?.[0] || 'start') + (s.includes('#part') ? '#part' : '');
  const label = (m: any) => (m.type == 'page' ? 'page ' + where(m.properties.url) : m.event + ' ' + where(m.properties.at));
  const all = (await collector.messages()).filter((m: any) => m.type == 'page' || m.event).map(label);
  expect(all.slice(2)).toEqual(['page start', 'Route Viewed start', 'page step=2', 'Route Viewed step=2', 'page step=2#part', 'Route Viewed step=2#part', 'Hash Viewed step=2#part']);
});
