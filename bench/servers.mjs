// Bench-only servers, all on 127.0.0.1:
//  - the project's collector (collector/server.mjs, any write key);
//  - an API front (a plain reverse proxy) that all three libraries send to. It records the arrival time of every
//    request and aliases the batch path `/v1/b` of analytics-next and of Customer.io's SDK (both send
//    `POST {apiHost}/b`, apiHost ending in /v1) to the collector's `/v1/batch`, and the one-letter paths of their
//    default (standard) delivery, `POST {apiHost}/p` (page), `/t`, `/i`, `/g`, `/a`, `/s`, one event per request,
//    to the collector's `/v1/page`, `/v1/track`, ...; everything else passes through unchanged, so every library
//    pays the same extra hop;
//  - the site (collector/static.mjs) serving generated pages from bench/.tmp/site, our dist/ under /dist/, and
//    analytics-next's UMD folder under /analytics-next/bundles/ (where its standalone bundle loads chunks from).
//    Its CDN settings JSON is rendered from bench/site/segment-settings.json into
//    bench/.tmp/site/v1/projects/<writeKey>/settings, the path analytics-next fetches it from.
//    The site also plays Customer.io's CDN (cdp.customer.io): its standalone bundle at
//    /v1/analytics-js/snippet/<key>/analytics.min.js (the URL its snippet loads), its lazy chunks under
//    /v1/analytics-js/ (its webpack public path, `{cdn}/v1/analytics-js/`), and its settings, rendered from
//    bench/site/cio-settings.json, at /v1/projects/<key>/settings (`{cdn}/v1/projects/<key>/settings`). It uses
//    its own write key so that its settings and analytics-next's don't share a path.
//  - each peer once more in its default delivery: the same settings template without the Segment.io / Customer.io
//    Data Pipelines destination's `deliveryStrategy` (so the SDK sends each event at once, as a workspace does
//    unless batching is turned on), served under a write key of its own (SEGMENT_DEFAULT_KEY, CIO_DEFAULT_KEY) from
//    the pages segment-default(-page).html and cio-default(-page).html, so one run serves both variants.
//  - Amplitude's CDN (cdn.amplitude.com): the browser bundle its official snippet loads,
//    `libs/analytics-browser-<version>-min.js.gz`, is the npm package's lib/scripts/amplitude-min.js byte for byte (the
//    snippet's SRI hash matches it); the site serves it uncompressed at /libs/analytics-browser-<version>-min.js. Its
//    events go to `{apiHost}/2/httpapi` (init's serverUrl), which the API front translates (see startApiFront).
//  - pages for the stub-cost runs (stub-<lib>.html) and the Lighthouse runs (lh-<lib>.html, lh-none.html).
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BENCH = path.join(ROOT, 'bench');
export const TMP = path.join(BENCH, '.tmp');
export const SITE_OUT = path.join(TMP, 'site');
export const DIST = path.join(ROOT, 'dist');
/** The dist/ files the bench uses, copied at the start: a rebuild during the run (npm test elsewhere) can't mix builds. */
export const DIST_SNAP = path.join(TMP, 'dist');
export const DIST_FILES = ['analytics.min.js', 'analytics.extend.min.js', 'analytics.sources.min.js', 'snippet.min.js', 'snippet-gen.mjs'];
/** Copied too when the build made it (not part of the content hash): the profile maps positions back with it. */
export const DIST_MAP = 'analytics.min.js.map';
export const SEGMENT_UMD = path.join(ROOT, 'node_modules/@segment/analytics-next/dist/umd');
export const WRITE_KEY = 'benchkey';
export const CIO_PKG = path.join(ROOT, 'node_modules/@customerio/cdp-analytics-browser');
export const CIO_UMD = path.join(CIO_PKG, 'dist/umd');
/** Customer.io's SDK gets its own key: its settings URL has the same shape as analytics-next's. */
export const CIO_WRITE_KEY = 'benchkeycio';
/** Write keys of the peers' default-delivery variants (settings without `deliveryStrategy`). */
export const SEGMENT_DEFAULT_KEY = 'benchkeydefault';
export const CIO_DEFAULT_KEY = 'benchkeyciodefault';
/** The one-letter paths of analytics-next's and Customer.io's standard dispatcher (`ctx.event.type.charAt(0)`). */
const SINGLE_PATHS = { p: 'page', t: 'track', i: 'identify', g: 'group', a: 'alias', s: 'screen' };
/** Amplitude's browser SDK (npm @amplitude/analytics-browser, a dev dependency). */
export const AMP_PKG = path.join(ROOT, 'node_modules/@amplitude/analytics-browser');
export const AMP_BUNDLE = path.join(AMP_PKG, 'lib/scripts/amplitude-min.js');
export const AMP_SNIPPET_FILE = path.join(AMP_PKG, 'lib/scripts/amplitude-snippet-min.js');
export const AMP_API_KEY = 'benchkeyamplitude';
/** Amplitude's HTTP V2 API path (its default serverUrl is https://api2.amplitude.com/2/httpapi). */
export const AMP_PATH = '/2/httpapi';
/** Write key of the stub-cost pages: its bundle URLs serve an empty script, so only the stub runs. */
export const STUB_KEY = 'stubkey';
/** SNIPPET_VERSION of the Customer.io snippet this bench reproduces (see cioSnippet). */
export const CIO_SNIPPET_VERSION = '4.15.3';

/** Copies DIST_FILES to DIST_SNAP; returns a short hash of their contents. */
export function snapshotDist() {
  fs.rmSync(DIST_SNAP, { recursive: true, force: true });
  fs.mkdirSync(DIST_SNAP, { recursive: true });
  for (const f of DIST_FILES) fs.copyFileSync(path.join(DIST, f), path.join(DIST_SNAP, f));
  if (fs.existsSync(path.join(DIST, DIST_MAP))) fs.copyFileSync(path.join(DIST, DIST_MAP), path.join(DIST_SNAP, DIST_MAP));
  return hashFiles(DIST_SNAP);
}

/** Short sha-256 of DIST_FILES in `dir`. */
export function hashFiles(dir) {
  const h = crypto.createHash('sha256');
  for (const f of DIST_FILES) h.update(fs.readFileSync(path.join(dir, f)));
  return h.digest('hex').slice(0, 16);
}

const require = createRequire(import.meta.url);

/** Wall-clock milliseconds with sub-millisecond precision. */
export const nowMs = () => performance.timeOrigin + performance.now();

/**
 * A reverse proxy in front of the collector. `records` holds one entry per request, in arrival order:
 * `{ t (headers arrived, epoch ms), tEnd (body read), method, path (as sent), bytes (body), status }`.
 */
export async function startApiFront(targetPort) {
  const records = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    if (new URL(req.url, 'http://x').pathname === AMP_PATH) return amplitudeIngest(req, res, records, targetPort, agent);
    const rec = { t: nowMs(), tEnd: null, method: req.method, path: new URL(req.url, 'http://x').pathname, bytes: 0, status: null, contentType: req.headers['content-type'] || null };
    records.push(rec);
    const one = /^\/v1\/([a-z])$/.exec(rec.path);
    const upPath = rec.path === '/v1/b' ? req.url.replace(/^\/v1\/b(?=$|\?)/, '/v1/batch')
      : one && SINGLE_PATHS[one[1]] ? req.url.replace(/^\/v1\/[a-z](?=$|\?)/, '/v1/' + SINGLE_PATHS[one[1]]) : req.url;
    const up = http.request({ host: '127.0.0.1', port: targetPort, method: req.method, path: upPath, headers: req.headers, agent }, (ur) => {
      rec.status = ur.statusCode;
      res.writeHead(ur.statusCode, ur.headers);
      ur.pipe(res);
    });
    up.on('error', (err) => {
      rec.status = 0;
      rec.error = err.message;
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end();
    });
    req.on('data', (c) => { rec.bytes += c.length; });
    req.on('end', () => { rec.tEnd = nowMs(); });
    req.pipe(up);
  });
  const port = await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    records,
    async close() {
      const done = new Promise((r) => server.close(() => r()));
      server.closeAllConnections();
      agent.destroy();
      await done;
    },
  };
}

const ampCors = (req) => ({
  'Access-Control-Allow-Origin': req.headers.origin || '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': req.headers['access-control-request-headers'] || 'Content-Type',
  'Access-Control-Max-Age': '600',
});

/**
 * Amplitude's HTTP V2 API, `POST /2/httpapi` `{"api_key", "events": [...], "options"}`, played by the API front:
 * each event becomes a track message of the collector's format (event_type → event, event_properties →
 * properties, insert_id → messageId, device_id → anonymousId, user_id → userId, time → timestamp), sent on to the
 * collector's /v1/batch, so the delivery counts read the same store; the page gets Amplitude's success answer,
 * `{"code": 200, "events_ingested", "payload_size_bytes", "server_upload_time"}`. Recorded like any other request
 * (its bytes are Amplitude's own body).
 */
function amplitudeIngest(req, res, records, targetPort, agent) {
  const rec = { t: nowMs(), tEnd: null, method: req.method, path: AMP_PATH, bytes: 0, status: null, contentType: req.headers['content-type'] || null };
  records.push(rec);
  if (req.method === 'OPTIONS') {
    rec.status = 204;
    rec.tEnd = rec.t;
    res.writeHead(204, ampCors(req));
    return res.end();
  }
  const chunks = [];
  req.on('data', (c) => { rec.bytes += c.length; chunks.push(c); });
  req.on('end', () => {
    rec.tEnd = nowMs();
    const answer = (status, body) => {
      rec.status = status;
      res.writeHead(status, { ...ampCors(req), 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return answer(400, { code: 400, error: 'Invalid JSON request body' });
    }
    const events = Array.isArray(body && body.events) ? body.events : [];
    const batch = events.map((e) => ({
      type: 'track',
      event: String(e.event_type || ''),
      properties: e.event_properties && typeof e.event_properties === 'object' ? e.event_properties : {},
      messageId: String(e.insert_id || crypto.randomUUID()),
      anonymousId: e.device_id || null,
      userId: e.user_id ?? null,
      timestamp: new Date(typeof e.time === 'number' ? e.time : Date.now()).toISOString(),
      context: { library: e.library, amplitude: { session_id: e.session_id, event_id: e.event_id } },
    }));
    const payload = JSON.stringify({ batch, writeKey: body.api_key || AMP_API_KEY });
    const up = http.request({ host: '127.0.0.1', port: targetPort, method: 'POST', path: '/v1/batch', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }, agent }, (ur) => {
      ur.resume();
      ur.on('end', () => (ur.statusCode === 200
        ? answer(200, { code: 200, events_ingested: events.length, payload_size_bytes: rec.bytes, server_upload_time: Date.now() })
        : answer(ur.statusCode, { code: ur.statusCode, error: `collector answered ${ur.statusCode}` })));
    });
    up.on('error', (err) => {
      rec.error = err.message;
      answer(502, { code: 502, error: err.message });
    });
    up.end(payload);
  });
}

/** Amplitude's version, and its official snippet (the npm package's lib/scripts/amplitude-snippet-min.js). */
export function ampVersion() {
  return JSON.parse(fs.readFileSync(path.join(AMP_PKG, 'package.json'), 'utf8')).version;
}

/**
 * Amplitude's snippet as the package ships it, with the CDN URL of its bundle pointed at `src` (default: the local
 * site's copy); its SRI attribute stays, as the bundle is the same bytes. `init`: append `amplitude.init(key, …)`
 * with the bench's options (serverUrl = the local API front, batches of 20 / 1 s as the other libraries, no
 * autocapture, no remote config fetch, no diagnostics: all three would send requests off this machine or add events
 * the others don't send); `window.__ampReady` resolves when the real init is done. `page`: a `Page Viewed` track
 * (Amplitude has no page() call; it tracks page views as events).
 */
export function ampSnippet({ siteUrl = 'https://cdn.amplitude.com', apiUrl, src, init = true, page = true, key = AMP_API_KEY }) {
  const v = ampVersion();
  const cdn = `https://cdn.amplitude.com/libs/analytics-browser-${v}-min.js.gz`;
  let text = fs.readFileSync(AMP_SNIPPET_FILE, 'utf8').trim();
  if (!text.includes(cdn)) throw new Error(`Amplitude's snippet does not load ${cdn}`);
  text = text.replace(cdn, src || `${siteUrl}/libs/analytics-browser-${v}-min.js`);
  if (init) text += ampInit(apiUrl, key);
  if (page) text += `amplitude.track("Page Viewed");`;
  return text;
}

/** The bench's `amplitude.init(...)` call (see ampSnippet). */
export function ampInit(apiUrl, key = AMP_API_KEY) {
  const opts = { serverUrl: apiUrl + AMP_PATH, flushQueueSize: 20, flushIntervalMillis: 1000, autocapture: false, fetchRemoteConfig: false, enableDiagnostics: false };
  return `window.__ampReady=amplitude.init(${JSON.stringify(key)},${JSON.stringify(opts)}).promise.then(function(r){return r&&r.promise});`;
}

/** The product page's 5 track() calls (Lighthouse and stub-cost pages), the same for every library. */
export const PRODUCT_TRACKS = [
  ['Product Viewed', { product_id: 'TR2', name: 'Trail Runner 2', price: 129, currency: 'USD', category: 'Shoes' }],
  ['Product Image Zoomed', { product_id: 'TR2', image: 2 }],
  ['Size Selected', { product_id: 'TR2', size: 42 }],
  ['Color Selected', { product_id: 'TR2', color: 'red' }],
  ['Reviews Viewed', { product_id: 'TR2', count: 37 }],
];
export const productTracks = (global) => PRODUCT_TRACKS.map(([e, p]) => `${global}.track(${JSON.stringify(e)},${JSON.stringify(p)});`).join('');

/** The libraries of the stub-cost and Lighthouse pages: their ids and globals (ours, the three peers). */
export const PAGE_LIBS = [
  { id: 'ours', global: 'analytics', name: 'svc-analytics' },
  { id: 'segment', global: 'analytics', name: 'analytics-next' },
  { id: 'cio', global: 'cioanalytics', name: 'Customer.io' },
  { id: 'amplitude', global: 'amplitude', name: 'Amplitude' },
];

/** Segment's standard v5 snippet (npm `@segment/snippet`), minified by its own `min()`. */
export function segmentSnippet(opts) {
  return require('@segment/snippet').min(opts);
}

/**
 * Customer.io's JavaScript snippet (the one its Data Pipelines JavaScript source shows, SNIPPET_VERSION 4.15.3).
 * No npm package ships it, so the bench writes an equivalent here, from what the standalone bundle reads
 * (src/browser/standalone.ts, src/lib/parse-cdn.ts, src/core/buffer/snippet.ts of the package): a global array
 * `cioanalytics` that records `[method, ...args]` calls, and a `load(key, options)` that inserts an async
 * `<script data-global-customerio-analytics-key="cioanalytics" src="{cdn}/v1/analytics-js/snippet/{key}/analytics.min.js">`
 * and keeps `_writeKey` and `_loadOptions`. The bundle takes the global's name from that attribute and its CDN
 * (for its settings and chunks) from that URL. Same stub methods as Customer.io's published snippet.
 */
export function cioSnippet({ writeKey, cdn = 'https://cdp.customer.io', load = true, page = true }) {
  const methods = ['trackSubmit', 'trackClick', 'trackLink', 'trackForm', 'pageview', 'identify', 'reset', 'group', 'track', 'ready', 'alias', 'debug', 'page', 'once', 'off', 'on', 'addSourceMiddleware', 'addIntegrationMiddleware', 'setAnonymousId', 'addDestinationMiddleware'];
  return (
    '!function(){var i="cioanalytics",analytics=(window[i]=window[i]||[]);' +
    'if(!analytics.initialize)if(analytics.invoked)window.console&&console.error&&console.error("Snippet included twice.");' +
    'else{analytics.invoked=!0;analytics.methods=' + JSON.stringify(methods) + ';' +
    'analytics.factory=function(e){return function(){var t=Array.prototype.slice.call(arguments);t.unshift(e);analytics.push(t);return analytics}};' +
    'for(var e=0;e<analytics.methods.length;e++){var key=analytics.methods[e];analytics[key]=analytics.factory(key)}' +
    'analytics.load=function(key,e){var t=document.createElement("script");t.type="text/javascript";t.async=!0;' +
    't.setAttribute("data-global-customerio-analytics-key",i);' +
    't.src=' + JSON.stringify(cdn + '/v1/analytics-js/snippet/') + '+key+"/analytics.min.js";' +
    'var n=document.getElementsByTagName("script")[0];n.parentNode.insertBefore(t,n);analytics._writeKey=key;analytics._loadOptions=e};' +
    'analytics.SNIPPET_VERSION=' + JSON.stringify(CIO_SNIPPET_VERSION) + ';' +
    (load ? 'analytics.load(' + JSON.stringify(writeKey) + ');' : '') +
    (page ? 'analytics.page();' : '') +
    '}}();'
  );
}

/** Our snippet generator (dist/snippet-gen.mjs, built by `npm run build`). */
export async function ourSnippet(opts) {
  const { snippet } = await import(path.join(DIST_SNAP, 'snippet-gen.mjs'));
  return snippet(opts);
}

const render = (file, vars) =>
  fs.readFileSync(path.join(BENCH, 'site', file), 'utf8').replace(/\{\{(\w+)\}\}/g, (_, k) => {
    if (!(k in vars)) throw new Error(`bench/site/${file}: no value for {{${k}}}`);
    return vars[k];
  });

/**
 * A settings template's text without its destination's `deliveryStrategy` (the peer's default delivery): the key's
 * line is cut out of the text, so the rest stays byte for byte; checked against the parsed template minus that key.
 */
export function withoutDeliveryStrategy(text) {
  const want = JSON.parse(text);
  for (const v of Object.values(want.integrations || {})) delete v.deliveryStrategy;
  const out = text.replace(/,\s*\n\s*"deliveryStrategy":\s*\{[^\n]*\}\s*(?=\n)/g, '');
  if (out === text || JSON.stringify(JSON.parse(out)) !== JSON.stringify(want)) throw new Error('could not drop deliveryStrategy from a settings template');
  return out;
}

function writeOut(rel, text) {
  const file = path.join(SITE_OUT, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/**
 * Writes the pages once the ports are known. Each library page exists twice: `*-page.html` calls
 * `analytics.page()` right after load (the snippet as a site pastes it), `*.html` only loads.
 */
async function renderSite({ siteUrl, apiUrl }) {
  fs.rmSync(SITE_OUT, { recursive: true, force: true });
  const siteHost = siteUrl.replace(/^http:\/\//, '');
  const apiHostForSegment = apiUrl.replace(/^http:\/\//, '') + '/v1';
  const snippets = {};
  for (const page of [false, true]) {
    const ours = await ourSnippet({ writeKey: WRITE_KEY, cdnUrl: '/dist/analytics.min.js', apiHost: apiUrl, page });
    // The current snippet sets analytics._cdn (useHostForBundles); it hard-codes https://, our local site is http.
    const seg = segmentSnippet({ apiKey: WRITE_KEY, host: siteHost, useHostForBundles: true, page, load: true }).replace(/https:\/\//g, 'http://');
    const cio = cioSnippet({ writeKey: CIO_WRITE_KEY, cdn: siteUrl, page });
    // The default-delivery variants: the same snippets under the keys whose settings have no deliveryStrategy.
    const segDefault = segmentSnippet({ apiKey: SEGMENT_DEFAULT_KEY, host: siteHost, useHostForBundles: true, page, load: true }).replace(/https:\/\//g, 'http://');
    const cioDefault = cioSnippet({ writeKey: CIO_DEFAULT_KEY, cdn: siteUrl, page });
    const suffix = page ? '-page' : '';
    writeOut(`ours${suffix}.html`, render('ours.html', { SNIPPET: ours }));
    writeOut(`segment${suffix}.html`, render('segment.html', { SNIPPET: seg }));
    writeOut(`cio${suffix}.html`, render('cio.html', { SNIPPET: cio }));
    writeOut(`segment-default${suffix}.html`, render('segment.html', { SNIPPET: segDefault }));
    writeOut(`cio-default${suffix}.html`, render('cio.html', { SNIPPET: cioDefault }));
    snippets[`ours${suffix}`] = ours;
    snippets[`segment${suffix}`] = seg;
    snippets[`cio${suffix}`] = cio;
    snippets[`segment-default${suffix}`] = segDefault;
    snippets[`cio-default${suffix}`] = cioDefault;
  }
  // Pages with a source middleware (a pass-through, added in the snippet before its page() call, as a site that
  // enriches or filters its events does): ours, and the peers in their default delivery (each event sent at once).
  // analytics.js and Customer.io fetch their middleware code with the bundle; ours fetches its middleware chunk.
  const MW = (g) => `${g}.addSourceMiddleware(function(m){m.next(m.payload)});${g}.page();`;
  const mwPages = {
    'ours-mw': (await ourSnippet({ writeKey: WRITE_KEY, cdnUrl: '/dist/analytics.min.js', apiHost: apiUrl, page: false })) + ';' + MW('analytics'),
    'segment-default-mw': segmentSnippet({ apiKey: SEGMENT_DEFAULT_KEY, host: siteHost, useHostForBundles: true, page: false, load: true }).replace(/https:\/\//g, 'http://') + MW('analytics'),
    'cio-default-mw': cioSnippet({ writeKey: CIO_DEFAULT_KEY, cdn: siteUrl, page: false }) + MW('cioanalytics'),
  };
  for (const [name, text] of Object.entries(mwPages)) {
    writeOut(`${name}-page.html`, render(`${name.split('-')[0]}.html`, { SNIPPET: text }));
    snippets[`${name}-page`] = text;
  }
  // Amplitude: the bundle where the local snippet loads it, pages with and without the Page Viewed event.
  writeOut(`libs/analytics-browser-${ampVersion()}-min.js`, fs.readFileSync(AMP_BUNDLE));
  for (const page of [false, true]) {
    const amp = ampSnippet({ siteUrl, apiUrl, page });
    writeOut(`amplitude${page ? '-page' : ''}.html`, render('amplitude.html', { SNIPPET: amp }));
    snippets[`amplitude${page ? '-page' : ''}`] = amp;
  }
  // Stub-cost pages: each library's stub alone (its bundle URL answers an empty script), timed around its definition
  // and around the 7 calls a product page makes before the bundle arrives: load, page and 5 tracks (Amplitude:
  // its snippet inserts the script itself, so its definition includes that; init, a Page Viewed track, 5 tracks).
  writeOut('stub-empty.js', '/* empty: the stub-cost pages time the stub alone */\n');
  for (const f of [`analytics.js/v1/${STUB_KEY}/analytics.min.js`, `v1/analytics-js/snippet/${STUB_KEY}/analytics.min.js`]) writeOut(f, '/* empty */\n');
  const stubParts = {
    ours: [fs.readFileSync(path.join(DIST_SNAP, 'snippet.min.js'), 'utf8').trim(), `analytics.load(${JSON.stringify(STUB_KEY)},${JSON.stringify({ cdnUrl: '/stub-empty.js', apiHost: apiUrl })});analytics.page();${productTracks('analytics')}`],
    segment: [segmentSnippet({ apiKey: STUB_KEY, host: siteHost, useHostForBundles: true, page: false, load: false }).replace(/https:\/\//g, 'http://'), `analytics.load(${JSON.stringify(STUB_KEY)});analytics.page();${productTracks('analytics')}`],
    cio: [cioSnippet({ writeKey: STUB_KEY, cdn: siteUrl, load: false, page: false }), `cioanalytics.load(${JSON.stringify(STUB_KEY)});cioanalytics.page();${productTracks('cioanalytics')}`],
    amplitude: [ampSnippet({ src: '/stub-empty.js', init: false, page: false }), `${ampInit(apiUrl, STUB_KEY)}amplitude.track("Page Viewed");${productTracks('amplitude')}`],
  };
  for (const lib of PAGE_LIBS) {
    const [def, calls] = stubParts[lib.id];
    const script = `var __s0=performance.now();${def};var __s1=performance.now();${calls};var __s2=performance.now();window.__stub={define:__s1-__s0,calls:__s2-__s1};`;
    writeOut(`stub-${lib.id}.html`, render('stub.html', { NAME: lib.name, SCRIPT: script }));
  }
  // Lighthouse pages: a product page with the snippet (load + page) in <head> and 5 tracks at the end of <body>;
  // lh-none.html is the same page without analytics.
  for (const lib of PAGE_LIBS) {
    writeOut(`lh-${lib.id}.html`, render('lh.html', { NAME: lib.name, HEAD: `<script>${snippets[`${lib.id}-page`]}</script>`, BODY: `<script>${productTracks(lib.global)}</script>` }));
  }
  writeOut('lh-none.html', render('lh.html', { NAME: 'no analytics', HEAD: '', BODY: '' }));
  writeOut('other.html', render('other.html', {}));
  writeOut('blank.html', render('blank.html', {}));
  const settings = render('segment-settings.json', { WRITE_KEY, API_HOST: apiHostForSegment });
  JSON.parse(settings); // fail early on a broken template
  writeOut(`v1/projects/${WRITE_KEY}/settings`, settings);
  // The snippet loads {cdn}/analytics.js/v1/<key>/analytics.min.js: that file is the standalone bundle, byte for byte.
  writeOut(`analytics.js/v1/${WRITE_KEY}/analytics.min.js`, fs.readFileSync(path.join(SEGMENT_UMD, 'standalone.js')));
  const settingsDefault = withoutDeliveryStrategy(render('segment-settings.json', { WRITE_KEY: SEGMENT_DEFAULT_KEY, API_HOST: apiHostForSegment }));
  writeOut(`v1/projects/${SEGMENT_DEFAULT_KEY}/settings`, settingsDefault);
  writeOut(`analytics.js/v1/${SEGMENT_DEFAULT_KEY}/analytics.min.js`, fs.readFileSync(path.join(SEGMENT_UMD, 'standalone.js')));
  // Customer.io's CDN: settings, the standalone bundle where its snippet asks for it, the lazy chunks beside.
  const cioSettings = render('cio-settings.json', { WRITE_KEY: CIO_WRITE_KEY, API_HOST: apiHostForSegment });
  JSON.parse(cioSettings);
  writeOut(`v1/projects/${CIO_WRITE_KEY}/settings`, cioSettings);
  writeOut(`v1/analytics-js/snippet/${CIO_WRITE_KEY}/analytics.min.js`, fs.readFileSync(path.join(CIO_UMD, 'standalone.js')));
  const cioSettingsDefault = withoutDeliveryStrategy(render('cio-settings.json', { WRITE_KEY: CIO_DEFAULT_KEY, API_HOST: apiHostForSegment }));
  writeOut(`v1/projects/${CIO_DEFAULT_KEY}/settings`, cioSettingsDefault);
  writeOut(`v1/analytics-js/snippet/${CIO_DEFAULT_KEY}/analytics.min.js`, fs.readFileSync(path.join(CIO_UMD, 'standalone.js')));
  for (const f of fs.readdirSync(CIO_UMD)) {
    if (f.endsWith('.js')) writeOut(`v1/analytics-js/${f}`, fs.readFileSync(path.join(CIO_UMD, f)));
  }
  return { snippets, settings, cioSettings, settingsDefault, cioSettingsDefault };
}

/** Starts collector, API front and site; returns handles and a close(). */
export async function startAll() {
  const collector = await startCollector({ port: 0, writeKey: null });
  const api = await startApiFront(collector.port);
  const site = await startStatic({
    root: (fs.mkdirSync(SITE_OUT, { recursive: true }), SITE_OUT),
    port: 0,
    mounts: { '/dist/': DIST_SNAP, '/analytics-next/bundles/': SEGMENT_UMD },
  });
  const rendered = await renderSite({ siteUrl: site.url, apiUrl: api.url });
  return {
    collector,
    api,
    site,
    ...rendered,
    reset() {
      collector.reset();
      api.records.length = 0;
    },
    async close() {
      await site.close();
      await api.close();
      await collector.close();
    },
  };
}
