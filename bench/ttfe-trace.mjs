#!/usr/bin/env node
// Where the time to the first event goes (issue 28): loads the bench's TTFE pages (ours-page.html: the snippet with
// page(); ours-mw-page.html: a source middleware added before page()) in fresh contexts at 1x or 4x CPU, with an init
// script that stamps (performance.now(), ms from navigation start) what our start-up does between the bundle's arrival
// and the first POST: the bundle's response end, each start-up step (the MessageChannel tasks of
// src/entry/browser.ts `later`), IndexedDB opens and transactions, Web Locks requests and grants, localStorage reads,
// timers, chunk scripts and fetch. Prints, per page, the median of each stamp over the runs, and one run's timeline.
// Needs `npm run build` first (dist/). Not part of `npm test`.
//
//   node bench/ttfe-trace.mjs [--rate=4] [--runs=5] [--pages=ours-page,ours-mw-page] [--timeline]
import { chromium } from '@playwright/test';
import { executablePath, args as CHROMIUM_ARGS } from '../scripts/chromium.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { startAll, snapshotDist, DIST_SNAP } from './servers.mjs';
import { decodeMappings, originalPosition } from './profile.mjs';

const arg = (name, def) => (process.argv.find((a) => a.startsWith(`--${name}=`)) || '').split('=')[1] || def;
const RATE = Number(arg('rate', '4'));
const RUNS = Number(arg('runs', '5'));
const PAGES = arg('pages', 'ours-page,ours-mw-page').split(',');
const TIMELINE = process.argv.includes('--timeline');

// Runs in the page before any of its scripts: wraps the built-ins our start-up uses, and stamps each use.
function instrument() {
  const marks = [];
  const now = () => performance.now();
  const mark = (what) => marks.push([Math.round(now() * 10) / 10, what]);
  window.__marks = marks;
  const bundle = () => {
    const e = performance.getEntriesByType('resource').find((r) => r.name.includes('/dist/analytics.min.js'));
    return e && Math.round(e.responseEnd * 10) / 10;
  };
  window.__bundleEnd = bundle;
  const wrapProto = (proto, name, before, after) => {
    const orig = proto[name];
    proto[name] = function (...a) {
      before && before.call(this, a);
      const r = orig.apply(this, a);
      after && after.call(this, r, a);
      return r;
    };
  };
  // fetch: the first batch (and any other)
  const f = window.fetch;
  window.fetch = function (url, init) {
    const at = (new Error().stack || '').split('\n').filter((l) => l.includes('analytics.min.js')).slice(0, 1).map((l) => l.replace(/^.*analytics.min.js:/, '').replace(/\)$/, '')).join();
    mark(`fetch ${String(url).replace(/^https?:\/\/[^/]+/, '')}${init && init.keepalive ? ' keepalive' : ''} from ${at}`);
    return f.apply(this, arguments).then((r) => (mark(`fetch answered ${r.status}`), r));
  };
  // IndexedDB
  wrapProto(IDBFactory.prototype, 'open', (a) => mark(`idb open ${a[0]}`), (req) => {
    req.addEventListener('success', () => mark('idb open success'));
    req.addEventListener('upgradeneeded', () => mark('idb upgradeneeded'));
  });
  let tn = 0;
  wrapProto(IDBDatabase.prototype, 'transaction', null, (t, a) => {
    const n = ++tn;
    mark(`idb tx#${n} ${a[1] || 'readonly'} begin`);
    t.addEventListener('complete', () => mark(`idb tx#${n} complete`));
  });
  for (const op of ['getAll', 'put', 'delete', 'clear', 'get']) wrapProto(IDBObjectStore.prototype, op, () => mark(`idb ${op}`));
  // Web Locks
  if (navigator.locks) {
    const L = Object.getPrototypeOf(navigator.locks);
    const req = L.request;
    L.request = function (name, options, fn) {
      if (typeof options == 'function') (fn = options), (options = {});
      mark(`lock request ${name}`);
      return req.call(this, name, options, (lock) => (mark(`lock granted ${name}`), fn(lock)));
    };
    const q = L.query;
    L.query = function () {
      mark('lock query');
      return q.call(this).then((r) => (mark('lock query answered'), r));
    };
  }
  // localStorage / cookies
  wrapProto(Storage.prototype, 'getItem', (a) => mark(`localStorage.getItem ${a[0]}`));
  wrapProto(Storage.prototype, 'setItem', (a) => mark(`localStorage.setItem ${a[0]}`));
  const cookie = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
  Object.defineProperty(Document.prototype, 'cookie', {
    configurable: true,
    get() {
      mark('cookie read');
      return cookie.get.call(this);
    },
    set(v) {
      mark(`cookie write ${String(v).split('=')[0]}`);
      cookie.set.call(this, v);
    },
  });
  // start-up steps: the MessageChannel tasks (src/entry/browser.ts `later`)
  const MC = window.MessageChannel;
  window.MessageChannel = function () {
    const c = new MC();
    const port = c.port1;
    let step = 0;
    Object.defineProperty(port, 'onmessage', {
      set(fn) {
        MessagePort.prototype.__lookupSetter__('onmessage').call(port, function (e) {
          const n = ++step;
          mark(`step ${n} begin (bundle response end ${bundle()})`);
          try {
            return fn.call(this, e);
          } finally {
            mark(`step ${n} end`);
          }
        });
      },
    });
    return c;
  };
  window.MessageChannel.prototype = MC.prototype;
  // timers of 0 ms (the scheduler's `arm(0)`)
  const st = window.setTimeout;
  window.setTimeout = function (fn, ms, ...rest) {
    if (!ms && typeof fn == 'function') {
      const at = (new Error().stack || '').split('\n').filter((l) => l.includes('analytics.min.js')).slice(0, 3).map((l) => l.replace(/^.*analytics.min.js:/, '').replace(/\)$/, '')).join(' < ');
      mark(`setTimeout 0 from ${at}`);
      const g = fn;
      fn = function () {
        mark('setTimeout 0 fired');
        return g.apply(this, arguments);
      };
    }
    return st.call(this, fn, ms, ...rest);
  };
  // chunk scripts
  wrapProto(Node.prototype, 'appendChild', (a) => a[0] instanceof HTMLScriptElement && mark(`script inserted ${a[0].src.replace(/^.*\//, '')}`));
  document.addEventListener('DOMContentLoaded', () => mark('DOMContentLoaded'));
  // the bundle's first statement reads document.currentScript (src/entry/browser.ts `self`)
  const cs = Object.getOwnPropertyDescriptor(Document.prototype, 'currentScript');
  Object.defineProperty(Document.prototype, 'currentScript', {
    configurable: true,
    get() {
      const s = cs.get.call(this);
      if (s && s.src) mark(`currentScript read ${s.src.replace(/^.*\//, '')}`);
      return s;
    },
  });
  // The bundle's evaluation begins: the first script element whose src is the bundle runs
  new MutationObserver((list) => {
    for (const m of list) for (const n of m.addedNodes) if (n.src && n.src.includes('analytics')) {
      mark(`script added ${n.src.replace(/^.*\//, '')}`);
      n.addEventListener('load', () => mark(`script load ${n.src.replace(/^.*\//, '')}`));
    }
  }).observe(document, { childList: true, subtree: true });
}

const r1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

async function one(browser, servers, pageName) {
  const ctx = await browser.newContext();
  await ctx.addInitScript(instrument);
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: RATE });
  try {
    servers.reset();
    await page.goto(`${servers.site.url}/${pageName}.html`, { waitUntil: 'commit' });
    await page.waitForFunction(() => window.__marks && window.__marks.some((m) => m[1].startsWith('fetch answered')), null, { timeout: 20000 });
    const marks = await page.evaluate(() => window.__marks);
    const bundleEnd = await page.evaluate(() => window.__bundleEnd());
    const res = await page.evaluate(() =>
      performance.getEntriesByType('resource').filter((e) => /analytics\.|v1\/batch/.test(e.name)).map((e) => `${e.name.replace(/^.*\//, '')} start ${e.startTime.toFixed(0)} req ${e.requestStart.toFixed(0)} resp ${e.responseStart.toFixed(0)}-${e.responseEnd.toFixed(0)}`),
    );
    if (TIMELINE) console.log(pageName, res.join('; '));
    return { marks, bundleEnd };
  } finally {
    await cdp.detach().catch(() => {});
    await ctx.close();
  }
}

let where = (s) => s;
async function main() {
  snapshotDist();
  const mapFile = path.join(DIST_SNAP, 'analytics.min.js.map');
  if (fs.existsSync(mapFile)) {
    const map = JSON.parse(fs.readFileSync(mapFile, 'utf8'));
    const dec = decodeMappings(map.mappings);
    // line:col of the bundle (1-based) → src file:line
    where = (s) =>
      s.replace(/(\d+):(\d+)/g, (m, l, c) => {
        const o = originalPosition(map, dec, l - 1, c - 1);
        return o ? `${o.source.replace(/^.*src\//, '')}:${o.line}` : m;
      });
  }
  const servers = await startAll();
  const browser = await chromium.launch({ headless: true, executablePath, args: CHROMIUM_ARGS });
  try {
    for (const p of PAGES) await one(browser, servers, p); // warm-up
    const all = Object.fromEntries(PAGES.map((p) => [p, []]));
    for (let i = 0; i < RUNS; i++) for (const p of PAGES) all[p].push(await one(browser, servers, p));
    for (const p of PAGES) {
      const runs = all[p];
      // the first occurrence of each stamp name (numbers in names kept: tx#n, step n)
      const names = [];
      for (const r of runs) for (const [, w] of r.marks) if (!names.includes(w.replace(/\(.*\)/, ''))) names.push(w.replace(/\(.*\)/, ''));
      const at = (r, name) => r.marks.find(([, w]) => w.replace(/\(.*\)/, '') == name)?.[0];
      const firstFetch = (r) => r.marks.find(([, w]) => w.startsWith('fetch /v1/batch'))?.[0];
      console.log(`\n== ${p} at ${RATE}x CPU, ${RUNS} runs: bundle response end ${median(runs.map((r) => r.bundleEnd))} ms, first fetch ${median(runs.map(firstFetch))} ms (runs: ${runs.map(firstFetch).join(', ')}); gap ${median(runs.map((r) => firstFetch(r) - r.bundleEnd))} ms`);
      const key = (r, w) => r.marks.find(([, x]) => x.startsWith(w))?.[0];
      const KEYS = ['currentScript read analytics.min.js', 'script load analytics.min.js', 'step 1 begin', 'step 1 end', 'step 2 begin', 'step 2 end', 'step 3 begin', 'step 3 end', 'script load analytics.extend.min.js', 'fetch /v1/batch'];
      console.log(`per run: bundle end | ${KEYS.join(' | ')}`);
      for (const r of runs) console.log(`  ${r.bundleEnd} | ${KEYS.map((k) => key(r, k) ?? '-').join(' | ')}`);
      console.log(`medians: ${r1(median(runs.map((r) => r.bundleEnd)))} | ${KEYS.map((k) => r1(median(runs.map((r) => key(r, k))))).join(' | ')}`);
      const rows = names.map((n) => [median(runs.map((r) => at(r, n))), n]).filter(([t]) => Number.isFinite(t)).sort((a, b) => a[0] - b[0]);
      for (const [t, n] of rows) console.log(`${t.toFixed(1).padStart(8)}  ${n}`);
      if (TIMELINE) {
        console.log(`-- run 1 timeline (bundle response end ${runs[0].bundleEnd})`);
        for (const [t, w] of runs[0].marks) console.log(`${t.toFixed(1).padStart(8)}  ${where(w)}`);
      }
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
