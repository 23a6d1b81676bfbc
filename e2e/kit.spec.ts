// svc-analytics/playwright, tested with itself: the pages under e2e/site/kit-*.html name their production API
// host (or a first-party /ingest path) exactly as a shipped site does, and the kit must bring every message they
// send, from every page of the test's context, to its own collector, with no Playwright route.
import { fileURLToPath } from 'node:url';
// The package imports itself by name, through package.json `exports["./playwright"]`, as a site's tests would.
import { test as kit, expect } from 'svc-analytics/playwright';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const PRODUCTION = 'https://api.production.example';

interface Site {
  url: string;
  /** The same bundle on another origin, as a CDN serves it. */
  cdnUrl: string;
  /** What the site's own /ingest proxy forwards to (its "production" API): must receive nothing in tests. */
  upstream: { requests: () => number };
}

/** What a site's own test setup adds: where the site runs. Everything analytics comes from the kit. */
const test = kit.extend<{ leaks: string[] }, { site: Site }>({
  site: [
    async ({}, use) => {
      const upstream = await startCollector({ port: 0, writeKey: null });
      const site = await startStatic({
        root: root + 'e2e/site',
        port: 0,
        mounts: { '/dist/': root + 'dist', '/node_modules/': root + 'node_modules' },
        snippetFile: root + 'dist/snippet.min.js',
        proxies: { '/ingest': upstream.url },
      });
      const cdn = await startStatic({ root: root + 'dist', port: 0, mounts: { '/analytics.js/v1/': root + 'dist' } });
      await use({
        url: site.url,
        cdnUrl: cdn.url + '/analytics.js/v1/analytics.min.js',
        upstream: { requests: () => upstream.state.requests.length },
      });
      await Promise.all([site.close(), cdn.close(), upstream.close()]);
    },
    { scope: 'worker' },
  ],
  // The site's tests use relative URLs, as the README's example does.
  baseURL: async ({ site }, use) => use(site.url),
  // Requests the context sent towards the production API or the site's /ingest proxy: the kit must leave none.
  leaks: async ({ context, site }, use) => {
    const leaks: string[] = [];
    context.on('request', (r) => {
      const url = r.url();
      if (url.startsWith(PRODUCTION) || url.startsWith(site.url + '/ingest')) leaks.push(`${r.method()} ${url}`);
    });
    await use(leaks);
  },
});

const ANSI = /\u001b\[[0-9;]*m/g;

/** The message of the assertion error `assertion` fails with (it must fail). */
async function failureOf(assertion: Promise<unknown>): Promise<string> {
  const error = await assertion.then(
    () => null,
    (e: Error) => e,
  );
  expect(error, 'the matcher should have failed').not.toBeNull();
  return String(error!.message).replace(ANSI, '');
}

const quick = expect.configure({ timeout: 500 });

// README "Check your analytics in Playwright": its example, line for line (the page is /kit-shop.html here).
test('a test written as the README shows passes against a page whose snippet names the production host', async ({ page, analytics, leaks }) => {
  await page.goto('/kit-shop.html');
  await page.getByRole('button', { name: 'Place order' }).click();

  await expect(analytics).toHavePaged('/kit-shop.html');
  await expect(analytics).toHaveTracked('Order Completed', { order_id: 'A-1', total: 30 });
  await expect(analytics).not.toHaveTracked('Order Refunded');

  const [order] = analytics.messages({ type: 'track', event: 'Order Completed' });
  expect(order.properties).toMatchObject({ currency: 'USD', products: [{ product_id: 'p1', quantity: 2 }] });

  // And nothing went to the host the page names.
  expect(leaks).toEqual([]);
});

test('an expect timeout of 0 means no timeout, as in Playwright: the matcher waits for an event that comes later', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await expect(analytics).toHavePaged('/kit-shop.html');
  // the order is placed 1.5 s from now: a timeout of 0 that meant "check once" would fail at once
  await page.evaluate(() => setTimeout(() => (document.querySelector('button') as HTMLButtonElement).click(), 1500));
  const started = Date.now();
  await expect.configure({ timeout: 0 })(analytics).toHaveTracked('Order Completed');
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  await expect.configure({ timeout: 0 })(analytics).not.toHaveTracked('Order Refunded');
});

test('a missing event fails after the expect timeout, with what was received listed', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await page.getByRole('button', { name: 'Place order' }).click();
  await expect(analytics).toHaveTracked('Order Completed');

  const started = Date.now();
  const message = await failureOf(quick(analytics).toHaveTracked('Order Shipped', { order_id: 'A-1' }));
  expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  expect(message).toContain('expect(analytics).toHaveTracked(expected) failed');
  expect(message).toContain('Expected: track "Order Shipped" with properties {"order_id":"A-1"}');
  expect(message).toContain('Received: 2 message(s), none of them that one:');
  expect(message).toContain('1. page "/kit-shop.html"');
  expect(message).toMatch(/2\. track "Order Completed" \{"order_id":"A-1","total":30,/);
  expect(message).toContain('Timeout: 500ms');

  // Nothing at all received: the message says so, and what to look at.
  analytics.clear();
  const empty = await failureOf(quick(analytics).toHavePaged('/nowhere'));
  expect(empty).toContain('Received: no message at all');
});

test('a wrong property fails and names the property; objects match partially and deeply, arrays exactly', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await page.getByRole('button', { name: 'Place order' }).click();

  await expect(analytics).toHaveTracked('Order Completed', { shipping: { method: 'express' } });
  await expect(analytics).toHaveTracked('Order Completed', { products: [{ product_id: 'p1', quantity: 2 }] });
  await expect(analytics).toHaveTracked('Order Completed', { products: [expect.objectContaining({ product_id: 'p1' })], total: expect.any(Number) });

  const wrongId = await failureOf(quick(analytics).toHaveTracked('Order Completed', { order_id: 'B-2', shipping: { cost: 7 } }));
  expect(wrongId).toContain('properties.order_id: expected "B-2", received "A-1"');
  expect(wrongId).toContain('properties.shipping.cost: expected 7, received 5');
  // An array is compared whole: one item given partially is not the array received.
  const partialArray = await failureOf(quick(analytics).toHaveTracked('Order Completed', { products: [{ product_id: 'p1' }] }));
  expect(partialArray).toContain('properties.products: expected [{"product_id":"p1"}], received [{"product_id":"p1","quantity":2}]');
  // `.not` fails when the message did arrive, and lists it.
  const not = await failureOf(quick(analytics).not.toHaveTracked('Order Completed', { order_id: 'A-1' }));
  expect(not).toContain('expect(analytics).not.toHaveTracked(expected) failed');
  expect(not).toContain('Received: 1 matching message(s) of 2:');
});

test('.not flushes every page first: a message still waiting in the page is found', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await expect(analytics).toHavePaged('/kit-shop.html');
  // The page view just went, so this one waits for flushInterval (1 s): queued, not yet sent.
  await page.evaluate(() => (window as any).analytics.track('Held Back', { n: 1 }));
  expect(analytics.messages({ event: 'Held Back' })).toEqual([]);
  const message = await failureOf(quick(analytics).not.toHaveTracked('Held Back'));
  expect(message).toContain('Received: 1 matching message(s) of 2:');
  expect(message).toContain('track "Held Back" {"n":1}');
});

test('an event tracked on a link click that navigates away at once arrives, and so does the next page view', async ({ page, analytics, leaks }) => {
  await page.goto('/kit-shop.html');
  await expect(analytics).toHavePaged('/kit-shop.html');
  // The click handler tracks and the browser follows the link at once: the message typically leaves in the page's
  // exit beacon (a text/plain sendBeacon), which a Playwright route would lose.
  await page.getByRole('link', { name: 'Checkout' }).click();
  await expect(page).toHaveTitle('Kit Thanks');

  await expect(analytics).toHaveTracked('Checkout Clicked', { from: 'kit-shop' });
  await expect(analytics).toHavePaged({ path: '/kit-thanks.html', title: 'Kit Thanks' });
  expect(analytics.messages({ event: 'Checkout Clicked' })).toHaveLength(1);
  expect(leaks).toEqual([]);
});

test('failNext: failed requests do not count, the library retries, and the event arrives once', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await expect(analytics).toHavePaged('/kit-shop.html');

  analytics.failNext(2, 503, { 'Retry-After': '1' });
  await page.getByRole('button', { name: 'Place order' }).click();
  await expect.poll(() => analytics.requests().filter((r) => r.status === 503).length).toBeGreaterThanOrEqual(1);
  // The retry waits for Retry-After (1 s): until a 2xx-answered request carries it, it is not received.
  expect(analytics.messages({ event: 'Order Completed' })).toEqual([]);

  await expect(analytics).toHaveTracked('Order Completed', { order_id: 'A-1' });
  expect(analytics.messages({ event: 'Order Completed' })).toHaveLength(1);
  const tries = analytics.requests().filter((r) => r.messageIds.includes(analytics.messages({ event: 'Order Completed' })[0].messageId));
  expect(tries.map((r) => r.status)).toEqual([503, 503, 200]);
  expect(tries[0].fault).toBe('status');
});

test('popups and several tabs of the context all report to the test collector', async ({ page, context, analytics, leaks }) => {
  await page.goto('/kit-shop.html');
  const [popup] = await Promise.all([page.waitForEvent('popup'), page.getByRole('link', { name: 'Open the offer' }).click()]);
  await expect(popup).toHaveTitle('Kit Thanks');
  await expect(analytics).toHavePaged({ path: '/kit-thanks.html', search: '?from=popup' });

  const second = await context.newPage();
  await second.goto('/kit-shop.html?tab=2');
  await second.getByRole('button', { name: 'Sign in' }).click();
  await expect(analytics).toHavePaged({ search: '?tab=2' });
  await expect(analytics).toHaveIdentified('user-1', { plan: 'pro' });
  await expect(analytics).toHaveGrouped('acme', { name: 'Acme' });
  // The same visitor in every tab (they share the site's storage).
  expect(new Set(analytics.messages().map((m) => m.anonymousId)).size).toBe(1);
  expect(leaks).toEqual([]);
});

test('a reload keeps reporting to the test collector', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await expect(analytics).toHavePaged('/kit-shop.html');
  await page.reload();
  await page.getByRole('button', { name: 'Place order' }).click();
  await expect(analytics).toHaveTracked('Order Completed');
  await expect.poll(() => analytics.messages({ type: 'page' }).length).toBe(2);
});

test('the bundle loaded from a CDN origin reports to the test collector', async ({ page, analytics, site, leaks }) => {
  const scripts: string[] = [];
  page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
  await page.goto('/kit-shop.html?cdn=' + encodeURIComponent(site.cdnUrl));
  await page.getByRole('button', { name: 'Place order' }).click();
  await expect(analytics).toHaveTracked('Order Completed', { order_id: 'A-1' });
  expect(scripts).toContain(site.cdnUrl);
  expect(leaks).toEqual([]);
});

test('a site with a first-party apiHost path: nothing goes through its proxy, everything reaches the test collector', async ({ page, analytics, site, leaks }) => {
  await page.goto('/kit-proxy.html');
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await expect(analytics).toHavePaged('/kit-proxy.html');
  await expect(analytics).toHaveTracked('Subscribed', { plan: 'yearly' });
  expect(leaks).toEqual([]);
  expect(site.upstream.requests()).toBe(0);
});

test('an npm app that names its production host: page views per route, tracks', async ({ page, analytics, site, leaks }) => {
  await page.goto('/kit-npm.html');
  await expect(analytics).toHavePaged({ path: '/kit-npm.html', title: 'Kit App' });
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(analytics).toHavePaged({ path: '/kit-npm/settings', referrer: site.url + '/kit-npm.html' });
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(analytics).toHaveTracked('Settings Saved', { theme: 'dark' });
  expect(leaks).toEqual([]);
});

test('.not flushes an npm app too, which keeps its instance to itself', async ({ page, analytics }) => {
  await page.goto('/kit-npm.html');
  await expect(analytics).toHavePaged({ path: '/kit-npm.html' });
  // The page view just went, so this one waits for flushInterval: queued, not yet sent.
  await page.getByRole('button', { name: 'Save' }).click();
  expect(analytics.messages({ event: 'Settings Saved' })).toEqual([]);
  const message = await failureOf(quick(analytics).not.toHaveTracked('Settings Saved'));
  expect(message).toContain('track "Settings Saved" {"theme":"dark"}');
});

test('messages(filter), identify and group matchers, clear()', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(analytics).toHaveIdentified('user-1');
  await expect(analytics).toHaveIdentified({ email: 'ada@example.com' });
  await expect(analytics).toHaveGrouped('acme', { seats: 5 });
  await expect(analytics).toHaveGrouped();

  const [identify] = analytics.messages({ type: 'identify' });
  expect(analytics.messages({ userId: 'user-1', traits: { plan: 'pro' } })).toEqual([identify]);
  expect(analytics.messages({ groupId: 'acme' })).toHaveLength(1);
  expect(analytics.messages({ anonymousId: identify.anonymousId }).length).toBe(analytics.messages().length);
  expect(analytics.messages({ type: 'page', properties: { path: '/kit-shop.html' } })).toHaveLength(1);
  expect(() => analytics.messages({ path: '/kit-shop.html' } as any)).toThrow('unknown filter key "path"');

  const wrongTraits = await failureOf(quick(analytics).toHaveIdentified('user-1', { plan: 'free' }));
  expect(wrongTraits).toContain('traits.plan: expected "free", received "pro"');

  analytics.clear();
  expect(analytics.messages()).toEqual([]);
  await page.getByRole('button', { name: 'Place order' }).click();
  await expect(analytics).toHaveTracked('Order Completed');
  expect(analytics.messages().map((m) => m.type)).toEqual(['track']);
});

test.describe('violations', () => {
  test.describe('turned off, with a write key configured', () => {
    test.use({ analyticsOptions: { violations: false, writeKey: 'test-key' } });

    test('requests with another write key are violations, and not received', async ({ page, analytics }) => {
      await page.goto('/kit-shop.html');
      await expect.poll(() => analytics.violations().length).toBeGreaterThan(0);
      expect(analytics.violations()[0]).toMatchObject({ status: 401, violation: { kind: 'auth', reason: 'invalid write key' } });
      expect(analytics.messages()).toEqual([]);
    });
  });

  // The after-test check. This test does everything right, so its only failure is the fixture's after-test check
  // (test.fail() expects one); analyticsOptions is torn down after the kit's collector, so it sees that failure.
  const checked = test.extend({
    analyticsOptions: async ({ analyticsOptions }, use, testInfo) => {
      await use(analyticsOptions);
      // Expected to fail with exactly the check's error; any other failure makes the failure unexpected.
      const errors = testInfo.errors.map((e) => String(e.message).replace(ANSI, ''));
      const byTheCheck = (e: string) =>
        e.includes('the collector received 1 request(s) a correct client never sends') &&
        e.includes('POST /v1/batch answered 400: malformed: malformed batch[0] (messageId "m-1"): timestamp must be') &&
        e.includes('test.use({ analyticsOptions: { violations: false } })');
      if (!(errors.length === 1 && byTheCheck(errors[0]))) testInfo.expectedStatus = 'passed';
    },
  });
  checked('are checked after each test, which then fails', async ({ analytics }) => {
    checked.fail();
    const response = await fetch(analytics.url + '/v1/batch', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ batch: [{ type: 'track', messageId: 'm-1', anonymousId: 'a', timestamp: 'yesterday', event: 'X' }] }),
    });
    expect(response.status).toBe(400);
    expect(analytics.violations()).toHaveLength(1);
  });
});

test.describe('a tracking plan (analyticsPlan)', () => {
  const PLAN = { events: { 'Order Completed': { properties: { type: 'object', required: ['order_id', 'total'], properties: { total: { type: 'number' } } } } } };

  test.describe('followed', () => {
    test.use({ analyticsPlan: PLAN });
    test('messages that follow the plan pass (page views need no entry)', async ({ page, analytics }) => {
      await page.goto('/kit-shop.html');
      await page.getByRole('button', { name: 'Place order' }).click();
      await expect(analytics).toHaveTracked('Order Completed');
      await expect(analytics).toHavePaged();
      expect(analytics.violations()).toEqual([]);
    });
  });

  test.describe('listed, with the check turned off', () => {
    test.use({ analyticsPlan: 'e2e/site/kit-plan.json', analyticsOptions: { violations: false } });
    test('violations() lists each message off the plan: event, place, expectation', async ({ page, analytics }) => {
      await page.goto('/kit-shop.html');
      await page.getByRole('button', { name: 'Place order' }).click();
      await expect.poll(() => analytics.violations().length).toBe(1);
      expect(analytics.violations()[0]).toMatchObject({ kind: 'plan', type: 'track', event: 'Order Completed', pointer: '/properties/total', expected: 'a string, got 30' });
    });
  });

  // The after-test check fails the test, naming the event, the property and what the plan expected.
  const offPlan = test.extend({
    analyticsOptions: async ({ analyticsOptions }, use, testInfo) => {
      await use(analyticsOptions);
      const errors = testInfo.errors.map((e) => String(e.message).replace(ANSI, ''));
      const byTheCheck = (e: string) =>
        e.includes('the collector received 1 message(s) that do not follow the tracking plan') &&
        /off the tracking plan: track "Order Completed" \(\w+\): \/properties\/total: expected a string, got 30/.test(e);
      if (!(errors.length === 1 && byTheCheck(errors[0]))) testInfo.expectedStatus = 'passed';
    },
  });
  offPlan.use({ analyticsPlan: 'e2e/site/kit-plan.json' });
  offPlan('a message off the plan fails the test after it', async ({ page, analytics }) => {
    offPlan.fail();
    await page.goto('/kit-shop.html');
    await page.getByRole('button', { name: 'Place order' }).click();
    await expect(analytics).toHaveTracked('Order Completed');
    await expect.poll(() => analytics.violations().length).toBe(1);
  });
});

// The report: analyticsOptions is set up before the kit's collector and torn down after it, so its teardown sees
// what the kit attached.
const reported = test.extend({
  analyticsOptions: async ({ analyticsOptions }, use, testInfo) => {
    await use(analyticsOptions);
    const attachment = testInfo.attachments.find((a) => a.name === 'analytics messages');
    expect(attachment?.contentType).toBe('application/json');
    const messages = JSON.parse(String(attachment!.body));
    expect(messages.map((m: any) => m.event ?? m.type)).toEqual(['page', 'Order Completed']);
  },
});
reported('each test attaches the messages it received to the report', async ({ page, analytics }) => {
  await page.goto('/kit-shop.html');
  await page.getByRole('button', { name: 'Place order' }).click();
  await expect(analytics).toHaveTracked('Order Completed');
});
