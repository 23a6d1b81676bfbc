import type { Page, Route } from '@playwright/test';
import { test, expect, open, quiet, expectExactlyOnce } from './fixtures';

// CONTRACT section 1, core and edges: "what waits [for a chunk] is kept where a later page of the site finds it (as
// the stub keeps its calls), so a page that ends first loses nothing" (src/extend/waiting.ts). Messages made after a
// source middleware was added wait for the middleware chunk; the page ends before it comes; a later page of the site
// sends them, once, with their own ids and times.

const basic = (site: { page(p: string, q?: Record<string, string>): string }) => site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) });

/** Holds every request of the middleware chunk on `page` until `release()`. */
async function holdChunk(page: Page) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route('**/dist/analytics.extend.min.js*', async (route: Route) => {
    await released;
    await route.continue().catch(() => {});
  });
  return { release };
}

/** Adds a middleware and tracks `n` events, whose calls wait for the chunk; their ids and times, as kept. */
async function trackWaiting(page: Page, n: number): Promise<{ id: string; timestamp: string }[]> {
  await page.evaluate((n) => {
    const a = (window as any).analytics;
    a.addSourceMiddleware(({ payload, next }: any) => ((payload.obj.properties.tagged = true), next(payload)));
    for (let i = 0; i < n; i++) a.track('Waiting ' + i, { i });
  }, n);
  const kept = await page.evaluate(() => JSON.parse(localStorage.getItem('svc_wait') || '[]'));
  return kept.map((e: any) => ({ id: e[0].messageId, timestamp: e[0].timestamp }));
}

test('a page that ends while the middleware chunk loads: the next page of the site sends what waited, once', async ({ page, site, collector }) => {
  await holdChunk(page);
  await open(page, basic(site));
  const kept = await trackWaiting(page, 3);
  expect(kept).toHaveLength(3);
  await quiet(collector, 300, 3000);
  expect(await collector.messages()).toEqual([]);
  // The visitor follows a link before the chunk comes; the next page adds no middleware.
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await open(page, basic(site));
  const got = await collector.waitFor(3, {}, 15000);
  const times = new Map(got.map((m: any) => [m.messageId, m.timestamp]));
  for (const k of kept) expect(times.get(k.id)).toBe(k.timestamp);
  await quiet(collector, 1500);
  expectExactlyOnce(
    await collector.messages(),
    kept.map((k) => k.id),
  );
  expect(await page.evaluate(() => localStorage.getItem('svc_wait'))).toBeNull();
});

test('a tab closed while the middleware chunk loads: a page of the site opened later sends what waited, once', async ({ context, page, site, collector }) => {
  await holdChunk(page);
  await open(page, basic(site));
  const kept = await trackWaiting(page, 2);
  await page.close({ runBeforeUnload: true });
  const next = await context.newPage();
  await open(next, basic(site));
  await next.evaluate(() => (window as any).analytics.addSourceMiddleware(({ payload, next }: any) => ((payload.obj.properties.later = true), next(payload))));
  const got = await collector.waitFor(2, {}, 15000);
  for (const m of got) expect(m.properties.i).toBeDefined();
  await quiet(collector, 1500);
  expectExactlyOnce(
    await collector.messages(),
    kept.map((k) => k.id),
  );
});

test('a page whose chunk is slow but lives on keeps what waits for itself: another tab takes none, and each goes once with its middleware', async ({ context, page, site, collector }) => {
  const chunk = await holdChunk(page);
  await open(page, basic(site));
  const kept = await trackWaiting(page, 3);
  const other = await context.newPage();
  await open(other, basic(site));
  await other.evaluate(() => (window as any).analytics.track('Other Tab'));
  await collector.waitFor(1, { event: 'Other Tab' }, 10000);
  await quiet(collector, 1000, 5000);
  expect((await collector.messages()).map((m: any) => m.event)).toEqual(['Other Tab']);
  chunk.release();
  const got = await collector.waitFor(4, {}, 15000);
  for (const m of got.filter((m: any) => m.event != 'Other Tab')) expect(m.properties.tagged).toBe(true);
  await quiet(collector, 1500);
  const ids = (await collector.messages()).filter((m: any) => m.event != 'Other Tab').map((m: any) => m.messageId);
  expect(ids.sort()).toEqual(kept.map((k) => k.id).sort());
  expectExactlyOnce(
    await collector.messages({ event: 'Waiting 0' }),
    [kept[0].id],
  );
  expect(await page.evaluate(() => localStorage.getItem('svc_wait'))).toBeNull();
  await other.close();
});
