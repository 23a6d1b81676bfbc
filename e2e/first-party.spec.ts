// First-party serving (docs/first-party.md): each recipe of recipes/ runs for real (nginx, the fetch handler under a
// node:http adapter, Vite's dev server, `next dev`) in front of the collector and a stand-in CDN serving dist/. The
// page is served by the proxy itself and loads the snippet with cdnUrl '/s/a.js' and apiHost '/ingest'; a page view,
// a track and a message sent as the page closes (the beacon path) must each arrive once, through the proxy, and the
// page must make no request to any origin but its own. Then each proxy is probed with what the library never sends
// (other paths, methods, content types, a visitor's own X-Forwarded-For, upstream cookies), and nginx against upstreams
// whose certificates it must refuse.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect, ready, expectExactlyOnce } from './fixtures';
import {
  startTap, startCdn, startNginx, startWorker, startNext, startVite, nginxPath,
  BUNDLE_PATH, DEBUG_PATH, CDN_DIR_PATH, type Proxy, type Tap, type Seen,
} from './support-first-party/servers';
import { opensslPath, makeCa, makeCert, startDns, startTlsUpstream } from './support-first-party/tls';

/** CI=true: a missing nginx fails the run; elsewhere its test is skipped with the reason. */
const IN_CI = process.env.CI === 'true';
const NO_NGINX = nginxPath() ? null : 'nginx is not installed (apt-get install nginx-light, or NGINX_PATH)';

/**
 * `forwardedFor`: the X-Forwarded-For the spoofing probe sends. A self-hosted Next.js server keeps a visitor's own
 * X-Forwarded-For (it adds the connecting address only when there is none), so the Next.js recipe can only be right
 * behind a proxy that appends the address it saw: its probe sends what such a proxy passes on.
 */
const RECIPES: { name: string; file: string; start: (api: string, cdnDir: string) => Promise<Proxy>; missing?: string | null; forwardedFor?: string }[] = [
  { name: 'nginx', file: 'recipes/nginx.conf', start: startNginx, missing: NO_NGINX },
  { name: 'fetch-handler worker', file: 'recipes/worker.mjs', start: startWorker },
  { name: 'Vite dev proxy', file: 'recipes/vite.config.mjs', start: startVite },
  { name: 'Next.js route handlers', file: 'recipes/next-ingest.js + recipes/next-bundle.js', start: startNext, forwardedFor: '6.6.6.6, 127.0.0.1' },
];

let api: Tap;
let cdn: Tap;
/** Each proxy, started in beforeAll all at once (the slow ones start while the fast ones are tested). */
const proxies = new Map<string, Promise<Proxy>>();
const startedIn = new Map<string, number>();

test.beforeAll(async ({ servers }) => {
  api = await startTap(servers.col.url);
  cdn = await startCdn();
  for (const r of RECIPES) {
    if (r.missing && !IN_CI) continue;
    const t0 = Date.now();
    const started = r.start(api.url, cdn.url + CDN_DIR_PATH).then((p) => (startedIn.set(r.name, Date.now() - t0), p));
    started.catch(() => {}); // reported by the recipe's test
    proxies.set(r.name, started);
  }
});

test.afterAll(async () => {
  await Promise.all([...proxies.values()].map((p) => p.then((proxy) => proxy.close(), () => {})));
  await api?.close();
  await cdn?.close();
});

for (const recipe of RECIPES) {
  test(`${recipe.name} (${recipe.file}): page view, track and the exit beacon arrive once, first-party only`, async ({ page, collector }) => {
    test.skip(!!recipe.missing && !IN_CI, `${recipe.missing}; with CI=true this fails`);
    const proxy = await proxies.get(recipe.name)!;
    test.info().annotations.push({ type: 'startup', description: `${recipe.name} answered ${startedIn.get(recipe.name)} ms after it was started` });
    api.seen.length = 0;
    cdn.seen.length = 0;
    const origins = new Set<string>();
    page.on('request', (r) => origins.add(new URL(r.url()).origin));

    await page.goto(proxy.url + '/page.html');
    await ready(page);
    const userAgent: string = await page.evaluate(() => navigator.userAgent);
    expect(await page.evaluate(() => [...document.scripts].map((s) => s.src).filter(Boolean))).toContain(proxy.url + BUNDLE_PATH);
    const [pageView] = await collector.waitFor(1, { type: 'page' }, 15000);
    expect(pageView, 'the page view arrived').toBeTruthy();

    // The debug tools come from next to the bundle: the proxy forwards that file too.
    await page.evaluate(() => (window as any).analytics.debug(true));
    await page.waitForFunction(() => !!(window as any).svcAnalyticsDebug, null, { timeout: 10000 });
    expect(await page.evaluate(() => [...document.scripts].map((s) => s.src))).toContain(proxy.url + DEBUG_PATH);
    await page.evaluate(() => (window as any).analytics.debug(false));

    const trackId: string = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const id = (await a.track('First-Party Track', { via: 'proxy' })).event.messageId;
      await a.flush();
      return id;
    });
    await collector.waitFor(1, { messageId: trackId }, 10000);

    // flushInterval is 30 s and a request left just now: this message waits in the queue until the page goes away,
    // then leaves by the page-exit path (sendBeacon, text/plain with the write key in the body).
    const exitId: string = await page.evaluate(async () => (await (window as any).analytics.track('First-Party Exit')).event.messageId);
    // The library's identity cookies are on the page's origin, so the beacon carries them to the proxy.
    expect((await page.context().cookies(proxy.url)).map((c) => c.name)).toContain('svc_anonymous_id');
    await page.close({ runBeforeUnload: false });
    await collector.waitFor(1, { messageId: exitId }, 15000);

    expect([...origins], 'every request of the page went to its own origin').toEqual([proxy.url]);

    // At the collector (which this worker shares with other spec files: a late beacon of theirs may land here too, so
    // only this page's origin counts): each message exactly once, every request to /v1/batch (the /ingest prefix
    // stripped) and accepted; the exit message came by beacon.
    const ids = [pageView.messageId, trackId, exitId];
    const requests = (await collector.requests()).filter((r: any) => r.origin === proxy.url);
    expectExactlyOnce(requests.flatMap((r: any) => r.messages), ids);
    expectExactlyOnce((await collector.messages()).filter((m) => ids.includes(m.messageId)), ids);
    for (const r of requests) expect(r).toMatchObject({ path: '/v1/batch', status: 200 });
    const exit = requests.find((r: any) => r.messageIds.includes(exitId));
    expect(exit).toMatchObject({ auth: 'body' });
    expect(exit.contentType).toMatch(/^text\/plain\b/);
    expect(requests.find((r: any) => r.messageIds.includes(trackId))).toMatchObject({ auth: 'basic', contentType: expect.stringMatching(/^application\/json\b/) });
    expect((await collector.violations()).filter((r: any) => r.origin === proxy.url)).toEqual([]);

    // What the API received came through the proxy, with the visitor's address and none of the site's cookies. (The
    // taps also see the other proxies' start-up checks, made from Node while this test runs: only the browser's count.)
    const fromBrowser = (seen: Seen[]) => seen.filter((r) => r.headers['user-agent'] === userAgent);
    expect(fromBrowser(api.seen).length, 'every request at the collector passed the API tap').toBe(requests.length);
    for (const r of fromBrowser(api.seen)) {
      expect(r.method).toBe('POST');
      expect(r.headers['x-forwarded-for'], 'X-Forwarded-For: the browser\'s address').toBe('127.0.0.1');
      expect(r.headers.cookie, 'no cookies sent upstream').toBeUndefined();
    }
    // The CDN served the bundle and its debug neighbour to the proxy.
    expect(fromBrowser(cdn.seen).map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      `GET ${CDN_DIR_PATH}/analytics.debug.min.js`,
      `GET ${CDN_DIR_PATH}/analytics.min.js`,
    ]);
    for (const r of fromBrowser(cdn.seen)) expect(r.headers.cookie, 'no cookies sent to the CDN').toBeUndefined();
  });
}

/** The user agent of the probes below, by which the taps tell their requests from the browser's and the start-ups'. */
const PROBE = 'svc-first-party-probe';
const probes = (seen: Seen[]) => seen.filter((r) => r.headers['user-agent'] === PROBE);

async function probe(url: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const res = await fetch(url, { ...init, headers: { 'user-agent': PROBE, ...init.headers }, redirect: 'manual' });
  await res.arrayBuffer();
  return res;
}

for (const recipe of RECIPES) {
  test(`${recipe.name} (${recipe.file}): forwards only what the library sends; other paths, methods and content types are refused`, async () => {
    test.skip(!!recipe.missing && !IN_CI, `${recipe.missing}; with CI=true this fails`);
    const proxy = await proxies.get(recipe.name)!;
    const refused: [method: string, path: string, status: number, contentType?: string][] = [
      ['GET', '/ingest/v1/batch', 405],
      ['PUT', '/ingest/v1/batch', 405],
      ['DELETE', '/ingest/v1/batch', 405],
      ['POST', '/ingest/v1/track', 404],
      ['POST', '/ingest/v1/batch/extra', 404],
      // the collector's inspector, as a stand-in for whatever else the API host answers
      ['GET', '/ingest/_/messages', 404],
      ['POST', '/ingest/v1/batch', 415, 'application/x-www-form-urlencoded'],
      ['POST', '/ingest/v1/batch', 415, 'multipart/form-data; boundary=x'],
      ['POST', '/s/a.js', 405],
      ['DELETE', '/s/analytics.debug.min.js', 405],
    ];
    const answered: string[] = [];
    for (const [method, p, , contentType] of refused) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : '{"batch":[]}';
      const res = await probe(proxy.url + p, { method, body, headers: { 'content-type': contentType || 'application/json' } });
      answered.push(`${method} ${p}${contentType ? ` (${contentType})` : ''} ${res.status}`);
    }
    expect(answered).toEqual(refused.map(([method, p, status, contentType]) => `${method} ${p}${contentType ? ` (${contentType})` : ''} ${status}`));
    expect(probes(api.seen), 'nothing of it reached the API').toEqual([]);
    expect(probes(cdn.seen), 'nothing of it reached the CDN').toEqual([]);
    // The bundle's chunks come through too, the tracking-plan checker included (security-5 I5: a site using `plan`
    // behind the recipe got plan_unavailable), the middleware chunk (a middleware page behind it would hold its messages)
    // and the sources chunk (trackLink/trackForm).
    for (const chunk of ['analytics.debug.min.js', 'analytics.extend.min.js', 'analytics.plan.min.js', 'analytics.sources.min.js']) {
      const res = await fetch(proxy.url + '/s/' + chunk, { headers: { 'user-agent': PROBE + '-chunk' } });
      expect([chunk, res.status, (await res.text()).length > 1000]).toEqual([chunk, 200, true]);
    }
    const chunks = cdn.seen.filter((r) => r.headers['user-agent'] === PROBE + '-chunk');
    expect(chunks.map((r) => r.path).sort()).toEqual([`${CDN_DIR_PATH}/analytics.debug.min.js`, `${CDN_DIR_PATH}/analytics.extend.min.js`, `${CDN_DIR_PATH}/analytics.plan.min.js`, `${CDN_DIR_PATH}/analytics.sources.min.js`]);
    cdn.seen.splice(0, cdn.seen.length, ...cdn.seen.filter((r) => !chunks.includes(r)));
  });

  test(`${recipe.name} (${recipe.file}): the API gets the visitor's address, not one the visitor chose; no cookies either way`, async () => {
    test.skip(!!recipe.missing && !IN_CI, `${recipe.missing}; with CI=true this fails`);
    const proxy = await proxies.get(recipe.name)!;
    // Upstreams whose answers would act on the site's whole origin.
    const policies = {
      'set-cookie': ['svc_upstream=1; Path=/'],
      'clear-site-data': '"cookies", "storage"',
      'strict-transport-security': 'max-age=600',
    };
    Object.assign(api.answerHeaders, policies);
    Object.assign(cdn.answerHeaders, policies);
    try {
      const visitor = {
        'x-forwarded-for': recipe.forwardedFor || '6.6.6.6',
        'x-real-ip': '6.6.6.6',
        forwarded: 'for=6.6.6.6',
        'x-forwarded-host': 'evil.example',
        cookie: 'session=site-secret',
      };
      // A write key the collector refuses: nothing is stored, the answer still comes back through the proxy.
      const batch = await probe(proxy.url + '/ingest/v1/batch', {
        method: 'POST',
        body: JSON.stringify({ batch: [], sentAt: new Date().toISOString() }),
        headers: { ...visitor, 'content-type': 'application/json', authorization: 'Basic ' + btoa('probe-key:') },
      });
      const bundle = await probe(proxy.url + BUNDLE_PATH, { headers: visitor });
      expect(bundle.status).toBe(200);
      for (const res of [batch, bundle]) {
        for (const name of Object.keys(policies)) expect(res.headers.get(name), `${name} from the upstream`).toBeNull();
      }
      const [atApi] = probes(api.seen);
      expect(atApi).toMatchObject({ method: 'POST', path: '/v1/batch' });
      expect(atApi.headers['x-forwarded-for'], 'X-Forwarded-For: the address that connected').toBe('127.0.0.1');
      expect(atApi.headers.authorization).toBe('Basic ' + btoa('probe-key:'));
      for (const name of ['x-real-ip', 'forwarded', 'x-forwarded-host', 'cookie']) expect(atApi.headers[name], name).toBeUndefined();
      const [atCdn] = probes(cdn.seen);
      expect(atCdn).toMatchObject({ method: 'GET', path: `${CDN_DIR_PATH}/analytics.min.js` });
      expect(atCdn.headers.cookie).toBeUndefined();
    } finally {
      for (const name of Object.keys(policies)) delete api.answerHeaders[name], delete cdn.answerHeaders[name];
      api.seen.length = 0;
      cdn.seen.length = 0;
    }
  });
}

const NO_OPENSSL = opensslPath() ? null : 'openssl is not installed (apt-get install openssl)';

test('nginx (recipes/nginx.conf): serves the bundle only from an upstream whose certificate its CA bundle vouches for, for the host name', async () => {
  const missing = NO_NGINX || NO_OPENSSL;
  test.skip(!!missing && !IN_CI, `${missing}; with CI=true this fails`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-first-party-tls-'));
  const names = ['cdp.svc.example', 'cdn.svc.example'];
  const trusted = makeCa(dir, 'trusted-ca');
  const other = makeCa(dir, 'other-ca');
  const genuine = makeCert(dir, trusted, 'genuine', names);
  const forged = makeCert(dir, other, 'forged', names);
  const misnamed = makeCert(dir, trusted, 'misnamed', ['evil.example']);
  fs.chmodSync(dir, 0o755);
  fs.chmodSync(trusted.file, 0o644);
  // Every name resolves to 127.0.0.1, where the upstream answers with whichever certificate the case gives it: as if
  // a spoofed DNS answer sent nginx to someone else's server.
  const dns = await startDns();
  const marker = '/* served by the upstream */';
  const upstream = await startTlsUpstream(forged, marker);
  let proxy: Proxy | undefined;
  try {
    proxy = await startNginx(`https://cdp.svc.example:${upstream.port}`, `https://cdn.svc.example:${upstream.port}${CDN_DIR_PATH}`, {
      resolver: dns.address,
      ca: trusted.file,
      bundleReady: false,
    });
    const attempt = async () => {
      const bundle = await fetch(proxy!.url + BUNDLE_PATH);
      const batch = await fetch(proxy!.url + '/ingest/v1/batch', { method: 'POST', body: '{"batch":[]}', headers: { 'content-type': 'application/json' } });
      return { bundle: bundle.status, script: (await bundle.text()).includes(marker), batch: (await batch.arrayBuffer(), batch.status) };
    };
    // The first two first: nginx could otherwise resume the genuine upstream's TLS session with them.
    expect(await attempt(), 'a certificate from a CA the bundle does not hold').toEqual({ bundle: 502, script: false, batch: 502 });
    upstream.use(misnamed);
    expect(await attempt(), 'a certificate from the trusted CA, for another name').toEqual({ bundle: 502, script: false, batch: 502 });
    expect(upstream.seen, 'no request was made over either connection').toEqual([]);
    upstream.use(genuine);
    expect(await attempt(), 'the genuine upstream').toEqual({ bundle: 200, script: true, batch: 200 });
    // SNI named each host; the names were looked up with the configured resolver.
    expect(upstream.seen.map((r) => `${r.method} ${r.path} ${r.servername}`)).toEqual([
      `GET ${CDN_DIR_PATH}/analytics.min.js cdn.svc.example`,
      'POST /v1/batch cdp.svc.example',
    ]);
    expect(new Set(dns.names)).toEqual(new Set(names));
  } catch (e) {
    if (proxy) (e as Error).message += `\nnginx said:\n${proxy.output()}`;
    throw e;
  } finally {
    await proxy?.close();
    await upstream.close();
    await dns.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
