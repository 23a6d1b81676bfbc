// CONTRACT section 6, third bullet (security-3 M2): stored messages are bound to the write key and apiHost they were
// queued under. A page that loads with another host never sends them; a page with theirs does.
import { test, expect } from './fixtures';
import type { Page } from '@playwright/test';

// The records of the shared queue (IndexedDB `svc-analytics`, store `queue`, as idb-keyval keeps it).
const records = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<any[]>((resolve, reject) => {
        const open = indexedDB.open('svc-analytics');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          if (!db.objectStoreNames.contains('queue')) return resolve([]), db.close();
          const all = db.transaction('queue').objectStore('queue').getAll();
          all.onsuccess = () => (resolve(all.result), db.close());
          all.onerror = () => reject(all.error);
        };
      }),
  );

test('a message left in IndexedDB under one apiHost is not sent by a page of another host, and is by a page of its own', async ({ browser, site, collector }) => {
  const h1 = collector.url;
  // The same collector under another name: another apiHost, so another binding.
  const h2 = h1.includes('127.0.0.1') ? h1.replace('127.0.0.1', 'localhost') : h1.replace('localhost', '127.0.0.1');
  expect(h2).not.toBe(h1);
  const context = await browser.newContext();
  // Page 1 (H1): the API fails, so its track stays queued.
  await collector.fault({ status: 503 });
  const p1 = await context.newPage();
  await p1.goto(site.page('basic.html', { api: h1, opts: JSON.stringify({ flushInterval: 600000 }) }));
  await p1.waitForFunction(() => (window as any).analytics?.VERSION);
  const messageId = await p1.evaluate(() => (window as any).analytics.track('Bound H1').then((r: any) => r.event.messageId));
  await expect.poll(async () => (await records(p1)).map((r) => r.id)).toContain(messageId);
  const [record] = (await records(p1)).filter((r) => r.id == messageId);
  expect(record.source).toBe(`dev-write-key ${h1}/v1/batch`);
  await p1.close();
  await collector.fault({});
  await collector.reset();

  // The page closed before sending: what it handed the browser at exit (and noted) is put back as left by a tab that
  // is gone, so that only adoption can send it.
  const p2 = await context.newPage();
  await p2.goto(site.page('basic.html', { noload: '1' }));
  await p2.evaluate(
    (r) =>
      new Promise<void>((resolve, reject) => {
        localStorage.removeItem('svc_sent');
        const open = indexedDB.open('svc-analytics');
        open.onsuccess = () => {
          const tx = open.result.transaction('queue', 'readwrite');
          tx.objectStore('queue').put({ ...r, owner: 'gone-tab' }, r.id);
          tx.oncomplete = () => (open.result.close(), resolve());
          tx.onerror = () => reject(tx.error);
        };
      }),
    record,
  );

  // Page 2 loads under H2: it never sends the record, and leaves it stored.
  await p2.goto(site.page('basic.html', { api: h2, opts: JSON.stringify({ flushInterval: 100, trackPageViews: false }) }));
  await p2.waitForFunction(() => (window as any).analytics?.VERSION);
  await p2.evaluate(() => (window as any).analytics.track('From H2'));
  await collector.waitFor(1, { event: 'From H2' }, 10_000);
  await p2.waitForTimeout(3000); // past the orphan grace (1.5 s) and a flush
  await p2.evaluate(() => (window as any).analytics.flush());
  expect((await collector.messages()).map((m) => m.event || m.type)).not.toContain('Bound H1');
  expect((await records(p2)).map((r) => r.id)).toContain(messageId);
  await p2.close();

  // Page 3 loads under H1: it adopts and sends it.
  const p3 = await context.newPage();
  await p3.goto(site.page('basic.html', { api: h1, opts: JSON.stringify({ flushInterval: 100, trackPageViews: false }) }));
  const [sent] = await collector.waitFor(1, { messageId }, 15_000);
  expect(sent.event).toBe('Bound H1');
  await context.close();
});
