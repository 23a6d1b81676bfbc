import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { test, expect, ready, startOtherOrigin, registerAndTrack, type SiteHandle } from './fixtures';

// The inline stub (dist/snippet.min.js) and the bundle on hostile or locked-down pages (CONTRACT sections 1 and 6):
// an element named `analytics` before the snippet (security-3 L2), and a CSP that requires Trusted Types (L11).
// Chromium (the project's e2e browser).

const NONCE = 'n0nce';
const STUB = readFileSync(new URL('../dist/snippet.min.js', import.meta.url), 'utf8').trim();
// (the collector through the site's own /ingest proxy: a page served by a route is not of the loopback address space,
// and Chromium's local network access checks would refuse its requests to the collector's port)
const LOAD = `analytics.load('dev-write-key', { apiHost: '/ingest', cdnUrl: '/dist/analytics.min.js', flushInterval: 50 });`;

/** Serves `html` at `path` on the site's origin (with `headers`) and opens it. */
async function serve(page: Page, site: SiteHandle, path: string, html: string, headers: Record<string, string> = {}) {
  await page.route(
    (u) => u.pathname == path,
    (route) => route.fulfill({ status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', ...headers }, body: html }),
  );
  await page.goto(site.page(path));
}

/** Errors that reach the page: uncaught exceptions (pageerror), and what window.onerror sees, kept on the page. */
function watchErrors(page: Page) {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}
const ONERROR = `<script nonce="${NONCE}">window.__errors = []; window.onerror = (m) => { window.__errors.push(String(m)); };</script>`;

/** Collects CSP violations (Trusted Types ones included) on the page, from its first script on. */
const watchViolations = (page: Page) =>
  page.addInitScript(() => {
    (window as any).__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => (window as any).__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });


for (const [label, element] of [
  ['<img name="analytics">', '<img name="analytics" src="data:,">'],
  ['<a id="analytics">', '<a id="analytics" href="/x">x</a>'],
  ['two <a id="analytics">, one named invoked, one VERSION (a collection)', '<a id="analytics" name="invoked" href="/1"></a><a id="analytics" name="VERSION"></a>'],
  ['<form id="analytics"> with inputs named invoked, VERSION, push and load', '<form id="analytics"><input name="invoked" value="1"><input name="VERSION"><input name="push"><input name="load"></form>'],
  ['<iframe name="analytics"> of another origin', 'IFRAME'],
] as const) {
  test(`L2: ${label} before the inline stub: nothing reaches the page, the bundle takes over, calls made before and after it arrive`, async ({ page, site, collector }) => {
    const other = await startOtherOrigin();
    try {
      const errors = watchErrors(page);
      const snippet = `<script nonce="${NONCE}">window.__clobbered = window.analytics instanceof Element || window.analytics instanceof HTMLCollection || window.analytics instanceof Window || (() => { try { window.analytics.push; return false } catch { return true } })();
${STUB}
${LOAD}
analytics.track('Before Bundle');</script>`;
      // (the iframe: the stub runs once its other-origin page has loaded, where reading a property of it throws)
      const body =
        element == 'IFRAME'
          ? `<iframe name="analytics" src="${other.url}/frame"></iframe><script nonce="${NONCE}">document.querySelector('iframe').onload = () => { const s = document.createElement('script'); s.textContent = ${JSON.stringify(snippet.replace(/^<script[^>]*>|<\/script>$/g, ''))}; document.head.append(s); };</script>`
          : `${element}\n${snippet}`;
      await serve(page, site, '/stub-clobbered.html', `<!doctype html><html><head><meta charset="utf-8"><title>Clobbered stub</title>${ONERROR}</head><body>\n${body}\n</body></html>`);
      await ready(page);
      expect(await page.evaluate(() => (window as any).__clobbered)).toBe(true);
      expect(await page.evaluate(() => typeof (window as any).analytics.VERSION)).toBe('string');
      await page.evaluate(() => (window as any).analytics.track('After Bundle'));
      const msgs = await collector.waitFor(2, {});
      expect(msgs.map((m) => m.event).sort()).toEqual(['After Bundle', 'Before Bundle']);
      expect(await page.evaluate(() => (window as any).__errors)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await other.close();
    }
  });
}

// A site that requires Trusted Types: `require-trusted-types-for 'script'` with the library's policy allowed.
const TT_CSP = (policies: string) => `script-src 'nonce-${NONCE}'; require-trusted-types-for 'script'; trusted-types ${policies}; connect-src 'self'; img-src *`;

test('L11: under require-trusted-types-for, a bundle loaded by its <script> tag loads its lazy chunk through its svc-analytics policy: register works, events arrive, no violation', async ({ page, site, collector }) => {
  const errors = watchErrors(page);
  await watchViolations(page);
  await serve(
    page,
    site,
    '/stub-tt-bundle.html',
    `<!doctype html><html><head><meta charset="utf-8"><title>Trusted Types</title>${ONERROR}
<script nonce="${NONCE}" src="/dist/analytics.min.js"></script>
<script nonce="${NONCE}">${LOAD} analytics.track('Early Under TT');</script>
</head><body></body></html>`,
    { 'Content-Security-Policy': TT_CSP('svc-analytics') },
  );
  await ready(page);
  expect((await registerAndTrack(page, 'Chunk Under TT')).registered).toBe('resolved');
  const [msg] = await collector.waitFor(1, { event: 'Chunk Under TT' });
  expect(msg.properties).toMatchObject({ marked: true });
  await collector.waitFor(1, { event: 'Early Under TT' });
  expect(await page.evaluate(() => (window as any).__violations)).toEqual([]);
  expect(await page.evaluate(() => (window as any).__errors)).toEqual([]);
  // the requirement holds on this page: a string is refused
  expect(
    await page.evaluate(() => {
      try {
        document.createElement('script').src = '/x.js';
        return 'assigned';
      } catch (e) {
        return (e as Error).name;
      }
    }),
  ).toBe('TypeError');
  expect(errors).toEqual([]);
});

test('I4: the svc-analytics policy is created when the bundle starts: a script that runs after it cannot claim the name, and the chunk still loads', async ({ page, site, collector }) => {
  const errors = watchErrors(page);
  await serve(
    page,
    site,
    '/stub-tt-claim.html',
    `<!doctype html><html><head><meta charset="utf-8"><title>Trusted Types, claimed</title>${ONERROR}
<script nonce="${NONCE}" src="/dist/analytics.min.js"></script>
<script nonce="${NONCE}">try { trustedTypes.createPolicy('svc-analytics', { createScriptURL: () => '/evil.js' }); window.__claimed = true; } catch { window.__claimed = false; }</script>
<script nonce="${NONCE}">${LOAD}</script>
</head><body></body></html>`,
    { 'Content-Security-Policy': TT_CSP('svc-analytics') },
  );
  await ready(page);
  expect(await page.evaluate(() => (window as any).__claimed)).toBe(false);
  expect((await registerAndTrack(page, 'Chunk After Claim')).registered).toBe('resolved');
  await collector.waitFor(1, { event: 'Chunk After Claim' });
  expect(errors).toEqual([]);
});

test("L11: under require-trusted-types-for, the inline stub loads the bundle through the site's default policy (README recipe), and the chunk through svc-analytics; events arrive", async ({ page, site, collector }) => {
  const errors = watchErrors(page);
  await watchViolations(page);
  await serve(
    page,
    site,
    '/stub-tt-default.html',
    `<!doctype html><html><head><meta charset="utf-8"><title>Trusted Types, stub</title>${ONERROR}
<script nonce="${NONCE}">
trustedTypes.createPolicy('default', { createScriptURL: (url) => (url === '/dist/analytics.min.js' ? url : null) });
${STUB}
${LOAD}
analytics.track('Stub Under TT');
</script>
</head><body></body></html>`,
    { 'Content-Security-Policy': TT_CSP('svc-analytics default') },
  );
  await ready(page);
  expect((await registerAndTrack(page, 'Stub Chunk Under TT')).registered).toBe('resolved');
  const [msg] = await collector.waitFor(1, { event: 'Stub Chunk Under TT' });
  expect(msg.properties).toMatchObject({ marked: true });
  await collector.waitFor(1, { event: 'Stub Under TT' });
  expect(await page.evaluate(() => (window as any).__violations)).toEqual([]);
  expect(await page.evaluate(() => (window as any).__errors)).toEqual([]);
  expect(errors).toEqual([]);
});
