// The product page's main thread as Lighthouse sees it (npm lighthouse, pinned; Node API), for `npm run bench`:
// lh-<lib>.html (the library's snippet with load + page() in <head>, 5 track() calls at the end of <body>) and
// lh-none.html (the same page without analytics), each loaded RUNS times by Lighthouse's mobile preset with
// devtools throttling (4x CPU slowdown through CDP, Lighthouse's mobile Slow 4G network), in Debian's Chromium
// launched by chrome-launcher (CHROMIUM_PATH, else /usr/bin/chromium; --headless=new --no-sandbox --disable-gpu).
// Per run: Total Blocking Time, the bootup-time audit's rows (scripting + parse/compile per script URL; threshold
// lowered to 0 so small scripts are listed too), the URLs the page requested (all must be on 127.0.0.1), and, from
// the run's trace, the main thread's tasks over 50 ms in which our bundle ran, with what ran in them (the trace's
// FunctionCall/EvaluateScript/TimerFire events and the sampled CPU profile, positions in dist/analytics.min.js mapped
// back through dist/analytics.min.js.map).
import fs from 'node:fs';
import path from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { decodeMappings, originalPosition } from './profile.mjs';
import { args as CHROMIUM_ARGS } from '../scripts/chromium.mjs';

export const LH_LONG_TASK_MS = 50;
const OUR_URL_END = '/dist/analytics.min.js';

/** Mobile Slow 4G as Lighthouse's mobile preset has it (constants.throttling.mobileSlow4G), 4x CPU. */
const MOBILE_SLOW_4G = { rttMs: 150, throughputKbps: 1.6 * 1024, requestLatencyMs: 150 * 3.75, downloadThroughputKbps: 1.6 * 1024 * 0.9, uploadThroughputKbps: 750 * 0.9, cpuSlowdownMultiplier: 4 };

export const LH_CONFIG = {
  extends: 'lighthouse:default',
  settings: {
    formFactor: 'mobile',
    throttlingMethod: 'devtools',
    throttling: MOBILE_SLOW_4G,
    onlyAudits: ['total-blocking-time', 'bootup-time', 'network-requests', 'first-contentful-paint', 'interactive', 'mainthread-work-breakdown'],
    disableFullPageScreenshot: true,
    maxWaitForLoad: 30000,
  },
  audits: [{ path: 'bootup-time', options: { thresholdInMs: 0 } }],
};

export async function launchChrome(chromePath) {
  return chromeLauncher.launch({
    chromePath,
    chromeFlags: ['--headless=new', ...CHROMIUM_ARGS],
    logLevel: 'silent',
  });
}

/** One Lighthouse run of `url` in the Chrome at `port`: the numbers of that run, and our long tasks. */
export async function lighthouseRun(url, port, { bundle, map, profile = false } = {}) {
  const config = profile ? { ...LH_CONFIG, settings: { ...LH_CONFIG.settings, additionalTraceCategories: 'disabled-by-default-v8.cpu_profiler' } } : LH_CONFIG;
  const runner = await lighthouse(url, { port, output: 'json', logLevel: process.env.LH_LOG || 'error' }, config);
  if (process.env.LH_TIMING) console.error(runner.lhr.timing.entries.filter((e) => e.duration > 300).map((e) => `${e.name} ${Math.round(e.duration)}`).join('\n'));
  const lhr = runner.lhr;
  const a = lhr.audits;
  const out = {
    tbt: a['total-blocking-time']?.numericValue,
    fcp: a['first-contentful-paint']?.numericValue,
    tti: a.interactive?.numericValue,
    bootup: (a['bootup-time']?.details?.items || []).map((i) => ({ url: i.url, total: i.total, scripting: i.scripting, parse: i.scriptParseCompile })),
    mainThread: a['mainthread-work-breakdown']?.numericValue,
    requests: (a['network-requests']?.details?.items || []).map((i) => i.url),
    runtimeError: lhr.runtimeError?.message || null,
    warnings: lhr.runWarnings || [],
  };
  const trace = runner.artifacts?.Trace || runner.artifacts?.traces?.defaultPass;
  if (trace) out.ourLongTasks = ourLongTasks(trace.traceEvents, { bundle, map });
  return out;
}

/** Which thread is the page's main thread: the one that evaluated the most scripts of the page's origin. */
function mainThreadOf(events) {
  const counts = new Map();
  for (const e of events) {
    if ((e.name === 'EvaluateScript' || e.name === 'v8.compile') && e.args?.data?.url?.startsWith('http://127.0.0.1')) {
      const k = `${e.pid}:${e.tid}`;
      counts.set(k, (counts.get(k) || 0) + 1);
    }
  }
  let best = null;
  for (const [k, n] of counts) if (!best || n > best[1]) best = [k, n];
  return best && best[0];
}

/** The sampled CPU profile of the trace (Profile + ProfileChunk events of one thread): nodes and timed samples. */
function cpuProfileOf(events, pid, tid) {
  const nodes = new Map();
  const samples = [];
  const starts = events.filter((e) => e.name === 'Profile' && e.pid === pid);
  for (const start of starts) {
    const id = start.id;
    let t = start.args?.data?.startTime ?? start.ts;
    const chunks = events.filter((e) => e.name === 'ProfileChunk' && e.pid === pid && e.id === id).sort((x, y) => x.ts - y.ts);
    for (const c of chunks) {
      const p = c.args?.data?.cpuProfile || {};
      for (const n of p.nodes || []) nodes.set(n.id, n);
      const deltas = c.args?.data?.timeDeltas || [];
      (p.samples || []).forEach((s, i) => {
        t += deltas[i] || 0;
        samples.push({ t, id: s });
      });
    }
  }
  return { nodes, samples };
}

/**
 * Tasks over LH_LONG_TASK_MS on the main thread that ran code of our bundle (a FunctionCall, EvaluateScript or
 * compile of it, or a CPU sample in it), each with: start (ms from navigation start), duration, the task's entry
 * events (what the browser ran: script evaluation, timer, message, ...), and our functions with the most samples
 * (self, and on the stack at all), mapped back to source names.
 */
export function ourLongTasks(events, { bundle = '', map = null } = {}) {
  const main = mainThreadOf(events);
  if (!main) return { error: 'no main thread found in the trace' };
  const [pid, tid] = main.split(':').map(Number);
  const nav = events.filter((e) => e.name === 'navigationStart' && e.pid === pid).sort((x, y) => x.ts - y.ts).pop();
  const t0 = nav ? nav.ts : 0;
  const onMain = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X');
  const tasks = onMain.filter((e) => (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask') && e.dur > LH_LONG_TASK_MS * 1000);
  const { nodes, samples } = cpuProfileOf(events, pid, tid);
  const parentOf = new Map();
  for (const n of nodes.values()) if (n.parent !== undefined) parentOf.set(n.id, n.parent);
  for (const n of nodes.values()) for (const c of n.children || []) parentOf.set(c, n.id);
  const decoded = map ? decodeMappings(map.mappings) : null;
  const lines = bundle.split('\n');
  const isOurs = (url) => !!url && url.endsWith(OUR_URL_END);
  const nameOf = (cf) => {
    const gen = `${cf.functionName || '(anonymous)'}`;
    if (!isOurs(cf.url)) return `${gen} (${cf.url ? cf.url.replace(/^https?:\/\/[^/]+/, '') + ':' + ((cf.lineNumber ?? 0) + 1) : 'native'})`;
    const o = decoded ? originalPosition(map, decoded, cf.lineNumber, cf.columnNumber) : null;
    const where = `analytics.min.js:${cf.lineNumber + 1}:${cf.columnNumber + 1}`;
    if (!o) return `${gen} [${where}] \`${(lines[cf.lineNumber] || '').slice(cf.columnNumber, cf.columnNumber + 40)}\``;
    return `${o.name || gen} (${o.source.replace(/^(\.\.\/)+/, '')}:${o.line}) [${gen} at ${where}]`;
  };
  const out = [];
  for (const task of tasks) {
    const end = task.ts + task.dur;
    const inside = onMain.filter((e) => e !== task && e.ts >= task.ts && e.ts + (e.dur || 0) <= end);
    const ourEvents = inside.filter((e) => isOurs(e.args?.data?.url) || isOurs(e.args?.data?.stackTrace?.[0]?.url));
    const taskSamples = samples.filter((s) => s.t >= task.ts && s.t <= end);
    let ourSamples = 0;
    const self = new Map();
    const total = new Map();
    for (const s of taskSamples) {
      const n = nodes.get(s.id);
      if (!n) continue;
      const seen = new Set();
      let anyOurs = false;
      for (let cur = s.id; cur !== undefined; cur = parentOf.get(cur)) {
        const node = nodes.get(cur);
        if (!node) break;
        if (isOurs(node.callFrame.url)) {
          anyOurs = true;
          const k = nameOf(node.callFrame);
          if (!seen.has(k)) {
            seen.add(k);
            total.set(k, (total.get(k) || 0) + 1);
          }
        }
      }
      if (anyOurs) ourSamples++;
      const k = n.callFrame.url || !['(program)', '(idle)', '(root)'].includes(n.callFrame.functionName) ? nameOf(n.callFrame) : n.callFrame.functionName;
      if (anyOurs || isOurs(n.callFrame.url)) self.set(k, (self.get(k) || 0) + 1);
    }
    if (!ourEvents.length && !ourSamples) continue;
    // The task's entries: the outermost events inside it, by kind (what the browser ran in it).
    const entries = inside
      .filter((e) => ['EvaluateScript', 'FunctionCall', 'TimerFire', 'EventDispatch', 'v8.compile', 'v8.compileModule', 'ParseHTML', 'FireAnimationFrame', 'RunMicrotasks', 'V8.GC_MC_BACKGROUND', 'MajorGC', 'MinorGC', 'V8.GCScavenger', 'v8.produceCache'].includes(e.name))
      .map((e) => {
        const d = e.args?.data || {};
        const fn = d.functionName ? `${d.functionName}` : '';
        const at = d.url ? `${d.url.replace(/^https?:\/\/[^/]+/, '')}${d.lineNumber != null ? ':' + d.lineNumber + ':' + (d.columnNumber ?? 1) : ''}` : '';
        let mapped = '';
        // Trace event positions are 1-based (the CPU profile's call frames are 0-based).
        if (isOurs(d.url) && d.lineNumber != null && e.name === 'FunctionCall') mapped = nameOf({ functionName: fn, url: d.url, lineNumber: d.lineNumber - 1, columnNumber: Math.max(0, (d.columnNumber ?? 1) - 1) });
        return { name: e.name, ms: (e.dur || 0) / 1000, fn, at, mapped, start: (e.ts - t0) / 1000 };
      });
    const top = (m) => [...m.entries()].sort((x, y) => y[1] - x[1]).slice(0, 8).map(([name, n]) => ({ name, samples: n, pct: (100 * n) / Math.max(1, taskSamples.length) }));
    out.push({
      start: (task.ts - t0) / 1000,
      ms: task.dur / 1000,
      samples: taskSamples.length,
      ourSamples,
      entries: entries.filter((e) => e.ms >= 1).sort((x, y) => y.ms - x.ms).slice(0, 8),
      selfTop: top(self),
      totalTop: top(total),
    });
  }
  return { tasks: out, thread: main, profileSamples: samples.length };
}

/** Sums the bootup-time rows of a library's own scripts (`match(url)`): scripting + parse/compile, ms. */
export function bootupOf(run, match) {
  const rows = (run.bootup || []).filter((r) => match(r.url));
  if (!rows.length) return { total: 0, scripting: 0, parse: 0, urls: [] };
  return {
    total: rows.reduce((s, r) => s + r.total, 0),
    scripting: rows.reduce((s, r) => s + r.scripting, 0),
    parse: rows.reduce((s, r) => s + r.parse, 0),
    urls: rows.map((r) => r.url),
  };
}

export function readMap(dir, file) {
  const f = path.join(dir, file);
  return fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, 'utf8')) : null;
}
