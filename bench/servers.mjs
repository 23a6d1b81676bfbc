// Bench-only servers, all on 127.0.0.1:
//  - the project's collector (collector/server.mjs, any write key);
//  - an API front (a plain reverse proxy) that both libraries send to. It records the arrival time of every
//    request and aliases analytics-next's batch path `/v1/b` to the collector's `/v1/batch`; everything else
//    passes through unchanged, so both libraries pay the same extra hop;
//  - the site (collector/static.mjs) serving generated pages from bench/.tmp/site, our dist/ under /dist/, and
//    analytics-next's UMD folder under /analytics-next/bundles/ (where its standalone bundle loads chunks from).
//    Its CDN settings JSON is rendered from bench/site/segment-settings.json into
//    bench/.tmp/site/v1/projects/<writeKey>/settings, the path analytics-next fetches it from.
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
export const SEGMENT_UMD = path.join(ROOT, 'node_modules/@segment/analytics-next/dist/umd');
export const WRITE_KEY = 'benchkey';

/** Copies DIST_FILES to DIST_SNAP; returns a short hash of their contents. */
export function snapshotDist() {
  fs.rmSync(DIST_SNAP, { recursive: true, force: true });
  fs.mkdirSync(DIST_SNAP, { recursive: true });
  for (const f of DIST_FILES) fs.copyFileSync(path.join(DIST, f), path.join(DIST_SNAP, f));
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
    const upPath = rec.path === '/v1/b' ? req.url.replace(/^\/v1\/b(?=$|\?)/, '/v1/batch') : req.url;
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
    const suffix = page ? '-page' : '';
    writeOut(`ours${suffix}.html`, render('ours.html', { SNIPPET: ours }));
    writeOut(`segment${suffix}.html`, render('segment.html', { SNIPPET: seg }));
    snippets[`ours${suffix}`] = ours;
    snippets[`segment${suffix}`] = seg;
  }
  writeOut('other.html', render('other.html', {}));
  writeOut('blank.html', render('blank.html', {}));
  const settings = render('segment-settings.json', { WRITE_KEY, API_HOST: apiHostForSegment });
  JSON.parse(settings); // fail early on a broken template
  writeOut(`v1/projects/${WRITE_KEY}/settings`, settings);
  // The snippet loads {cdn}/analytics.js/v1/<key>/analytics.min.js: that file is the standalone bundle, byte for byte.
  writeOut(`analytics.js/v1/${WRITE_KEY}/analytics.min.js`, fs.readFileSync(path.join(SEGMENT_UMD, 'standalone.js')));
  return { snippets, settings };
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
