import type { Page, Route } from '@playwright/test';
import { test, expect, ready, quiet, watchErrors, type CollectorHandle, type SiteHandle } from './fixtures';

// CONTRACT section 1, core and edges: the take-over of OTHER pages' calls from the stub's buffer (a page of the site
// whose bundle never came) is an edge, in the lazy chunk (dist/analytics.debug.min.js, src/stub/adopt.ts). The bundle
// looks at the buffer and fetches the chunk before `load` runs only when it holds such calls; this page's own recorded
// calls are taken by the bundle itself. A chunk that cannot load: this page's calls are sent, the failure is heard
// through 'error', and the other page's calls stay in the buffer for a later page.

const LAZY = '**/dist/analytics.debug.min.js*';
const BUNDLE = '**/dist/analytics.min.js*';
// The first page's bundle never arrives (a 404): its calls can only reach the API through the buffer.
const noBundle = (site: SiteHandle) => site.page('/basic.html', { opts: JSON.stringify({ cdnUrl: '/never-arrives.js' }) });
const withBundle = (site: SiteHandle, n: number) => site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }), n: String(n) });

/** The URLs of the lazy chunk the page fetches. */
function lazyFetches(page: Page): string[] {
  const fetched: string[] = [];
  page.on('request', (r) => void (r.url().includes('analytics.debug.min.js') && fetched.push(r.url())));
  return fetched;
}

/** Page 1 (no bundle) tracks `left`, then goes to `next` in the same task: its calls are left in the buffer. */
async function leaveCalls(page: Page, site: SiteHandle, left: string[], next: string) {
  await page.goto(noBundle(site));
  void page
    .evaluate(
      ([left, next]) => {
        for (const n of left) (window as any).analytics.track(n);
        location.href = next;
      },
      [left, next] as const,
    )
    .catch(() => {});
  // (the next page's bundle may be held: its document is enough)
  await page.waitForURL(next, { waitUntil: 'domcontentloaded' });
}

/** The events of `names` that arrived, sorted. */
const arrived = async (collector: CollectorHandle, names: string[]) =>
  (await collector.messages())
    .filter((m) => names.includes(m.event))
    .map((m) => m.event)
    .sort();

test("a page that finds another page's calls in the buffer fetches the lazy chunk and sends them once; a page that finds only its own fetches nothing", async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  const fetched = lazyFetches(page);
  const left = ['Left 1', 'Left 2'];
  await leaveCalls(page, site, left, withBundle(site, 2));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('Page 2'));
  await collector.waitFor(3, { type: 'track' }, 30000);
  await quiet(collector);
  expect(await arrived(collector, [...left, 'Page 2'])).toEqual([...left, 'Page 2']);
  expect(fetched, 'the lazy chunk, once').toHaveLength(1);
  // the next page of the site: nothing of another page waits, no chunk
  fetched.length = 0;
  await page.goto(withBundle(site, 3));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('Page 3'));
  await collector.waitFor(1, { event: 'Page 3' });
  expect(fetched).toEqual([]);
  expect(await arrived(collector, left)).toEqual(left);
  expect(errors).toEqual([]);
});

test("a lazy chunk that cannot load: this page's calls are sent, 'error' is heard, and the other page's calls wait for a later page", async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  const left = ['Left A', 'Left B'];
  let fail = true;
  await page.route(LAZY, (route: Route) => (fail ? route.fulfill({ status: 404, body: '' }) : route.continue()));
  // Page 2's bundle is held until its stub has an 'error' handler (replayed before anything else).
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route(BUNDLE, async (route: Route) => {
    await held;
    await route.continue();
  });
  const second = withBundle(site, 2);
  await leaveCalls(page, site, left, second);
  await page.evaluate(() => {
    const a = (window as any).analytics;
    (window as any).__errors = [];
    a.on('error', (e: { code: string; message: string }) => (window as any).__errors.push([e.code, e.message]));
    a.track('Page 2 Stub');
  });
  release();
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('Page 2'));
  await collector.waitFor(2, { type: 'track' });
  await quiet(collector);
  expect(await arrived(collector, [...left, 'Page 2 Stub', 'Page 2'])).toEqual(['Page 2', 'Page 2 Stub']);
  const heard: [string, string][] = await page.evaluate(() => (window as any).__errors);
  expect(heard.map((e) => e[0])).toEqual(['chunk_unavailable']);
  expect(heard[0][1]).toContain("other pages' calls");
  // kept in the buffer, unclaimed, for a later page
  expect(await page.evaluate(() => JSON.parse(localStorage.getItem('svc_buffer') || '[]').filter((c: any) => c[0] == 'track' && !c[6]).map((c: any) => c[1][0]))).toEqual(left);
  // a later page whose chunk loads sends them, once (after the grace time: page 1 is not its referrer)
  fail = false;
  await page.goto(withBundle(site, 3));
  await ready(page);
  await collector.waitFor(4, { type: 'track' }, 30000);
  await quiet(collector);
  expect(await arrived(collector, [...left, 'Page 2 Stub', 'Page 2'])).toEqual([...left, 'Page 2', 'Page 2 Stub'].sort());
  expect(errors).toEqual([]);
});

test("with the consent option, the lazy chunk is asked for only at the grant, and the other page's calls are sent then", async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  const fetched = lazyFetches(page);
  const left = ['Left X'];
  const gated = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100, consent: { categories: ['analytics'] } }) });
  await leaveCalls(page, site, left, gated);
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('Held'));
  await quiet(collector, 500);
  expect(fetched, 'nothing asked for before the grant').toEqual([]);
  expect(await collector.messages()).toEqual([]);
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  await collector.waitFor(2, { type: 'track' }, 30000);
  await quiet(collector);
  expect(await arrived(collector, [...left, 'Held'])).toEqual(['Held', ...left]);
  expect(fetched).toHaveLength(1);
  expect(errors).toEqual([]);
});

test("a page left while the lazy chunk is still loading: its own calls are sent once, and the other page's by a later page, once", async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  const left = ['Left P'];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let holding = true;
  await page.route(LAZY, async (route: Route) => {
    if (holding) await held;
    await route.continue().catch(() => {});
  });
  await leaveCalls(page, site, left, withBundle(site, 2));
  await page.waitForFunction(() => (window as any).analytics?.VERSION);
  // (its promise waits for load, which waits for the chunk: not awaited)
  await page.evaluate(() => void (window as any).analytics.track('Page 2 Leaving'));
  holding = false;
  await page.goto(withBundle(site, 3));
  release();
  await ready(page);
  await collector.waitFor(2, { type: 'track' }, 30000);
  await quiet(collector);
  expect(await arrived(collector, [...left, 'Page 2 Leaving'])).toEqual([...left, 'Page 2 Leaving']);
  expect(errors).toEqual([]);
});
