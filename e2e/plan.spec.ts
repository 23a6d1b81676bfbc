import type { Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { test, expect, ready, quiet, watchErrors } from './fixtures';

// CONTRACT section 7, in the browser: the `plan` load option (an object, or a URL of the page's own origin) checks
// every call; each violation is an 'error' with code plan_violation; the call resolves and its message is sent. The
// checker is a chunk of its own (dist/analytics.plan.min.js), loaded only when `plan` is given; no eval, strict CSP.

const PLAN = {
  events: {
    'Signed Up': { properties: { type: 'object', required: ['plan', 'seats'], properties: { plan: { enum: ['free', 'pro'] }, seats: { type: 'integer' } } } },
  },
};

/** URLs the page fetches whose path contains `part`. */
function fetches(page: Page, part: string): string[] {
  const fetched: string[] = [];
  page.on('request', (r) => void (r.url().includes(part) && fetched.push(r.url())));
  return fetched;
}

/** Makes the calls, collecting 'error' events until `count` plan errors came (bounded by the page's own wait). */
async function callsAndErrors(page: Page, count: number) {
  return page.evaluate(async (count) => {
    const a = (window as any).analytics;
    const errors: any[] = [];
    a.on('error', (e: any) => errors.push({ code: e.code, message: e.message, messageIds: e.messageIds, violation: e.violation }));
    const results = await Promise.all([
      a.track('Signed Up', { plan: 'pro', seats: 3 }),
      a.track('Signed Up', { plan: 'pro', seats: '3' }),
      a.track('Signed up', { plan: 'pro', seats: 3 }),
    ]);
    const deadline = Date.now() + 10000;
    while (errors.filter((e) => e.code.startsWith('plan_')).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return { ids: results.map((r: any) => r.event.messageId), errors };
  }, count);
}

test('a plan object: each violation is a plan_violation error with the message id, the pointer and the expectation; every message is sent', async ({ page, site, collector }) => {
  const pageErrors = await watchErrors(page);
  const planChunk = fetches(page, 'analytics.plan.min.js');
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50, plan: PLAN }) }));
  await ready(page);
  const { ids, errors } = await callsAndErrors(page, 2);
  expect(errors).toEqual([
    {
      code: 'plan_violation',
      message: `track "Signed Up" (${ids[1]}): /properties/seats: expected an integer, got "3"`,
      messageIds: [ids[1]],
      violation: { messageId: ids[1], type: 'track', event: 'Signed Up', pointer: '/properties/seats', expected: 'an integer, got "3"' },
    },
    {
      code: 'plan_violation',
      message: `track "Signed up" (${ids[2]}): /event: expected an event of the plan (did you mean "Signed Up"?), got "Signed up"`,
      messageIds: [ids[2]],
      violation: { messageId: ids[2], type: 'track', event: 'Signed up', pointer: '/event', expected: 'an event of the plan (did you mean "Signed Up"?), got "Signed up"' },
    },
  ]);
  // reported, never enforced: the three messages arrive as they were sent
  const arrived = await collector.waitFor(3, { type: 'track' });
  expect(arrived.map((m) => m.messageId).sort()).toEqual([...ids].sort());
  expect(planChunk).toHaveLength(1);
  expect(pageErrors).toEqual([]);
});

test('a plan URL of the page own origin, with violations in the console in debug mode', async ({ page, site }) => {
  const logs: string[] = [];
  page.on('console', (m) => logs.push(m.text()));
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50, plan: '/tracking-plan.json', debug: true }) }));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('Signed Up', { plan: 'gold', seats: 1 }));
  await expect.poll(() => logs.join('\n')).toMatch(/\[svc-analytics\] plan_violation track "Signed Up" \(\w+\): \/properties\/plan: expected one of "free", "pro", got "gold"/);
});

test('a page without a plan never fetches the plan chunk', async ({ page, site, collector }) => {
  const planChunk = fetches(page, 'analytics.plan.min.js');
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) }));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('Anything Goes', { seats: '3' }));
  await collector.waitFor(1, { event: 'Anything Goes' });
  expect(planChunk).toEqual([]);
});

test('a plan chunk that cannot load loses no call: one plan_unavailable error, every message sent', async ({ page, site, collector }) => {
  await page.route('**/dist/analytics.plan.min.js*', (route) => route.fulfill({ status: 404, body: '' }));
  await page.goto(site.page('/basic.html', { noload: '1' }));
  // (the handler before load: the chunk fails while the library starts)
  await page.evaluate(({ api, plan }) => {
    const a = (window as any).analytics;
    const errors: any[] = ((window as any).__errors = []);
    a.on('error', (e: any) => errors.push({ code: e.code, message: e.message }));
    a.load('dev-write-key', { apiHost: api, cdnUrl: '/dist/analytics.min.js', flushInterval: 50, plan });
  }, { api: collector.url, plan: PLAN });
  await ready(page);
  const { ids } = await callsAndErrors(page, 0);
  const arrived = await collector.waitFor(3, { type: 'track' });
  expect(arrived.map((m) => m.messageId).sort()).toEqual([...ids].sort());
  await expect.poll(() => page.evaluate(() => (window as any).__errors)).toEqual([{ code: 'plan_unavailable', message: 'plan: the script failed to load' }]);
  await quiet(collector, 300);
  expect(await page.evaluate(() => (window as any).__errors)).toHaveLength(1);
});

test('under a strict CSP with a nonce: the plan chunk loads with it, checks, and nothing is blocked', async ({ page, site, collector }) => {
  const pageErrors = await watchErrors(page);
  await page.addInitScript(() => {
    (window as any).__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => (window as any).__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const csp = "script-src 'nonce-abc123'; connect-src *";
  const response = await page.goto(site.page('/plan-csp.html', { csp }));
  expect(response!.headers()['content-security-policy']).toBe(csp);
  await ready(page);
  const { errors } = await callsAndErrors(page, 2);
  expect(errors.map((e) => e.violation?.pointer)).toEqual(['/properties/seats', '/event']);
  await collector.waitFor(4, { type: 'track' });
  expect(await page.evaluate(() => (window as any).__violations)).toEqual([]);
  expect(pageErrors).toEqual([]);
});

test('a bundle pinned by SRI loads the plan chunk with its hash (carried by the lazy chunk); a tampered one is refused, no call lost', async ({ page, site, collector }) => {
  const sri: Record<string, string> = JSON.parse(readFileSync(new URL('../dist/sri.json', import.meta.url), 'utf8'));
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>SRI plan</title></head><body>
<script src="/dist/analytics.min.js" integrity="${sri['analytics.min.js']}" crossorigin="anonymous"></script>
<script>window.__errors = []; analytics.on('error', (e) => __errors.push(e.code)); analytics.load('dev-write-key', { apiHost: '/ingest', flushInterval: 50, plan: ${JSON.stringify(PLAN)} });</script>
</body></html>`;
  await page.route((u) => u.pathname == '/plan-sri.html', (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/html' }, body: html }));
  await page.goto(site.page('/plan-sri.html'));
  await ready(page);
  const first = await callsAndErrors(page, 2);
  const pinned = () => page.evaluate(() => [...document.querySelectorAll('script[src*="analytics.plan"]')].map((s: any) => [s.getAttribute('integrity'), s.getAttribute('crossorigin')]));
  expect(await pinned()).toEqual([[sri['analytics.plan.min.js'], 'anonymous']]);
  expect(await page.evaluate(() => (window as any).__errors)).toEqual(['plan_violation', 'plan_violation']);

  // (this page's messages arrived before the collector forgets them: else the reload hands them over, and they count
  // as the next page's)
  for (const id of first.ids) await collector.waitFor(1, { messageId: id });
  const real = readFileSync(new URL('../dist/analytics.plan.min.js', import.meta.url), 'utf8');
  await page.route('**/dist/analytics.plan.min.js*', (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/javascript' }, body: real + '\nwindow.__tampered = 1;' }));
  await collector.reset();
  await page.reload();
  await ready(page);
  const { ids } = await callsAndErrors(page, 0);
  await expect.poll(() => page.evaluate(() => (window as any).__errors)).toEqual(['plan_unavailable']);
  expect(await page.evaluate(() => (window as any).__tampered)).toBeUndefined();
  const arrived = await collector.waitFor(3, { type: 'track' });
  expect(arrived.map((m) => m.messageId).sort()).toEqual([...ids].sort());
});

test('the collector with a plan shows each violation in the inspector beside its message, live', async ({ page }) => {
  const { startCollector } = await import('../collector/server.mjs');
  const col = await startCollector({ port: 0, writeKey: null, plan: 'e2e/site/tracking-plan.json' });
  try {
    await page.goto(col.url + '/');
    await expect(page.locator('#cMessages')).toHaveText('0');
    const message = (event: string, properties: object, messageId: string) => ({ type: 'track', event, properties, messageId, anonymousId: 'a', timestamp: new Date().toISOString() });
    await fetch(col.url + '/v1/batch', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ batch: [message('Signed Up', { plan: 'pro', seats: 2 }, 'on-plan-1'), message('Signed Up', { plan: 'pro', seats: '2' }, 'off-plan-1')] }),
    });
    const row = page.locator('tr.planrow');
    await expect(row).toHaveCount(1);
    await expect(row).toContainText('/properties/seats: expected an integer, got "2"');
    // beside its message: the row under the one of off-plan-1, which carries the badge
    await expect(page.locator('tr', { hasText: 'off-plan-1'.slice(-10) }).first()).toContainText('off plan');
  } finally {
    await col.close();
  }
});

test('the npm entry takes plan too: the checker is a dynamic import, loaded only then', async ({ page, site, collector }) => {
  const checker = fetches(page, '/dist/browser-check.mjs');
  await page.goto(site.page('/x-npm.html', { opts: JSON.stringify({ plan: '/tracking-plan.json' }) }));
  await ready(page);
  const { ids, errors } = await callsAndErrors(page, 2);
  expect(errors.map((e) => [e.code, e.violation?.pointer, e.messageIds[0]])).toEqual([
    ['plan_violation', '/properties/seats', ids[1]],
    ['plan_violation', '/event', ids[2]],
  ]);
  await collector.waitFor(3, { type: 'track' });
  expect(checker).toHaveLength(1);

  // a page of the app without a plan never imports it
  checker.length = 0;
  await page.goto(site.page('/x-npm.html'));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('No Plan Here'));
  await collector.waitFor(1, { event: 'No Plan Here' });
  expect(checker).toEqual([]);
});
