// linkDomains (CONTRACT section 3) across two host names of one browser: shop.test and checkout.test, resolved to
// 127.0.0.1 by this browser only (`--host-resolver-rules`); the static server answers any Host.
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { test, expect, ready, watchErrors, linkValue, type CollectorHandle, type SiteHandle } from './fixtures';
import { executablePath, args } from '../scripts/chromium.mjs';

let browser: Browser;
test.beforeAll(async () => {
  browser = await chromium.launch({ executablePath, args: [...args, '--host-resolver-rules=MAP *.test 127.0.0.1'] });
});
test.afterAll(async () => browser?.close());

/** The link test page on `host`, with `linkDomains` naming the other host. */
const on = (site: SiteHandle, host: 'shop.test' | 'checkout.test' | 'other.test', params: Record<string, string> = {}, file = 'link.html') => {
  const other = host == 'shop.test' ? 'checkout.test' : 'shop.test';
  const u = new URL(site.page(file, { opts: JSON.stringify({ linkDomains: [other] }), ...params }));
  u.hostname = host;
  return u.toString();
};
/** Adds a link to `href` on `page` (id `go`); `hold` keeps the click from navigating, to read what it would follow. */
const addLink = (page: Page, href: string, hold = false) =>
  page.evaluate(
    ([href, hold]) => {
      document.getElementById('go')?.remove();
      const a = Object.assign(document.createElement('a'), { id: 'go', textContent: 'go' });
      a.setAttribute('href', href as string);
      if (hold) a.addEventListener('click', (e) => e.preventDefault());
      document.body.append(a);
    },
    [href, hold] as const,
  );
const anonymousId = (page: Page) => page.evaluate(() => (window as any).analytics.user().anonymousId() as string);
/** The page messages that came from `host`, once there are `min`. */
async function pagesFrom(collector: CollectorHandle, host: string, min = 1) {
  let found: any[] = [];
  await expect.poll(async () => (found = (await collector.messages({ type: 'page' })).filter((m) => new URL(m.context.page.url).hostname == host)).length).toBeGreaterThanOrEqual(min);
  return found;
}
/** Follows a link to `target` on the checkout from `page`, once it is ready there: checks the address bar and that it adopted `id`, and returns the first page message from the checkout (sent under that id). */
async function followToCheckout(page: Page, collector: CollectorHandle, target: string, id: string) {
  await addLink(page, target);
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#go')]);
  await ready(page);
  expect(page.url()).toBe(target);
  expect(await anonymousId(page)).toBe(id);
  const [m] = await pagesFrom(collector, 'checkout.test');
  expect(m.anonymousId).toBe(id);
  return m;
}
/** Opens the shop page in a new context and returns its page and anonymous id. */
async function shop(site: SiteHandle, options: Parameters<Browser['newContext']>[0] = {}) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors = await watchErrors(page);
  await page.goto(on(site, 'shop.test'));
  await ready(page);
  // Decoration comes with the bundle's lazy chunk, requested at load: a click before it arrives goes undecorated.
  await page.waitForFunction(() => (window as any).svcAnalyticsDebug);
  return { context, page, errors, id: await anonymousId(page) };
}
/** Clicks a held link to the checkout and returns the decorated URL it would follow. */
async function decoratedHref(page: Page, site: SiteHandle) {
  const target = on(site, 'checkout.test') + '&step=2#pay';
  await addLink(page, target, true);
  await page.click('#go');
  const href = await page.getAttribute('#go', 'href');
  expect(href).toContain('svc_link=');
  return href!;
}

test('a link to a listed domain carries the anonymous id; the page there adopts it before its first message, and keeps it out of the address bar and the messages', async ({ site, collector }) => {
  const { context, page, errors, id } = await shop(site);
  const target = on(site, 'checkout.test') + '&step=2#pay';
  // The address bar: the link's own parameters and fragment, without ours; the stub's page(), recorded while the URL
  // still had the parameter, sent under the adopted id.
  const m = await followToCheckout(page, collector, target, id);
  const wire = JSON.stringify(m);
  expect(wire).not.toContain('svc_link');
  expect({ url: m.context.page.url, search: m.context.page.search, propsUrl: m.properties.url, propsSearch: m.properties.search }).toEqual({
    url: target,
    search: new URL(target).search,
    propsUrl: target,
    propsSearch: new URL(target).search,
  });
  // The cookie of the checkout's own domain holds the adopted id.
  const cookie = (await context.cookies('http://checkout.test')).find((c) => c.name == 'svc_anonymous_id');
  expect(decodeURIComponent(cookie!.value)).toBe(JSON.stringify(id));
  expect(errors).toEqual([]);
  await context.close();
});

test('a middle click, the keyboard and a form carry it too; links elsewhere are left as they are', async ({ site }) => {
  const { context, page, errors, id } = await shop(site);
  // Middle click: a new tab, which adopts the id.
  await addLink(page, on(site, 'checkout.test') + '&via=middle');
  const [tab] = await Promise.all([context.waitForEvent('page'), page.click('#go', { button: 'middle' })]);
  await ready(tab);
  expect(await anonymousId(tab)).toBe(id);
  expect(tab.url()).not.toContain('svc_link');
  await tab.close();
  // Keyboard: Enter on the focused link.
  await addLink(page, on(site, 'checkout.test') + '&via=keyboard');
  await page.focus('#go');
  await Promise.all([page.waitForURL(/via=keyboard/), page.keyboard.press('Enter')]);
  await ready(page);
  expect(await anonymousId(page)).toBe(id);
  expect(page.url()).not.toContain('svc_link');
  // Back on the shop: a GET form to the checkout.
  await page.goto(on(site, 'shop.test'));
  await ready(page);
  await page.evaluate((action) => {
    const u = new URL(action);
    document.body.insertAdjacentHTML('beforeend', `<form id="f" action="${u.origin + u.pathname}"><input name="api" value="${u.searchParams.get('api')}"><input name="opts" value='${u.searchParams.get('opts')}'><button>go</button></form>`);
  }, on(site, 'checkout.test'));
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#f button')]);
  await ready(page);
  expect(await anonymousId(page)).toBe(id);
  expect(page.url()).not.toContain('svc_link');
  // Elsewhere: another domain, this host, a relative link: untouched.
  await page.goto(on(site, 'shop.test'));
  await ready(page);
  for (const href of [on(site, 'other.test'), on(site, 'shop.test') + '&same=1', 'link.html?x=1#y']) {
    await addLink(page, href, true);
    await page.click('#go');
    expect(await page.getAttribute('#go', 'href')).toBe(href);
  }
  expect(errors).toEqual([]);
  await context.close();
});

test('a parameter older than 2 minutes is not adopted, and still leaves the address bar', async ({ site, collector }) => {
  const { context, page, id } = await shop(site);
  const href = await decoratedHref(page, site);
  const later = await context.newPage();
  await later.clock.install({ time: Date.now() + 2 * 60_000 + 5_000 });
  await later.goto(href, { referer: on(site, 'shop.test') });
  await ready(later);
  expect(later.url()).not.toContain('svc_link');
  expect(await anonymousId(later)).not.toBe(id);
  const [m] = await pagesFrom(collector, 'checkout.test');
  expect(m.anonymousId).not.toBe(id);
  expect(JSON.stringify(m)).not.toContain('svc_link');
  // Within the 2 minutes, the same link is adopted (the clock, not something else, made the difference).
  const soon = await context.newPage();
  await soon.clock.install({ time: Date.now() + 60_000 });
  await soon.goto(href, { referer: on(site, 'shop.test') });
  await ready(soon);
  expect(await anonymousId(soon)).toBe(id);
  await context.close();
});

test('a parameter made in another browser (another user agent) is not adopted, and still leaves the address bar', async ({ site }) => {
  const { context, page, id } = await shop(site);
  const href = await decoratedHref(page, site);
  const other: BrowserContext = await browser.newContext({ userAgent: 'Mozilla/5.0 (Other) Safari/605.1.15' });
  const there = await other.newPage();
  await there.goto(href, { referer: on(site, 'shop.test') });
  await ready(there);
  expect(there.url()).not.toContain('svc_link');
  expect(await anonymousId(there)).not.toBe(id);
  // The same link in the browser that made it is adopted.
  const same = await context.newPage();
  await same.goto(href, { referer: on(site, 'shop.test') });
  await ready(same);
  expect(await anonymousId(same)).toBe(id);
  await other.close();
  await context.close();
});

test('a decorated link followed from a domain the page does not list is not adopted, and still leaves the address bar', async ({ site }) => {
  const { context, page, id } = await shop(site);
  const href = await decoratedHref(page, site);
  // The same valid link, put on a page of other.test (checkout.test lists shop.test only) and clicked there.
  await page.goto(on(site, 'other.test'));
  await ready(page);
  await addLink(page, href);
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#go')]);
  await ready(page);
  expect(await page.evaluate(() => document.referrer)).toContain('other.test');
  expect(page.url()).not.toContain('svc_link');
  expect(await anonymousId(page)).not.toBe(id);
  // Clicked on the shop itself, it is adopted (the referrer, not the link, made the difference).
  await page.goto(on(site, 'shop.test'));
  await ready(page);
  await addLink(page, href);
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#go')]);
  await ready(page);
  expect(await anonymousId(page)).toBe(id);
  await context.close();
});

test("a link inside a web component's shadow root is decorated too (the click's target seen by the library is the component)", async ({ site }) => {
  const { context, page, id } = await shop(site);
  const target = on(site, 'checkout.test');
  await page.evaluate((href) => {
    const host = document.createElement('x-nav');
    const a = Object.assign(document.createElement('a'), { id: 'inner', textContent: 'checkout' });
    a.setAttribute('href', href);
    a.addEventListener('click', (e) => e.preventDefault());
    host.attachShadow({ mode: 'open' }).append(a);
    document.body.append(host);
  }, target);
  await page.locator('x-nav a').click();
  const href = await page.locator('x-nav a').getAttribute('href');
  const carried = await page.evaluate((h) => new URL(h).searchParams.get('svc_link'), href!);
  expect(carried).toContain(id);
  await context.close();
});

test('an identified visitor: the link carries the anonymous id only, never the user id or traits; the checkout knows the anonymous id, not the user', async ({ site, collector }) => {
  const { context, page, errors, id } = await shop(site);
  await page.evaluate(() => (window as any).analytics.identify('user-42', { email: 'jane@shop.test', plan: 'premium-plan' }));
  const href = decodeURIComponent(await decoratedHref(page, site));
  expect(href).toContain(id);
  for (const secret of ['user-42', 'jane@shop.test', 'premium-plan']) expect(href, secret).not.toContain(secret);
  await Promise.all([page.waitForURL(/checkout\.test/), page.goto(href, { referer: on(site, 'shop.test') })]);
  await ready(page);
  expect(await anonymousId(page)).toBe(id);
  expect(await page.evaluate(() => (window as any).analytics.user().id())).toBeNull();
  const [m] = await pagesFrom(collector, 'checkout.test');
  expect(m.anonymousId).toBe(id);
  expect(m.userId).toBeUndefined();
  expect(errors).toEqual([]);
  await context.close();
});

test('a link a client-side router handles (it prevents the click and pushes the route) is decorated and still routed, and stays on this page', async ({ site }) => {
  const { context, page, errors } = await shop(site);
  const target = on(site, 'checkout.test') + '&step=2';
  await addLink(page, target);
  // A router delegated on the document, as SPA routers are: it takes links it knows, whatever their href holds.
  await page.evaluate(() =>
    document.addEventListener('click', (e) => {
      const a = (e.target as Element).closest('#go');
      if (!a || e.defaultPrevented) return;
      e.preventDefault();
      (window as any).__routedTo = a.getAttribute('href');
    }),
  );
  await page.click('#go');
  const routed: string = await page.evaluate(() => (window as any).__routedTo);
  expect(routed, 'the router had the click').toContain('svc_link=');
  expect(new URL(page.url()).hostname, 'no navigation').toBe('shop.test');
  expect(errors).toEqual([]);
  await context.close();
});

// Any page on the web can make a valid parameter (security-5 N1): it runs in the visitor's browser, and the hash has no
// key (`linkValue`, e2e/fixtures.ts, makes it as the review's exploit does).
const forge = linkValue;
/** Goes from `page` to `url` by script (no click: nothing decorates it), with this page as referrer. */
const navigate = (page: Page, url: string) =>
  Promise.all([page.waitForURL((u) => u.hostname == 'checkout.test', { waitUntil: 'load' }), page.evaluate((u) => void setTimeout(() => (location.href = u)), url)]).then(() => ready(page));

test('a forged link is not adopted without a referrer (rel=noreferrer); every occurrence of the parameter still leaves the address bar', async ({ site }) => {
  const { context, page, id } = await shop(site);
  const href = await decoratedHref(page, site);
  const forged = await forge(page, id);
  // The real decorated link, marked noreferrer, with a second parameter after it.
  await page.evaluate(
    ([href, forged]) => {
      const a = Object.assign(document.createElement('a'), { id: 'nr', textContent: 'go', rel: 'noreferrer' });
      a.setAttribute('href', href.replace('#', '&svc_link=' + encodeURIComponent(forged) + '#'));
      document.body.append(a);
    },
    [href, forged] as const,
  );
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#nr')]);
  await ready(page);
  expect(await page.evaluate(() => document.referrer)).toBe('');
  expect(page.url()).not.toContain('svc_link');
  expect(await anonymousId(page)).not.toBe(id);
  await context.close();
});

test("a forged link of another shape than the library's is not adopted, even from a listed referrer: any string, a 40 KB id", async ({ site, collector }) => {
  const { context, page, id } = await shop(site);
  for (const foreign of ['fixated-1', 'x'.repeat(40_000)]) {
    await navigate(page, on(site, 'checkout.test') + '&svc_link=' + encodeURIComponent(await forge(page, foreign)));
    expect(await page.evaluate(() => new URL(document.referrer).hostname)).toBe('shop.test');
    expect(page.url()).not.toContain('svc_link');
    const there = await anonymousId(page);
    expect(there).not.toBe(foreign);
    // The visitor's calls still go (a 40 KB id would make every one of them too big).
    await page.evaluate(() => (window as any).analytics.track('Still here'));
    await expect.poll(async () => (await collector.messages({ type: 'track', event: 'Still here' })).some((m) => m.anonymousId == there)).toBe(true);
    await page.goto(on(site, 'shop.test'));
    await ready(page);
  }
  // The same forgery with an id of the library's shape is adopted from a listed referrer: the shape made the difference.
  await navigate(page, on(site, 'checkout.test') + '&svc_link=' + encodeURIComponent(await forge(page, id)));
  expect(await anonymousId(page)).toBe(id);
  await context.close();
});

test('a link is never adopted over a visitor the checkout knows by a user id', async ({ site, collector }) => {
  const { context, page, id } = await shop(site);
  const checkout = await context.newPage();
  await checkout.goto(on(site, 'checkout.test'));
  await ready(checkout);
  await checkout.evaluate(() => (window as any).analytics.identify('user-42'));
  const known = await anonymousId(checkout);
  await checkout.close();
  await addLink(page, on(site, 'checkout.test') + '&step=2');
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#go')]);
  await ready(page);
  expect(page.url()).not.toContain('svc_link');
  expect(await page.evaluate(() => ({ anonymousId: (window as any).analytics.user().anonymousId(), userId: (window as any).analytics.user().id() }))).toEqual({ anonymousId: known, userId: 'user-42' });
  const sent = (await pagesFrom(collector, 'checkout.test', 2)).filter((m) => m.context.page.search == '?' + new URL(on(site, 'checkout.test') + '&step=2').search.slice(1));
  expect(sent.map((m) => m.anonymousId)).toEqual([known]);
  expect(id).not.toBe(known);
  await context.close();
});

test('a page whose policy withholds referrers (<meta name=referrer content=no-referrer>) still joins: a decorated link sends its origin', async ({ site }) => {
  const { context, page, id } = await shop(site);
  await page.evaluate(() => document.head.append(Object.assign(document.createElement('meta'), { name: 'referrer', content: 'no-referrer' })));
  await addLink(page, on(site, 'checkout.test') + '&step=3');
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#go')]);
  await ready(page);
  // Its origin only (no path, no query).
  expect(await page.evaluate(() => document.referrer)).toBe(new URL(on(site, 'shop.test')).origin + '/');
  expect(await anonymousId(page)).toBe(id);
  await context.close();
});

// The adoption is an edge (CONTRACT section 1): the lazy chunk, which a page whose URL carries the parameter waits for
// before `load` runs; a page without the parameter fetches nothing for it.
test('a checkout page without the stub (the bundle, then load) adopts the id too, before its first message; a page without the parameter does not wait for the chunk', async ({ site, collector }) => {
  const { context, page, errors, id } = await shop(site);
  const lazy: string[] = [];
  page.on('request', (r) => void (r.url().includes('analytics.debug.min.js') && lazy.push(r.url())));
  const target = on(site, 'checkout.test', {}, 'link-nostub.html');
  await followToCheckout(page, collector, target, id);
  expect(lazy).toHaveLength(1);
  // (a page of the checkout opened without the parameter starts without the chunk: here it never comes)
  const other = await context.newPage();
  await other.route('**/dist/analytics.debug.min.js*', (route) => route.abort());
  await other.goto(on(site, 'checkout.test', { n: '2' }, 'link-nostub.html'));
  await ready(other);
  expect(await anonymousId(other)).toBe(id);
  expect(errors).toEqual([]);
  await context.close();
});

test("a lazy chunk that cannot load on the checkout: the page's calls are sent under its own id, and 'error' is heard", async ({ site, collector }) => {
  const { context, page, id } = await shop(site);
  await context.route('**/dist/analytics.debug.min.js*', (route) => route.fulfill({ status: 404, body: '' }));
  // The checkout's bundle is held until its stub has an 'error' handler (replayed before anything else).
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await context.route('**/dist/analytics.min.js*', async (route) => {
    await held;
    await route.continue();
  });
  const target = on(site, 'checkout.test') + '&step=2';
  await addLink(page, target);
  await Promise.all([page.waitForURL(/checkout\.test/, { waitUntil: 'domcontentloaded' }), page.click('#go')]);
  await page.evaluate(() => {
    (window as any).__errors = [];
    (window as any).analytics.on('error', (e: { code: string; message: string }) => (window as any).__errors.push([e.code, e.message]));
  });
  release();
  await ready(page);
  const [m] = await pagesFrom(collector, 'checkout.test');
  expect(m.anonymousId).not.toBe(id);
  expect(m.anonymousId).toBe(await anonymousId(page));
  expect(JSON.stringify(m)).not.toContain('svc_link');
  const heard: [string, string][] = await page.evaluate(() => (window as any).__errors);
  expect(heard.map((e) => e[0])).toContain('chunk_unavailable');
  expect(heard.find((e) => e[0] == 'chunk_unavailable')![1]).toContain('linkDomains');
  await context.close();
});

test('a checkout page left while its lazy chunk is still loading: its calls are sent once, under its own id', async ({ site, collector }) => {
  const { context, page, id } = await shop(site);
  // the chunk never comes while the checkout is open
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await context.route('**/dist/analytics.debug.min.js*', async (route) => {
    await held;
    await route.continue().catch(() => {});
  });
  const target = on(site, 'checkout.test') + '&step=3';
  await addLink(page, target);
  await Promise.all([page.waitForURL(/checkout\.test/), page.click('#go')]);
  await page.waitForFunction(() => (window as any).analytics?.track);
  // (its promise waits for load, which waits for the chunk: not awaited)
  await page.evaluate(() => void (window as any).analytics.track('Before Leaving Checkout'));
  // the visitor goes on before the chunk came
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ cdnUrl: '/never-arrives.js' }) }));
  const pages = await pagesFrom(collector, 'checkout.test');
  const tracks = await collector.waitFor(1, { event: 'Before Leaving Checkout' });
  await expect.poll(async () => (await collector.messages({ event: 'Before Leaving Checkout' })).length, { timeout: 3000 }).toBe(1);
  expect(pages).toHaveLength(1);
  expect(pages[0].anonymousId).not.toBe(id);
  expect(tracks[0].anonymousId).toBe(pages[0].anonymousId);
  release();
  await context.close();
});
