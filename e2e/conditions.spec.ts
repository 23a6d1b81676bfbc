// Conditions real sites and browsers create (issue 7): blocked or throwing browser APIs, pages that patch
// built-ins, input the API would refuse, a bad message in a batch, bursts past the queue bounds, a tab closing
// during a backoff, the back/forward cache, and calls made before the bundle arrives.
import net from 'node:net';
import { chromium, type Page } from '@playwright/test';
import { executablePath, args } from '../scripts/chromium.mjs';
import { test, expect, ready, open, expectExactlyOnce, watchErrors } from './fixtures';

test.describe.configure({ timeout: 30_000 });

/** Tracks `n` events named `event` and returns their message ids (each call awaited: durably queued). */
async function track(page: Page, event: string, n: number, properties: object = {}): Promise<string[]> {
  return page.evaluate(
    async ([event, n, properties]) => {
      const a = (window as any).analytics;
      const results = await Promise.all(Array.from({ length: n }, (_, i) => a.track(event, { i, ...properties })));
      return results.map((r: any) => r.event.messageId);
    },
    [event, n, properties] as const,
  );
}

const deny = "new DOMException('denied', 'SecurityError')";
// Each makes one browser API exist and throw or reject, as blocked storage, privacy settings or odd pages do.
const BREAKERS: Record<string, string> = {
  'Web Locks reject': `navigator.locks.request = () => Promise.reject(${deny}); navigator.locks.query = () => Promise.reject(${deny});`,
  'localStorage throws': `Object.defineProperty(window, 'localStorage', { get() { throw ${deny}; } });`,
  'sessionStorage throws': `Object.defineProperty(window, 'sessionStorage', { get() { throw ${deny}; } });`,
  'indexedDB.open throws': `IDBFactory.prototype.open = function () { throw ${deny}; };`,
  'indexedDB getter throws': `Object.defineProperty(window, 'indexedDB', { get() { throw ${deny}; } });`,
  'cookies throw': `Object.defineProperty(Document.prototype, 'cookie', { get() { throw ${deny}; }, set() { throw ${deny}; } });`,
  'BroadcastChannel throws': `window.BroadcastChannel = function () { throw ${deny}; };`,
  'crypto throws': `crypto.randomUUID = () => { throw ${deny}; }; crypto.getRandomValues = () => { throw ${deny}; };`,
  'sendBeacon throws': `navigator.sendBeacon = () => { throw ${deny}; };`,
};
BREAKERS['all of them at once'] = Object.values(BREAKERS).join('\n');

for (const [name, script] of Object.entries(BREAKERS)) {
  test(`${name}: calls and the page-exit hand-off still deliver, nothing thrown into the page`, async ({ page, site, collector }) => {
    const errors = await watchErrors(page);
    await page.addInitScript({ content: script });
    await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    const flushed = await track(page, 'Flushed', 3);
    expectExactlyOnce(await collector.waitFor(3, { event: 'Flushed' }), flushed);
    // Then messages that only the page-exit path can send, and a navigation to the next page of the site.
    await page.evaluate(() => (window as any).analytics.flush());
    const atExit = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const r = await Promise.all([1, 2, 3, 4, 5].map((i) => a.track('At Exit', { i }, { timestamp: new Date() })));
      return r.map((x: any) => x.event.messageId);
    });
    await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    await ready(page);
    await page.evaluate(() => (window as any).analytics.flush());
    const got = await collector.waitFor(5, { event: 'At Exit' });
    // The next page may send again what a blocked store could not mark as sent (same ids); nothing is lost.
    expect(new Set(got.map((m) => m.messageId))).toEqual(new Set(atExit));
    expect(errors).toEqual([]);
    expect(await collector.violations()).toEqual([]);
  });
}

test('a sandboxed frame (storage, cookies and Web Locks all refused) delivers its events', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(site.page('/sandbox.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  await expect.poll(() => page.frames().length).toBe(2);
  const frame = page.frames()[1];
  await frame.waitForFunction(() => (window as any).analytics && (window as any).analytics.initialized);
  const blocked = await frame.evaluate(async () => {
    const locks = await navigator.locks.request('x', () => 1).then(() => 'granted', (e) => e.name);
    let storage = 'usable';
    try {
      localStorage.length;
    } catch (e: any) {
      storage = e.name;
    }
    return { locks, storage };
  });
  expect(blocked).toEqual({ locks: 'SecurityError', storage: 'SecurityError' });
  const ids = await frame.evaluate(async () => {
    const a = (window as any).analytics;
    const r = await Promise.all([1, 2, 3].map((i) => a.track('In Sandbox', { i })));
    return r.map((x: any) => x.event.messageId);
  });
  expectExactlyOnce(await collector.waitFor(3, { event: 'In Sandbox' }, 10000), ids);
  expect(errors).toEqual([]);
});

test('a page that patched built-ins like Prototype.js 1.6 (before) and replaced JSON, fetch, Promise, Object.prototype (after) still gets exact messages', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await open(page, site.page('/patched.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const sent = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const r1 = await a.track('Patched Before', { list: [1, 'two', [3]], when: new Date(Date.UTC(2024, 0, 2)), text: 'a"b' });
    // Now what a page does after the bundle ran: none of it may change what we send, or stop us sending.
    const w = window as any;
    w.JSON.stringify = () => '"hacked"';
    w.JSON.parse = () => ({ hacked: true });
    w.fetch = () => Promise.reject(new TypeError('patched fetch'));
    Object.defineProperty(Object.prototype, 'polluted', { value: 'yes', enumerable: true, configurable: true, writable: true });
    w.Promise = function () {
      throw new Error('patched Promise');
    };
    w.Promise.resolve = w.Promise.reject = w.Promise.all = () => {
      throw new Error('patched Promise');
    };
    navigator.sendBeacon = () => true; // a beacon that says yes and sends nothing
    const r2 = await a.track('Patched After', { list: [{ x: 1 }], n: 2 });
    const r3 = a.track('Patched At Exit', { list: [true] }, { timestamp: new Date() });
    return { ids: [r1.event.messageId, r2.event.messageId], exitId: (await r3).event.messageId };
  });
  const [before] = await collector.waitFor(1, { event: 'Patched Before' });
  expect(before.properties).toEqual({ list: [1, 'two', [3]], when: '2024-01-02T00:00:00.000Z', text: 'a"b' });
  const [after] = await collector.waitFor(1, { event: 'Patched After' });
  expect(after.properties).toEqual({ list: [{ x: 1 }], n: 2 });
  expect(JSON.stringify(after)).not.toContain('polluted');
  expect(after.context.page.url).toContain('/patched.html');
  // The exit path too: the beacon taken at load, not the page's liar.
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const [exit] = await collector.waitFor(1, { event: 'Patched At Exit' });
  expect(exit).toMatchObject({ messageId: sent.exitId, properties: { list: [true] } });
  expect(await collector.violations()).toEqual([]);
  expect(errors).toEqual([]);
});

test('input the API would refuse is refused at call time, with a code, and nothing of it is sent', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const events: string[] = [];
    a.on('error', (e: any) => events.push(e.code));
    const outcome = (p: Promise<any>) => p.then(() => 'resolved', (e) => e.code);
    return {
      integrations: await outcome(a.track('Bad Integrations', {}, { integrations: { Amplitude: 'yes' } })),
      integrationsObject: await outcome(a.track('Bad Integrations 2', {}, { integrations: { Amplitude: { key: 1 } } })),
      dateProperties: await outcome(a.track('Date Properties', new Date())),
      toJSONString: await outcome(a.track('String Properties', { toJSON: () => 'text' })),
      farYear: await outcome(a.track('Far Year', {}, { timestamp: new Date(8.64e15) })),
      badTimestamp: await outcome(a.track('Bad Timestamp', {}, { timestamp: 'not a date' })),
      contextString: await outcome(a.track('Bad Context', {}, { context: 'x' })),
      traitsDate: await outcome(a.identify('u1', new Date())),
      ok: await outcome(a.track('Fine After')),
      events,
    };
  });
  expect(r).toMatchObject({
    integrations: 'invalid_payload',
    integrationsObject: 'invalid_payload',
    dateProperties: 'invalid_arguments',
    toJSONString: 'invalid_arguments',
    farYear: 'invalid_arguments',
    badTimestamp: 'invalid_arguments',
    contextString: 'invalid_arguments',
    traitsDate: 'invalid_arguments',
    ok: 'resolved',
  });
  expect(r.events).toHaveLength(8);
  await collector.waitFor(1, { event: 'Fine After' });
  expect((await collector.messages()).map((m) => m.event || m.type)).toEqual(['Fine After']);
  expect(await collector.violations()).toEqual([]);
  expect(errors).toEqual([]);
});

test('a bad message in a large batch is isolated in seconds; good ones, and calls made afterwards, are not delayed', async ({ page, site, collector }) => {
  await collector.fault({ poisonEvent: 'Poison', poisonStatus: 400 });
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 200, flushAt: 1000 }) }));
  const start = Date.now();
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const retries: number[] = [];
    const errors: any[] = [];
    a.on('retry', (x: any) => retries.push(x.status));
    a.on('error', (e: any) => errors.push({ code: e.code, ids: e.messageIds }));
    (window as any).__probe = { retries, errors };
    // 20 x 2.5 KB: a 50 KB keepalive request answered 400, then halves that go out back to back as keepalive
    // requests, each within the 64 KiB budget only once the answered one no longer counts.
    const pad = 'p'.repeat(2500);
    const calls = [];
    for (let i = 0; i < 20; i++) calls.push(a.track(i == 7 ? 'Poison' : 'Good', { i, pad }));
    const res = await Promise.all(calls);
    return { good: res.filter((x: any) => x.event.event == 'Good').map((x: any) => x.event.messageId), bad: res[7].event.messageId };
  });
  expectExactlyOnce(await collector.waitFor(19, { event: 'Good' }, 10000), r.good);
  const later = await page.evaluate(async () => (await (window as any).analytics.track('Later')).event.messageId);
  expectExactlyOnce(await collector.waitFor(1, { event: 'Later' }, 5000), [later]);
  expect(Date.now() - start).toBeLessThan(8000);
  const probe = await page.evaluate(() => (window as any).__probe);
  expect(probe.retries).toEqual([]); // isolating a bad message is not the server failing
  expect(probe.errors).toEqual([{ code: 'delivery_rejected', ids: [r.bad] }]);
  expect(await collector.messages({ event: 'Poison' })).toEqual([]);
});

test("another script's keepalive requests hold the page's 64 KiB budget: our requests still go out at once", async ({ page, site, collector }) => {
  // A server that takes requests and never answers: the page's own keepalive request to it stays in flight.
  const silent = net.createServer((socket) => socket.on('error', () => {}));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  try {
    const port = (silent.address() as net.AddressInfo).port;
    await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    const r = await page.evaluate(async (port) => {
      const a = (window as any).analytics;
      const retries: number[] = [];
      a.on('retry', (x: any) => retries.push(x.status));
      (window as any).__retries = retries;
      // Another library's keepalive request, holding 60 KB of the budget.
      fetch(`http://127.0.0.1:${port}/hold`, { method: 'POST', body: 'k'.repeat(60000), keepalive: true, mode: 'no-cors' }).catch(() => {});
      const res = await Promise.all([1, 2, 3].map((i) => a.track('Despite Budget', { i, pad: 'd'.repeat(3000) })));
      return res.map((x: any) => x.event.messageId);
    }, port);
    expectExactlyOnce(await collector.waitFor(3, { event: 'Despite Budget' }, 5000), r);
    expect(await page.evaluate(() => (window as any).__retries)).toEqual([]);
  } finally {
    silent.close();
  }
});

test('a burst past the queue bounds: new calls are refused with queue_full (one error event), every resolved call is delivered', async ({ page, site, collector }) => {
  test.setTimeout(60_000);
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100, queue: { maxCount: 300 } }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const events: any[] = [];
    a.on('error', (e: any) => events.push({ code: e.code, count: e.messageIds && e.messageIds.length }));
    const pad = 'b'.repeat(900);
    const calls = [];
    for (let i = 0; i < 1000; i++) calls.push(a.track('Burst', { i, pad }));
    const out = await Promise.allSettled(calls);
    // the episode's one report comes after the burst's task (bounded: the reports are checked below)
    const until = Date.now() + 10_000;
    while (!events.length && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
    return {
      resolved: out.filter((x) => x.status == 'fulfilled').map((x: any) => x.value.event.messageId),
      refused: out.filter((x) => x.status == 'rejected').map((x: any) => x.reason.code),
      events,
    };
  });
  expect(r.resolved).toHaveLength(300);
  expect(new Set(r.refused)).toEqual(new Set(['queue_full']));
  expect(r.events).toEqual([{ code: 'queue_full', count: 700 }]);
  expectExactlyOnce(await collector.waitFor(300, { event: 'Burst' }, 20000), r.resolved);
  // Once there is room again, calls are accepted.
  const after = await page.evaluate(async () => (await (window as any).analytics.track('After Burst')).event.messageId);
  expectExactlyOnce(await collector.waitFor(1, { event: 'After Burst' }), [after]);
});

// Tracks `n` events on `page` and waits until their request failed and a retry is scheduled; returns their ids.
async function trackIntoBackoff(page: Page, event: string, n: number): Promise<string[]> {
  return page.evaluate(
    async ([event, n]) => {
      const a = (window as any).analytics;
      const retried = new Promise((res) => a.on('retry', res));
      const r = await Promise.all(Array.from({ length: n }, (_, i) => a.track(event, { i: i + 1 })));
      await retried;
      return r.map((x: any) => x.event.messageId);
    },
    [event, n] as const,
  );
}

test("a tab closed during a retry backoff: a living tab sends its messages within seconds, without a reload", async ({ context, site, collector }) => {
  const opts = { opts: JSON.stringify({ flushInterval: 100, debug: !!process.env.DEBUG_E2E }) };
  const living = await context.newPage();
  if (process.env.DEBUG_E2E) living.on('console', (m) => console.log('living:', m.text()));
  await open(living, site.page('/basic.html', opts));
  await expect.poll(() => collector.requests().then((r) => r.length)).toBe(0);
  // The API fails once and asks for a long wait: the closing tab is in its backoff.
  await collector.fault({ status: 503, times: 1, retryAfter: 120 });
  const closing = await context.newPage();
  await open(closing, site.page('/basic.html', opts));
  const ids = await trackIntoBackoff(closing, 'Orphaned', 5);
  await living.bringToFront();
  await closing.close();
  const closedAt = Date.now();
  expectExactlyOnce(await collector.waitFor(5, { event: 'Orphaned' }, 10000), ids);
  expect(Date.now() - closedAt).toBeLessThan(5000);
  // The living tab stays the only one sending, and sends its own events as before.
  const own = await track(living, 'Living', 2);
  expectExactlyOnce(await collector.waitFor(2, { event: 'Living' }), own);
});

test('without Web Locks, a tab closed during a retry backoff has its messages sent by a living tab within the lease', async ({ context, site, collector }) => {
  test.setTimeout(150_000);
  await context.addInitScript(() => delete (Navigator.prototype as any).locks);
  const opts = { opts: JSON.stringify({ flushInterval: 100 }) };
  const living = await context.newPage();
  await open(living, site.page('/basic.html', opts));
  expect(await living.evaluate(() => 'locks' in navigator)).toBe(false);
  await collector.fault({ status: 503, times: 1, retryAfter: 600 });
  const closing = await context.newPage();
  await open(closing, site.page('/basic.html', opts));
  const ids = await trackIntoBackoff(closing, 'Leased', 3);
  const closedAt = Date.now();
  await closing.close();
  // The lease is 60 s from when the messages were queued; the living tab looks at least every 30 s.
  await expect.poll(async () => (await collector.messages({ event: 'Leased' })).length, { timeout: 120_000, intervals: [1000] }).toBe(3);
  expectExactlyOnce(await collector.messages({ event: 'Leased' }), ids);
  expect(Date.now() - closedAt).toBeLessThan(100_000);
});

test.describe('the back/forward cache (enabled, as in real Chromium)', () => {
  test('messages waiting at exit do not keep the page out of the cache, and are delivered once', async ({ site, collector }) => {
    const browser = await chromium.launch({ executablePath, args, ignoreDefaultArgs: ['--disable-back-forward-cache'] });
    try {
      const page = await browser.newPage();
      const opts = { opts: JSON.stringify({ flushInterval: 60000, flushAt: 100 }), cache: 'revalidate' };
      await open(page, site.page('/basic.html', opts));
      await page.evaluate(() => ((window as any).__kept = 'from the cache'));
      const ids = await track(page, 'Waiting At Exit', 5);
      // A call right before leaving, whose IndexedDB write may still be in flight.
      await page.evaluate(() => (window as any).analytics.track('Last Moment'));
      await page.goto(site.page('/basic.html', { ...opts, next: '1' }));
      await ready(page);
      await track(page, 'On Next Page', 1);
      // A restore from the cache fires no load event: wait for the commit, then for the page to be complete.
      await page.goBack({ waitUntil: 'commit' });
      await page.waitForFunction(() => document.readyState == 'complete');
      const restored = await page.evaluate(() => ({
        kept: (window as any).__kept,
        reasons: JSON.stringify((performance.getEntriesByType('navigation')[0] as any)?.notRestoredReasons || null),
      }));
      expect(restored.kept, `not restored from the back/forward cache: ${restored.reasons}`).toBe('from the cache');
      expectExactlyOnce(await collector.waitFor(5, { event: 'Waiting At Exit' }), ids);
      expect(await collector.waitFor(1, { event: 'Last Moment' })).toHaveLength(1);
      // The restored page still works.
      const again = await track(page, 'After Restore', 1);
      await page.evaluate(() => (window as any).analytics.flush());
      expectExactlyOnce(await collector.waitFor(1, { event: 'After Restore' }), again);
    } finally {
      await browser.close();
    }
  });
});

test.describe('calls made before the bundle arrives', () => {
  // The bundle never arrives on the first page (a 404: blocked, or a slow network the visitor did not wait for).
  const noBundle = (site: any, extra: object = {}) => site.page('/basic.html', { opts: JSON.stringify({ cdnUrl: '/never-arrives.js', ...extra }) });

  async function recordTen(page: Page) {
    return page.evaluate(async () => {
      const a = (window as any).analytics;
      const out: { event: string; time: number }[] = [];
      for (let i = 0; i < 10; i++) {
        a.track('Before Bundle ' + i, { i });
        out.push({ event: 'Before Bundle ' + i, time: Date.now() });
        await new Promise((r) => setTimeout(r, 5));
      }
      return { calls: out, url: location.href };
    });
  }

  function expectRecorded(got: any[], recorded: { calls: { event: string; time: number }[]; url: string }) {
    expect(got.map((m) => m.event).sort()).toEqual(recorded.calls.map((c) => c.event).sort());
    for (const c of recorded.calls) {
      const m = got.find((x) => x.event == c.event);
      expect(Math.abs(Date.parse(m.timestamp) - c.time)).toBeLessThan(50);
      expect(m.context.page.url).toBe(recorded.url);
    }
    expect(new Set(got.map((m) => m.messageId)).size).toBe(got.length);
  }

  test('a visitor who follows a link before the bundle arrives: the next page sends them exactly once', async ({ page, site, collector }) => {
    await page.goto(noBundle(site));
    const recorded = await recordTen(page);
    await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    await ready(page);
    const got = await collector.waitFor(10, {}, 15000);
    expectRecorded(got.filter((m) => m.event?.startsWith('Before Bundle')), recorded);
    // and never again: two more page loads send nothing of them
    await page.reload();
    await ready(page);
    const second = await page.context().newPage();
    await open(second, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    await page.evaluate(() => (window as any).analytics.flush());
    await second.evaluate(() => (window as any).analytics.flush());
    expect((await collector.messages()).filter((m) => m.event?.startsWith('Before Bundle'))).toHaveLength(10);
  });

  test('a tab closed before the bundle arrives: a later visit sends them exactly once', async ({ context, site, collector }) => {
    const first = await context.newPage();
    await first.goto(noBundle(site));
    const recorded = await recordTen(first);
    await first.close();
    const later = await context.newPage();
    await open(later, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    expectRecorded(await collector.waitFor(10, {}, 15000), recorded);
  });

  test('a page whose bundle arrives sends its recorded calls once, and a later page does not send them again', async ({ page, site, collector }) => {
    await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }), noload: '1' }));
    const recorded = await recordTen(page);
    await page.evaluate(() => (window as any).analytics.load('dev-write-key', { apiHost: new URLSearchParams(location.search).get('api'), cdnUrl: '/dist/analytics.min.js', flushInterval: 100 }));
    await ready(page);
    expectRecorded(await collector.waitFor(10, {}, 15000), recorded);
    await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    await ready(page);
    await page.evaluate(() => (window as any).analytics.flush());
    expect(await page.evaluate(() => localStorage.getItem('svc_buffer'))).toBeNull();
    expect((await collector.messages()).filter((m) => m.event?.startsWith('Before Bundle'))).toHaveLength(10);
  });
});
