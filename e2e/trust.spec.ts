// Trust (CONTRACT sections 4 and 6; review security-3 M5, L3, L13), checked in the browser: what reaches the
// collector on the wire, what a page's prototype pollution decides, and what a tracked card's click follows.
import type { Page, Request } from '@playwright/test';
import { test, expect, ready, sleep, watchErrors, type CollectorHandle } from './fixtures';

test.describe.configure({ timeout: 45_000 });

/** Every request body the page sends to the collector (the wire itself). */
function wire(page: Page, collector: CollectorHandle): string[] {
  const bodies: string[] = [];
  page.on('request', (r: Request) => r.url().startsWith(collector.url) && bodies.push(r.postData() || ''));
  return bodies;
}

/** Sends a marker event and waits until the collector has it: what was queued before it was sent with or before it. */
async function barrier(page: Page, collector: CollectorHandle, i: number) {
  await page.evaluate(
    (i) =>
      new Promise<void>((resolve) =>
        requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => (window as any).analytics.track('Barrier', { i }).then(() => resolve()), 250))),
      ),
    i,
  );
  await collector.waitFor(i, { event: 'Barrier' }, 10000);
  return collector.messages({ type: 'page' });
}

test('a URL fragment that carries parameters stays in the browser; a route fragment is sent (stub, bundle, trackPageViews)', async ({ page, site, collector }) => {
  const bodies = wire(page, collector);
  // An OAuth implicit-flow callback: the token is in the fragment. The bundle is loaded by hand, after stub calls.
  const clean = site.page('/basic.html', { noload: '1', step: 'cb' });
  await page.goto(clean + '#access_token=SECRET_TOKEN&state=SECRET_STATE');
  await page.evaluate((api) => {
    const a = (window as any).analytics;
    a.page('Callback'); // recorded by the stub, with the URL at call time
    a.track('Recorded');
    a.load('dev-write-key', { apiHost: api, cdnUrl: '/dist/analytics.min.js', trackPageViews: true, flushInterval: 50 });
  }, collector.url);
  await ready(page);
  await page.evaluate(() => (window as any).analytics.page('Bundle Call'));
  let pages = await barrier(page, collector, 1);
  const atLoad = pages.length;
  // The site's OAuth library removes the fragment: the URL on the wire did not change, so no page view.
  await page.evaluate(() => history.replaceState(null, '', location.pathname + location.search));
  pages = await barrier(page, collector, 2);
  expect(pages.length, 'no page view for removing a fragment that was never on the wire').toBe(atLoad);
  // A hash route, then one with parameters of its own after its `?`.
  await page.evaluate(() => (location.hash = '#/cart/42'));
  pages = await barrier(page, collector, 3);
  await page.evaluate(() => (location.hash = '#/cart/43?coupon=SECRET_COUPON&x=1'));
  pages = await barrier(page, collector, 4);

  for (const m of pages) {
    for (const u of [m.properties.url, m.properties.referrer, m.context.page.url, m.context.page.referrer]) expect(u).not.toMatch(/SECRET|access_token/);
    expect(m.properties.search).toBe(new URL(clean).search);
  }
  const named = (name: string) => pages.find((m) => m.name == name);
  expect(named('Callback')!.properties.url).toBe(clean);
  expect(named('Callback')!.context.page.url).toBe(clean);
  expect(named('Bundle Call')!.properties.url).toBe(clean);
  const [cart42, cart43] = pages.slice(-2);
  expect(cart42.properties).toMatchObject({ url: clean + '#/cart/42', referrer: clean, path: '/basic.html' });
  expect(cart42.context.page).toMatchObject({ url: clean + '#/cart/42', referrer: clean });
  expect(cart43.properties).toMatchObject({ url: clean + '#/cart/43', referrer: clean + '#/cart/42' });
  const recorded = await collector.messages({ event: 'Recorded' });
  expect(recorded[0].context.page.url).toBe(clean);
  // Nothing of it anywhere on the wire (every request body, whatever its field).
  expect(bodies.length).toBeGreaterThan(0);
  for (const body of bodies) expect(body).not.toMatch(/SECRET|access_token/);
});

test('a polluted Object.prototype decides no consent: consent({}) keeps calls held and stores nothing', async ({ page, site, collector }) => {
  const bodies = wire(page, collector);
  // (a category named like a consent platform's, C0002: polluting `analytics` itself would replace the stub the
  // snippet finds as `window.analytics`, a failure of its own that sends nothing)
  await page.addInitScript(() => {
    (Object.prototype as any).C0002 = true;
  });
  await page.goto(site.page('/consent.html', { opts: JSON.stringify({ consent: { categories: ['C0002'] }, flushInterval: 50 }) }));
  await ready(page);
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.track('Held'); // held in memory (its promise resolves: it is sent once consent is granted)
    a.consent({}); // the visitor decided nothing
    a.consent({ C0004: true }); // another category only: still nothing about C0002
    await new Promise((r) => setTimeout(r, 500));
    return { stored: Object.keys(localStorage).filter((k) => k.startsWith('svc_')), cookies: document.cookie };
  });
  expect(r).toEqual({ stored: [], cookies: '' });
  expect(bodies).toEqual([]);
  // The real decision opens the gate, and the held call goes.
  await page.evaluate(() => (window as any).analytics.consent({ C0002: true }));
  const [held] = await collector.waitFor(1, { event: 'Held' }, 10000);
  expect(held.context.consent.categoryPreferences).toEqual({ C0002: true });
});

test('trackLink on a card never follows a javascript: link inside it; a relative link is followed after the hold', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  const url = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) });
  await page.goto(url);
  await ready(page);
  await page.evaluate(() => {
    const a = (window as any).analytics;
    // A source middleware that answers later: the click is held until the message is queued.
    a.addSourceMiddleware(({ payload, next }: any) => setTimeout(() => next(payload), 300));
    document.body.insertAdjacentHTML(
      'beforeend',
      '<div id="evil" style="padding:20px"><h2 id="evil-title">Card</h2><a href="javascript:window.__pwned=1;void 0">more</a></div>' +
        '<div id="good" style="padding:20px"><h2 id="good-title">Card</h2><a href="basic.html?step=next">more</a></div>',
    );
    a.trackLink(document.getElementById('evil'), 'Evil Card');
    a.trackLink(document.getElementById('good'), 'Good Card');
  });
  await page.click('#evil-title');
  await collector.waitFor(1, { event: 'Evil Card' }, 10000);
  await sleep(700); // past the hold (the message was queued after ~300 ms; the hold would have navigated then)
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  expect(page.url()).toBe(url);
  // The control: the same card with a relative link navigates once its message is queued.
  await page.click('#good-title');
  await page.waitForURL(/step=next/);
  await collector.waitFor(1, { event: 'Good Card' }, 10000);
  expect(errors).toEqual([]);
});

test('an API answer that redirects is not followed, and is no delivery: a 302 to a login page that answers 200 loses nothing (CONTRACT sections 4 and 6; review 5)', async ({ page, site, collector }) => {
  // The API's first answers redirect the POST to a page that answers a GET with 200 (an SSO gateway in front of a
  // first-party /ingest sends its login page); then the API answers itself.
  let redirected = 0;
  await page.route(
    (u) => u.pathname == '/ingest/v1/batch',
    (route) => (redirected++ < 2 ? route.fulfill({ status: 302, headers: { Location: '/basic.html?login=1' } }) : route.fallback()),
  );
  await page.goto(site.page('/basic.html', { noload: '1' }));
  // (the collector through the site's own /ingest proxy, as a first-party API path)
  await page.evaluate(() => (window as any).analytics.load('dev-write-key', { apiHost: '/ingest', cdnUrl: '/dist/analytics.min.js', flushInterval: 50 }));
  await ready(page);
  const codes = page.evaluate(
    () => new Promise<string[]>((resolve) => (window as any).analytics.on('error', (e: any) => resolve([e.code]))),
  );
  await page.evaluate(() => (window as any).analytics.track('Redirected Once'));
  expect(await codes, 'the site is told').toEqual(['delivery_redirected']);
  await collector.waitFor(1, { event: 'Redirected Once' }, 20_000);
  expect(redirected, 'the API redirected at least once').toBeGreaterThanOrEqual(1);
  expect(await collector.messages({ event: 'Redirected Once' })).toHaveLength(1);
});
