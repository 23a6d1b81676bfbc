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
export const DIST_FILES = ['analytics.min.js', 'snippet.min.js', 'snippet-gen.mjs'];
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
