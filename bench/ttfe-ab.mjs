#!/usr/bin/env node
// The first event of two builds of ours in one run (issue 28): dist/ (B) against another build's dist directory (A,
// e.g. main's: `git worktree add /tmp/base main && (cd /tmp/base && npm run build)`), next to Customer.io's default
// delivery, on the bench's TTFE pages (bench/run.mjs `ttfeRun`: the time from navigation start to the first POST at the
// API front), with and without a source middleware, interleaved run by run so that the machine's noise hits all alike.
// Prints the median of each page at each CPU rate, and B - A per run pair. On a busy machine the wall times are
// mostly its noise: `--cpu` measures instead, from a trace, the page's main-thread CPU time (the tasks' `tdur`, which
// another process's use of the machine does not count) from the end of the bundle's response to the first POST's
// request, our start-up's cost (4x CPU makes it about 4 times longer). Needs `npm run build` first.
//
//   node bench/ttfe-ab.mjs --a=DIR [--runs=7] [--rates=1,4] [--cpu | --split]
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { executablePath, args as CHROMIUM_ARGS } from '../scripts/chromium.mjs';
import { startAll, snapshotDist, nowMs, SITE_OUT } from './servers.mjs';

const arg = (name, def) => (process.argv.find((a) => a.startsWith(`--${name}=`)) || '').split('=')[1] || def;
const A = arg('a', '');
if (!A || !fs.existsSync(path.join(A, 'analytics.min.js'))) throw new Error('--a=DIR: a dist directory with analytics.min.js');
const RUNS = Number(arg('runs', '7'));
const RATES = arg('rates', '1,4').split(',').map(Number);
const CPU = process.argv.includes('--cpu');
// `--split`: the wall time in two parts, to the end of the bundle's response and from there to the first POST
const SPLIT = process.argv.includes('--split');

// Main-thread CPU ms of the page's renderer from the end of the bundle's response (`bundle`: how its URL ends) to the
// request of the page's first POST, from a Chromium trace.
function cpuBeforePost(events, bundle) {
  const finish = new Map(events.filter((e) => e.name == 'ResourceFinish').map((e) => [e.args.data.requestId, e.ts]));
  const send = events.filter((e) => e.name == 'ResourceSendRequest');
  const b = send.find((e) => e.args.data.url.endsWith(bundle));
  // (the first POST of the page: ours to /v1/batch, Customer.io's to /v1/p)
  const post = send.find((e) => e.args.data.requestMethod == 'POST');
  if (!b || !post || !finish.has(b.args.data.requestId)) return NaN;
  const from = finish.get(b.args.data.requestId);
  const main = events.find((e) => e.name == 'thread_name' && e.args.name == 'CrRendererMain' && e.pid == post.pid);
  let cpu = 0;
  for (const e of events)
    if (e.name == 'RunTask' && e.ph == 'X' && e.pid == main.pid && e.tid == main.tid && e.ts >= from && e.ts < post.ts) cpu += e.tdur ?? e.dur;
  return cpu / 1000;
}

const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

async function ttfe(browser, servers, page, rate) {
  const ctx = await browser.newContext();
  const tab = await ctx.newPage();
  const cdp = await ctx.newCDPSession(tab);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate });
  try {
    servers.reset();
    if (CPU) await browser.startTracing(tab, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
    const start = nowMs();
    await tab.goto(`${servers.site.url}/${page}.html`, { waitUntil: 'commit' });
    let first;
    for (const end = nowMs() + 20000; !first && nowMs() < end; await new Promise((r) => setTimeout(r, 5)))
      first = servers.api.records.find((r) => r.method === 'POST' && r.t >= start);
    const origin = await tab.evaluate(() => performance.timeOrigin);
    if (CPU) {
      await new Promise((r) => setTimeout(r, 50));
      const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
      // (Customer.io's bundle is /v1/analytics-js/snippet/{key}/analytics.min.js on the bench's site)
      return cpuBeforePost(events, '/analytics.min.js');
    }
    if (SPLIT) {
      // (when the bundle's response ended: what comes before is the page and the network's, after it the library's)
      const end = await tab.evaluate(() => performance.getEntriesByType('resource').find((e) => e.name.endsWith('/analytics.min.js'))?.responseEnd ?? NaN);
      return first ? [end, first.t - origin - end] : [NaN, NaN];
    }
    return first ? first.t - origin : NaN;
  } finally {
    await cdp.detach().catch(() => {});
    await ctx.close();
  }
}

async function main() {
  snapshotDist();
  const servers = await startAll();
  // A's build beside B's (/dist/), and its pages: ours-page and ours-mw-page with the bundle's URL changed
  fs.cpSync(A, path.join(SITE_OUT, 'dist-a'), { recursive: true });
  for (const p of ['ours-page', 'ours-mw-page']) {
    const html = fs.readFileSync(path.join(SITE_OUT, `${p}.html`), 'utf8');
    if (!html.includes('/dist/analytics.min.js')) throw new Error(`${p}.html: no /dist/analytics.min.js`);
    fs.writeFileSync(path.join(SITE_OUT, `${p}-a.html`), html.split('/dist/analytics.min.js').join('/dist-a/analytics.min.js'));
  }
  const PAGES = ['ours-page-a', 'ours-page', 'cio-default-page', 'ours-mw-page-a', 'ours-mw-page', 'cio-default-mw-page'];
  const browser = await chromium.launch({ headless: true, executablePath, args: CHROMIUM_ARGS });
  try {
    for (const p of PAGES) await ttfe(browser, servers, p, 1); // warm-up
    for (const rate of RATES) {
      const got = Object.fromEntries(PAGES.map((p) => [p, []]));
      for (let i = 0; i < RUNS; i++) for (let k = 0; k < PAGES.length; k++) {
        const p = PAGES[(k + i) % PAGES.length];
        got[p].push(await ttfe(browser, servers, p, rate));
      }
      console.log(`\n${rate}x CPU, ${RUNS} runs each (${CPU ? 'main-thread CPU ms from the bundle to the first POST' : 'ms from navigation start to the first POST at the API'})`);
      if (SPLIT) {
        for (const p of PAGES) console.log(`${p.padEnd(22)} bundle's response end ${median(got[p].map((x) => x[0])).toFixed(1).padStart(7)}, then to the first POST ${median(got[p].map((x) => x[1])).toFixed(1).padStart(7)}   [${got[p].map((x) => x[1].toFixed(0)).join(' ')}]`);
        continue;
      }
      for (const p of PAGES) console.log(`${p.padEnd(22)} median ${median(got[p]).toFixed(1).padStart(7)}   [${got[p].map((x) => x.toFixed(0)).join(' ')}]`);
      for (const [a, b] of [['ours-page-a', 'ours-page'], ['ours-mw-page-a', 'ours-mw-page']])
        console.log(`${b} B - A: median ${median(got[b].map((x, i) => x - got[a][i])).toFixed(1)} ms`);
    }
  } finally {
    await browser.close();
    await servers.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
