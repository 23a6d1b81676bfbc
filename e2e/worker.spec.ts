// The npm entry in a dedicated worker (CONTRACT section 1, "workers and extensions"), in Chromium: events tracked
// there arrive once, with the context a worker has (user agent, locale, time zone; no `page`, no `screen`), and no
// error; the worker's queue and anonymous id are kept in IndexedDB (a worker ended with a message waiting loses
// nothing: the next one sends it, with the same anonymous id). Firefox and WebKit: e2e/engines/worker.spec.ts.
import { test, expect, quiet, expectExactlyOnce } from './fixtures';
import { buildWorker } from './worker/build';

test.beforeAll(() => buildWorker());

test('a dedicated worker tracks: each event arrives once, with a worker\'s context and no page', async ({ page, site, collector }) => {
  await page.goto(site.page('/worker.html'));
  const answer = await page.evaluate(() => (window as any).runWorker('Worker Event', 5));
  expect(answer.error).toBeUndefined();
  expect(answer.errors).toEqual([]);
  const got = await collector.waitFor(5, { event: 'Worker Event' });
  await quiet(collector);
  expectExactlyOnce(await collector.messages({ event: 'Worker Event' }), answer.ids);
  const m = got[0];
  expect(m.context.page).toBeUndefined();
  expect(m.context.screen).toBeUndefined();
  expect(m.context.userAgent).toBe(await page.evaluate(() => navigator.userAgent));
  expect(m.context.locale).toBe(await page.evaluate(() => navigator.language));
  expect(m.context.timezone).toBe(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone));
  expect(m.context.library.name).toBe('svc-analytics');
  expect(m.anonymousId).toBe(answer.anonymousId);
});

test('a worker ended with messages waiting loses none: the next worker of the site sends them', async ({ page, site, collector }) => {
  await page.goto(site.page('/worker.html'));
  // The API fails: the messages stay queued (in IndexedDB), and the worker is ended with them.
  await collector.fault({ status: 503 });
  const answer = await page.evaluate(() => (window as any).runWorker('Worker Waiting', 3));
  expect(answer.error).toBeUndefined();
  await expect.poll(async () => (await collector.requests()).length).toBeGreaterThan(0);
  await page.evaluate(() => (window as any).worker.terminate());
  await collector.fault({});
  // A new page, a new worker: it adopts what the ended one left (its life lock is gone) and sends it.
  await page.reload();
  const next = await page.evaluate(() => (window as any).runWorker('Worker Next', 1));
  expect(next.error).toBeUndefined();
  await expect.poll(async () => (await collector.messages({ event: 'Worker Waiting' })).length, { timeout: 20_000 }).toBe(3);
  await quiet(collector);
  expectExactlyOnce(await collector.messages({ event: 'Worker Waiting' }), answer.ids);
  // The anonymous id outlived the worker: kept in IndexedDB (a worker has no localStorage or cookie).
  expect(next.anonymousId).toBe(answer.anonymousId);
  const sent = await collector.messages({ event: 'Worker Next' });
  expect(sent[0]?.anonymousId ?? next.anonymousId).toBe(answer.anonymousId);
});
