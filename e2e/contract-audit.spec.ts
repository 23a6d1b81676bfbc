// An audit of the contract's sections 1, 3 (`linkDomains`) and 6, read as a demanding user of analytics.js would:
// each test pins a promise the other specs leave open. The link tests run across two host names of one browser
// (shop.test and checkout.test, resolved to 127.0.0.1 by this browser only), as e2e/link.spec.ts does.
import { chromium, type Browser, type Page } from '@playwright/test';
import { test, expect, ready, type CollectorHandle, type SiteHandle } from './fixtures';
import { executablePath, args } from '../scripts/chromium.mjs';

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
/** A valid parameter value for `id`, made in `page`'s browser now (as src/sources/decorate.ts makes it). */
const linkValue = (page: Page, id: string) =>
  page.evaluate((id) => {
    const t = Date.now().toString(36);
    let h = 0;
    for (const c of navigator.userAgent + navigator.language + t + id) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
    return `${t}.${(h >>> 0).toString(36)}.${id}`;
  }, id);
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
