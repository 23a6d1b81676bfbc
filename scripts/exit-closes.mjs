#!/usr/bin/env node
// Measures what happens to messages waiting in the queue when the tab is closed: 5 messages wait (below flushAt,
// a minute's flushInterval, so only the page-exit path can send them), the tab is closed as a user closes it,
// then a fresh tab opens the same site (the next load sends what the queue still holds). Each run is:
//   exact       each of the 5 messageIds arrived once
//   duplicated  all arrived, some more than once
//   lost        some never arrived within the bound
// Usage: npm run build && node scripts/exit-closes.mjs [--engine firefox|chromium|webkit] [--runs 50] [--wait-ms 10000]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ENGINES, launch, missing } from '../e2e/engines/driver.mjs';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'firefox' },
    runs: { type: 'string', default: '50' },
    'wait-ms': { type: 'string', default: '10000' },
  },
});
const engineName = values.engine;
const runs = Number(values.runs);
const waitMs = Number(values['wait-ms']);
if (!ENGINES.includes(engineName)) usage(`--engine must be one of ${ENGINES.join(', ')}`);
if (!(Number.isInteger(runs) && runs > 0)) usage('--runs must be a positive integer');
if (!(waitMs > 0 && waitMs <= 30000)) usage('--wait-ms must be 1-30000');
const why = missing(engineName);
if (why) usage(why);
for (const f of ['analytics.min.js', 'snippet.min.js']) {
  if (!fs.existsSync(path.join(ROOT, 'dist', f))) usage(`dist/${f} is missing: run \`npm run build\` first`);
}

function usage(problem) {
  console.error(`exit-closes: ${problem}\nusage: node scripts/exit-closes.mjs [--engine firefox|chromium|webkit] [--runs 50] [--wait-ms 10000]`);
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const collector = await startCollector({ port: 0, quiet: true });
const site = await startStatic({
  root: path.join(ROOT, 'e2e/site'),
  port: 0,
  mounts: { '/dist/': path.join(ROOT, 'dist') },
  snippetFile: path.join(ROOT, 'dist/snippet.min.js'),
});
const api = async (p, init) => (await fetch(collector.url + p, init)).json();
const reset = () => api('/_/reset', { method: 'POST', body: '{}' });
const page = (opts, extra = {}) => {
  const u = new URL('/basic.html', site.url);
  u.searchParams.set('api', collector.url);
  u.searchParams.set('opts', JSON.stringify(opts));
  for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
  return u.toString();
};

/** Polls `fn` in the tab until truthy, at most `ms`. */
async function waitUntil(tab, fn, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await tab.evaluate(fn)) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`page condition not met within ${ms} ms`);
    await sleep(50);
  }
}

async function open(tab, url) {
  await tab.goto(url);
  await waitUntil(tab, () => !!(window.analytics && window.analytics.initialized), 15000);
  await tab.evaluate(() => new Promise((r) => window.analytics.ready(() => r(true))));
}

/** No request in flight and none for `quietMs` (bounded): what a late duplicate would need to show up. */
async function quiet(quietMs = 1500, maxMs = 15000) {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const reqs = await api('/_/requests');
    const lastAt = reqs.reduce((t, r) => Math.max(t, r.at + (r.durationMs || 0)), 0);
    if (!reqs.some((r) => r.status === null) && Date.now() - lastAt >= quietMs) return;
    if (Date.now() > deadline) return;
    await sleep(100);
  }
}

const engine = await launch(engineName);
console.log(`exit-closes: ${engineName} ${engine.version}, ${runs} runs, 5 messages waiting, tab closed, next load bound ${waitMs} ms`);
const totals = { exact: 0, duplicated: 0, lost: 0 };
try {
  for (let run = 1; run <= runs; run++) {
    await reset();
    const ctx = await engine.newContext();
    try {
      const event = `Exit Close ${run}`;
      const tab = await ctx.newTab();
      await open(tab, page({ flushAt: 100, flushInterval: 60000 }));
      // The first message of a quiet spell goes at once: send one, so that the five after it wait for the exit.
      await tab.evaluate(async () => void (await window.analytics.track('First Of The Spell')));
      await api(`/_/messages?event=First%20Of%20The%20Spell&min=1&timeout=10000`);
      const ids = await tab.evaluate(async (name) => {
        const out = [];
        for (let i = 0; i < 5; i++) out.push((await window.analytics.track(name, { i })).event.messageId);
        return out;
      }, event);
      await tab.close();
      const closedAt = Date.now();
      // by the exit path alone, before any other page of the site runs (bounded; usually at once)
      const byExit = (await api(`/_/messages?event=${encodeURIComponent(event)}&min=5&timeout=3000`)).length;
      const nextAt = Date.now();
      const next = await ctx.newTab();
      await open(next, page({ flushInterval: 100 }, { next: '1' }));
      await api(`/_/messages?event=${encodeURIComponent(event)}&min=5&timeout=${waitMs}`);
      await quiet();
      const msgs = await api(`/_/messages?event=${encodeURIComponent(event)}`);
      const counts = ids.map((id) => msgs.filter((m) => m.messageId === id).length);
      const kind = counts.some((n) => n === 0) ? 'lost' : counts.some((n) => n > 1) ? 'duplicated' : 'exact';
      totals[kind] += 1;
      const reqs = (await api('/_/requests')).filter((r) => r.messageIds.some((id) => ids.includes(id)));
      const how = reqs
        .map((r) => `${r.at < nextAt ? 'exit' : 'next load'} ${r.auth === 'body' ? 'beacon' : 'fetch'} ${r.status} x${r.messageIds.filter((id) => ids.includes(id)).length} @${r.at - closedAt}ms`)
        .join('; ');
      console.log(`run ${String(run).padStart(3)}: ${kind.padEnd(10)} arrivals per message [${counts.join(' ')}], ${byExit} before the next load; ${how || 'no request'}`);
    } catch (e) {
      console.log(`run ${String(run).padStart(3)}: error ${e && e.message}`);
      throw e;
    } finally {
      await ctx.close();
    }
  }
} finally {
  await engine.close();
  await site.close();
  await collector.close();
}
console.log(`exit-closes ${engineName}: ${runs} runs: ${totals.exact} exact, ${totals.duplicated} duplicated, ${totals.lost} lost`);
