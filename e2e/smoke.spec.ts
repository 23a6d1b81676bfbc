import { test, expect, ready } from './fixtures';

test('a track call made through the snippet reaches the collector', async ({ page, site, collector }) => {
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('Smoke', { ok: true }));
  const [m] = await collector.waitFor(1, { event: 'Smoke' });
  expect(m.properties).toEqual({ ok: true });
});
