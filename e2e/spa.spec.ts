import type { Page } from '@playwright/test';
import { test, expect, open, ready, sleep, type CollectorHandle } from './fixtures';

// SPA page views (`trackPageViews: true`) through the snippet, on e2e/site/x-spa.html and its router
// (e2e/site/x-router.js): the router changes the URL first and renders the route's title afterwards.

const OPTS = JSON.stringify({ flushInterval: 50 });

/**
 * A bounded "nothing more is coming" point: lets the page run two frames and the library's 100 ms fallback, sends a
 * marker event and waits until the collector has it. Page views queued before the marker were sent with or before it.
 */
function barrier(page: Page, collector: CollectorHandle) {
  let n = 0;
  return async () => {
    n += 1;
    await page.evaluate(
      (i) =>
        new Promise<void>((resolve) =>
          requestAnimationFrame(() =>
            requestAnimationFrame(() => setTimeout(() => (window as any).analytics.track('Barrier', { i }).then(() => resolve()), 250)),
          ),
        ),
      n,
    );
    const got = await collector.waitFor(n, { event: 'Barrier' }, 10000);
    expect(got, `barrier ${n} reached the collector`).toHaveLength(n);
    return collector.messages({ type: 'page' });
  };
}

/** The SPA test page, ready (the fixtures' `open`): its URL and origin. */
async function openSpa(page: Page, site: { page(p: string, q?: Record<string, string>): string }) {
  const url = site.page('/x-spa.html', { opts: OPTS });
  await open(page, url);
  return { url, origin: new URL(url).origin };
}

test('one page view at load, with the page facts in properties and context', async ({ page, site, collector }) => {
  const { url } = await openSpa(page, site);
  const pages = await barrier(page, collector)();
  expect(pages).toHaveLength(1);
  const [p] = pages;
  expect(p.type).toBe('page');
  expect(p.properties).toMatchObject({ url, path: '/x-spa.html', search: new URL(url).search, title: 'SPA Home', referrer: '' });
  expect(p.context.page).toMatchObject({ url, path: '/x-spa.html', title: 'SPA Home' });
});

test('pushState navigations: one page view each, with the previous URL as referrer and the new URL', async ({ page, site, collector }) => {
  const { url, origin } = await openSpa(page, site);
  const settle = barrier(page, collector);
  await settle();

  // The router sets the title in a microtask after pushState.
  await page.evaluate(() => (window as any).router.push('/x-spa/products', 'microtask'));
  let pages = await settle();
  expect(pages).toHaveLength(2);
  expect(pages[1].properties).toMatchObject({
    url: origin + '/x-spa/products',
    path: '/x-spa/products',
    search: '',
    referrer: url,
    title: 'Products | Shop',
  });
  expect(pages[1].context.page).toMatchObject({ url: origin + '/x-spa/products', referrer: url, title: 'Products | Shop' });

  await page.evaluate(() => (window as any).router.push('/x-spa/cart?step=1', 'microtask'));
  pages = await settle();
  expect(pages).toHaveLength(3);
  expect(pages[2].properties).toMatchObject({
    url: origin + '/x-spa/cart?step=1',
    path: '/x-spa/cart',
    search: '?step=1',
    referrer: origin + '/x-spa/products',
    title: 'Cart | Shop',
  });
  // Call order is kept: each page view was queued after the previous one.
  expect(pages[1].messageId < pages[2].messageId).toBe(true);
});

test('a link click whose route renders its title in the next animation frame: the page view carries the new title', async ({
  page,
  site,
  collector,
}) => {
  const { url, origin } = await openSpa(page, site);
  const settle = barrier(page, collector);
  await settle();

  // The router calls pushState, then renders in requestAnimationFrame (the "next render") and sets the title there.
  await page.click('#to-products');
  await expect(page).toHaveTitle('Products | Shop');
  const pages = await settle();
  expect(pages).toHaveLength(2);
  expect(pages[1].properties).toMatchObject({
    url: origin + '/x-spa/products',
    path: '/x-spa/products',
    referrer: url,
    title: 'Products | Shop',
  });
});

test('replaceState: same URL sends nothing, a new URL sends one page view', async ({ page, site, collector }) => {
  const { url, origin } = await openSpa(page, site);
  const settle = barrier(page, collector);
  await settle();

  await page.evaluate(() => history.replaceState({ scroll: 120 }, '', location.href));
  await page.evaluate(() => history.replaceState({ scroll: 240 }, ''));
  expect(await settle()).toHaveLength(1);

  await page.evaluate(() => (window as any).router.replace('/x-spa/replaced', 'microtask'));
  const pages = await settle();
  expect(pages).toHaveLength(2);
  expect(pages[1].properties).toMatchObject({ url: origin + '/x-spa/replaced', path: '/x-spa/replaced', referrer: url, title: 'Replaced | Shop' });
});

test('back and forward send one page view each, with the URL navigated to', async ({ page, site, collector }) => {
  const { url, origin } = await openSpa(page, site);
  const settle = barrier(page, collector);
  await page.evaluate(() => (window as any).router.push('/x-spa/products'));
  await sleep(200); // spacing: two navigations, not one
  await page.evaluate(() => (window as any).router.push('/x-spa/cart'));
  let pages = await settle();
  expect(pages.map((p) => p.properties.path)).toEqual(['/x-spa.html', '/x-spa/products', '/x-spa/cart']);

  await page.goBack();
  await expect(page).toHaveURL(origin + '/x-spa/products');
  pages = await settle();
  expect(pages).toHaveLength(4);
  expect(pages[3].properties).toMatchObject({
    url: origin + '/x-spa/products',
    path: '/x-spa/products',
    referrer: origin + '/x-spa/cart',
    title: 'Products | Shop',
  });

  await page.goBack();
  await expect(page).toHaveURL(url);
  pages = await settle();
  expect(pages).toHaveLength(5);
  expect(pages[4].properties).toMatchObject({ url, path: '/x-spa.html', referrer: origin + '/x-spa/products', title: 'SPA Home' });

  await page.goForward();
  await expect(page).toHaveURL(origin + '/x-spa/products');
  pages = await settle();
  expect(pages).toHaveLength(6);
  expect(pages[5].properties).toMatchObject({ url: origin + '/x-spa/products', referrer: url });
});

test('hash changes (location.hash and a #link click) send one page view each', async ({ page, site, collector }) => {
  const { url } = await openSpa(page, site);
  const settle = barrier(page, collector);
  await settle();

  // A hash change fires both popstate and hashchange: still one page view.
  await page.evaluate(() => (location.hash = '#x'));
  let pages = await settle();
  expect(pages).toHaveLength(2);
  expect(pages[1].properties).toMatchObject({ url: url + '#x', path: '/x-spa.html', referrer: url });

  await page.click('#to-section');
  await expect(page).toHaveURL(url + '#section');
  pages = await settle();
  expect(pages).toHaveLength(3);
  expect(pages[2].properties).toMatchObject({ url: url + '#section', referrer: url + '#x' });
});

test('a router calling pushState then replaceState for one navigation sends exactly one page view', async ({ page, site, collector }) => {
  const { url, origin } = await openSpa(page, site);
  const settle = barrier(page, collector);
  await settle();

  // Same URL pushed, then replaced to add router state.
  await page.evaluate(() => (window as any).router.pushThenReplace('/x-spa/orders', null, 'microtask'));
  let pages = await settle();
  expect(pages).toHaveLength(2);
  expect(pages[1].properties).toMatchObject({ url: origin + '/x-spa/orders', referrer: url, title: 'Orders | Shop' });

  // Pushed, then replaced by the canonical URL: one page view, for the final URL.
  await page.evaluate(() => (window as any).router.pushThenReplace('/x-spa/search', '/x-spa/search?sort=asc', 'microtask'));
  pages = await settle();
  expect(pages).toHaveLength(3);
  expect(pages[2].properties).toMatchObject({
    url: origin + '/x-spa/search?sort=asc',
    search: '?sort=asc',
    referrer: origin + '/x-spa/orders',
    title: 'Search | Shop',
  });
});

test('a page() the site makes itself is not repeated by the automatic page view (snippet page() at load, or on a route)', async ({ page, site, collector }) => {
  // basic.html loads through the snippet; the test then calls page() on the stub before the bundle takes over.
  await page.goto(site.page('/basic.html', { noload: '1' }));
  await page.evaluate(
    (api) => {
      const a = (window as any).analytics;
      a.load('dev-write-key', { apiHost: api, cdnUrl: '/dist/analytics.min.js', trackPageViews: true, flushInterval: 50 });
      a.page(); // what the README's snippet does
    },
    collector.url,
  );
  await ready(page);
  const settle = barrier(page, collector);
  let pages = await settle();
  expect(pages, 'one page view at load, not two').toHaveLength(1);
  // An app that also calls page() itself right after changing the route: still one page view for that URL.
  await page.evaluate(() => {
    history.pushState({}, '', '/routed');
    (window as any).analytics.page();
  });
  pages = await settle();
  expect(pages).toHaveLength(2);
  expect(new URL(pages[1].properties.url).pathname).toBe('/routed');
});
