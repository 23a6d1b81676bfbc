import type { Page } from '@playwright/test';
import { test, expect, open, ready, sendFirst } from './fixtures';

// CONTRACT section 2 calls that are not about the wire: debug, ready, on() delivery events, and the promise
// resolving only once the message is durably queued.

/** The basic test page with these load options, ready (the fixtures' `open`). */
const openBasic = (page: Page, site: { page(p: string, q?: Record<string, string>): string }, opts: object) => open(page, site.page('/basic.html', { opts: JSON.stringify(opts) }));

test('debug(true) logs each call, each batch and each error to the console; debug(false) stops it', async ({ page, site, collector }) => {
  const logs: string[] = [];
  page.on('console', (m) => logs.push(m.text()));
  await openBasic(page, site, { flushInterval: 50 });
  await page.evaluate(() => (window as any).analytics.debug(true));
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.track('Debugged', { a: 1 });
    await a.track('').catch(() => {}); // refused: an error
  });
  expect(await collector.waitFor(1, { event: 'Debugged' })).toHaveLength(1);
  await expect.poll(() => logs.filter((l) => l.includes('[svc-analytics]')).join('\n')).toMatch(/delivered 1 message/);
  const ours = logs.filter((l) => l.includes('[svc-analytics]'));
  expect(ours.some((l) => /track/.test(l) && /Debugged/.test(l)), 'the call is logged').toBe(true);
  expect(ours.some((l) => /invalid_arguments/.test(l)), 'the error is logged').toBe(true);

  const before = logs.length;
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    a.debug(false);
    await a.track('Quiet');
  });
  expect(await collector.waitFor(1, { event: 'Quiet' })).toHaveLength(1);
  expect(logs.slice(before).filter((l) => l.includes('[svc-analytics]'))).toEqual([]);
});

test('ready(callback) calls back once loaded, also when asked after it was ready', async ({ page, site, collector }) => {
  await page.goto(site.page('/basic.html', { noload: '1', opts: '{}' }));
  const calls = await page.evaluate(async (api) => {
    const a = (window as any).analytics;
    const seen: string[] = [];
    a.ready(() => seen.push('before load'));
    a.load('dev-write-key', { apiHost: api, cdnUrl: '/dist/analytics.min.js' });
    await new Promise<void>((r) => {
      const t = setInterval(() => (window as any).analytics.initialized && (clearInterval(t), r()), 20);
      setTimeout(() => (clearInterval(t), r()), 10000);
    });
    await (window as any).analytics.ready(() => seen.push('after ready'));
    // bounded: what it holds is checked below
    const until = Date.now() + 10_000;
    while (!seen.includes('after ready') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return seen;
  }, collector.url);
  expect(calls).toEqual(['before load', 'after ready']);
});

test("on('delivered') reports messages after a 2xx, and on('retry') a failed attempt with its status", async ({ page, site, collector }) => {
  await openBasic(page, site, { flushInterval: 50 });
  await collector.fault({ status: 503, times: 1, retryAfter: 0 });
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const delivered: string[] = [];
    const retries: any[] = [];
    a.on('delivered', (ms: any[]) => delivered.push(...ms.map((m) => m.event)));
    a.on('retry', (info: any) => retries.push(info));
    const { event } = await a.track('Watched');
    const until = Date.now() + 10000;
    while (!delivered.includes('Watched') && Date.now() < until) await new Promise((res) => setTimeout(res, 50));
    return { delivered, retries, id: event.messageId };
  });
  expect(r.delivered).toContain('Watched');
  expect(r.retries).toHaveLength(1);
  expect(r.retries[0]).toMatchObject({ status: 503, messageIds: [r.id] });
});

test('a call resolves only once its message is in IndexedDB (durably queued)', async ({ page, site, collector }) => {
  await openBasic(page, site, { flushInterval: 60000, flushAt: 1000 });
  await sendFirst(page, collector); // so that the next message waits in the queue
  const stored = await page.evaluate(async () => {
    const { event } = await (window as any).analytics.track('Durable', { n: 1 });
    // Read the library's own database directly, right after the promise resolved.
    const db: IDBDatabase = await new Promise((res, rej) => {
      const req = indexedDB.open('svc-analytics');
      req.onsuccess = () => res(req.result);
      req.onerror = () => rej(req.error);
    });
    const rec: any = await new Promise((res, rej) => {
      const req = db.transaction('queue').objectStore('queue').get(event.messageId);
      req.onsuccess = () => res(req.result);
      req.onerror = () => rej(req.error);
    });
    db.close();
    return rec && { id: rec.id, event: rec.message.event, attempts: rec.attempts };
  });
  expect(stored).toEqual({ id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/), event: 'Durable', attempts: 0 });
});
