#!/usr/bin/env node
// `npm run bench`: svc-analytics next to Segment's @segment/analytics-next and Customer.io's own current SDK,
// @customerio/cdp-analytics-browser, in one run, in headless Chromium, everything on 127.0.0.1. Prints a table and
// writes bench/RESULTS.md; the raw data of the run goes to bench/.tmp/last-run.json, the CPU profile of our
// track() calls to bench/.tmp/track-profile.cpuprofile (opens in Chrome DevTools' Performance panel). Needs
// `npm run build` first (dist/). Not part of `npm test`.
//
// Environment: CHROMIUM_PATH (else /usr/bin/chromium, else Playwright's own), BENCH_RUNS (TTFE runs per
// library, CPU rate and peer delivery, default 7),
// BENCH_TRACK_RUNS (1,000-track runs, default 3), BENCH_UNLOAD_RUNS (default 3), BENCH_PROFILE=0 (skip the CPU
// profile), BENCH_NO_WRITE=1 (don't write RESULTS.md), BENCH_REPORT_ONLY=1 (measure nothing: write RESULTS.md again
// from bench/.tmp/last-run.json, after a change to the report's code), BENCH_STUB_RUNS (fresh contexts per library
// for the stub's own cost, default 15), BENCH_LH_RUNS (Lighthouse runs per page, default 5), BENCH_ONLY (a comma list
// of the parts to run: ttfe, track, unload, crash, profile, stub, lighthouse, callpath; e.g. `BENCH_ONLY=lighthouse,track npm run
// bench`: prints those parts' tables, writes bench/.tmp/last-run-only.json, leaves RESULTS.md alone).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { chromium } from '@playwright/test';
import { executablePath, args as CHROMIUM_ARGS } from '../scripts/chromium.mjs';
import { startAll, nowMs, ROOT, BENCH, TMP, DIST, DIST_SNAP, DIST_FILES, DIST_MAP, SEGMENT_UMD, CIO_UMD, CIO_SNIPPET_VERSION, SEGMENT_DEFAULT_KEY, CIO_DEFAULT_KEY, segmentSnippet, cioSnippet, ourSnippet, snapshotDist, hashFiles, AMP_BUNDLE, AMP_SNIPPET_FILE, ampSnippet, ampVersion, PAGE_LIBS } from './servers.mjs';
import { analyzeProfile } from './profile.mjs';
import { buildPlain, measure as measureCallPath } from '../scripts/call-path.mjs';
import { launchChrome, lighthouseRun, bootupOf, LH_LONG_TASK_MS } from './lighthouse.mjs';
import { crashRun, crashCell, crashChecks, CRASH_N, CRASH_WAIT_MS } from './crash.mjs';

const TTFE_RUNS = intEnv('BENCH_RUNS', 7);
const TRACK_RUNS = intEnv('BENCH_TRACK_RUNS', 3);
const STUB_RUNS = intEnv('BENCH_STUB_RUNS', 15);
const LH_RUNS = intEnv('BENCH_LH_RUNS', 5);
const PARTS = ['ttfe', 'track', 'unload', 'crash', 'profile', 'stub', 'lighthouse', 'callpath'];
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((x) => x.trim()).filter(Boolean)) : null;
if (ONLY) for (const p of ONLY) if (!PARTS.includes(p)) throw new Error(`BENCH_ONLY: unknown part ${p} (parts: ${PARTS.join(', ')})`);
const has = (part) => !ONLY || ONLY.has(part);
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
const PROFILE = process.env.BENCH_PROFILE !== '0';
// track() calls in the profiled loop: 4,000 of ~1,110 bytes stay under our default queue.maxBytes (5,000,000), so none
// is refused (5,000 would be: the profile would partly be of the queue_full path).
const PROFILE_N = 4000;
const PROFILE_INTERVAL_US = 50; // sampling interval of the CPU profile
const PROFILE_TOP = 12; // entries listed in RESULTS.md

/** `global`: the window property the library's snippet and bundle use. `short`: its name in tables. */
const LIBS = [
  { id: 'ours', name: 'svc-analytics', short: 'svc-analytics', page: 'ours', global: 'analytics' },
  { id: 'segment', name: '@segment/analytics-next', short: 'analytics-next', page: 'segment', global: 'analytics' },
  { id: 'cio', name: '@customerio/cdp-analytics-browser', short: 'Customer.io', page: 'cio', global: 'cioanalytics' },
  // Amplitude's wire format is not the Data Pipelines one (the API front translates it, see servers.mjs): it takes part
  // in the track and page-exit rows, the stub cost and Lighthouse, not in the time-to-first-event runs.
  { id: 'amplitude', name: '@amplitude/analytics-browser', short: 'Amplitude', page: 'amplitude', global: 'amplitude', ttfe: false },
];
const PEERS = LIBS.filter((l) => l.id !== 'ours');
/** Run i's order of the libraries: rotated each time, so that no library always goes first (or after another). */
const orderFor = (i) => LIBS.map((_, k) => LIBS[(k + i) % LIBS.length]);
/**
 * The time-to-first-event runs measure each peer twice: batched (its settings above, as in every other row) and in
 * its default delivery (the same settings without `deliveryStrategy`, under a write key of its own: each event is
 * sent at once). Ours has one delivery, its default.
 */
const DEFAULT_VARIANTS = PEERS.filter((l) => l.ttfe !== false).map((l) => ({ ...l, variant: 'default', page: `${l.page}-default`, key: l.id === 'segment' ? SEGMENT_DEFAULT_KEY : CIO_DEFAULT_KEY }));
/**
 * And once more on a page with a source middleware (a pass-through added in the snippet before its `page()`): ours,
 * and each peer in its default delivery (issue 28: the first event of such a page no later than the best peer's).
 */
const MW_VARIANTS = [
  { ...LIBS[0], variant: 'mw', page: 'ours-mw' },
  ...DEFAULT_VARIANTS.map((l) => ({ ...l, variant: 'mw', page: `${l.page}-mw` })),
];
const TTFE_LIBS = [...LIBS.filter((l) => l.ttfe !== false), ...DEFAULT_VARIANTS, ...MW_VARIANTS];
const ttfeOrderFor = (i) => TTFE_LIBS.map((_, k) => TTFE_LIBS[(k + i) % TTFE_LIBS.length]);
const ttfeSlot = (raw, t) => (t.variant == 'mw' ? raw.libs[t.id].ttfeMw : t.variant ? raw.libs[t.id].ttfeDefault : raw.libs[t.id].ttfe);
const ttfeName = (t) => (t.variant ? `${t.id}-${t.variant}` : t.id);


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
  for (const [dir, pkg] of [[SEGMENT_UMD, '@segment/analytics-next'], [CIO_UMD, '@customerio/cdp-analytics-browser']]) {
    if (!fs.existsSync(path.join(dir, 'standalone.js'))) {
      console.error(`bench: node_modules/${pkg} is missing; run \`npm install\`.`);
      process.exit(1);
    }
  }
  const stale = newestMtime(path.join(ROOT, 'src')) > fs.statSync(path.join(DIST, 'analytics.min.js')).mtimeMs;
  if (stale) log('warning: src/ is newer than dist/analytics.min.js; results are for the old build (run `npm run build`).');
  fs.mkdirSync(TMP, { recursive: true });
  return { stale, dist: snapshotDist() };
}

/** Segment's standard v5 snippet, generated by the @segment/snippet dev dependency's min() (not committed: it is theirs). */
function segmentSnippetFixture() {
  return segmentSnippet({ apiKey: 'YOUR_WRITE_KEY' });
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

/**
 * The simulator's long-run section of RESULTS.md (`## Delivery simulator...`, written by hand from `npm run sim`: the
 * bench does not run it) carried over into the new report, before its Machine section.
 */
function keepSimulator(full) {
  let old = '';
  try {
    old = fs.readFileSync(path.join(BENCH, 'RESULTS.md'), 'utf8');
  } catch {
    return full;
  }
  const m = old.match(/^## Delivery simulator[^]*?(?=^## )/m);
  const at = full.search(/^## Machine/m);
  return m && at >= 0 && !full.includes(m[0]) ? full.slice(0, at) + m[0] + full.slice(at) : full;
}

/** BENCH_REPORT_ONLY=1: RESULTS.md from the last run's raw data, with the same settings. */
function reportOnly() {
  const raw = JSON.parse(fs.readFileSync(path.join(TMP, 'last-run.json'), 'utf8'));
  const now = { TTFE_RUNS, TRACK_RUNS, UNLOAD_RUNS, TRACK_N, UNLOAD_N, PROPS_BYTES, THROTTLE };
  for (const [k, v] of Object.entries(now)) {
    if (raw.config[k] !== v) throw new Error(`bench/.tmp/last-run.json was made with ${k}=${raw.config[k]}, not ${v}: set the same environment`);
  }
  const md = report(raw);
  console.log(md.table);
  fs.writeFileSync(path.join(BENCH, 'RESULTS.md'), keepSimulator(md.full));
  log('report in bench/RESULTS.md, from bench/.tmp/last-run.json');
}

async function main() {
  if (process.env.BENCH_REPORT_ONLY) return reportOnly();
  const build = checkBuild();
  fs.mkdirSync(TMP, { recursive: true });
  const t0 = nowMs();
  const servers = await startAll();
  const browser = await chromium.launch({ headless: true, executablePath, args: CHROMIUM_ARGS });
  const raw = { config: { TTFE_RUNS, TRACK_RUNS, UNLOAD_RUNS, TRACK_N, UNLOAD_N, PROPS_BYTES, THROTTLE }, libs: {} };
  try {
    const env = machine(browser.version());
    raw.machine = env;
    raw.git = gitDescribe();
    raw.versions = {
      ours: pkgVersion('package.json'),
      segment: pkgVersion('node_modules/@segment/analytics-next/package.json'),
      segmentSnippet: pkgVersion('node_modules/@segment/snippet/package.json'),
      cio: pkgVersion('node_modules/@customerio/cdp-analytics-browser/package.json'),
      cioSnippet: CIO_SNIPPET_VERSION,
      amplitude: ampVersion(),
      lighthouse: pkgVersion('node_modules/lighthouse/package.json'),
    };
    log(`Chromium ${env.chromium}, ${env.cpu} x${env.cores}, load ${env.loadavg}`);

    const clock = await clockOffset(browser, servers);
    raw.clock = clock;
    log(`page clock - node clock: ${clock.offset.toFixed(2)} ms (rtt ${clock.rtt.toFixed(2)} ms)`);

    for (const lib of LIBS) raw.libs[lib.id] = { ttfe: { 1: [], [THROTTLE]: [] }, track: [], unload: { navigate: [], 'navigate-same': [], close: [] }, crash: [] };
    for (const v of DEFAULT_VARIANTS) raw.libs[v.id].ttfeDefault = { 1: [], [THROTTLE]: [] };
    for (const v of MW_VARIANTS) raw.libs[v.id].ttfeMw = { 1: [], [THROTTLE]: [] };

    raw.phases = {};
    let tPhase = nowMs();
    const phase = (name) => {
      raw.phases[name] = Math.round((nowMs() - tPhase) / 100) / 10;
      log(`${name}: ${raw.phases[name]} s`);
      tPhase = nowMs();
    };
    // Warm-up (not recorded): first launch of each bundle, disk cache of the server.
    if (has('ttfe')) for (const t of TTFE_LIBS) await ttfeRun(browser, servers, t, 1, clock, true);

    // Time to first event, interleaved so that machine noise hits all libraries (and both peer deliveries) alike.
    for (const rate of has('ttfe') ? [1, THROTTLE] : []) {
      for (let i = 0; i < TTFE_RUNS; i++) {
        for (const t of ttfeOrderFor(i)) {
          const r = await ttfeRun(browser, servers, t, rate, clock, false, i === 0);
          ttfeSlot(raw, t)[rate].push(r);
          log(`ttfe ${ttfeName(t)} x${rate} #${i + 1}: ${r.ttfe?.toFixed(1)} ms${r.error ? ' ERROR ' + r.error : ''}`);
        }
      }
    }

    if (has('ttfe')) phase('time to first event');
    for (let i = 0; i < (has('track') ? TRACK_RUNS : 0); i++) {
      for (const lib of orderFor(i)) {
        const r = await trackRun(browser, servers, lib, clock);
        raw.libs[lib.id].track.push(r);
        log(`track ${lib.id} #${i + 1}: loop ${r.loopMs?.toFixed(2)} ms, busy ${r.taskMs?.toFixed(1)} ms, ${r.posts} POSTs, ${r.distinct}/${TRACK_N} delivered${r.error ? ' ERROR ' + r.error : ''}`);
      }
    }

    if (has('track')) phase('1,000 tracks');
    for (const mode of has('unload') ? ['navigate', 'navigate-same', 'close'] : []) {
      for (let i = 0; i < UNLOAD_RUNS; i++) {
        for (const lib of orderFor(i)) {
          const r = await unloadRun(browser, servers, lib, mode, i);
          raw.libs[lib.id].unload[mode].push(r);
          log(`unload ${mode} ${lib.id} #${i + 1}: ${r.delivered}/${UNLOAD_N}${r.error ? ' ERROR ' + r.error : ''}`);
        }
      }
    }

    if (has('unload')) phase('page exit');
    // Renderer crash (issue 20): of CRASH_N stored with a long interval, how many arrive with no page reopened.
    for (let i = 0; i < (has('crash') ? UNLOAD_RUNS : 0); i++) {
      for (const lib of orderFor(i)) {
        const r = await crashRun(browser, servers, lib, i, waitReady);
        raw.libs[lib.id].crash.push(r);
        log(`crash ${lib.id} #${i + 1}: ${r.delivered}/${CRASH_N} within ${CRASH_WAIT_MS / 1000} s (${r.sentBefore ?? '?'} before the crash)${r.error ? ' ERROR ' + r.error : ''}`);
      }
    }
    if (has('crash')) phase('renderer crash');
    if (PROFILE && has('profile')) {
      raw.profile = await profileRun(browser, servers, LIBS[0]);
      const p = raw.profile;
      log(`profile ours: ${PROFILE_N} calls, loop ${p.loopMs?.toFixed(1)} ms under the profiler, ${p.analysis?.windowSamples ?? 0} samples in the loop, ${p.distinct}/${PROFILE_N} delivered${p.error ? ' ERROR ' + p.error : ''}`);
      phase('profile');
    }

    if (has('stub')) {
      raw.stub = await stubRuns(browser, servers);
      phase('stub cost');
    }
    // The call path of one track() to fetch (scripts/call-path.mjs): the code's structure, measured once.
    if (has('callpath')) {
      const page = await browser.newPage();
      try {
        raw.callPath = await measureCallPath(page, await buildPlain());
        log(`call path: ${raw.callPath.calls} calls through ${raw.callPath.files} files from track() to fetch`);
      } catch (e) {
        raw.callPath = { error: String(e) };
        log(`call path: ERROR ${e}`);
      } finally {
        await page.close();
      }
      phase('call path');
    }
    if (has('lighthouse')) {
      raw.lighthouse = await lighthouseRuns(servers);
      phase('lighthouse');
    }
    if (ONLY) {
      raw.machine.loadavgEnd = os.loadavg().map((x) => x.toFixed(2)).join(' ');
      raw.elapsedS = (nowMs() - t0) / 1000;
      fs.writeFileSync(path.join(TMP, 'last-run-only.json'), JSON.stringify(raw, null, 1));
      console.log(partialReport(raw));
      log(`done in ${raw.elapsedS.toFixed(0)} s (BENCH_ONLY=${[...ONLY].join(',')}); raw data in bench/.tmp/last-run-only.json, RESULTS.md not written`);
      return;
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
    if (!process.env.BENCH_NO_WRITE) fs.writeFileSync(path.join(BENCH, 'RESULTS.md'), keepSimulator(md.full));
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

async function waitReady(page, lib) {
  if (lib.id === 'amplitude') {
    // The snippet's init() resolves once the real SDK has replayed it (servers.mjs ampInit: window.__ampReady).
    await page.waitForFunction(() => window.amplitude && typeof window.amplitude.runQueuedFunctions === 'function', null, { timeout: READY_MS });
    await page.evaluate(() => window.__ampReady);
    return;
  }
  await page.waitForFunction((g) => window[g] && window[g].initialized === true, lib.global, { timeout: READY_MS });
  await page.evaluate((g) => new Promise((resolve) => window[g].ready(() => resolve())), lib.global);
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
    await until(() => first.status != null, 2000);
    out.firstStatus = first.status;
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
  const reqs = [];
  page.on('request', (r) => reqs.push(`${r.method()} ${r.resourceType()} ${r.url()}`));
  try {
    await page.goto(`${servers.site.url}/${lib.page}.html`);
    await waitReady(page, lib);
    await page.evaluate(`window.__props = (${propsSource().toString()})(${TRACK_N}, ${PROPS_BYTES})`);
    await sleep(SETTLE_MS);
    servers.reset();
    await cdp.send('Performance.enable', { timeDomain: 'threadTicks' }).catch(() => cdp.send('Performance.enable'));
    const m0 = await metricsMap(cdp);
    const { loopMs, startEpoch } = await page.evaluate(([n, g]) => {
      const P = window.__props;
      const a = window[g];
      const startEpoch = performance.timeOrigin + performance.now();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) a.track('Bench Event', P[i]);
      return { loopMs: performance.now() - t0, startEpoch };
    }, [TRACK_N, lib.global]);
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
    out.allPageRequests = reqs;
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
 * A CPU profile of our track() calls (CDP Profiler, sampling every PROFILE_INTERVAL_US µs): PROFILE_N calls after
 * ready and SETTLE_MS of idle, in one synchronous loop inside a named function, so that the samples taken while
 * it ran can be told apart. The raw profile goes to bench/.tmp/track-profile.cpuprofile.
 */
async function profileRun(browser, servers, lib) {
  const { ctx, page, cdp } = await newPage(browser, 1);
  const out = { calls: PROFILE_N, intervalUs: PROFILE_INTERVAL_US };
  try {
    await page.goto(`${servers.site.url}/${lib.page}.html`);
    await waitReady(page, lib);
    await page.evaluate(`window.__props = (${propsSource().toString()})(${PROFILE_N}, ${PROPS_BYTES})`);
    // Named, so that the profile shows which samples are the loop's (see profile.mjs).
    await page.evaluate(`window.__benchTrackLoop = function benchTrackLoop(n, g) {
      var P = window.__props, a = window[g], t0 = performance.now();
      for (var i = 0; i < n; i++) a.track('Bench Event', P[i]);
      return performance.now() - t0;
    }; 1`);
    await sleep(SETTLE_MS);
    servers.reset();
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: PROFILE_INTERVAL_US });
    await cdp.send('Profiler.start');
    out.loopMs = await page.evaluate(([n, g]) => window.__benchTrackLoop(n, g), [PROFILE_N, lib.global]);
    const { profile } = await cdp.send('Profiler.stop');
    await cdp.send('Profiler.disable').catch(() => {});
    fs.writeFileSync(path.join(TMP, 'track-profile.cpuprofile'), JSON.stringify(profile));
    const bundle = fs.readFileSync(path.join(DIST_SNAP, 'analytics.min.js'), 'utf8');
    const mapFile = path.join(DIST_SNAP, DIST_MAP);
    const map = fs.existsSync(mapFile) ? JSON.parse(fs.readFileSync(mapFile, 'utf8')) : null;
    out.sourceMap = !!map;
    out.analysis = analyzeProfile(profile, { loopFunction: 'benchTrackLoop', bundleUrlEnd: '/dist/analytics.min.js', bundle, map, top: PROFILE_TOP });
    // The calls must still have been accepted and delivered (a profile of refused calls would be of the wrong path).
    const seen = () => new Set(servers.collector.state.messages.filter((m) => m.event === 'Bench Event').map((m) => m.messageId)).size;
    await until(() => seen() >= PROFILE_N, WAIT_ALL_MS, 10);
    out.distinct = seen();
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
    await waitReady(page, lib);
    await sleep(SETTLE_MS);
    servers.reset();
    const calls = `(function(){ for (var i = 0; i < ${UNLOAD_N}; i++) window[${JSON.stringify(lib.global)}].track('Unload Event', { tag: ${JSON.stringify(tag)}, i: i }); })()`;
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

/**
 * The inline stub's own cost: STUB_RUNS fresh contexts per library, unthrottled, interleaved; each loads
 * stub-<lib>.html, whose one inline script times (performance.now) the stub's definition and then the 7 calls a
 * product page makes before the bundle arrives (load, page, 5 tracks; the bundle URL answers an empty script).
 */
async function stubRuns(browser, servers) {
  const out = Object.fromEntries(PAGE_LIBS.map((l) => [l.id, []]));
  for (let i = 0; i < STUB_RUNS; i++) {
    for (let k = 0; k < PAGE_LIBS.length; k++) {
      const lib = PAGE_LIBS[(k + i) % PAGE_LIBS.length];
      const ctx = await browser.newContext();
      try {
        const page = await ctx.newPage();
        await page.goto(`${servers.site.url}/stub-${lib.id}.html`, { waitUntil: 'load', timeout: READY_MS });
        const r = await page.evaluate(() => window.__stub);
        out[lib.id].push(r ? { ...r, total: r.define + r.calls } : { error: 'no timing' });
      } catch (err) {
        out[lib.id].push({ error: String(err && err.message || err) });
      } finally {
        await ctx.close().catch(() => {});
      }
    }
  }
  for (const l of PAGE_LIBS) log(`stub ${l.id}: total ${fmt2(median(out[l.id].map((r) => r.total)))} ms (define ${fmt2(median(out[l.id].map((r) => r.define)))}, calls ${fmt2(median(out[l.id].map((r) => r.calls)))})`);
  return out;
}

/** Which bootup-time rows are the library's own scripts (the inline snippet is in the page's own row). */
const LH_SCRIPT = {
  ours: (u) => u.endsWith('/dist/analytics.min.js'),
  segment: (u) => u.includes('/analytics.js/v1/') || u.includes('/analytics-next/bundles/'),
  cio: (u) => u.includes('/v1/analytics-js/'),
  amplitude: (u) => u.includes('/libs/analytics-browser-'),
};

/**
 * Lighthouse (bench/lighthouse.mjs): LH_RUNS runs of each lh-<lib>.html and of lh-none.html, the order rotated run
 * by run, in one Chromium; then one more run of ours with the V8 sampling profiler in the trace, for the names of
 * what runs in our long tasks (kept apart: the profiler slows the page down).
 */
async function lighthouseRuns(servers) {
  const pages = ['none', ...PAGE_LIBS.map((l) => l.id)];
  const out = { runs: Object.fromEntries(pages.map((p) => [p, []])), config: { runs: LH_RUNS } };
  const bundle = fs.readFileSync(path.join(DIST_SNAP, 'analytics.min.js'), 'utf8');
  const mapFile = path.join(DIST_SNAP, DIST_MAP);
  const map = fs.existsSync(mapFile) ? JSON.parse(fs.readFileSync(mapFile, 'utf8')) : null;
  let chrome;
  try {
    chrome = await launchChrome(executablePath || '/usr/bin/chromium');
    for (let i = 0; i < LH_RUNS; i++) {
      for (let k = 0; k < pages.length; k++) {
        const id = pages[(k + i) % pages.length];
        let r;
        try {
          r = await lighthouseRun(`${servers.site.url}/lh-${id}.html`, chrome.port, id === 'ours' ? { bundle, map } : {});
        } catch (err) {
          r = { error: String(err && err.message || err) };
        }
        if (id !== 'none' && !r.error) r.lib = bootupOf(r, LH_SCRIPT[id]);
        if (id !== 'ours') delete r.ourLongTasks;
        out.runs[id].push(r);
        log(`lighthouse ${id} #${i + 1}: TBT ${fmt1(r.tbt)} ms, bootup ${fmt1(r.lib?.total)} ms${r.error || r.runtimeError ? ' ERROR ' + (r.error || r.runtimeError) : ''}`);
      }
    }
    try {
      const r = await lighthouseRun(`${servers.site.url}/lh-ours.html`, chrome.port, { bundle, map, profile: true });
      out.profiled = { tbt: r.tbt, ourLongTasks: r.ourLongTasks, lib: bootupOf(r, LH_SCRIPT.ours) };
      log(`lighthouse ours with the sampling profiler: TBT ${fmt1(r.tbt)} ms, ${r.ourLongTasks?.tasks?.length ?? 0} long tasks of ours`);
    } catch (err) {
      out.profiled = { error: String(err && err.message || err) };
    }
    out.chromium = chrome.port ? 'chrome-launcher' : '';
  } finally {
    if (chrome) await chrome.kill();
  }
  return out;
}

/** Bytes a page loads before the first event leaves, from the requests observed in the first measured run. */
async function byteSizes(raw) {
  const out = {};
  const standard = {
    ours: await ourSnippet({ writeKey: 'YOUR_WRITE_KEY' }),
    segment: segmentSnippetFixture(),
    cio: cioSnippet({ writeKey: 'YOUR_WRITE_KEY' }),
  };
  const snippetStub = {
    ours: sizes(fs.readFileSync(path.join(DIST_SNAP, 'snippet.min.js'))),
    segment: sizes(segmentSnippet({ apiKey: 'YOUR_WRITE_KEY', load: false, page: false })),
    cio: sizes(cioSnippet({ writeKey: 'YOUR_WRITE_KEY', load: false, page: false })),
  };
  for (const lib of LIBS) {
    if (lib.id === 'amplitude') {
      // No time-to-first-event runs: the files its page loads (checked in the track runs' requests), counted offline.
      // Snippet: Amplitude's official one + `amplitude.init(key)` + a Page Viewed track; stub: the official one as shipped.
      const snippet = sizes(fs.readFileSync(AMP_SNIPPET_FILE, 'utf8').trim() + 'amplitude.init("YOUR_API_KEY");amplitude.track("Page Viewed");');
      const jsTotal = sizes(fs.readFileSync(AMP_BUNDLE));
      out[lib.id] = { snippet, snippetStub: sizes(fs.readFileSync(AMP_SNIPPET_FILE, 'utf8').trim()), js: [{ url: `/libs/analytics-browser-${ampVersion()}-min.js`, ...jsTotal }], jsTotal, settings: null, settingsFiles: [], other: [], total: addSizes(snippet, jsTotal), requestsBefore: 1, sameRequestsEveryRun: true, distinctRequestSets: [] };
      continue;
    }
    const run = raw.libs[lib.id].ttfe[1].find((r) => r.requestsBefore && r.requestsBefore.every((q) => q.body));
    if (!run) {
      out[lib.id] = { error: 'no measured run with bodies' };
      continue;
    }
    const js = run.requestsBefore.filter((q) => q.type === 'script');
    const settings = run.requestsBefore.filter((q) => q.url.startsWith('/v1/projects/'));
    const other = run.requestsBefore.filter((q) => !js.includes(q) && !settings.includes(q));
    const snippet = sizes(standard[lib.id]);
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
  // The peers' default-delivery variants: the same bundle, a settings file without `deliveryStrategy`.
  for (const v of DEFAULT_VARIANTS) {
    const D = raw.libs[v.id].ttfeDefault;
    const run = D[1].find((r) => r.requestsBefore && r.requestsBefore.every((q) => q.body));
    if (!run || !out[v.id] || out[v.id].error) continue;
    const js = run.requestsBefore.filter((q) => q.type === 'script');
    const settings = run.requestsBefore.filter((q) => q.url.startsWith('/v1/projects/'));
    const sets = D[1].concat(D[THROTTLE]).filter((r) => r.requestsBefore).map((r) => r.requestsBefore.map((q) => q.url).join(' '));
    out[v.id].defaultDelivery = {
      jsTotal: addSizes(...js.map((q) => sizes(q.body))),
      settings: addSizes(...settings.map((q) => sizes(q.body))),
      requestsBefore: run.requestsBefore.length,
      sameRequestsEveryRun: new Set(sets).size === 1,
      distinctRequestSets: [...new Set(sets)],
    };
    for (const q of run.requestsBefore) delete q.body;
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

function mwSummary(M) {
  const runs = M ? [...M[1], ...M[THROTTLE]].filter((r) => !r.error) : [];
  const m1 = runs.filter((r) => r.rate === 1).map((r) => r.ttfe);
  const m4 = runs.filter((r) => r.rate === THROTTLE).map((r) => r.ttfe);
  return {
    ttfeM1: median(m1), ttfeM1Range: [Math.min(...m1), Math.max(...m1)], ttfeM1N: m1.length,
    ttfeM4: median(m4), ttfeM4Range: [Math.min(...m4), Math.max(...m4)], ttfeM4N: m4.length,
    mwPageFirst: runs.filter((r) => r.firstMessages && r.firstMessages[0] === 'page').length,
    mwRuns: runs.length,
  };
}

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
  // Default delivery: ours has only one (the same runs); a peer's own runs without `deliveryStrategy`.
  const D = id === 'ours' ? L.ttfe : L.ttfeDefault || { 1: [], [THROTTLE]: [] };
  const d1 = ok(D[1]).map((r) => r.ttfe);
  const d4 = ok(D[THROTTLE]).map((r) => r.ttfe);
  const dRuns = id === 'ours' ? [] : [...D[1], ...D[THROTTLE]];
  const dOk = ok(dRuns);
  return {
    ttfe1: median(t1), ttfe1Range: [Math.min(...t1), Math.max(...t1)], ttfe1N: t1.length,
    ttfe4: median(t4), ttfe4Range: [Math.min(...t4), Math.max(...t4)], ttfe4N: t4.length,
    ttfeD1: median(d1), ttfeD1Range: [Math.min(...d1), Math.max(...d1)], ttfeD1N: d1.length,
    ttfeD4: median(d4), ttfeD4Range: [Math.min(...d4), Math.max(...d4)], ttfeD4N: d4.length,
    // With a source middleware (ours; the peers in their default delivery), and whether a page message arrived first.
    ...mwSummary(L.ttfeMw),
    // What the default-delivery runs sent first: path, status, whether a page message reached the collector.
    defaultRuns: dRuns.length,
    defaultPaths: [...new Set(dOk.map((r) => r.firstPath))],
    defaultStatuses: [...new Set(dOk.map((r) => r.firstStatus))],
    defaultPageFirst: dOk.filter((r) => r.firstMessages && r.firstMessages[0] === 'page').length,
    defaultPreflight: dOk.filter((r) => r.preflightBefore > 0).length,
    // The same for every run (batched, and ours): did the page message arrive?
    pageDelivered: ok([...L.ttfe[1], ...L.ttfe[THROTTLE]]).filter((r) => r.firstMessages && r.firstMessages.includes('page')).length,
    ttfeRuns: ok([...L.ttfe[1], ...L.ttfe[THROTTLE]]).length,
    ttfePreflight: ok([...L.ttfe[1], ...L.ttfe[THROTTLE]]).filter((r) => r.preflightBefore > 0).length,
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
    crash: L.crash || [], crashSum: (L.crash || []).reduce((a, r) => a + (r.delivered ?? 0), 0),
    // Messages received more than once (same event of the run), per exit test.
    duplicates: Object.entries(L.unload).map(([mode, rs]) => `${mode} ${rs.reduce((a, r) => a + Math.max(0, (r.received ?? 0) - (r.delivered ?? 0)), 0)}`).join(', '),
    trackDuplicates: tr.reduce((a, r) => a + Math.max(0, (r.messagesReceived ?? 0) - (r.distinct ?? 0)), 0),
    // Requests a page made anywhere but 127.0.0.1 (none expected: that would be a real CDN or API the bench missed).
    offHost: [...new Set([...L.ttfe[1], ...L.ttfe[THROTTLE], ...dRuns, ...L.track].flatMap((r) => r.allPageRequests || []).filter((q) => !/^\S+ \S+ (http:\/\/127\.0\.0\.1[:/]|data:)/.test(q)))],
    errors: [...L.ttfe[1], ...L.ttfe[THROTTLE], ...dRuns, ...L.track, ...L.unload.navigate, ...L.unload['navigate-same'], ...L.unload.close].filter((r) => r.error).map((r) => r.error),
  };
}

// Today's goals (issue 28; CONTRACT section 1, core and edges): the bundle a page that only loads, identifies,
// tracks, pages and groups fetches before its first event; the bundle plus every edge chunk a page with all features
// loads (the debug and plan chunks aside); track() no slower than Amplitude's in the same run. (Issue 8's 7,000 B and
// 10 µs are no longer goals.)
const GOAL_BUSY_MS = 100;
const GOAL_BROTLI = 12000;
const AIM_BROTLI = 10000;
const GOAL_ALL_BROTLI = 17500;
/** From the API method to `fetch`: at most this many calls, through at most this many files (issue 28). */
const GOAL_CALLS = 15;
const GOAL_CALL_FILES = 8;
/** The edge chunks an all-features page loads besides the bundle (not the debug and plan chunks). */
const EDGE_CHUNKS = ['analytics.extend.min.js', 'analytics.sources.min.js'];
const brotliOf = (file) => zlib.brotliCompressSync(fs.readFileSync(path.join(DIST, file)), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

/** The peer with the lowest finite value of `f(summary, bytes)`: `{ lib, value }`, or null. */
function bestPeer(sums, bytes, f) {
  let best = null;
  for (const lib of PEERS) {
    const v = f(sums[lib.id], bytes[lib.id] || {});
    if (Number.isFinite(v) && (!best || v < best.value)) best = { lib, value: v };
  }
  return best;
}

const pctOver = (a, b) => `${Math.round((100 * (a - b)) / b)}%`;
/** "met" or "missed by …" for a value that must stay at or under `goal`. */
function goalStatus(value, goal, unit, fmt) {
  if (!Number.isFinite(value)) return 'n/a';
  return value <= goal ? `met (${fmt(goal - value)} ${unit} under)` : `**missed** by ${fmt(value - goal)} ${unit} (${ratio(value, goal)}x the goal)`;
}

/** A time-to-first-event goal row: ours against the best peer at 1x and at THROTTLE x, from the summaries' `k1` and `k4`. */
function firstEventRow(sums, bytes, k1, k4, label) {
  const o = sums.ours;
  const b1 = bestPeer(sums, bytes, (x) => x[k1]);
  const b4 = bestPeer(sums, bytes, (x) => x[k4]);
  let peer = 'n/a', status = 'n/a';
  if (b1 && b4) {
    peer = b1.lib === b4.lib ? `${b1.lib.short}: ${fmt1(b1.value)} / ${fmt1(b4.value)}` : `${b1.lib.short} ${fmt1(b1.value)} / ${b4.lib.short} ${fmt1(b4.value)}`;
    if (Number.isFinite(o[k1]) && Number.isFinite(o[k4])) {
      const miss = [];
      for (const [rate, ours, best] of [['1x', o[k1], b1], [`${THROTTLE}x`, o[k4], b4]]) {
        if (ours > best.value) miss.push(`at ${rate} by ${fmt1(ours - best.value)} ms (+${pctOver(ours, best.value)})`);
      }
      status = miss.length ? `**missed** ${miss.join(', ')}` : `met (${fmt1(b1.value - o[k1])} / ${fmt1(b4.value - o[k4])} ms earlier)`;
    }
  }
  return [label, `${fmt1(o[k1])} / ${fmt1(o[k4])}`, peer, `${ratio(o[k1], b1?.value)} / ${ratio(o[k4], b4?.value)}`, 'no later than the best peer', status];
}

/** The goals of issue 28: ours against the best of the peers, row by row. */
function summaryRows(raw, sums) {
  const o = sums.ours;
  const bytes = raw.bytes;
  const rows = [];

  // Against the peers in their default delivery (each event sent at once), as they run unless batching is turned
  // on; their batched time to first event (the 1 s timer) is in the "All measures" table.
  rows.push(firstEventRow(sums, bytes, 'ttfeD1', 'ttfeD4', `navigation to the first event at the API, 1x / ${THROTTLE}x CPU (ms, median of ${TTFE_RUNS}); peers in their default delivery (no \`deliveryStrategy\`: each event sent at once)`));
  // The same, on a page whose snippet adds a source middleware before its page() (ours fetches its middleware chunk).
  rows.push(firstEventRow(sums, bytes, 'ttfeM1', 'ttfeM4', `the same, on a page with a source middleware (a pass-through added in the snippet before \`page()\`; ours loads its middleware chunk), 1x / ${THROTTLE}x CPU (ms, median of ${TTFE_RUNS})`));

  const us = (x) => (x.loopMs * 1000) / TRACK_N;
  const bu = bestPeer(sums, bytes, us);
  rows.push(['synchronous cost of one `track()` after ready (µs)', fmt1(us(o)), bu ? `${bu.lib.short}: ${fmt1(bu.value)}` : 'n/a', ratio(us(o), bu?.value), 'no more than the best peer', !bu || !Number.isFinite(us(o)) ? 'n/a' : us(o) <= bu.value ? 'met' : `**missed** by ${fmt1(us(o) - bu.value)} µs`]);

  const bb = bestPeer(sums, bytes, (x) => x.taskMs);
  rows.push([`main thread for ${fmtInt(TRACK_N)} tracks, until delivered (ms)`, fmt1(o.taskMs), bb ? `${bb.lib.short}: ${fmt1(bb.value)}` : 'n/a', ratio(o.taskMs, bb?.value), `at most ${GOAL_BUSY_MS} ms`, goalStatus(o.taskMs, GOAL_BUSY_MS, 'ms', fmt1)]);

  const amp = sums.amplitude;
  if (amp && Number.isFinite(us(amp))) {
    rows.push(['`track()` vs Amplitude: synchronous µs per call, measured in the same run', fmt1(us(o)), `Amplitude: ${fmt1(us(amp))}`, ratio(us(o), us(amp)), "no more than Amplitude's", us(o) <= us(amp) ? `met (${fmt1(us(amp) - us(o))} µs less)` : `**missed** by ${fmt1(us(o) - us(amp))} µs (+${pctOver(us(o), us(amp))})`]);
  }
  rows.push(callPathRow(raw));
  const S = lhSummary(raw);
  if (S) {
    let best = null;
    for (const l of PAGE_LIBS.filter((x) => x.id !== 'ours')) if (Number.isFinite(S[l.id].added) && (!best || S[l.id].added < best.value)) best = { l, value: S[l.id].added };
    const ours = S.ours.added;
    rows.push([`Lighthouse mobile (4x CPU): Total Blocking Time added to the product page (page + 5 tracks), ms, median of ${LH_RUNS}`, fmt1(ours), best ? `${best.l.name}: ${fmt1(best.value)}` : 'n/a', ratio(ours, best?.value), 'lowest TBT of the peers', !best || !Number.isFinite(ours) ? 'n/a' : ours <= best.value ? `met (${fmt1(best.value - ours)} ms less)` : `**missed** by ${fmt1(ours - best.value)} ms`]);
  }
  const br = (x, b) => b.jsTotal?.brotli;
  const ours = bytes.ours?.jsTotal?.brotli;
  const bz = bestPeer(sums, bytes, br);
  let zs = goalStatus(ours, GOAL_BROTLI, 'B', fmtInt);
  if (Number.isFinite(ours)) zs += ours <= AIM_BROTLI ? `; the ${fmtInt(AIM_BROTLI)} B aim met` : `; the ${fmtInt(AIM_BROTLI)} B aim missed by ${fmtInt(ours - AIM_BROTLI)} B`;
  rows.push(['bundle, brotli (bytes): the JS a core page (load, identify, track, page, group) fetches before the first event', fmtInt(ours), bz ? `${bz.lib.short}: ${fmtInt(bz.value)}` : 'n/a', ratio(ours, bz?.value), `at most ${fmtInt(GOAL_BROTLI)} B (${fmtInt(AIM_BROTLI)} B is the aim)`, zs]);
  // (measured on dist/ as built: the bundle and the edge chunks, each brotli-11 on its own, as a page fetches them)
  let all = NaN;
  try {
    all = brotliOf('analytics.min.js') + EDGE_CHUNKS.reduce((n, f) => n + brotliOf(f), 0);
  } catch {
    // a dist/ without the chunks: n/a
  }
  rows.push([`bundle + every edge chunk of an all-features page (${EDGE_CHUNKS.join(', ')}), brotli (bytes)`, fmtInt(all), 'n/a', 'n/a', `at most ${fmtInt(GOAL_ALL_BROTLI)} B`, goalStatus(all, GOAL_ALL_BROTLI, 'B', fmtInt)]);
  return rows;
}

/** The chain of one `track()` to `fetch` (scripts/call-path.mjs: its head says what is counted). */
function callPathRow(raw) {
  const c = raw.callPath;
  const label = 'calls from `track()` (after ready) to `fetch`: frames of src/ on the chain, async parents included, and their files (`node scripts/call-path.mjs` lists them)';
  const goal = `at most ${GOAL_CALLS} calls through ${GOAL_CALL_FILES} files`;
  if (!c || c.error) return [label, c ? 'error' : 'not measured', 'n/a', 'n/a', goal, 'n/a'];
  const miss = [c.calls > GOAL_CALLS && `by ${c.calls - GOAL_CALLS} calls`, c.files > GOAL_CALL_FILES && `by ${c.files - GOAL_CALL_FILES} files`].filter(Boolean);
  const gate = Object.entries(c.gate).map(([k, v]) => `${k} ${v}`).join(', ');
  return [label, `${c.calls} calls / ${c.files} files`, 'n/a', 'n/a', goal, `${miss.length ? `**missed** ${miss.join(', ')}` : 'met'} (gate entries meanwhile: ${gate}; middleware stage looked at ${c.middleware})`];
}

/** Lighthouse per page: medians of TBT, FCP, TTI, the library's bootup (scripting + parse/compile), and TBT added. */
function lhSummary(raw) {
  const L = raw.lighthouse;
  if (!L) return null;
  const ok = (id) => (L.runs[id] || []).filter((r) => !r.error && !r.runtimeError && Number.isFinite(r.tbt));
  const none = median(ok('none').map((r) => r.tbt));
  const out = { none: { tbt: none, n: ok('none').length, tbts: ok('none').map((r) => r.tbt), fcp: median(ok('none').map((r) => r.fcp)), tti: median(ok('none').map((r) => r.tti)) } };
  for (const l of PAGE_LIBS) {
    const rs = ok(l.id);
    out[l.id] = {
      n: rs.length,
      tbt: median(rs.map((r) => r.tbt)),
      tbts: rs.map((r) => r.tbt),
      added: median(rs.map((r) => r.tbt)) - none,
      bootup: median(rs.map((r) => r.lib?.total)),
      scripting: median(rs.map((r) => r.lib?.scripting)),
      parse: median(rs.map((r) => r.lib?.parse)),
      bootups: rs.map((r) => r.lib?.total),
      fcp: median(rs.map((r) => r.fcp)),
      tti: median(rs.map((r) => r.tti)),
      offHost: [...new Set(rs.flatMap((r) => r.requests || []).filter((u) => !/^(http:\/\/127\.0\.0\.1[:/]|data:)/.test(u)))],
      errors: (L.runs[l.id] || []).filter((r) => r.error || r.runtimeError).map((r) => r.error || r.runtimeError),
    };
  }
  return out;
}

function stubSummary(raw) {
  if (!raw.stub) return null;
  return Object.fromEntries(PAGE_LIBS.map((l) => {
    const rs = (raw.stub[l.id] || []).filter((r) => !r.error);
    const t = rs.map((r) => r.total);
    return [l.id, { n: rs.length, total: median(t), min: Math.min(...t), max: Math.max(...t), define: median(rs.map((r) => r.define)), calls: median(rs.map((r) => r.calls)) }];
  }));
}

const libShort = (id) => PAGE_LIBS.find((l) => l.id === id)?.name || id;

function stubSection(raw) {
  const S = stubSummary(raw);
  if (!S) return '';
  const rows = PAGE_LIBS.map((l) => [l.name, `${fmt2(S[l.id].total)} [${fmt2(S[l.id].min)}–${fmt2(S[l.id].max)}]`, fmt2(S[l.id].define), fmt2(S[l.id].calls), l.id === 'ours' ? '-' : ratio(S.ours.total, S[l.id].total)]);
  return `
## The inline stub's own cost

Each library's stub alone, in ${STUB_RUNS} fresh browser contexts per library (empty storage; order rotated run by run), no CPU
throttling: one inline script times with \`performance.now()\` the stub's definition and then the 7 calls a product page
makes before the bundle arrives: \`load\`, \`page\`, 5 \`track\`s (Amplitude: its snippet inserts the bundle's script while it
is defined; then \`init\`, a \`Page Viewed\` track, 5 tracks). The bundle URL answers an empty script, so nothing but the
stub runs. Ours is \`dist/snippet.min.js\`, the peers' are their standard snippets (see Method), Amplitude's the one its
npm package ships. Medians, ms [min–max of the total]:

${mdTable(['stub', 'definition + 7 calls, ms', 'definition, ms', '7 calls, ms', 'ours / that'], rows)}
`;
}

function lighthouseSection(raw) {
  const L = raw.lighthouse;
  const S = lhSummary(raw);
  if (!L || !S) return '';
  const rows = [
    ['no analytics (the same page)', `${fmt1(S.none.tbt)} (${S.none.tbts.map(fmtInt).join(', ')})`, '-', '-', `${fmtInt(S.none.fcp)} / ${fmtInt(S.none.tti)}`, '-'],
    ...PAGE_LIBS.map((l) => {
      const x = S[l.id];
      return [l.name, `${fmt1(x.tbt)} (${x.tbts.map(fmtInt).join(', ')})`, `**${fmt1(x.added)}**`, `${fmt1(x.bootup)} (${fmt1(x.scripting)} + ${fmt1(x.parse)}) [${x.bootups.map(fmtInt).join(', ')}]`, `${fmtInt(x.fcp)} / ${fmtInt(x.tti)}`, l.id === 'ours' ? '-' : `${ratio(S.ours.added, x.added)} / ${ratio(S.ours.bootup, x.bootup)}`];
    }),
  ];
  const p = L.profiled;
  const lt = p && p.ourLongTasks;
  let tasks = '';
  if (!p || p.error || !lt || lt.error) tasks = `The profiled run failed: ${(p && (p.error || lt?.error)) || 'no trace'}.`;
  else if (!lt.tasks.length) tasks = `In the profiled run (TBT ${fmt1(p.tbt)} ms) no main-thread task over ${LH_LONG_TASK_MS} ms ran our code.`;
  else {
    tasks = `In the profiled run (TBT ${fmt1(p.tbt)} ms, our bootup ${fmt1(p.lib?.total)} ms; ${fmtInt(lt.profileSamples)} CPU samples in the trace), ${lt.tasks.length} main-thread task(s) over ${LH_LONG_TASK_MS} ms ran our code:

`;
    lt.tasks.forEach((t, i) => {
      const ent = t.entries.map((e) => `${e.name}${e.at ? ' ' + codeCell(e.at, false) : ''}${e.mapped ? ' → ' + e.mapped : ''} ${fmt1(e.ms)} ms`).join('; ');
      const self = t.selfTop.map((f) => `${f.name} ${fmt1(f.pct)}%`).join('; ');
      const total = t.totalTop.map((f) => `${f.name} ${fmt1(f.pct)}%`).join('; ');
      tasks += `${i + 1}. **${fmt1(t.ms)} ms** at ${fmtInt(t.start)} ms after navigation start (${t.ourSamples}/${t.samples} samples in our code). What the browser ran in it: ${ent || 'n/a'}.
   Self time (our functions and the built-ins they call): ${self || 'n/a'}.
   On the stack (ours): ${total || 'n/a'}.
`;
    });
  }
  // Long tasks of ours in the measured (unprofiled) runs: durations only.
  const measured = (L.runs.ours || []).map((r) => (r.ourLongTasks?.tasks || []).map((t) => `${fmtInt(t.ms)} ms (${t.entries[0]?.name || '?'}${t.entries[0]?.at ? ' ' + t.entries[0].at.replace(/:\d+:\d+$/, '') : ''})`).join(' + ') || 'none').map((x, i) => `run ${i + 1}: ${x}`).join('; ');
  const off = PAGE_LIBS.map((l) => `${l.name} ${S[l.id].offHost.length ? S[l.id].offHost.join(', ') : 'none'}`).join(', ');
  const errs = PAGE_LIBS.filter((l) => S[l.id].errors.length).map((l) => `${l.name}: ${S[l.id].errors.join('; ')}`).join('. ');
  return `
## The page's main thread as Lighthouse sees it

Lighthouse ${raw.versions.lighthouse} (npm \`lighthouse\`, Node API, \`bench/lighthouse.mjs\`), mobile preset (form factor and screen of a
phone, 4x CPU slowdown, Slow 4G) with \`throttlingMethod: 'devtools'\` (the slowdown is applied to the page through CDP and the
trace is the throttled page's own, so TBT, bootup and long tasks are observed, not simulated by Lantern), in Debian's Chromium
started by chrome-launcher with \`--headless=new --no-sandbox --disable-gpu\`; audits run: TBT, FCP, TTI, bootup-time (its 50 ms
threshold lowered to 0), main-thread work, network requests. The page is a small product page (\`bench/site/lh.html\`): the
library's snippet (load + \`page()\`; Amplitude: \`init\` + a \`Page Viewed\` track) in \`<head>\`, 5 \`track()\` calls at the end of
\`<body>\`; the same page without analytics is the baseline. ${LH_RUNS} runs per page, the order of the five pages rotated run by run;
Lighthouse resets the origin's storage before each. TBT added = median TBT of the page − median TBT of the page without analytics.
Bootup = the bootup-time audit's rows of the library's own script file(s) (scripting + script parse/compile; the inline snippet is
in the page's own row, not counted). Medians in ms, each run's value in parentheses or brackets:

${mdTable(['page', 'TBT (runs)', 'TBT added', 'bootup: scripting + parse [runs]', 'FCP / TTI', 'ours / that: TBT added / bootup'], rows)}

Requests to hosts other than 127.0.0.1 in these runs: ${off}.${errs ? ' Errors: ' + errs + '.' : ''}

### Our long tasks (over ${LH_LONG_TASK_MS} ms at 4x)

Our long tasks in the measured runs (task duration, and its longest entry): ${measured}.

For what runs in them, one more Lighthouse run of our page, the same settings plus the V8 sampling profiler in the trace
(\`disabled-by-default-v8.cpu_profiler\`; the profiler slows the page, so this run's numbers are not in the table). For each
main-thread task over ${LH_LONG_TASK_MS} ms in which our bundle ran: the trace events inside it (EvaluateScript = running the bundle's
top level; FunctionCall = a callback the browser called into, at its position; TimerFire, RunMicrotasks), then the CPU samples
taken during the task, as self time (the function the sample was in, ours or a built-in our code called) and as time on the
stack (each of our functions that was anywhere on it), in % of the task's samples. Positions in \`dist/analytics.min.js\` are
mapped back to source names by \`dist/analytics.min.js.map\` (the name is the one at the function's start in the map; arrow
functions show as \`(anonymous)\`, with their source line).

${tasks}`;
}

/** BENCH_ONLY: the parts that ran. */
function partialReport(raw) {
  const parts = [];
  if (ONLY.has('track')) {
    const rows = LIBS.map((l) => {
      const tr = raw.libs[l.id].track.filter((r) => !r.error);
      return [l.short, fmt1((median(tr.map((r) => r.loopMs)) * 1000) / TRACK_N), fmt1(median(tr.map((r) => r.taskMs))), tr.map((r) => r.distinct).join(', ')];
    });
    parts.push(mdTable(['library', `µs per track() (median of ${TRACK_RUNS} × ${TRACK_N})`, 'main thread until delivered, ms', 'delivered'], rows));
  }
  if (ONLY.has('crash')) parts.push(crashTable(raw));
  if (raw.callPath) parts.push(mdTable(['Goal (issue 28)', 'svc-analytics', 'best peer', 'ours / best', 'goal', 'status'], [callPathRow(raw)]));
  if (raw.stub) parts.push(stubSection(raw));
  if (raw.lighthouse) parts.push(lighthouseSection(raw));
  return parts.join('\n');
}

/** BENCH_ONLY=crash: the crash row and its checks. */
const crashTable = (raw) =>
  mdTable(['library', crashLabel(), 'checks'], LIBS.map((l) => [l.short, crashCell(raw.libs[l.id].crash), crashChecks(raw.libs[l.id].crash)]));
const crashLabel = () => `Delivered of ${CRASH_N} stored with a long flush interval (60 s), within ${CRASH_WAIT_MS / 1000} s of a renderer crash (\`Page.crash\`), no page reopened, ${UNLOAD_RUNS} runs`;

const mdTable = (head, rows, align) =>
  [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (align ? align[i] : i ? '---:' : '---')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

/** Inline code; in a table cell a `|` must be escaped even there, in prose it must not. */
const codeCell = (s, inTable = true) => (s ? '`' + s.replace(/`/g, "'").replace(/\|/g, inTable ? '\\|' : '|').replace(/\s+/g, ' ') + '`' : '');

/** The section on the CPU profile of our track() calls. */
function profileSection(raw, o) {
  const p = raw.profile;
  if (!p) return '';
  const a = p.analysis;
  if (p.error || !a || !a.windowSamples) return `\n## Where a track() call's time goes\n\nThe CPU profile run failed: ${p.error || 'no sample fell in the loop'}.\n`;
  const rows = a.entries.map((e, i) => [
    String(i + 1),
    e.original ? `${codeCell(e.original.name || e.name)} (${e.original.source}:${e.original.line})` : codeCell(e.name),
    e.location || e.kind,
    codeCell(e.code),
    fmt1(e.selfPct),
    fmt1(e.totalPct),
  ]);
  const table = mdTable(['#', 'function (minified name)', 'where (line:column)', 'code there', 'self %', 'total %'], rows, ['---:', '---', '---', '---', '---:', '---:']);
  const g = a.groupsPct || {};
  const perCall = (p.loopMs * 1000) / p.calls;
  const natives = a.entries.filter((e) => e.kind === 'native').slice(0, 3).map((e) => codeCell(e.name, false)).join(', ');
  const totals = (a.totals || []).map((e) => `${codeCell(e.name, false)} at ${e.location} ${fmt1(e.totalPct)}%`).join(', ');
  return `
## Where a track() call's time goes

A CPU profile of svc-analytics alone: ${fmtInt(p.calls)} \`track()\` calls in one synchronous loop after \`ready\` and
${SETTLE_MS} ms of idle (the same page, property objects and setup as the ${fmtInt(TRACK_N)}-track rows, ${p.calls / TRACK_N}x the calls),
sampled by the CDP Profiler (\`Profiler.setSamplingInterval\` ${p.intervalUs} µs, \`Profiler.start\`/\`stop\` around the loop; it took a sample every
${fmtInt((a.windowMs * 1000) / a.windowSamples)} µs on average: the profiler takes them no faster than this machine lets it).
Under the profiler the loop took ${fmt1(p.loopMs)} ms, ${fmt1(perCall)} µs per call (${fmt1((o.loopMs * 1000) / TRACK_N)} µs in the summary, which times the first
${fmtInt(TRACK_N)} calls of a page without a profiler; here more of the calls run warmed-up code, and the sampling costs some time of its own); ${fmtInt(a.windowSamples)} samples fell between the loop's first and last, all counted
here, garbage collection included. Self % = the share of those samples taken in that function itself; total % = the
share in which it was anywhere on the stack. Positions are 1-based line:column in \`dist/analytics.min.js\`, the function's
start, with the code found there; ${a.sourceMap ? 'each is mapped back to its source file and name by `dist/analytics.min.js.map`.' : 'the build writes no source map (`dist/analytics.min.js.map` does not exist), so the names are the minified ones.'}
${p.distinct === p.calls ? `All ${fmtInt(p.calls)} calls were delivered afterwards (none refused).` : `**Only** ${fmtInt(p.distinct)} of the ${fmtInt(p.calls)} calls were delivered afterwards (some were refused, so the profile is partly of that path).`} Raw profile: \`bench/.tmp/track-profile.cpuprofile\` (not committed; opens in
Chrome DevTools' Performance panel).

${table}

By kind, self time: our bundle's code ${fmt1(g.bundle || 0)}%, the browser's built-ins (functions without a script position${natives ? `, here mostly ${natives}` : ''})
${fmt1(g.native || 0)}%, V8 itself (\`(program)\`, \`(garbage collector)\`) ${fmt1(g.vm || 0)}%, the bench's loop
${fmt1((g.loop || 0) + (g['other script'] || 0))}%. Our functions with the most total time: ${totals || 'n/a'}.
`;
}

function report(raw) {
  const sums = Object.fromEntries(LIBS.map((l) => [l.id, summarize(raw, l.id)]));
  const o = sums.ours;
  const B = (id) => raw.bytes[id] || {};
  // Where each library's JS came from: ours from /dist/, the peers' standalone bundles from where their snippets load them.
  const fileName = (u) => (u.startsWith('/libs/') ? 'amplitude-min.js' : u.startsWith('/analytics.js/v1/') || u.startsWith('/v1/analytics-js/snippet/') ? 'standalone.js' : u.startsWith('/dist/') ? u.slice(1) : path.basename(u));
  const files = (b) => (b.js || []).map((f) => fileName(f.url)).join(' + ') || 'n/a';
  const runs = (xs) => `${xs.reduce((a, b) => a + b, 0)}/${xs.length * UNLOAD_N} (${xs.join(', ')})`;
  const range = (m, r) => (Number.isFinite(m) ? `${fmt1(m)} [${fmt1(r[0])}–${fmt1(r[1])}]` : 'not measured');
  // Each row: label, a cell per library, and the ratio ours / peer for each peer.
  const row = (label, cell, rat) => [label, ...LIBS.map((l) => cell(sums[l.id], B(l.id))), ...PEERS.map((l) => rat(o, B('ours'), sums[l.id], B(l.id)))];
  const rows = [
    row('Snippet, minified (stub + `load` + `page`), bytes raw / gzip-9 / brotli-11', (s, b) => triple(b.snippet), (_, bo, __, b) => tripleRatio(bo.snippet, b.snippet)),
    row('  of which the stub alone (no `load`/`page` call)', (s, b) => triple(b.snippetStub), (_, bo, __, b) => tripleRatio(bo.snippetStub, b.snippetStub)),
    row(`JS fetched before the first event leaves (${LIBS.map((l) => files(B(l.id))).join(' / ')})`, (s, b) => triple(b.jsTotal), (_, bo, __, b) => tripleRatio(bo.jsTotal, b.jsTotal)),
    row('Settings JSON fetched before the first event (the peers only)', (s, b) => (b.settingsFiles?.length ? triple(b.settings) : 'none'), () => '-'),
    row('**Total before the first event** (snippet + JS + settings)', (s, b) => triple(b.total), (_, bo, __, b) => tripleRatio(bo.total, b.total)),
    row('Requests the page makes before the first event (besides the HTML)', (s, b) => fmtInt(b.requestsBefore), (_, bo, __, b) => ratio(bo.requestsBefore, b.requestsBefore)),
    row(`Navigation start → first request at the collector, peers in their **default delivery** (settings without \`deliveryStrategy\`: each event sent at once), ms, median of ${LIBS.map((l) => sums[l.id].ttfeD1N).join('/')} [min–max]`, (s) => range(s.ttfeD1, s.ttfeD1Range), (x, _, s) => ratio(x.ttfeD1, s.ttfeD1)),
    row(`  same with ${THROTTLE}x CPU throttling`, (s) => range(s.ttfeD4, s.ttfeD4Range), (x, _, s) => ratio(x.ttfeD4, s.ttfeD4)),
    row(`Navigation start → first request at the collector, peers **batched** (size 20 / timeout 1000 ms, as in the rows below), ms, median of ${LIBS.map((l) => sums[l.id].ttfe1N).join('/')} [min–max]`, (s) => range(s.ttfe1, s.ttfe1Range), (x, _, s) => ratio(x.ttfe1, s.ttfe1)),
    row(`  same with ${THROTTLE}x CPU throttling`, (s) => range(s.ttfe4, s.ttfe4Range), (x, _, s) => ratio(x.ttfe4, s.ttfe4)),
    row(`${TRACK_N} \`track\` calls, synchronous main-thread ms (= µs per call), median of ${TRACK_RUNS}`, (s) => fmt2(s.loopMs), (x, _, s) => ratio(x.loopMs, s.loopMs)),
    row('  main-thread busy until all are delivered, ms: TaskDuration (ScriptDuration)', (s) => `${fmt1(s.taskMs)} (${fmt1(s.scriptMs)})`, (x, _, s) => `${ratio(x.taskMs, s.taskMs)} (${ratio(x.scriptMs, s.scriptMs)})`),
    row('  wall time from the first call until the last batch arrived, ms', (s) => fmt1(s.deliveredMs), (x, _, s) => ratio(x.deliveredMs, s.deliveredMs)),
    row(`  HTTP POSTs for ${TRACK_N} events (+ CORS preflights) / lower bound ceil(message bytes / 500,000)`, (s) => `${fmtInt(s.posts)} (+${fmtInt(s.preflights)}) / ${fmtInt(s.lowerBound)}`, (x, _, s) => ratio(x.posts, s.posts)),
    row('  request body bytes on the wire (sum of message bytes)', (s) => `${fmtInt(s.bodyBytes)} (${fmtInt(s.messageBytes)})`, (x, _, s) => `${ratio(x.bodyBytes, s.bodyBytes)} (${ratio(x.messageBytes, s.messageBytes)})`),
    row(`Delivered of ${UNLOAD_N} tracked right before \`location.href = \` a page without analytics, ${UNLOAD_RUNS} runs`, (s) => runs(s.nav), (x, _, s) => ratio(x.navSum, s.navSum)),
    row('  same, but the next page loads the same library (which may send what the first page persisted)', (s) => runs(s.same), (x, _, s) => ratio(x.sameSum, s.sameSum)),
    row(`Delivered of ${UNLOAD_N} tracked right before \`page.close()\`, ${UNLOAD_RUNS} runs`, (s) => runs(s.cls), (x, _, s) => ratio(x.clsSum, s.clsSum)),
    row(crashLabel(), (s) => crashCell(s.crash), (x, _, s) => ratio(x.crashSum, s.crashSum)),
  ];
  const vers = { ours: raw.versions.ours, segment: raw.versions.segment, cio: raw.versions.cio, amplitude: raw.versions.amplitude };
  const head = ['Measure', ...LIBS.map((l) => `${l.short} ${vers[l.id]}`), ...PEERS.map((l) => `ours / ${l.short}`)];
  const table = mdTable(head, rows);
  const summary = mdTable(['Goal (issue 28)', 'svc-analytics', 'best peer', 'ours / best', 'goal', 'status'], summaryRows(raw, sums), ['---', '---:', '---:', '---:', '---', '---']);
  const m = raw.machine;
  const checks = [];
  for (const l of LIBS) {
    const x = sums[l.id];
    checks.push(`${l.short}: ${x.trackRuns} track runs delivered ${x.distinct.join(', ')} distinct messages of ${TRACK_N} (${x.trackDuplicates} duplicates); observed CPU slowdown under ${THROTTLE}x throttling ${fmt2(x.throttleObserved)}x (one ~50 ms loop per rate, noisy); duplicate deliveries in the exit tests (at-least-once re-sends): ${x.duplicates}` +
      `; requests to hosts other than 127.0.0.1: ${x.offHost.length ? x.offHost.join(', ') : 'none'}` +
      (x.crash.length ? `; renderer crash runs: ${crashChecks(x.crash)}` : '') +
      (x.errors.length ? `; errors: ${[...new Set(x.errors)].join('; ')}` : ''));
  }
  {
    const pd = LIBS.map((l) => `${l.short} ${sums[l.id].pageDelivered}/${sums[l.id].ttfeRuns}`);
    checks.push(`time-to-first-event runs (the peers batched) whose \`page\` message reached the collector: ${pd.join(', ')}`);
    const mw = MW_VARIANTS.map((v) => `${v.short} ${sums[v.id].mwPageFirst}/${sums[v.id].mwRuns}`);
    checks.push(`time-to-first-event runs with a source middleware whose first message at the collector was the \`page\` call: ${mw.join(', ')}`);
  }
  for (const l of PEERS) {
    const x = sums[l.id];
    if (l.ttfe === false) {
      checks.push(`${l.short}: no time-to-first-event runs (its wire format is not the Data Pipelines one, and its default delivery is batched, 30 events / 1 s); its byte rows are its official snippet and the bundle that snippet loads (\`lib/scripts/amplitude-min.js\`, the file behind the snippet's SRI hash), counted offline; in the track runs its page requested ${[...new Set(raw.libs[l.id].track.flatMap((r) => (r.allPageRequests || []).map((q) => q.replace(/^(\S+ \S+ )https?:\/\/[^/]+/, '$1').replace(/\?.*$/, ''))))].join(', ') || 'n/a'}, and its events went to \`POST /2/httpapi\` (answered ${[...new Set(raw.libs[l.id].track.flatMap((r) => r.statuses || []))].join(', ') || 'n/a'}, translated to the collector's format by the API front)`);
      continue;
    }
    if (!x.defaultRuns) {
      checks.push(`${l.short} in its default delivery: not measured in this run`);
      continue;
    }
    const d = raw.bytes[l.id]?.defaultDelivery;
    checks.push(`${l.short} in its default delivery (write key \`${DEFAULT_VARIANTS.find((v) => v.id === l.id).key}\`): ${x.defaultRuns} time-to-first-event runs, the first POST went to ${x.defaultPaths.map((q) => `\`${q}\``).join(', ') || 'n/a'} (answered ${x.defaultStatuses.join(', ') || 'n/a'}) and its first message was the \`page\` call in ${x.defaultPageFirst}/${x.defaultRuns}, after a CORS preflight in ${x.defaultPreflight}/${x.defaultRuns}` +
      (d ? `; it fetched ${d.requestsBefore} files before it (JS ${triple(d.jsTotal)} B, settings ${triple(d.settings)} B raw / gzip / brotli)${d.sameRequestsEveryRun ? ', the same in every run' : `, differing between runs: ${d.distinctRequestSets.join(' | ')}`}` : ''));
  }
  for (const l of LIBS) {
    const b = raw.bytes[l.id];
    if (b && !b.sameRequestsEveryRun) checks.push(`${l.short}: the requests before the first event differed between runs: ${b.distinctRequestSets.join(' | ')}`);
  }
  const full = `# Benchmark: svc-analytics vs @segment/analytics-next, @customerio/cdp-analytics-browser and @amplitude/analytics-browser

Produced by \`npm run bench\` (\`node bench/run.mjs\`) on ${m.date}. Customer.io's own current SDK,
\`@customerio/cdp-analytics-browser\` ${raw.versions.cio} (a fork of analytics-next), Segment's analytics-next and Amplitude's
\`@amplitude/analytics-browser\` ${raw.versions.amplitude} are the peers (Amplitude in the rows where its own wire format allows a fair
comparison: track calls, page exit, the stub's cost, Lighthouse).

To run only some parts: \`BENCH_ONLY=lighthouse,track npm run bench\` (parts: \`ttfe\`, \`track\`, \`unload\`, \`crash\`, \`profile\`,
\`stub\`, \`lighthouse\`, \`callpath\`; prints their tables, writes \`bench/.tmp/last-run-only.json\`, leaves this file alone). Counts:
\`BENCH_TRACK_RUNS\`, \`BENCH_STUB_RUNS\` (default 15), \`BENCH_LH_RUNS\` (default 5); see the head of \`bench/run.mjs\`.

## Summary: the goals

Ours against the best of the peers on each row (lower is better on every row; Amplitude only where it was measured).

${summary}

## All measures

Ratios are ours / that peer's (below 1 means svc-analytics is smaller, faster or sends fewer requests; for delivery
counts, above 1 means it delivered more).

${table}

Checks of this run: ${checks.join('. ')}.
${stubSection(raw)}${lighthouseSection(raw)}${raw.build.stale ? '\n**Warning:** src/ was newer than dist/ when this ran; run `npm run build` and re-run.\n' : ''}${raw.build.rebuiltDuringRun ? '\nNote: dist/ was rebuilt while this ran; every number is of the copy of dist/ taken at the start (build ' + raw.build.dist + ').\n' : ''}${profileSection(raw, o)}
## Machine

- CPU: ${m.cpu}, ${m.cores} cores (load average ${m.loadavg} at start, ${m.loadavgEnd} at end)
- Chromium ${m.chromium} (headless), Node ${m.node}, ${m.os}
- svc-analytics at commit ${raw.git}, dist/ content hash ${raw.build.dist} (copied at the start of the run)
- @segment/analytics-next ${raw.versions.segment} (standalone bundle \`dist/umd/standalone.js\`), Segment snippet from @segment/snippet ${raw.versions.segmentSnippet} (SNIPPET_VERSION 5.2.0)
- @amplitude/analytics-browser ${raw.versions.amplitude}: its official snippet (\`lib/scripts/amplitude-snippet-min.js\`) with the CDN URL of its bundle pointed at the local site, which serves \`lib/scripts/amplitude-min.js\` (the same bytes as the CDN's \`analytics-browser-${raw.versions.amplitude}-min.js.gz\`: the snippet's SRI hash matches, and stays); \`init\` with \`serverUrl\` = the local API front's \`/2/httpapi\` (which translates each event to a track message of the collector's format and answers as Amplitude's HTTP V2 API does), \`flushQueueSize: 20\`, \`flushIntervalMillis: 1000\` (as the others' batching), \`autocapture: false\`, \`fetchRemoteConfig: false\`, \`enableDiagnostics: false\` (these send requests off this machine or add events the others don't send); its \`page()\` is a \`Page Viewed\` track
- Lighthouse ${raw.versions.lighthouse || 'n/a'} (see its section)
- @customerio/cdp-analytics-browser ${raw.versions.cio} (standalone bundle \`dist/umd/standalone.js\`, its lazy chunks beside it), Customer.io's snippet as its JavaScript source publishes it (SNIPPET_VERSION ${raw.versions.cioSnippet}), reproduced by \`bench/servers.mjs\`
- Whole run: ${fmtInt(raw.elapsedS)} s (${Object.entries(raw.phases || {}).map(([k, v]) => `${k} ${fmtInt(v)} s`).join(', ')})

## Method and caveats

Everything runs on 127.0.0.1: the project's collector (\`collector/server.mjs\`, any write key), a bench-only reverse
proxy in front of it that all three libraries send to (it aliases the batch path \`/v1/b\` of analytics-next and of
Customer.io's SDK to \`/v1/batch\`, and their default delivery's one-letter paths, \`/v1/p\` etc., to \`/v1/page\` etc., and
timestamps each request's arrival), and \`collector/static.mjs\` serving the pages,
our \`dist/\`, analytics-next's \`dist/umd\` folder and Customer.io's, so all load from the same local origin,
cross-origin to the API, uncompressed and uncached (\`Cache-Control: no-store\`; gzip and brotli sizes are computed
offline per file, gzip level 9, brotli quality 11). Each page inlines its library's own snippet: ours from
\`svc-analytics/snippet\` with \`cdnUrl: '/dist/analytics.min.js'\` and \`apiHost\` set; Segment's standard v5 snippet
(\`@segment/snippet\` \`min()\`, generated at run time) with \`useHostForBundles\` so \`analytics._cdn\` points at the local
site (\`https\` rewritten to \`http\`); Customer.io's snippet (the global \`cioanalytics\`), which no npm package ships, so
\`bench/servers.mjs\` writes an equivalent of the published one (SNIPPET_VERSION ${raw.versions.cioSnippet}: same stub methods, same
\`load\`) with its CDN host \`https://cdp.customer.io\` replaced by the local site; it inserts
\`<script async data-global-customerio-analytics-key="cioanalytics" src="/v1/analytics-js/snippet/<key>/analytics.min.js">\`,
the URL from which the bundle also takes its CDN for its settings and chunks. analytics-next gets CDN settings from
\`bench/site/segment-settings.json\` (served at \`/v1/projects/<key>/settings\`) with only the Segment.io destination;
Customer.io's SDK gets them from \`bench/site/cio-settings.json\` (served at the same path under its own write key, where
its code fetches them, \`{cdn}/v1/projects/<key>/settings\`) with only its Customer.io Data Pipelines destination. Both:
\`apiHost\` = the local API, \`protocol: 'http'\`, and, for every row except the default-delivery time-to-first-event
rows (see below), the batching delivery strategy with size 20 / timeout 1000 ms, so that requests, bytes and main-thread
time compare like with like (our
defaults are flushAt 20 / flushInterval 1000 ms; Customer.io's dispatcher flushes at \`size\` events or \`timeout\` ms after
the first, as analytics-next's does, and sends \`POST {apiHost}/b\` as \`text/plain\`, so no preflight), and remote metrics
off (\`sampleRate: 0\`, a real workspace usually samples some). The batch paths were verified by watching the requests
the pages made. The snippet-row byte counts use the standard snippets with a placeholder key (Customer.io's as
reproduced here, so within a few bytes of the published one). Byte counts are of the JS and JSON requests the page
actually made before its first POST to the API, in the first measured unthrottled batched run (the checks say whether every
run made the same ones, and what the peers fetched in their default delivery: the same bundle, and settings without the
\`deliveryStrategy\` key); with these settings neither peer loads a lazy chunk, and a real workspace with destinations,
routing rules, middleware or Customer.io's in-app messaging makes them load more (ajs-destination, tsub-middleware,
remoteMiddleware, inAppPlugin chunks, each integration's own code). Time to first event: a fresh browser context per
run, \`page.goto\` of a page whose snippet calls \`page()\`, and the arrival at the proxy of the first POST minus the page's
\`performance.timeOrigin\` (clocks aligned by a measured offset of ${fmt2(raw.clock.offset)} ms). Each peer is measured in two
settings, in the same interleaved runs (${TTFE_RUNS} each per CPU rate, the order of the five, ours and each peer in both, rotated run by
run): in its
**default delivery**, the same settings template with the destination's \`deliveryStrategy\` key cut out
(\`withoutDeliveryStrategy\` in \`bench/servers.mjs\`), served under a write key of its own (\`${SEGMENT_DEFAULT_KEY}\`,
\`${CIO_DEFAULT_KEY}\`) from pages of their own; without that key both SDKs use their standard dispatcher, one \`fetch\`
per event as soon as it reaches the destination plugin, to \`{apiHost}/p\` for a page call (\`/t\`, \`/i\`, ... for the
others; the proxy aliases them to the collector's \`/v1/page\`, \`/v1/track\`, ...); analytics-next's sends an
\`Authorization\` header, so a CORS preflight precedes its first POST and is part of its time, Customer.io's sends the write
key in its \`text/plain\` body, so none (ours: a preflight before its first POST in ${o.ttfePreflight}/${o.ttfeRuns} runs; on
127.0.0.1 a preflight costs little, on a real network it adds a round trip, which this bench does not model). That is how these SDKs run unless a workspace turns batching on, and how issue 8,
which set the goal, measured Customer.io (151 / 527 ms at 1x / 4x), so the summary's row compares with it. And
**batched**, the settings above, as in every other row: both peers then wait for their 1 s batching timeout, so that row
is mostly load time plus the timer, and is kept to show what batching costs them there. Ours has one delivery, its
default (flushAt 20 / flushInterval 1000 ms), so the same runs fill its cells in both rows; ${o.ttfe1 < 1000 ? 'in this build it sent its lone first message without waiting for its 1 s flush interval (median under 1,000 ms)' : 'it waited for its 1 s flush interval'}. CPU throttling is CDP \`Emulation.setCPUThrottlingRate\` on
the fresh page (the observed slowdown of a fixed loop is in the checks). The ${TRACK_N} calls run after \`ready\` and
${SETTLE_MS} ms of idle, with prebuilt ~${PROPS_BYTES}-byte property objects, timed with \`performance.now()\` around the synchronous
loop (the promises are not awaited); main-thread busy time is the CDP \`Performance.getMetrics\` TaskDuration/ScriptDuration
delta (thread CPU time, \`timeDomain: 'threadTicks'\`) from just before the loop to the arrival of the last event, and
includes the small cost of the CDP calls themselves (ScriptDuration seems to leave out the loop itself, which runs from
a CDP \`Runtime.evaluate\`: it can be below the synchronous loop's time, and mostly counts what ran afterwards in the
page's own tasks). (A CPU profile taken while writing this bench put most of
analytics-next's per-call time in the \`document.cookie\` getter, a synchronous IPC in Chromium, so that row depends on
the machine's load more than the others; after the loop most of its time went to its batching dispatcher's size check,
which runs \`encodeURI(JSON.stringify(buffer))\` over the whole buffer per event, and that is what stretches its delivery
time. Customer.io's fork has the older form of that dispatcher, \`src/plugins/customerio/batched-dispatcher.ts\`: the same size
check, but it sends as soon as 20 events wait, so the check never runs over more than 20, at the price of one POST per
20 events.)
Delivery on exit counts distinct events of the run that reached the collector within ${WAIT_UNLOAD_MS / 1000} s; for the main row the
next page has no analytics library, so events a library persisted for a later page view count as lost; the row below
it navigates to a page that loads the same library again, which may send them. The peers send on exit only the events
that already reached their destination plugin; how many are still in their asynchronous pipeline when the page goes
away depends on the machine's speed, so those rows move between runs. The renderer-crash row (\`bench/crash.mjs\`) loads
each library on a blank page with a 60 s interval (one event sent first, then ${CRASH_N} tracks, 1 s, \`Page.crash\`) and
counts what arrives within ${CRASH_WAIT_MS / 1000} s with no page of the site opened again: only a request the browser holds for the page
(\`fetchLater\`) can deliver them. Runs of the three libraries are interleaved,
their order rotated run by run, so that machine noise falls on all; on a shared or busy machine the timings (not the
byte, request or delivery counts) move a lot between runs, and medians of ${TTFE_RUNS} are still rough.
Not measured: real network latency and TLS, HTTP compression on the wire, caching across page views, memory use,
and other browsers than Chromium.
`;
  return { table: `${summary}\n\n${table}`, full };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
