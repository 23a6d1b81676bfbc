// Robustness (CONTRACT sections 2 and 4): bad input never throws into the page and is reported; odd values are
// sanitised; no prototype pollution; the 32 KB message limit; a strict CSP; no IndexedDB; no other hosts.
import { test, expect, ready, open, quiet } from './fixtures';
import type { Page } from '@playwright/test';

// A failing library should fail fast, not hang: every test here normally takes a few seconds.
test.describe.configure({ timeout: 20_000 });

/** Collects uncaught page errors and console errors of `page`. */
function watchErrors(page: Page) {
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return pageErrors;
}

test('bad input never throws into the page: the promise rejects with a code, the callback and the error event get it', async ({ page, site, collector }) => {
  const pageErrors = watchErrors(page);
  await page.addInitScript(() => {
    (window as any).__unhandled = [];
    addEventListener('unhandledrejection', (e) => (window as any).__unhandled.push(String(e.reason)));
  });
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const events: any[] = [];
    a.on('error', (e: any) => events.push({ code: e && e.code, isError: e instanceof Error }));
    const results: any[] = [];
    const run = async (label: string, call: (cb: (x: any) => void) => any) => {
      let thrown: any = null;
      let cbArg: any = 'not called';
      let promise: any;
      try {
        promise = call((x) => (cbArg = x));
      } catch (e) {
        thrown = String(e);
      }
      let rejected: any = null;
      let resolved = false;
      if (promise && typeof promise.then == 'function') {
        await promise.then(
          () => (resolved = true),
          (e: any) => (rejected = { isError: e instanceof Error, code: e && e.code, message: String(e && e.message) }),
        );
      }
      results.push({
        label,
        thrown,
        resolved,
        rejected,
        cb: cbArg === 'not called' ? 'not called' : { isError: cbArg instanceof Error, code: cbArg && cbArg.code },
      });
    };
    await run('no name', (cb) => a.track(undefined, { a: 1 }, {}, cb));
    await run('bigint name', (cb) => a.track(42n, cb));
    await run('string properties', (cb) => a.track('x', 'notAnObject', cb));
    // and ignoring the promise: no unhandled rejection
    a.track();
    a.track(42n);
    a.track('x', 'notAnObject');
    // the ignored calls are reported too (bounded: the count is checked below)
    const until = Date.now() + 10_000;
    while (events.length < 6 && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
    await a.track('Still Fine');
    return { results, events };
  });
  for (const c of r.results) {
    expect.soft(c.thrown, `${c.label}: nothing thrown`).toBeNull();
    expect.soft(c.resolved, `${c.label}: not resolved`).toBe(false);
    expect.soft(c.rejected, `${c.label}: rejected with an Error with a code`).toMatchObject({ isError: true, code: expect.any(String) });
    expect.soft(c.cb, `${c.label}: callback got the error`).toEqual({ isError: true, code: c.rejected?.code });
  }
  // one 'error' event per bad call: 3 with callbacks, 3 ignored
  expect(r.events).toHaveLength(6);
  for (const e of r.events) expect(e).toMatchObject({ isError: true, code: expect.any(String) });
  expect(await page.evaluate(() => (window as any).__unhandled)).toEqual([]);
  expect(await collector.waitFor(1, { event: 'Still Fine' })).toHaveLength(1);
  await quiet(collector);
  // nothing of the refused calls went out
  expect((await collector.messages()).map((m) => m.event)).toEqual(['Still Fine']);
  expect(pageErrors).toEqual([]);
});

test('bad calls made to the snippet before load are reported, not thrown, when replayed', async ({ page, site, collector }) => {
  const pageErrors = watchErrors(page);
  await page.addInitScript(() => {
    (window as any).__unhandled = [];
    addEventListener('unhandledrejection', (e) => (window as any).__unhandled.push(String(e.reason)));
  });
  await page.goto(site.page('/basic.html', { noload: '1' }));
  await page.evaluate((api) => {
    const a = (window as any).analytics;
    (window as any).__stubErrors = [];
    a.on('error', (e: any) => (window as any).__stubErrors.push(e && e.code));
    a.track();
    a.track('x', 'notAnObject');
    a.track('Good Stub Call');
    a.load('dev-write-key', { apiHost: api, cdnUrl: '/dist/analytics.min.js', flushInterval: 100 });
  }, collector.url);
  await ready(page);
  expect(await collector.waitFor(1, { event: 'Good Stub Call' })).toHaveLength(1);
  await quiet(collector);
  expect(await page.evaluate(() => (window as any).__unhandled)).toEqual([]);
  expect(pageErrors).toEqual([]);
  // a handler registered through the stub heard both refusals
  expect(await page.evaluate(() => (window as any).__stubErrors)).toEqual([expect.any(String), expect.any(String)]);
  expect((await collector.messages()).map((m) => m.event)).toEqual(['Good Stub Call']);
});

test('cycles, BigInt, functions, symbols, undefined, NaN/Infinity, Dates and toJSON are sent sanitised', async ({ page, site, collector }) => {
  const pageErrors = watchErrors(page);
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const shared = { k: 1 };
    const o: any = {
      str: 's',
      num: 1.5,
      bool: false,
      nul: null,
      nan: NaN,
      inf: Infinity,
      ninf: -Infinity,
      big: 12345678901234567890n,
      date: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)),
      fn() {
        return 1;
      },
      sym: Symbol('x'),
      undef: undefined,
      withToJSON: { toJSON: () => 'from toJSON' },
      arr: [1, NaN, 'two', 3n],
      nested: { deep: { n: 1 } },
      a1: shared,
      a2: shared,
    };
    o.self = o;
    o.nested.deep.up = o.nested;
    let outcome = 'pending';
    try {
      const res = await a.track('Sanitised', o);
      outcome = res && res.event ? 'resolved' : 'resolved without event';
    } catch (e: any) {
      outcome = 'rejected: ' + (e && e.code);
    }
    return outcome;
  });
  expect(r).toBe('resolved');
  const [m] = await collector.waitFor(1, { event: 'Sanitised' });
  const p = m.properties;
  expect(p).toEqual({
    str: 's',
    num: 1.5,
    bool: false,
    nul: null,
    nan: null,
    inf: null,
    ninf: null,
    big: '12345678901234567890',
    date: '2020-01-02T03:04:05.006Z',
    withToJSON: 'from toJSON',
    arr: [1, null, 'two', '3'],
    nested: { deep: { n: 1, up: '[Circular]' } },
    a1: { k: 1 }, // the same object twice is not a cycle
    a2: { k: 1 },
    self: '[Circular]',
  });
  expect(pageErrors).toEqual([]);
});

test('a __proto__ property does not pollute Object.prototype in the page', async ({ page, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const evil = () => JSON.parse('{"__proto__":{"polluted":1},"ok":1}');
    await a.track('Proto', evil());
    await a.identify('proto-user', evil());
    await a.group('g', evil());
    await a.page('Proto Page', evil());
    // integrations take booleans only (spec 000 section 2.3), so theirs is a boolean __proto__
    await a.track('Proto Options', {}, { context: evil(), integrations: JSON.parse('{"__proto__":false,"ok":true}') });
    await a.flush();
    const probe: any = {};
    return { polluted: probe.polluted, onProto: (Object.prototype as any).polluted, arrPolluted: ([] as any).polluted };
  });
  expect(r).toEqual({});
  const [m] = await collector.waitFor(1, { event: 'Proto' });
  expect(m.properties.ok).toBe(1);
  expect((await collector.waitFor(5)).length).toBeGreaterThanOrEqual(5);
  // nor the library's own state: a later call is normal
  const later = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const res = await a.track('After Proto');
    const plain = (o: any) => Object.getPrototypeOf(o) === Object.prototype;
    return { traits: plain(a.user().traits()), properties: plain(res.event.properties), context: plain(res.event.context) };
  });
  expect(later).toEqual({ traits: true, properties: true, context: true });
});

test('a message over 32 KB is refused at call time and never sent; the events around it arrive', async ({ page, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 200 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const errors: any[] = [];
    a.on('error', (e: any) => errors.push(e && e.code));
    const p1 = a.track('Before Huge');
    let huge: any = null;
    try {
      await a.track('Huge', { pad: 'h'.repeat(40000) });
      huge = 'resolved';
    } catch (e: any) {
      huge = { code: e && e.code, isError: e instanceof Error };
    }
    const big = await a.track('Big But Fine', { pad: 'b'.repeat(28000) }); // ~29 KB with its context
    const p2 = a.track('After Huge');
    await Promise.all([p1, p2]);
    return { huge, errors, bigBytes: new TextEncoder().encode(JSON.stringify(big.event)).length };
  });
  expect(r.huge).toEqual({ code: 'message_too_large', isError: true });
  expect(r.errors).toEqual(['message_too_large']);
  expect(r.bigBytes).toBeLessThan(32000);
  const msgs = await collector.waitFor(3);
  expect(msgs.map((m) => m.event).sort()).toEqual(['After Huge', 'Before Huge', 'Big But Fine']);
  await quiet(collector);
  const reqs = await collector.requests();
  expect(reqs.flatMap((q) => q.messages).filter((m: any) => m.event === 'Huge')).toEqual([]);
  expect(reqs.filter((q) => q.overLimit)).toEqual([]);
});

test('works under a strict CSP with a nonce, debug tools included, without any violation', async ({ page, site, collector }) => {
  const pageErrors = watchErrors(page);
  await page.addInitScript(() => {
    (window as any).__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as any).__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  const csp = "script-src 'nonce-abc123'; connect-src *";
  const response = await page.goto(site.page('/core-csp.html', { csp }));
  expect(response!.headers()['content-security-policy']).toBe(csp);
  await ready(page);
  const logs: string[] = [];
  page.on('console', (m) => logs.push(m.text()));
  // debug(true) inserts the debug tools' script next to the bundle, with the nonce
  await page.evaluate(() => {
    const a = (window as any).analytics;
    a.debug(true);
    a.track('Under CSP', { ok: true });
    a.ecommerce.productAdded({ price: 'not a number' });
  });
  const msgs = await collector.waitFor(3, {}, 10000);
  expect(msgs.map((m) => m.event).sort()).toEqual(['Early Under CSP', 'Product Added', 'Under CSP']);
  await expect.poll(() => logs.filter((l) => l.includes('[svc-analytics]')).join('\n')).toMatch(/Product Added: price should be a number/);
  expect(logs.some((l) => l.includes('[svc-analytics]') && l.includes('Under CSP'))).toBe(true);
  // The debug tools ran (their log above), and every request was answered (a connect-src violation comes with its
  // request): a violation would have been reported by now.
  await quiet(collector, 500);
  expect(await page.evaluate(() => (window as any).__violations)).toEqual([]);
  expect(pageErrors).toEqual([]);
  // the policy is in force: a script without the nonce is blocked
  const blocked = await page.evaluate(async () => {
    const s = document.createElement('script');
    s.textContent = 'window.__inlineRan = true';
    document.head.appendChild(s);
    // the violation is reported in a task of its own (bounded: the count is checked below)
    const until = Date.now() + 10_000;
    while (!(window as any).__violations.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return { ran: !!(window as any).__inlineRan, violations: (window as any).__violations.length };
  });
  expect(blocked).toEqual({ ran: false, violations: 1 });
});

for (const [label, init] of [
  [
    'indexedDB.open throws',
    () => {
      IDBFactory.prototype.open = function () {
        throw new DOMException('blocked for the test', 'InvalidStateError');
      };
    },
  ],
  [
    'window.indexedDB is undefined',
    () => {
      Object.defineProperty(window, 'indexedDB', { value: undefined, configurable: true });
    },
  ],
] as const) {
  test(`events are still delivered from memory when IndexedDB is unusable (${label})`, async ({ page, site, collector }) => {
    const pageErrors = watchErrors(page);
    await page.addInitScript(init);
    await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const out: string[] = [];
      for (let i = 0; i < 5; i++) {
        try {
          await a.track('No IDB', { i });
          out.push('ok');
        } catch (e: any) {
          out.push('rejected ' + (e && e.code) + ' ' + e);
        }
      }
      try {
        await a.identify('idb-less');
        out.push('ok');
      } catch (e: any) {
        out.push('rejected ' + (e && e.code) + ' ' + e);
      }
      return out;
    });
    // each call is accepted (queued in memory), not refused because of the storage
    expect.soft(r).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    const msgs = await collector.waitFor(5, { event: 'No IDB' }, 10000);
    expect(msgs.map((m) => m.properties.i).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await collector.waitFor(1, { type: 'identify' })).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });
}

test('apiHost as a path on the page\'s own origin (a first-party proxy): batches and the exit beacon go there, with no preflight', async ({ page, context, site, collector }) => {
  const urls: string[] = [];
  context.on('request', (r) => urls.push(`${r.method()} ${r.url()}`));
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ apiHost: '/ingest' }) }));
  const id: string = await page.evaluate(async () => (await (window as any).analytics.track('First Party')).event.messageId);
  expect(await collector.waitFor(1, { messageId: id }, 10000)).toHaveLength(1);
  // what waits at exit leaves by beacon to the same path
  await page.evaluate(() => (window as any).analytics.track('First Party Exit'));
  await page.goto(site.page('/core-blank.html'));
  expect(await collector.waitFor(1, { event: 'First Party Exit' }, 10000)).toHaveLength(1);
  // Both came through the site's own origin (the proxy passes the page's Origin header on): the fetch with Basic
  // auth, the exit beacon with the write key in its body.
  const reqs = await collector.requests();
  expect(reqs.map((r) => [r.method, r.path, r.origin, r.status])).toEqual([
    ['POST', '/v1/batch', new URL(site.url).origin, 200],
    ['POST', '/v1/batch', new URL(site.url).origin, 200],
  ]);
  expect(reqs.map((r) => r.auth)).toEqual(['basic', 'body']);
  // same origin: no CORS preflight, and nothing went to the collector's own origin directly
  expect(urls.filter((u) => u.startsWith('OPTIONS'))).toEqual([]);
  expect(urls.filter((u) => u.includes(collector.url))).toEqual([]);
  expect(urls.some((u) => u == `POST ${site.url}/ingest/v1/batch`)).toBe(true);
  expect(await collector.violations()).toEqual([]);
});

test('events are only ever sent to the configured apiHost', async ({ page, context, site, collector }) => {
  const urls: string[] = [];
  context.on('request', (r) => urls.push(r.url()));
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100, trackPageViews: true }) }));
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.identify('host-user', { email: 'h@example.com' });
    await a.track('Host Check');
    await a.group('g1');
    await a.page('Another');
    history.pushState({}, '', '/basic.html?moved=1');
    await a.flush();
  });
  await collector.waitFor(4, {}, 10000);
  // page exit too: whatever it sent has landed once the collector is quiet
  await page.goto(site.page('/core-blank.html'));
  await quiet(collector);
  const allowed = new Set([new URL(site.url).origin, new URL(collector.url).origin]);
  const others = urls.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && !allowed.has(new URL(u).origin));
  expect(others).toEqual([]);
  expect(urls.some((u) => u.startsWith(collector.url + '/v1/batch'))).toBe(true);
});

test('a callback, handler or ready callback of the page that throws is reported as an error event, never thrown into the page', async ({ page, site, collector }) => {
  const pageErrors = watchErrors(page);
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const codes: string[] = [];
    a.on('error', (e: any) => codes.push(e.code));
    const boom = () => {
      throw new Error('page bug');
    };
    a.on('track', boom);
    await a.track('With Throwing Callback', {}, {}, boom);
    await a.ready(boom);
    // a semantic helper refusing its call (no identified user) hands the error to the callback, which throws
    await a.semantic.userDeleted({}, {}, boom).catch(() => {});
    a.on('error', boom); // a throwing 'error' handler must not loop or escape either
    await a.track('Still Working');
    // each throwing callback reported (bounded: the count is checked below)
    const until = Date.now() + 10_000;
    while (codes.filter((c) => c == 'callback_error').length < 4 && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
    return codes;
  });
  expect(r.filter((c) => c == 'callback_error').length).toBeGreaterThanOrEqual(4);
  await collector.waitFor(2);
  expect((await collector.messages()).map((m) => m.event)).toEqual(['With Throwing Callback', 'Still Working']);
  expect(pageErrors).toEqual([]);
});
