import { test, expect, ready, quiet } from './fixtures';

// The npm entry (dist/index.mjs) in the browser, loaded as an ES module with an import map for its two
// dependencies (e2e/site/x-npm.html): no snippet, no IIFE bundle.

test('AnalyticsBrowser.load: calls made before ready and after it arrive, in order, with identity carried over', async ({
  page,
  site,
  collector,
}) => {
  const scripts: string[] = [];
  page.on('request', (r) => {
    if (r.resourceType() === 'script') scripts.push(new URL(r.url()).pathname);
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  await page.goto(site.page('/x-npm.html', { early: '1' }));
  await ready(page);
  const early = await page.evaluate(async () => {
    const e = (window as any).__early;
    return { readyAtCall: e.readyAtCall, ids: await Promise.all(e.promises) };
  });
  expect(early.readyAtCall).toBe(false);
  expect(early.ids).toHaveLength(4);

  await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.track('Later Track', { n: 4 });
    await a.page('Docs', 'Install', { n: 5 });
    await a.identify({ email: 'npm@example.com' });
  });

  const got = await collector.waitFor(7, {}, 10000);
  expect(got.map((m) => [m.type, m.event ?? m.name ?? null])).toEqual([
    ['track', 'Early Track'],
    ['identify', null],
    ['page', 'Early Page'],
    ['track', 'Early After Identify'],
    ['track', 'Later Track'],
    ['page', 'Install'],
    ['identify', null],
  ]);
  // The promises resolved with the ids that were sent.
  expect(got.slice(0, 4).map((m) => m.messageId)).toEqual(early.ids);

  const [t0, id1, p2, t3, t4, p5, id6] = got;
  expect(t0.properties).toEqual({ n: 1 });
  expect(t0.userId).toBeUndefined();
  expect(id1).toMatchObject({ userId: 'npm-user', traits: { plan: 'pro' } });
  expect(p2.properties).toMatchObject({ n: 2, path: '/x-npm.html', title: 'NPM Home' });
  for (const m of [p2, t3, t4, p5]) expect(m.userId).toBe('npm-user');
  expect(p5).toMatchObject({ category: 'Docs', name: 'Install', properties: { n: 5 } });
  expect(id6).toMatchObject({ userId: 'npm-user', traits: { plan: 'pro', email: 'npm@example.com' } });
  const anon = new Set(got.map((m) => m.anonymousId));
  expect(anon.size).toBe(1);
  for (const m of got) {
    expect(m.context.library.name).toBe('svc-analytics');
    expect(m.context.page.path).toBe('/x-npm.html');
  }

  // Normal delivery: JSON with Basic auth.
  const reqs = (await collector.requests()).filter((r) => r.path === '/v1/batch');
  expect(reqs.length).toBeGreaterThan(0);
  for (const r of reqs) expect(r).toMatchObject({ status: 200, auth: 'basic' });
  // Really the npm entry: the module and its dependencies, no IIFE bundle.
  expect(scripts).toEqual(expect.arrayContaining(['/dist/index.mjs', '/node_modules/idb-keyval/dist/index.js']));
  expect(scripts).not.toContain('/dist/analytics.min.js');
  expect(errors).toEqual([]);
});

test('SPA page views through the npm entry: one at load, one per pushState navigation with the previous URL as referrer', async ({
  page,
  site,
  collector,
}) => {
  const url = site.page('/x-npm.html', { opts: JSON.stringify({ trackPageViews: true }) });
  const origin = new URL(url).origin;
  await page.goto(url);
  await ready(page);
  const [first] = await collector.waitFor(1, { type: 'page' }, 10000);
  expect(first.properties).toMatchObject({ url, path: '/x-npm.html', title: 'NPM Home', referrer: '' });

  await page.evaluate(() => (window as any).router.push('/x-npm/products', 'microtask'));
  await collector.waitFor(2, { type: 'page' }, 10000);
  // Nothing more follows for that one navigation.
  await quiet(collector);
  await page.evaluate(() => (window as any).analytics.track('Barrier').then(() => (window as any).analytics.flush()));
  await collector.waitFor(1, { event: 'Barrier' }, 10000);
  const pages = await collector.messages({ type: 'page' });
  expect(pages).toHaveLength(2);
  expect(pages[1].properties).toMatchObject({
    url: origin + '/x-npm/products',
    path: '/x-npm/products',
    referrer: url,
    title: 'Products | Shop',
  });
  expect(pages[1].context.page).toMatchObject({ url: origin + '/x-npm/products', referrer: url });
});

test('the npm entry imported on a server (SSR) touches no browser global and refuses calls with not_loaded', async () => {
  const had = 'window' in globalThis;
  const mod = await import('../dist/index.mjs');
  expect('window' in globalThis).toBe(had);
  const analytics = mod.AnalyticsBrowser.load({ writeKey: 'dev-write-key' }, { apiHost: 'http://127.0.0.1:9' });
  expect(analytics.initialized).toBe(false);
  const outcome = await analytics.track('On Server').then(
    () => 'resolved',
    (e: any) => e.code,
  );
  expect(outcome).toBe('not_loaded');
});
