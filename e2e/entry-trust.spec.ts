import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { test, expect, ready, quiet, expectExactlyOnce, startOtherOrigin, registerAndTrack, type SiteHandle } from './fixtures';

// CONTRACT section 6 (first bullet): no element named like one of the library's globals, and no element named
// `currentScript`, changes which script the library loads or stops it (security-3 L1, L2); a bundle pinned by
// Subresource Integrity loads its lazy chunk pinned too (L10).

const NONCE = 'n0nce';
const CSP = `script-src 'nonce-${NONCE}'; connect-src *; img-src *; frame-src *`;
const sri: Record<string, string> = JSON.parse(readFileSync(new URL('../dist/sri.json', import.meta.url), 'utf8'));
const CHUNK = '**/dist/analytics.debug.min.js*';
// (the middleware chunk: register() and addSourceMiddleware() load it)
const EXTEND = '**/dist/analytics.extend.min.js*';

/** register()s a plugin and tracks `event` without waiting for either; resolves with the first error code reported. */
const registerHeld = (page: Page, event: string) =>
  page.evaluate(async (event) => {
    const a = (window as any).analytics;
    const codes: string[] = [];
    a.on('error', (e: any) => codes.push(e.code));
    a.register({ name: 'mark', type: 'enrichment', version: '1', isLoaded: () => true, load: () => Promise.resolve() });
    a.track(event);
    for (let i = 0; i < 250 && !codes.length; i++) await new Promise((r) => setTimeout(r, 20));
    return codes;
  }, event);

/** Serves `html` at `path` on the site's origin (with `headers`), and opens it with the collector as `?api=`. */
async function serve(page: Page, site: SiteHandle, path: string, html: string, headers: Record<string, string> = {}) {
  await page.route(
    (u) => u.pathname == path,
    (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', ...headers }, body: html }),
  );
  await page.goto(site.page(path));
}

// (the collector through the site's own /ingest proxy: a page served by a route is not of the loopback address space,
// and Chromium's local network access checks would refuse its requests to the collector's port)
const LOAD = `analytics.load('dev-write-key', { apiHost: '/ingest', flushInterval: 50 });`;


for (const [label, clobber] of [
  ['<img name="currentScript" src=...>', (evil: string) => `<img name="currentScript" src="${evil}/x/y.js">`],
  ['<form name="currentScript" action=...>', (evil: string) => `<form name="currentScript" action="${evil}/x/y.js"></form>`],
  ['two of them (a collection)', (evil: string) => `<img name="currentScript" src="${evil}/x/y.js"><form name="currentScript"></form>`],
] as const) {
  test(`L1: ${label} before the bundle: the chunk comes from next to the bundle, with its nonce, under a strict CSP`, async ({ page, site, collector }) => {
    const evil = await startOtherOrigin();
    try {
      const chunkUrls: string[] = [];
      page.on('request', (r) => void (r.url().includes('analytics.debug') && chunkUrls.push(r.url())));
      await page.addInitScript(() => {
        (window as any).__violations = [];
        document.addEventListener('securitypolicyviolation', (e) => (window as any).__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      await serve(
        page,
        site,
        '/trust-current-script.html',
        `<!doctype html><html><head><meta charset="utf-8"><title>Clobbered currentScript</title></head><body>
${clobber(evil.url)}
<script nonce="${NONCE}" src="/dist/analytics.min.js"></script>
<script nonce="${NONCE}">${LOAD}</script>
</body></html>`,
        { 'Content-Security-Policy': CSP },
      );
      await ready(page);
      // the clobbering holds on this page
      expect(await page.evaluate(() => document.currentScript instanceof HTMLScriptElement || document.currentScript === null)).toBe(false);
      const logs: string[] = [];
      page.on('console', (m) => logs.push(m.text()));
      await page.evaluate(() => (window as any).analytics.debug(true));
      const out = await registerAndTrack(page, 'Clobbered Script');
      expect(out.registered).toBe('resolved');
      const [msg] = await collector.waitFor(1, { event: 'Clobbered Script' });
      expect(msg.properties).toMatchObject({ marked: true });
      expect(chunkUrls).toEqual([`${site.url}/dist/analytics.debug.min.js`]);
      expect(await page.evaluate(() => [...document.querySelectorAll('script[src*="analytics.debug"]')].map((s: any) => s.nonce))).toEqual([NONCE]);
      // the debug tools themselves (not the plain fallback) log the call
      await expect.poll(() => logs.some((l) => l.includes('[svc-analytics]') && l.includes('Clobbered Script'))).toBe(true);
      expect(evil.pages().filter((h) => h.url.includes('analytics.debug'))).toEqual([]);
      expect(await page.evaluate(() => (window as any).__violations)).toEqual([]);
    } finally {
      await evil.close();
    }
  });
}

for (const [label, element] of [
  ['<img name="analytics">', `<img name="analytics" src="data:,">`],
  ['<form id="analytics"> with an <input name="VERSION">', `<form id="analytics"><input name="VERSION"><input name="push"></form>`],
  ['two <a id="analytics">, one named VERSION (a collection)', `<a id="analytics"></a><a id="analytics" name="VERSION"></a>`],
  ['<iframe name="analytics"> of another origin', 'IFRAME'],
] as const) {
  test(`L2: ${label} before the bundle: it starts anyway, tracks and delivers`, async ({ page, site, collector }) => {
    const other = await startOtherOrigin();
    try {
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => m.type() == 'error' && errors.push(m.text()));
      // the bundle is inserted once the element is there (for the iframe: once its other-origin page has loaded,
      // where reading a property of `window.analytics` throws)
      const start = `
        window.__clobbered = window.analytics instanceof Window || window.analytics instanceof Element || window.analytics instanceof HTMLCollection || (() => { try { window.analytics.VERSION; return false } catch { return true } })();
        const s = document.createElement('script');
        s.src = '/dist/analytics.min.js';
        s.onload = () => { analytics.track('Before Load'); ${LOAD} analytics.track('After Load'); };
        document.head.appendChild(s);`;
      const body =
        element == 'IFRAME'
          ? `<iframe name="analytics" src="${other.url}/frame"></iframe><script>document.querySelector('iframe').onload = () => { ${start} };</script>`
          : `${element}<script>${start}</script>`;
      await serve(page, site, '/trust-globals.html', `<!doctype html><html><head><meta charset="utf-8"><title>Clobbered globals</title></head><body>${body}</body></html>`);
      await ready(page);
      expect(await page.evaluate(() => (window as any).__clobbered)).toBe(true);
      expect(await page.evaluate(() => typeof (window as any).analytics.VERSION)).toBe('string');
      const msgs = await collector.waitFor(2, {});
      expect(msgs.map((m) => m.event).sort()).toEqual(['After Load', 'Before Load']);
      expect(errors).toEqual([]);
    } finally {
      await other.close();
    }
  });
}

test('elements named title, referrer and URL change no page fact of a message (read through Document.prototype)', async ({ page, site, collector }) => {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Real Title</title></head><body>
    <img name="title" src="data:,"><form name="referrer"></form><img name="URL" src="data:,">
    <script>window.__clobbered = document.title instanceof Element && document.referrer instanceof Element && document.URL instanceof Element;
      const s = document.createElement('script');
      s.src = '/dist/analytics.min.js';
      s.onload = () => { ${LOAD} analytics.track('Clobbered Facts'); };
      document.head.appendChild(s);</script></body></html>`;
  await serve(page, site, '/trust-facts.html', html);
  await ready(page);
  // (the named elements do shadow document's own properties here)
  expect(await page.evaluate(() => (window as any).__clobbered)).toBe(true);
  const [m] = await collector.waitFor(1, { event: 'Clobbered Facts' });
  expect(m.context.page).toMatchObject({ title: 'Real Title', path: '/trust-facts.html', url: expect.stringMatching(/\/trust-facts\.html/) });
  expect(m.context.page.referrer).not.toMatch(/object/i);
});

test('L2: a chunk that does not define svcAnalyticsExtend is refused even when an element is named so: reported, and what waits for it is held, not sent without it', async ({ page, site, collector }) => {
  await page.route(EXTEND, (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/javascript' }, body: 'window.__ranChunk = 1;' }));
  await serve(
    page,
    site,
    '/trust-extend-global.html',
    `<!doctype html><html><head><meta charset="utf-8"><title>Clobbered chunk global</title></head><body>
<form name="svcAnalyticsExtend"><input name="plugins"><input name="transforms"><input name="hook"></form>
<script src="/dist/analytics.min.js"></script>
<script>${LOAD}</script>
</body></html>`,
  );
  await ready(page);
  expect(await registerHeld(page, 'Not The Chunk')).toEqual(['middleware_error']);
  expect(await page.evaluate(() => (window as any).__ranChunk)).toBe(1);
  await quiet(collector, 500, 3000);
  expect((await collector.messages()).filter((m: any) => m.event == 'Not The Chunk')).toEqual([]);
});

/** A page that loads the bundle pinned by SRI (`integrity`, `crossorigin`), as `snippet({ integrity: true })` does. */
const pinned = (integrity = sri['analytics.min.js']) => `<!doctype html><html><head><meta charset="utf-8"><title>SRI</title></head><body>
<script src="/dist/analytics.min.js" integrity="${integrity}" crossorigin="anonymous"></script>
<script>${LOAD}</script>
</body></html>`;

test('L10: a bundle loaded with SRI loads its chunk with the chunk\'s hash and crossorigin; the real chunk loads', async ({ page, site, collector }) => {
  expect(Object.keys(sri).sort()).toEqual(['analytics.debug.min.js', 'analytics.extend.min.js', 'analytics.min.js', 'analytics.plan.min.js', 'analytics.sources.min.js']);
  await serve(page, site, '/trust-sri.html', pinned());
  await ready(page);
  const out = await registerAndTrack(page, 'Pinned Chunk');
  expect(out.registered).toBe('resolved');
  const [msg] = await collector.waitFor(1, { event: 'Pinned Chunk' });
  expect(msg.properties).toMatchObject({ marked: true });
  expect(
    await page.evaluate(() => [...document.querySelectorAll('script[src*="analytics.extend"]')].map((s: any) => [s.getAttribute('integrity'), s.getAttribute('crossorigin')])),
  ).toEqual([[sri['analytics.extend.min.js'], 'anonymous']]);
});

test('L10: with tampered chunks, a bundle loaded with SRI refuses them: debug logs plain lines, register reports middleware_error and holds what waits, no call lost', async ({ page, site, collector }) => {
  for (const [pattern, file] of [[CHUNK, 'analytics.debug.min.js'], [EXTEND, 'analytics.extend.min.js']]) {
    const real = readFileSync(new URL(`../dist/${file}`, import.meta.url), 'utf8');
    await page.route(pattern, (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/javascript' }, body: real + '\nwindow.__tampered = 1;' }));
  }
  await serve(page, site, '/trust-sri-tampered.html', pinned());
  await ready(page);
  const logs: string[] = [];
  page.on('console', (m) => logs.push(m.text()));
  await page.evaluate(() => (window as any).analytics.debug(true));
  const before = await page.evaluate(async () => (await (window as any).analytics.track('Before Tampered')).event.messageId);
  // debug mode without its tools: the plain console line, `[svc-analytics] track ...`
  await expect.poll(() => logs.some((l) => l.startsWith('[svc-analytics] track Before Tampered'))).toBe(true);
  expect(await registerHeld(page, 'Tampered Chunk')).toEqual(['middleware_error']);
  expect(await page.evaluate(() => (window as any).__tampered)).toBeUndefined();
  await collector.waitFor(1, { event: 'Before Tampered' });
  await quiet(collector);
  // what waits for the refused chunk is held, not sent without its plugin
  expectExactlyOnce(await collector.messages(), [before]);
  expect((await collector.messages()).filter((m: any) => m.event == 'Tampered Chunk')).toEqual([]);
});

test('L10: a bundle loaded without SRI loads its chunk as before (no integrity, no crossorigin)', async ({ page, site }) => {
  await serve(page, site, '/trust-no-sri.html', `<!doctype html><html><head><meta charset="utf-8"></head><body><script src="/dist/analytics.min.js"></script><script>${LOAD}</script></body></html>`);
  await ready(page);
  expect((await registerAndTrack(page, 'Unpinned')).registered).toBe('resolved');
  expect(
    await page.evaluate(() => [...document.querySelectorAll('script[src*="analytics.extend"]')].map((s: any) => [s.getAttribute('integrity'), s.getAttribute('crossorigin')])),
  ).toEqual([[null, null]]);
});
