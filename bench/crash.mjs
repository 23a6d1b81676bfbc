// The renderer-crash row (issue 20): of CRASH_N events stored with a long flush interval, how many reach the API
// within CRASH_WAIT_MS of a renderer crash (DevTools' Page.crash), with no page of the site opened again. Each
// library is loaded on a blank page of the bench site by a script added to it: its snippet with a long interval instead of
// the bench's 20 / 1 s batches (ours: flushAt 1000, flushInterval 60 s; the peers: batching of 1000 / 60 s through
// their load options; Amplitude: flushQueueSize 1000, flushIntervalMillis 60 s), so that nothing leaves before the
// crash unless the library hands it to the browser in some other way. One event goes first (see `crashRun`).
import { WRITE_KEY, CIO_WRITE_KEY, AMP_API_KEY, AMP_PATH, ourSnippet, segmentSnippet, cioSnippet, ampSnippet } from './servers.mjs';

export const CRASH_N = 20;
export const CRASH_WAIT_MS = 10000;
const LONG_MS = 60000;
const STORE_MS = 1000; // after the calls, before the crash: time to store them (no library sends before LONG_MS)

const CONTROL = process.env.BENCH_CRASH_CONTROL === '1';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The script that loads `lib` with a long flush interval on a page of the bench site. */
async function initScript(lib, servers) {
  const siteHost = servers.site.url.replace(/^http:\/\//, '');
  const api = servers.api.url;
  // analytics-next and its fork merge a load option's `integrations[name]` into that destination's CDN settings.
  const batching = { deliveryStrategy: { strategy: 'batching', config: { size: 1000, timeout: LONG_MS } } };
  switch (lib.id) {
    case 'ours':
      return ourSnippet({ writeKey: WRITE_KEY, cdnUrl: '/dist/analytics.min.js', apiHost: api, page: false, flushAt: 1000, flushInterval: LONG_MS });
    case 'segment':
      return (
        segmentSnippet({ apiKey: WRITE_KEY, host: siteHost, useHostForBundles: true, page: false, load: false }).replace(/https:\/\//g, 'http://') +
        `;analytics.load(${JSON.stringify(WRITE_KEY)},${JSON.stringify({ integrations: { 'Segment.io': batching } })});`
      );
    case 'cio':
      return (
        cioSnippet({ writeKey: CIO_WRITE_KEY, cdn: servers.site.url, load: false, page: false }) +
        `;cioanalytics.load(${JSON.stringify(CIO_WRITE_KEY)},${JSON.stringify({ integrations: { 'Customer.io Data Pipelines': batching } })});`
      );
    case 'amplitude': {
      const opts = { serverUrl: api + AMP_PATH, flushQueueSize: 1000, flushIntervalMillis: LONG_MS, autocapture: false, fetchRemoteConfig: false, enableDiagnostics: false };
      return (
        ampSnippet({ siteUrl: servers.site.url, apiUrl: api, init: false, page: false }) +
        `window.__ampReady=amplitude.init(${JSON.stringify(AMP_API_KEY)},${JSON.stringify(opts)}).promise.then(function(r){return r&&r.promise});`
      );
    }
  }
  throw new Error(`crash: no script for ${lib.id}`);
}

/**
 * One run: a fresh context, the library on blank.html, CRASH_N tracks, STORE_MS, Page.crash, then up to
 * CRASH_WAIT_MS for them. `sentBefore`: how many had arrived before the crash (the long interval should hold all).
 */
export async function crashRun(browser, servers, lib, i, waitReady) {
  const ctx = await browser.newContext();
  const tag = `${lib.id}-crash-${i}-${Date.now()}`;
  const out = { tag };
  try {
    const page = await ctx.newPage();
    await page.goto(`${servers.site.url}/blank.html`);
    // (a script element: the snippets insert their bundle's before the page's first script)
    await page.addScriptTag({ content: await initScript(lib, servers) });
    await waitReady(page, lib);
    // One event first, for every library: ours sends the first message of a quiet spell at once (and a burst stored
    // in one go with it), so the 20 measured ones are the ones that wait for the interval.
    await page.evaluate(`window[${JSON.stringify(lib.global)}].track('Crash Warm Up'); 1`);
    await sleep(STORE_MS);
    servers.reset();
    const count = () => new Set(servers.collector.state.messages.filter((m) => m.properties && m.properties.tag === tag).map((m) => m.properties.i)).size;
    await page.evaluate(`(function(){ for (var i = 0; i < ${CRASH_N}; i++) window[${JSON.stringify(lib.global)}].track('Crash Event', { tag: ${JSON.stringify(tag)}, i: i }); })(); 1`);
    await sleep(STORE_MS);
    out.sentBefore = count();
    if (CONTROL) {
      // The control (BENCH_CRASH_CONTROL=1): a navigation to a page without analytics instead of the crash, to show
      // that the library was loaded and would deliver them at a page exit.
      await page.goto(`${servers.site.url}/other.html`);
    } else {
      const cdp = await ctx.newCDPSession(page);
      const crashed = page.waitForEvent('crash', { timeout: 5000 });
      cdp.send('Page.crash').catch(() => {}); // never answered: the renderer is gone
      await crashed;
    }
    const t0 = Date.now();
    while (count() < CRASH_N && Date.now() - t0 < CRASH_WAIT_MS) await sleep(20);
    out.delivered = count();
    out.ms = out.delivered ? Date.now() - t0 : null;
    await sleep(200);
    out.received = servers.collector.state.messages.filter((m) => m.properties && m.properties.tag === tag).length;
    out.requests = servers.api.records.map((r) => `${r.method} ${r.path} ${r.status} ${r.bytes}B ${r.contentType || ''}`);
    return out;
  } catch (err) {
    out.error = String((err && err.message) || err);
    out.delivered = out.delivered ?? 0;
    return out;
  } finally {
    await ctx.close().catch(() => {});
  }
}

/** `a/b (x, y, z)` over a library's runs. */
export const crashCell = (runs) => (runs && runs.length ? `${runs.reduce((a, r) => a + (r.delivered ?? 0), 0)}/${runs.length * CRASH_N} (${runs.map((r) => r.delivered ?? 0).join(', ')})` : 'not measured');

/** The checks of the crash runs: what left before the crash, duplicates, errors. */
export const crashChecks = (runs) =>
  `sent before the crash ${runs.reduce((a, r) => a + (r.sentBefore ?? 0), 0)}, duplicates ${runs.reduce((a, r) => a + Math.max(0, (r.received ?? 0) - (r.delivered ?? 0)), 0)}${runs.some((r) => r.error) ? ', errors: ' + runs.filter((r) => r.error).map((r) => r.error).join('; ') : ''}`;
