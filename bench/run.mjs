#!/usr/bin/env node
// `npm run bench`: svc-analytics next to Segment's @segment/analytics-next, in one run, in headless Chromium,
// everything on 127.0.0.1. Prints a table and writes bench/RESULTS.md; the raw data of the run goes to
// bench/.tmp/last-run.json. Needs `npm run build` first (dist/). Not part of `npm test`.
//
// Environment: CHROMIUM_PATH (else /usr/bin/chromium, else Playwright's own), BENCH_RUNS (TTFE runs, default 7),
// BENCH_TRACK_RUNS (1,000-track runs, default 3), BENCH_UNLOAD_RUNS (default 3), BENCH_NO_WRITE=1 (don't write
// RESULTS.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { chromium } from '@playwright/test';
import { startAll, nowMs, ROOT, BENCH, TMP, DIST, DIST_SNAP, DIST_FILES, SEGMENT_UMD, segmentSnippet, ourSnippet, snapshotDist, hashFiles } from './servers.mjs';

const TTFE_RUNS = intEnv('BENCH_RUNS', 7);
const TRACK_RUNS = intEnv('BENCH_TRACK_RUNS', 3);
const UNLOAD_RUNS = intEnv('BENCH_UNLOAD_RUNS', 3);
const TRACK_N = 1000;
const UNLOAD_N = 20;
const PROPS_BYTES = 300;
const BATCH_LIMIT = 500000;
const THROTTLE = 4;
const WAIT_FIRST_MS = 20000; // bound on waiting for the first request of a page
const WAIT_ALL_MS = 60000; // bound on waiting for 1,000 events
const WAIT_UNLOAD_MS = 5000; // how long delivery after page exit may take
const READY_MS = 20000;
const SETTLE_MS = 500; // idle time after ready, before a measurement starts

const LIBS = [
  { id: 'ours', name: 'svc-analytics', page: 'ours' },
  { id: 'segment', name: '@segment/analytics-next', page: 'segment' },
];

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function intEnv(name, def) {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 && v <= 50 ? v : def;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const log = (...a) => console.error('[bench]', ...a);

/** Polls `cond` every `step` ms until it returns a truthy value or `ms` pass; returns the last value. */
async function until(cond, ms, step = 10) {
  const end = nowMs() + ms;
  let v = cond();
  while (!v && nowMs() < end) {
    await sleep(step);
    v = cond();
  }
  return v;
}

function sizes(buf) {
  buf = Buffer.isBuffer(buf) ? buf : Buffer.from(buf);
  return {
    raw: buf.length,
    gzip: zlib.gzipSync(buf, { level: 9 }).length,
    brotli: zlib.brotliCompressSync(buf, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: buf.length },
    }).length,
  };
}
const addSizes = (...ss) => ss.reduce((a, s) => ({ raw: a.raw + s.raw, gzip: a.gzip + s.gzip, brotli: a.brotli + s.brotli }), { raw: 0, gzip: 0, brotli: 0 });

function chromiumPath() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  if (fs.existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  return undefined;
}

function newestMtime(dir) {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

function checkBuild() {
  for (const f of DIST_FILES) {
    if (!fs.existsSync(path.join(DIST, f))) {
      console.error(`bench: dist/${f} is missing; run \`npm run build\` first.`);
      process.exit(1);
    }
  }
  if (!fs.existsSync(path.join(SEGMENT_UMD, 'standalone.js'))) {
    console.error('bench: node_modules/@segment/analytics-next is missing; run `npm install`.');
    process.exit(1);
  }
  const stale = newestMtime(path.join(ROOT, 'src')) > fs.statSync(path.join(DIST, 'analytics.min.js')).mtimeMs;
  if (stale) log('warning: src/ is newer than dist/analytics.min.js; results are for the old build (run `npm run build`).');
  fs.mkdirSync(TMP, { recursive: true });
  return { stale, dist: snapshotDist() };
}

/** Segment's snippet fixture (standard v5, minified by @segment/snippet's min()); checked against the package. */
function segmentSnippetFixture() {
  const file = path.join(BENCH, 'fixtures/segment-snippet.min.js');
  const fixture = fs.readFileSync(file, 'utf8');
  let generated = null;
  try {
    generated = segmentSnippet({ apiKey: 'YOUR_WRITE_KEY' });
  } catch {
    /* package absent: the fixture stands */
  }
  if (generated !== null && generated !== fixture) log('warning: bench/fixtures/segment-snippet.min.js differs from @segment/snippet min() output; measuring the fixture.');
  return fixture;
}

function machine(browserVersion) {
  const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = (/^model name\s*:\s*(.*)$/m.exec(cpuinfo) || [])[1] || os.cpus()[0]?.model || 'unknown';
  return {
    cpu: model.trim(),
    cores: os.cpus().length,
    chromium: browserVersion,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    date: new Date().toISOString(),
    loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
  };
}

function gitDescribe() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return head + (dirty ? ' (src/ modified)' : '');
  } catch {
    return 'unknown';
  }
}

function pkgVersion(rel) {
  try {
    return JSON.parse(fs.readFileSync(path.join(ROOT, rel), 'utf8')).version;
  } catch {
    return '?';
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const build = checkBuild();
  fs.mkdirSync(TMP, { recursive: true });
  const t0 = nowMs();
  const servers = await startAll();
  const executablePath = chromiumPath();
  const browser = await chromium.launch({ headless: true, executablePath, args: ARGS });
  const raw = { config: { TTFE_RUNS, TRACK_RUNS, UNLOAD_RUNS, TRACK_N, UNLOAD_N, PROPS_BYTES, THROTTLE }, libs: {} };
  try {
    const env = machine(browser.version());
    raw.machine = env;
    raw.git = gitDescribe();
    raw.versions = { ours: pkgVersion('package.json'), segment: pkgVersion('node_modules/@segment/analytics-next/package.json'), segmentSnippet: pkgVersion('node_modules/@segment/snippet/package.json') };
    log(`Chromium ${env.chromium}, ${env.cpu} x${env.cores}, load ${env.loadavg}`);

    const clock = await clockOffset(browser, servers);
    raw.clock = clock;
    log(`page clock - node clock: ${clock.offset.toFixed(2)} ms (rtt ${clock.rtt.toFixed(2)} ms)`);

    for (const lib of LIBS) raw.libs[lib.id] = { ttfe: { 1: [], [THROTTLE]: [] }, track: [], unload: { navigate: [], 'navigate-same': [], close: [] } };

    // Warm-up (not recorded): first launch of each bundle, disk cache of the server.
    for (const lib of LIBS) await ttfeRun(browser, servers, lib, 1, clock, true);

    // Time to first event, interleaved so that machine noise hits both libraries alike.
    for (const rate of [1, THROTTLE]) {
      for (let i = 0; i < TTFE_RUNS; i++) {
        const order = i % 2 ? [...LIBS].reverse() : LIBS;
        for (const lib of order) {
          const r = await ttfeRun(browser, servers, lib, rate, clock, false, i === 0);
          raw.libs[lib.id].ttfe[rate].push(r);
          log(`ttfe ${lib.id} x${rate} #${i + 1}: ${r.ttfe?.toFixed(1)} ms${r.error ? ' ERROR ' + r.error : ''}`);
        }
      }
    }

    for (let i = 0; i < TRACK_RUNS; i++) {
      const order = i % 2 ? [...LIBS].reverse() : LIBS;
      for (const lib of order) {
        const r = await trackRun(browser, servers, lib, clock);
        raw.libs[lib.id].track.push(r);
        log(`track ${lib.id} #${i + 1}: loop ${r.loopMs?.toFixed(2)} ms, busy ${r.taskMs?.toFixed(1)} ms, ${r.posts} POSTs, ${r.distinct}/${TRACK_N} delivered${r.error ? ' ERROR ' + r.error : ''}`);
      }
    }

    for (const mode of ['navigate', 'navigate-same', 'close']) {
      for (let i = 0; i < UNLOAD_RUNS; i++) {
        const order = i % 2 ? [...LIBS].reverse() : LIBS;
        for (const lib of order) {
          const r = await unloadRun(browser, servers, lib, mode, i);
          raw.libs[lib.id].unload[mode].push(r);
          log(`unload ${mode} ${lib.id} #${i + 1}: ${r.delivered}/${UNLOAD_N}${r.error ? ' ERROR ' + r.error : ''}`);
        }
      }
    }

    raw.bytes = await byteSizes(raw);
    raw.build = { ...build, distAtEnd: hashFiles(DIST) };
    raw.build.rebuiltDuringRun = raw.build.dist !== raw.build.distAtEnd;
    if (raw.build.rebuiltDuringRun) log('note: dist/ was rebuilt during the run; the bench measured the copy it took at the start (bench/.tmp/dist).');
    raw.machine.loadavgEnd = os.loadavg().map((x) => x.toFixed(2)).join(' ');
    raw.elapsedS = (nowMs() - t0) / 1000;
    fs.writeFileSync(path.join(TMP, 'last-run.json'), JSON.stringify(raw, null, 1));
    const md = report(raw);
    console.log(md.table);
    if (!process.env.BENCH_NO_WRITE) fs.writeFileSync(path.join(BENCH, 'RESULTS.md'), md.full);
    log(`done in ${raw.elapsedS.toFixed(0)} s; raw data in bench/.tmp/last-run.json${process.env.BENCH_NO_WRITE ? '' : ', report in bench/RESULTS.md'}`);
  } finally {
    await browser.close().catch(() => {});
    await servers.close().catch(() => {});
  }
}

/** Offset of the page's clock (performance.timeOrigin + now) from ours: the sample with the shortest round trip. */
async function clockOffset(browser, servers) {
  const ctx = await browser.newContext();
  try {
    const page = await ctx.newPage();
    await page.goto(servers.site.url + '/blank.html');
    let best = { rtt: Infinity, offset: 0 };
    for (let i = 0; i < 25; i++) {
      const a = nowMs();
      const p = await page.evaluate(() => performance.timeOrigin + performance.now());
      const b = nowMs();
      if (b - a < best.rtt) best = { rtt: b - a, offset: p - (a + b) / 2 };
    }
    return best;
  } finally {
    await ctx.close();
  }
}

async function newPage(browser, rate) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate });
  return { ctx, page, cdp };
}

async function waitReady(page) {
  await page.waitForFunction(() => window.analytics && window.analytics.initialized === true, null, { timeout: READY_MS });
  await page.evaluate(() => new Promise((resolve) => window.analytics.ready(() => resolve())));
}

/** A CPU-bound loop timed in the page: how much the throttling really slows the page down. */
const calibrate = (page) =>
  page.evaluate(() => {
    // Long enough (~50 ms unthrottled) to span several of the throttler's time slices.
    const t = performance.now();
    let x = 0;
    for (let i = 0; i < 2e7; i++) x += Math.sqrt(i);
    return { ms: performance.now() - t, x };
  });

/**
 * One fresh context: navigate to the page that loads the library and calls page(); the time from the page's
 * navigation start to the first POST at the API front. The requests the page made before that POST are kept
 * (with their bodies when `withBodies`) for the byte count.
 */
async function ttfeRun(browser, servers, lib, rate, clock, warmup = false, withBodies = false) {
  const { ctx, page, cdp } = await newPage(browser, rate);
  const out = { rate };
  try {
    const reqs = [];
    page.on('request', (r) => reqs.push(r));
    servers.reset();
    const start = nowMs();
    const url = `${servers.site.url}/${lib.page}-page.html`;
    await page.goto(url, { waitUntil: 'commit', timeout: WAIT_FIRST_MS });
    const first = await until(() => servers.api.records.find((r) => r.method === 'POST' && r.t >= start), WAIT_FIRST_MS);
    if (!first) throw new Error('no request reached the collector');
    const timeOrigin = await page.evaluate(() => performance.timeOrigin);
    out.ttfe = first.t + clock.offset - timeOrigin;
    out.ttfeBodyEnd = first.tEnd != null ? first.tEnd + clock.offset - timeOrigin : null;
    out.firstPath = first.path;
    out.preflightBefore = servers.api.records.filter((r) => r.method === 'OPTIONS' && r.t <= first.t).length;
    await until(() => servers.collector.state.messages.length > 0, 2000);
    out.firstMessages = servers.collector.state.messages.map((m) => m.type);
    if (warmup) return out;
    // Requests before the first POST to the API, in the order the page made them.
    const cut = reqs.findIndex((r) => r.url().startsWith(servers.api.url) && r.method() === 'POST');
    const before = (cut < 0 ? reqs : reqs.slice(0, cut)).filter((r) => r.url().startsWith(servers.site.url) && r.resourceType() !== 'document');
    out.requestsBefore = [];
    for (const r of before) {
      const entry = { url: r.url().slice(servers.site.url.length), type: r.resourceType() };
      if (withBodies) {
        const res = await r.response();
        entry.status = res ? res.status() : null;
        entry.body = res ? await res.body() : null;
      }
      out.requestsBefore.push(entry);
    }
    out.allPageRequests = reqs.map((r) => `${r.method()} ${r.resourceType()} ${r.url()}`);
    if (withBodies) out.calibrationMs = (await calibrate(page)).ms;
    return out;
  } catch (err) {
    out.error = String(err && err.message || err);
    return out;
  } finally {
    await cdp.detach().catch(() => {});
    await ctx.close().catch(() => {});
  }
}

/** Builds `n` property objects of about `bytes` serialised bytes each (different values, same shape). */
function propsSource() {
  return (n, bytes) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const p = { i, category: 'benchmark', sku: 'SKU-' + (100000 + i), price: 19.99 + i, currency: 'USD', quantity: (i % 5) + 1, tags: ['alpha', 'beta', 'gamma'], note: '' };
      p.note = 'x'.repeat(Math.max(0, bytes - JSON.stringify(p).length));
      out.push(p);
    }
    return out;
  };
}

const metricsMap = async (cdp) => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));

/** 1,000 track calls after ready: the synchronous loop, main-thread time until delivered, requests and bytes. */
async function trackRun(browser, servers, lib, clock) {
  const { ctx, page, cdp } = await newPage(browser, 1);
  const out = {};
  try {
    await page.goto(`${servers.site.url}/${lib.page}.html`);
    await waitReady(page);
    await page.evaluate(`window.__props = (${propsSource().toString()})(${TRACK_N}, ${PROPS_BYTES})`);
    await sleep(SETTLE_MS);
    servers.reset();
    await cdp.send('Performance.enable', { timeDomain: 'threadTicks' }).catch(() => cdp.send('Performance.enable'));
    const m0 = await metricsMap(cdp);
    const { loopMs, startEpoch } = await page.evaluate((n) => {
      const P = window.__props;
      const a = window.analytics;
      const startEpoch = performance.timeOrigin + performance.now();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) a.track('Bench Event', P[i]);
      return { loopMs: performance.now() - t0, startEpoch };
    }, TRACK_N);
    out.loopMs = loopMs;
    const seen = () => new Set(servers.collector.state.messages.filter((m) => m.event === 'Bench Event').map((m) => m.messageId)).size;
    const done = await until(() => seen() >= TRACK_N, WAIT_ALL_MS, 5);
    const m1 = await metricsMap(cdp);
    const posts = servers.api.records.filter((r) => r.method === 'POST');
    out.deliveredMs = posts.length ? Math.max(...posts.map((r) => r.t)) + clock.offset - startEpoch : null;
    // Drain: requests still in flight (e.g. a duplicate) would otherwise go unseen.
    await sleep(300);
    out.taskMs = ((m1.TaskDuration ?? NaN) - (m0.TaskDuration ?? NaN)) * 1000;
    out.scriptMs = ((m1.ScriptDuration ?? NaN) - (m0.ScriptDuration ?? NaN)) * 1000;
    out.complete = !!done;
    const msgs = servers.collector.state.messages.filter((m) => m.event === 'Bench Event');
    out.messagesReceived = msgs.length;
    out.distinct = new Set(msgs.map((m) => m.messageId)).size;
    out.distinctProps = new Set(msgs.map((m) => m.properties && m.properties.i)).size;
    out.propsBytes = msgs.length ? Buffer.byteLength(JSON.stringify(msgs[0].properties)) : null;
    const strip = ({ _requestId, _receivedAt, ...m }) => m;
    const uniq = new Map(msgs.map((m) => [m.messageId, strip(m)]));
    out.messageBytes = [...uniq.values()].reduce((s, m) => s + Buffer.byteLength(JSON.stringify(m)), 0);
    out.avgMessageBytes = out.messageBytes / Math.max(1, uniq.size);
    const allPosts = servers.api.records.filter((r) => r.method === 'POST');
    out.posts = allPosts.length;
    out.preflights = servers.api.records.filter((r) => r.method === 'OPTIONS').length;
    out.bodyBytes = allPosts.reduce((s, r) => s + r.bytes, 0);
    out.maxBody = Math.max(0, ...allPosts.map((r) => r.bytes));
    out.statuses = [...new Set(allPosts.map((r) => r.status))];
    out.paths = [...new Set(allPosts.map((r) => r.path))];
    out.perRequest = servers.collector.state.requests.filter((r) => r.method === 'POST').map((r) => [r.bytes, r.messages.length]);
    out.lowerBound = Math.ceil(out.messageBytes / BATCH_LIMIT);
    return out;
  } catch (err) {
    out.error = String(err && err.message || err);
    return out;
  } finally {
    await cdp.detach().catch(() => {});
    await ctx.close().catch(() => {});
  }
}

/**
 * 20 track calls, then at once `location.href = other page` (navigate: a page without analytics;
 * navigate-same: the same library's page again, which may send what the first page persisted) or `page.close()`.
 */
async function unloadRun(browser, servers, lib, mode, i) {
  const { ctx, page, cdp } = await newPage(browser, 1);
  const tag = `${lib.id}-${mode}-${i}-${Date.now()}`;
  const out = { tag };
  try {
    await page.goto(`${servers.site.url}/${lib.page}.html`);
    await waitReady(page);
    await sleep(SETTLE_MS);
    servers.reset();
    const calls = `(function(){ for (var i = 0; i < ${UNLOAD_N}; i++) window.analytics.track('Unload Event', { tag: ${JSON.stringify(tag)}, i: i }); })()`;
    if (mode === 'navigate' || mode === 'navigate-same') {
      const next = mode === 'navigate' ? '/other.html' : `/${lib.page}.html?after=1`;
      await page.evaluate(`${calls}; location.href = ${JSON.stringify(next)}; 1`).catch(() => {});
      await page.waitForURL((u) => u.pathname + u.search === next || u.pathname === next, { timeout: 10000 }).catch(() => {});
    } else {
      await page.evaluate(`${calls}; 1`);
      await cdp.detach().catch(() => {});
      await page.close();
    }
    const count = () => new Set(servers.collector.state.messages.filter((m) => m.properties && m.properties.tag === tag).map((m) => m.properties.i)).size;
    await until(() => count() >= UNLOAD_N, WAIT_UNLOAD_MS, 20);
    await sleep(200);
    out.delivered = count();
    out.received = servers.collector.state.messages.filter((m) => m.properties && m.properties.tag === tag).length;
    out.requests = servers.api.records.map((r) => `${r.method} ${r.path} ${r.status} ${r.bytes}B ${r.contentType || ''}`);
    return out;
  } catch (err) {
    out.error = String(err && err.message || err);
    out.delivered = out.delivered ?? 0;
    return out;
  } finally {
    await cdp.detach().catch(() => {});
    await ctx.close().catch(() => {});
  }
}

/** Bytes a page loads before the first event leaves, from the requests observed in the first measured run. */
async function byteSizes(raw) {
  const out = {};
  const ourStandard = await ourSnippet({ writeKey: 'YOUR_WRITE_KEY' });
  const segStandard = segmentSnippetFixture();
  const snippetStub = {
    ours: sizes(fs.readFileSync(path.join(DIST_SNAP, 'snippet.min.js'))),
    segment: sizes(segmentSnippet({ apiKey: 'YOUR_WRITE_KEY', load: false, page: false })),
  };
  for (const lib of LIBS) {
    const run = raw.libs[lib.id].ttfe[1].find((r) => r.requestsBefore && r.requestsBefore.every((q) => q.body));
    if (!run) {
      out[lib.id] = { error: 'no measured run with bodies' };
      continue;
    }
    const js = run.requestsBefore.filter((q) => q.type === 'script');
    const settings = run.requestsBefore.filter((q) => q.url.startsWith('/v1/projects/'));
    const other = run.requestsBefore.filter((q) => !js.includes(q) && !settings.includes(q));
    const snippet = sizes(lib.id === 'ours' ? ourStandard : segStandard);
    const jsSizes = js.map((q) => ({ url: q.url, status: q.status, ...sizes(q.body) }));
    const jsTotal = addSizes(...jsSizes);
    const settingsSizes = addSizes(...settings.map((q) => sizes(q.body)));
    const otherSizes = other.map((q) => ({ url: q.url, type: q.type, ...sizes(q.body) }));
    // Every measured run must have made the same requests, else the byte count is of one run only.
    const sets = raw.libs[lib.id].ttfe[1].concat(raw.libs[lib.id].ttfe[THROTTLE]).filter((r) => r.requestsBefore).map((r) => r.requestsBefore.map((q) => q.url).join(' '));
    out[lib.id] = {
      snippet,
      snippetStub: snippetStub[lib.id],
      js: jsSizes,
      jsTotal,
      settings: settingsSizes,
      settingsFiles: settings.map((q) => q.url),
      other: otherSizes,
      total: addSizes(snippet, jsTotal, settingsSizes, ...otherSizes),
      requestsBefore: run.requestsBefore.length,
      sameRequestsEveryRun: new Set(sets).size === 1,
      distinctRequestSets: [...new Set(sets)],
    };
    for (const q of run.requestsBefore) delete q.body; // keep last-run.json small
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

const fmtInt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const fmt1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const fmt2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const ratio = (a, b) => {
  if (!(Number.isFinite(a) && Number.isFinite(b) && b !== 0)) return 'n/a';
  const r = a / b;
  return r !== 0 && Math.abs(r) < 0.1 ? r.toPrecision(2) : r.toFixed(2);
};
const triple = (s) => (s ? `${fmtInt(s.raw)} / ${fmtInt(s.gzip)} / ${fmtInt(s.brotli)}` : 'n/a');
const tripleRatio = (a, b) => (a && b ? `${ratio(a.raw, b.raw)} / ${ratio(a.gzip, b.gzip)} / ${ratio(a.brotli, b.brotli)}` : 'n/a');

function summarize(raw, id) {
  const L = raw.libs[id];
  const ok = (rs) => rs.filter((r) => !r.error);
  const t1 = ok(L.ttfe[1]).map((r) => r.ttfe);
  const t4 = ok(L.ttfe[THROTTLE]).map((r) => r.ttfe);
  const tr = ok(L.track);
  const nav = L.unload.navigate.map((r) => r.delivered ?? 0);
  const cls = L.unload.close.map((r) => r.delivered ?? 0);
  const same = L.unload['navigate-same'].map((r) => r.delivered ?? 0);
  const calib1 = L.ttfe[1].find((r) => r.calibrationMs)?.calibrationMs;
  const calib4 = L.ttfe[THROTTLE].find((r) => r.calibrationMs)?.calibrationMs;
  return {
    ttfe1: median(t1), ttfe1Range: [Math.min(...t1), Math.max(...t1)], ttfe1N: t1.length,
    ttfe4: median(t4), ttfe4Range: [Math.min(...t4), Math.max(...t4)], ttfe4N: t4.length,
    throttleObserved: calib1 && calib4 ? calib4 / calib1 : NaN,
    loopMs: median(tr.map((r) => r.loopMs)),
    taskMs: median(tr.map((r) => r.taskMs)),
    scriptMs: median(tr.map((r) => r.scriptMs)),
    deliveredMs: median(tr.map((r) => r.deliveredMs)),
    posts: median(tr.map((r) => r.posts)),
    preflights: median(tr.map((r) => r.preflights)),
    bodyBytes: median(tr.map((r) => r.bodyBytes)),
    messageBytes: median(tr.map((r) => r.messageBytes)),
    lowerBound: median(tr.map((r) => r.lowerBound)),
    distinct: tr.map((r) => r.distinct),
    trackRuns: tr.length,
    nav, navSum: nav.reduce((a, b) => a + b, 0),
    same, sameSum: same.reduce((a, b) => a + b, 0),
    cls, clsSum: cls.reduce((a, b) => a + b, 0),
    // Messages received more than once (same event of the run), per exit test.
    duplicates: Object.entries(L.unload).map(([mode, rs]) => `${mode} ${rs.reduce((a, r) => a + Math.max(0, (r.received ?? 0) - (r.delivered ?? 0)), 0)}`).join(', '),
    errors: [...L.ttfe[1], ...L.ttfe[THROTTLE], ...L.track, ...L.unload.navigate, ...L.unload['navigate-same'], ...L.unload.close].filter((r) => r.error).map((r) => r.error),
  };
}

function report(raw) {
  const o = summarize(raw, 'ours');
  const s = summarize(raw, 'segment');
  const bo = raw.bytes.ours || {};
  const bs = raw.bytes.segment || {};
  // Segment's standalone.js is served where its snippet asks for it, /analytics.js/v1/<key>/analytics.min.js.
  const fileName = (u) => (u.startsWith('/analytics.js/v1/') ? 'standalone.js' : u.startsWith('/dist/') ? u.slice(1) : path.basename(u));
  const files = (b) => (b.js || []).map((f) => fileName(f.url)).join(' + ') || 'n/a';
  const runs = (xs) => `${xs.reduce((a, b) => a + b, 0)}/${xs.length * UNLOAD_N} (${xs.join(', ')})`;
  const rows = [
    ['Snippet, minified (stub + `load` + `page`), bytes raw / gzip-9 / brotli-11', triple(bo.snippet), triple(bs.snippet), tripleRatio(bo.snippet, bs.snippet)],
    ['  of which the stub alone (no `load`/`page` call)', triple(bo.snippetStub), triple(bs.snippetStub), tripleRatio(bo.snippetStub, bs.snippetStub)],
    [`JS fetched before the first event leaves (${files(bo)} vs ${files(bs)})`, triple(bo.jsTotal), triple(bs.jsTotal), tripleRatio(bo.jsTotal, bs.jsTotal)],
    ['Settings JSON fetched before the first event (analytics-next only)', bo.settingsFiles?.length ? triple(bo.settings) : 'none', bs.settingsFiles?.length ? triple(bs.settings) : 'none', '-'],
    ['**Total before the first event** (snippet + JS + settings)', triple(bo.total), triple(bs.total), tripleRatio(bo.total, bs.total)],
    ['Requests the page makes before the first event (besides the HTML)', fmtInt(bo.requestsBefore), fmtInt(bs.requestsBefore), ratio(bo.requestsBefore, bs.requestsBefore)],
    [`Navigation start → first request at the collector, ms, median of ${o.ttfe1N}/${s.ttfe1N} [min–max]`, `${fmt1(o.ttfe1)} [${fmt1(o.ttfe1Range[0])}–${fmt1(o.ttfe1Range[1])}]`, `${fmt1(s.ttfe1)} [${fmt1(s.ttfe1Range[0])}–${fmt1(s.ttfe1Range[1])}]`, ratio(o.ttfe1, s.ttfe1)],
    [`  same with ${THROTTLE}x CPU throttling`, `${fmt1(o.ttfe4)} [${fmt1(o.ttfe4Range[0])}–${fmt1(o.ttfe4Range[1])}]`, `${fmt1(s.ttfe4)} [${fmt1(s.ttfe4Range[0])}–${fmt1(s.ttfe4Range[1])}]`, ratio(o.ttfe4, s.ttfe4)],
    [`${TRACK_N} \`track\` calls, synchronous main-thread ms (= µs per call), median of ${TRACK_RUNS}`, fmt2(o.loopMs), fmt2(s.loopMs), ratio(o.loopMs, s.loopMs)],
    ['  main-thread busy until all are delivered, ms: TaskDuration (ScriptDuration)', `${fmt1(o.taskMs)} (${fmt1(o.scriptMs)})`, `${fmt1(s.taskMs)} (${fmt1(s.scriptMs)})`, `${ratio(o.taskMs, s.taskMs)} (${ratio(o.scriptMs, s.scriptMs)})`],
    ['  wall time from the first call until the last batch arrived, ms', fmt1(o.deliveredMs), fmt1(s.deliveredMs), ratio(o.deliveredMs, s.deliveredMs)],
    [`  HTTP POSTs for ${TRACK_N} events (+ CORS preflights) / lower bound ceil(message bytes / 500,000)`, `${fmtInt(o.posts)} (+${fmtInt(o.preflights)}) / ${fmtInt(o.lowerBound)}`, `${fmtInt(s.posts)} (+${fmtInt(s.preflights)}) / ${fmtInt(s.lowerBound)}`, ratio(o.posts, s.posts)],
    ['  request body bytes on the wire (sum of message bytes)', `${fmtInt(o.bodyBytes)} (${fmtInt(o.messageBytes)})`, `${fmtInt(s.bodyBytes)} (${fmtInt(s.messageBytes)})`, `${ratio(o.bodyBytes, s.bodyBytes)} (${ratio(o.messageBytes, s.messageBytes)})`],
    [`Delivered of ${UNLOAD_N} tracked right before \`location.href = \` a page without analytics, ${UNLOAD_RUNS} runs`, runs(o.nav), runs(s.nav), ratio(o.navSum, s.navSum)],
    [`  same, but the next page loads the same library (which may send what the first page persisted)`, runs(o.same), runs(s.same), ratio(o.sameSum, s.sameSum)],
    [`Delivered of ${UNLOAD_N} tracked right before \`page.close()\`, ${UNLOAD_RUNS} runs`, runs(o.cls), runs(s.cls), ratio(o.clsSum, s.clsSum)],
  ];
  const head = ['Measure', `svc-analytics ${raw.versions.ours}`, `analytics-next ${raw.versions.segment}`, 'ours / theirs'];
  const table = [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i ? '---:' : '---')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  const m = raw.machine;
  const checks = [];
  for (const [id, x] of [['svc-analytics', o], ['analytics-next', s]]) {
    checks.push(`${id}: ${x.trackRuns} track runs delivered ${x.distinct.join(', ')} distinct messages of ${TRACK_N}; observed CPU slowdown under ${THROTTLE}x throttling ${fmt2(x.throttleObserved)}x (one ~50 ms loop per rate, noisy); duplicate deliveries in the exit tests (at-least-once re-sends): ${x.duplicates}` +
      (x.errors.length ? `; errors: ${[...new Set(x.errors)].join('; ')}` : ''));
  }
  for (const id of ['ours', 'segment']) {
    const b = raw.bytes[id];
    if (b && !b.sameRequestsEveryRun) checks.push(`${id}: the requests before the first event differed between runs: ${b.distinctRequestSets.join(' | ')}`);
  }
  const full = `# Benchmark: svc-analytics vs @segment/analytics-next

Produced by \`npm run bench\` (\`node bench/run.mjs\`) on ${m.date}. Ratios are ours / theirs (below 1 means
svc-analytics is smaller, faster or sends fewer requests; for delivery counts, above 1 means it delivered more).

${table}

Checks of this run: ${checks.join('. ')}.
${raw.build.stale ? '\n**Warning:** src/ was newer than dist/ when this ran; run `npm run build` and re-run.\n' : ''}${raw.build.rebuiltDuringRun ? '\nNote: dist/ was rebuilt while this ran; every number is of the copy of dist/ taken at the start (build ' + raw.build.dist + ').\n' : ''}
## Machine

- CPU: ${m.cpu}, ${m.cores} cores (load average ${m.loadavg} at start, ${m.loadavgEnd} at end)
- Chromium ${m.chromium} (headless), Node ${m.node}, ${m.os}
- svc-analytics at commit ${raw.git}, dist/ content hash ${raw.build.dist} (copied at the start of the run)
- @segment/analytics-next ${raw.versions.segment} (standalone bundle \`dist/umd/standalone.js\`), Segment snippet from @segment/snippet ${raw.versions.segmentSnippet} (SNIPPET_VERSION 5.2.0)
- Whole run: ${fmtInt(raw.elapsedS)} s

## Method and caveats

Everything runs on 127.0.0.1: the project's collector (\`collector/server.mjs\`, any write key), a bench-only reverse
proxy in front of it that both libraries send to (it aliases analytics-next's batch path \`/v1/b\` to \`/v1/batch\` and
timestamps each request's arrival), and \`collector/static.mjs\` serving both pages, our \`dist/\`, and analytics-next's
\`dist/umd\` folder, so both load from the same local origin, cross-origin to the API, uncompressed and uncached
(\`Cache-Control: no-store\`; gzip and brotli sizes are computed offline per file, gzip level 9, brotli quality 11).
Each page inlines its library's own snippet generator output: ours from \`svc-analytics/snippet\` with
\`cdnUrl: '/dist/analytics.min.js'\` and \`apiHost\` set; Segment's standard v5 snippet (\`@segment/snippet\` \`min()\`,
fixture in \`bench/fixtures/\`) with \`useHostForBundles\` so \`analytics._cdn\` points at the local site (\`https\` rewritten
to \`http\`). analytics-next gets CDN settings from \`bench/site/segment-settings.json\` (served at
\`/v1/projects/<key>/settings\`) with only the Segment.io destination, \`apiHost\` = the local API, \`protocol: 'http'\`,
batching on with size 20 / timeout 1000 ms (our defaults are flushAt 20 / flushInterval 1000 ms), and remote metrics
off (\`sampleRate: 0\`, a real workspace usually samples some); the snippet-row byte counts use the unmodified standard
snippets with a placeholder key. Byte counts are of the JS and JSON requests the page actually made before its first
POST to the API, in the first measured unthrottled run (the check above says whether every run made the same ones);
with these settings analytics-next loads no lazy chunk, and a real workspace with destinations, routing rules or
middleware makes it load more (ajs-destination, tsub-middleware, remoteMiddleware chunks, each integration's own
code). Time to first event: a fresh browser context per run, \`page.goto\` of a page whose snippet calls \`page()\`, and
the arrival at the proxy of the first POST minus the page's \`performance.timeOrigin\` (clocks aligned by a measured
offset of ${fmt2(raw.clock.offset)} ms); both libraries wait for their 1 s flush timer, so this is mostly load time plus
the timer; CPU throttling is CDP \`Emulation.setCPUThrottlingRate\` on the fresh page (the observed slowdown of a
fixed loop is in the checks). The ${TRACK_N} calls run after \`ready\` and ${SETTLE_MS} ms of idle, with prebuilt ~${PROPS_BYTES}-byte
property objects, timed with \`performance.now()\` around the synchronous loop (the promises are not awaited); main-thread
busy time is the CDP \`Performance.getMetrics\` TaskDuration/ScriptDuration delta (thread CPU time, \`timeDomain: 'threadTicks'\`) from just before the loop to the
arrival of the last event, and includes the small cost of the CDP calls themselves. (A CPU profile taken while
writing this bench put most of analytics-next's per-call time in the \`document.cookie\` getter, a synchronous IPC in
Chromium, so that row depends on the machine's load more than the others; after the loop most of its time went to its
batching dispatcher's size check, which runs \`encodeURI(JSON.stringify(buffer))\` over the whole buffer per event, and
that is what stretches its delivery time.) Delivery on exit counts distinct
events of the run that reached the collector within ${WAIT_UNLOAD_MS / 1000} s; for the main row the next page has no analytics library, so
events a library persisted for a later page view count as lost; the row below it navigates to a page that loads the
same library again, which may send them. analytics-next sends on exit only the events that already reached its
Segment.io plugin; in our runs the others were neither sent nor left in localStorage, and how many are still in its
asynchronous pipeline when the page goes away depends on the machine's speed, so that row moves between runs. Runs of the two
libraries are interleaved so that machine noise falls on both; on a shared or busy machine the timings (not the
byte, request or delivery counts) move a lot between runs, and medians of ${TTFE_RUNS} are still rough.
Not measured: real network latency and TLS, HTTP compression on the wire, caching across page views, memory use,
and other browsers than Chromium.
`;
  return { table, full };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
