import type { Page } from '@playwright/test';
import { test, expect, open, ready, quiet, expectExactlyOnce } from './fixtures';

// CONTRACT section 1: code that only runs after an asynchronous decision of the page comes in the lazy chunk
// (dist/analytics.debug.min.js): here, the plugin runner, fetched on the first register(). Nothing waits for it that
// would not wait anyway, and a chunk that cannot load loses no call.

/** The basic test page with a short flush interval, ready (the fixtures' `open`). */
const openBasic = (page: Page, site: { page(p: string, q?: Record<string, string>): string }) => open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) }));

const CHUNK = '**/dist/analytics.debug.min.js*';

/** The URLs of the chunk the page fetches, as it fetches them. */
function chunkFetches(page: Page): string[] {
  const fetched: string[] = [];
  page.on('request', (r) => void (r.url().includes('analytics.debug.min.js') && fetched.push(r.url())));
  return fetched;
}

test('a page without plugins, middleware or debug never fetches the chunk', async ({ page, site, collector }) => {
  const fetched = chunkFetches(page);
  await openBasic(page, site);
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    a.addSourceMiddleware(({ payload, next }: any) => next(payload));
    await a.track('No Chunk');
  });
  expect(await collector.waitFor(1, { event: 'No Chunk' })).toHaveLength(1);
  expect(fetched, 'source middleware runs from the bundle itself').toEqual([]);
});

test('register() fetches the chunk once, and the plugin runs on the next call', async ({ page, site, collector }) => {
  const fetched = chunkFetches(page);
  await openBasic(page, site);
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    const plugin = (name: string) => ({ name, type: 'enrichment', version: '1', isLoaded: () => true, load: () => Promise.resolve(), track: (ctx: any) => (ctx.updateEvent(`properties.${name}`, true), ctx) });
    await Promise.all([a.register(plugin('one')), a.register(plugin('two'))]);
    await a.track('Enriched');
  });
  const [msg] = await collector.waitFor(1, { event: 'Enriched' });
  expect(msg.properties).toMatchObject({ one: true, two: true });
  expect(fetched).toHaveLength(1);
});

test('a chunk that cannot load is reported, and the calls made meanwhile are still sent, once each', async ({ page, site, collector }) => {
  await page.route(CHUNK, (route) => route.fulfill({ status: 404, body: '' }));
  await openBasic(page, site);
  const out = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const errors: any[] = [];
    a.on('error', (e: any) => errors.push({ code: e.code, message: e.message }));
    const registered = a.register({ name: 'never', type: 'before', version: '1', isLoaded: () => true, load: () => Promise.resolve() }).then(
      () => 'resolved',
      (e: any) => e.code,
    );
    const results = await Promise.all([a.track('During Chunk 1'), a.track('During Chunk 2')]);
    return { registered: await registered, ids: results.map((r: any) => r.event.messageId), errors };
  });
  expect(out.registered).toBe('plugin_error');
  expect(out.errors.map((e) => e.code)).toContain('plugin_error');
  await collector.waitFor(1, { event: 'During Chunk 1' });
  await collector.waitFor(1, { event: 'During Chunk 2' });
  await quiet(collector);
  expectExactlyOnce(await collector.messages(), out.ids);
});
