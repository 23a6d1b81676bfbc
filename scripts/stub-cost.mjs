// What the inline stub costs the page: page() + 5 track() + load() made to a stub, in fresh Chromium contexts (no
// throttling), timed in the page with performance.now() from just before the stub's <script> to a microtask queued
// after the last call (so a write the stub leaves to the end of the task is counted).
//
//   node scripts/stub-cost.mjs [--runs 15] [--no-peers] [stub.min.js ...]
// Stubs: the files given (default: dist/snippet.min.js; give a stub built from another commit to compare), then
// Segment's and Customer.io's stubs as the bench reproduces them (unless --no-peers).
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { executablePath, args } from './chromium.mjs';
import { segmentSnippet, cioSnippet } from '../bench/servers.mjs';

const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(argv.splice(runsAt, 2)[1]) : 15;
const peersAt = argv.indexOf('--no-peers');
const peers = peersAt < 0 || !argv.splice(peersAt, 1);
const files = argv.length ? argv : ['dist/snippet.min.js'];

/** Each stub: its text and the global it defines; `load` options that keep it off the network. */
const stubs = files.map((f) => ({ name: f, text: readFileSync(f, 'utf8'), global: 'analytics', opts: { cdnUrl: '/none.js' } }));
if (peers) {
  stubs.push({ name: 'segment (@segment/snippet)', text: segmentSnippet({ apiKey: 'k', load: false, page: false }), global: 'analytics', opts: {} });
  stubs.push({ name: 'customer.io (bench/servers.mjs)', text: cioSnippet({ writeKey: 'k', cdn: '/none', load: false, page: false }), global: 'cioanalytics', opts: {} });
}

const pageFor = (s) => `<!doctype html><html><head><meta charset="utf-8"><title>Stub cost</title><link rel="icon" href="data:,">
<script>window.__t0 = performance.now();</script>
<script>${s.text}</script>
<script>
  var a = window[${JSON.stringify(s.global)}], t1 = performance.now();
  a.page();
  for (var i = 0; i < 5; i++) a.track('Stub Cost ' + i, { i: i });
  a.load('k', ${JSON.stringify(s.opts)});
  var t2 = performance.now();
  // Queued after the stub's own end-of-task work, if any: runs once it is done.
  queueMicrotask(function () { var t3 = performance.now(); window.__cost = { total: t3 - __t0, calls: t3 - t1, end: t3 - t2 }; });
</script></head><body>stub cost</body></html>`;

let current = '';
const server = http.createServer((req, res) => {
  if (req.url == '/') {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(current);
  } else {
    res.writeHead(404);
    res.end();
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({ executablePath, args });
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const med = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return `median ${med.toFixed(2)} ms, mean ${(s.reduce((a, b) => a + b, 0) / s.length).toFixed(2)} ms, min ${s[0].toFixed(2)}, max ${s[s.length - 1].toFixed(2)}`;
};
try {
  // Interleaved (each run loads every stub once, in turn) so that a busy spell of the machine hits them alike.
  const total = stubs.map(() => []);
  const calls = stubs.map(() => []);
  const end = stubs.map(() => []);
  // one round not counted first: the browser's first pages pay for more than the stub
  for (let i = -1; i < RUNS; i++) {
    for (const [k, s] of stubs.entries()) {
      current = pageFor(s);
      const ctx = await browser.newContext(); // fresh: empty localStorage, nothing cached
      const page = await ctx.newPage();
      await page.goto(url);
      const cost = await page.waitForFunction(() => window.__cost).then((h) => h.jsonValue());
      if (i >= 0) total[k].push(cost.total), calls[k].push(cost.calls), end[k].push(cost.end);
      await ctx.close();
    }
  }
  for (const [k, s] of stubs.entries()) {
    console.log(`${s.name} (${s.text.length} B), ${RUNS} fresh contexts`);
    console.log(`  stub + 7 calls + end of task: ${stats(total[k])}`);
    console.log(`  7 calls + end of task:        ${stats(calls[k])}`);
    console.log(`    of which the end of task:   ${stats(end[k])}`);
  }
} finally {
  await browser.close();
  server.close();
}
