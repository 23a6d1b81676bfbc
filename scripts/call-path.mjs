#!/usr/bin/env node
// The call path of `analytics.track('x')` to `fetch`, measured in real Chromium (issue 28: "from the API method to
// `fetch`, at most 15 calls through at most 8 files").
//
//   npm run build && node scripts/call-path.mjs [--json] [--min]
//
// How: a page loads the bundle through our snippet (no page() call), waits for `ready` and for a quiet spell, then
// calls `analytics.track('x')` once. CDP pauses the page at the call of `fetch` (`Debugger.setBreakpointOnFunctionCall`
// on the page's own `window.fetch`, the function the library took at load: delivery/platform.ts), with async stack
// traces on (`Debugger.setAsyncCallStackDepth`), and reads the paused stack: its synchronous frames, then each async
// parent (`asyncStackTrace`: the stack that queued the promise reaction or armed the timer the frames below run in),
// up to the page's own call of `track`. Each frame is mapped through the bundle's source map to its src/ file and line,
// and named by the function of src/ that encloses that line (TypeScript's parser).
//
// The counting rule: a call is a frame of the library on that chain, from the API method (`track`, included) to the
// frame that calls `fetch` (included); `fetch` itself, the page's own code and the engine's frames are not counted.
// Frames are counted as the stack shows them: a function that schedules the next step (a `.then`, a timer) counts
// once in the async segment where it ran; functions that ran and returned before the next step (reading the page,
// building the message, IndexedDB writes, ...) are not on the chain and are not counted (they are work, not hops).
// `files` is the number of distinct src/ files among those frames.
//
// Besides the chain, what ran from the call to the fetch, on the chain or not (V8's precise coverage, its counters reset
// just before the call): every function of the bundle with its call count, the gate's entries among them (the `_`
// methods of privacy/gate.ts: `_admit` and `_commit` are the call's; `_open` is delivery asking before it sends), and
// the looks at the middleware stage (`active`). This is the upper figure (IndexedDB writes, timers of delivery and of
// the page-exit cover included); the chain is the one the bound holds.
//
// Which build: by default an unminified copy of the bundle (the CDN bundle's rollup configuration without terser,
// written to .tmp/call-path/), so that the count is the code's structure: terser inlines small functions, which then
// vanish from the stack. `--min` measures the shipped dist/analytics.min.js with its source map instead (what runs).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { decodeMappings, originalPosition } from '../bench/profile.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TMP = path.join(ROOT, '.tmp', 'call-path');
const WAIT_MS = 15000;

/** Builds the CDN bundle without terser (same rollup configuration otherwise), with a source map: its path. */
export async function buildPlain() {
  const { rollup } = await import('rollup');
  const configs = (await import(pathToFileURL(path.join(ROOT, 'rollup.config.mjs')).href)).default;
  const config = configs.find((c) => c.input == 'src/entry/browser.ts');
  if (!config) throw new Error('rollup.config.mjs: no configuration for src/entry/browser.ts');
  const plugins = config.plugins.filter((p) => p && p.name != 'terser' && p.name != 'sri-manifest');
  const bundle = await rollup({ input: config.input, plugins, onwarn: () => {} });
  const file = path.join(TMP, 'analytics.js');
  await bundle.write({ file, format: 'iife', sourcemap: true, intro: config.output.intro });
  await bundle.close();
  return file;
}

// The function of a src/ file that encloses a line and column (1-based), named as a reader would find it.
const parsed = new Map();
function enclosing(file, line, column) {
  let sf = parsed.get(file);
  if (!sf) parsed.set(file, (sf = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true)));
  const pos = sf.getPositionOfLineAndCharacter(line - 1, column - 1);
  let found;
  const visit = (node) => {
    if (pos < node.getStart(sf) || pos >= node.getEnd()) return;
    if (ts.isFunctionLike(node) && node.body) found = node;
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (!found) return '(top level)';
  const nameOf = (n) => (n.name && ts.isIdentifier(n.name) ? n.name.text : n.name?.getText(sf));
  const own = nameOf(found);
  if (own) return own;
  const p = found.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return nameOf(p);
  // (a callback: named by what it is given to, and where)
  if (ts.isCallExpression(p)) {
    const callee = ts.isPropertyAccessExpression(p.expression) ? p.expression.name.text : p.expression.getText(sf);
    return `${callee}(callback) in ${enclosing(file, ...lineCol(sf, p.getStart(sf)))}`;
  }
  // (a function another function returns: `const arm = alarm(...)`)
  if (ts.isReturnStatement(p) || (ts.isArrowFunction(p) && p.body == found)) return `returned by ${enclosing(file, ...lineCol(sf, p.getStart(sf)))}`;
  return `(anonymous, line ${lineCol(sf, found.getStart(sf))[0]})`;
}
const lineCol = (sf, pos) => {
  const { line, character } = sf.getLineAndCharacterOfPosition(pos);
  return [line + 1, character + 1];
};

/** The source map of a bundle, ready for `originalPosition`. */
function loadMap(file) {
  const map = JSON.parse(fs.readFileSync(file + '.map', 'utf8'));
  // (sources are relative to the map's folder: made relative to the repository)
  map.sources = map.sources.map((s) => path.relative(ROOT, path.resolve(path.dirname(file), map.sourceRoot || '', s)));
  return { map, decoded: decodeMappings(map.mappings) };
}

/** Serves the page, the bundle (as /analytics.js) and the API (answers every batch 200). */
async function serve(bundleFile) {
  const { snippet } = await import(pathToFileURL(path.join(ROOT, 'dist', 'snippet-gen.mjs')).href);
  const server = http.createServer((req, res) => {
    if (req.method == 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': 'content-type,authorization', 'Access-Control-Allow-Methods': 'POST' });
      return res.end();
    }
    if (req.url == '/') {
      const text = snippet({ writeKey: 'callpath', cdnUrl: '/analytics.js', apiHost: `${origin}/api`, page: false });
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      return res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Call path</title><link rel="icon" href="data:,"><script>${text}</script></head><body>call path</body></html>`);
    }
    if (req.url == '/analytics.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'no-store' });
      return res.end(fs.readFileSync(bundleFile));
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' });
      res.end('{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, close: () => new Promise((r) => server.close(r)) };
}

/**
 * Measures the chain in `page` (a Playwright page of Chromium): `bundleFile` is served with its map (`bundleFile.map`).
 * Returns { calls, files, chain: [{ file, line, fn, segment }], segments } (segment: 0 for the synchronous frames, then
 * each async parent's description).
 */
export async function measure(page, bundleFile) {
  const { map, decoded } = loadMap(bundleFile);
  const server = await serve(bundleFile);
  try {
    const cdp = await page.context().newCDPSession(page);
    // (a paused frame's `url` is deprecated, and empty in recent Chromium: its script's URL is known by id)
    const scripts = new Map();
    cdp.on('Debugger.scriptParsed', (s) => scripts.set(s.scriptId, s.url));
    await cdp.send('Debugger.enable');
    await cdp.send('Debugger.setAsyncCallStackDepth', { maxDepth: 64 });
    await page.goto(server.origin + '/');
    await page.evaluate(() => new Promise((r) => window.analytics.ready(() => r())));
    // A quiet spell: whatever start-up scheduled has run (the first message of a quiet spell goes at once).
    await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    // Every function that runs from the call to the fetch, counted (V8's precise coverage: counters reset just before).
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    const { result } = await cdp.send('Runtime.evaluate', { expression: 'window.fetch' });
    await cdp.send('Debugger.setBreakpointOnFunctionCall', { objectId: result.objectId });
    const paused = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no fetch within ${WAIT_MS} ms of track()`)), WAIT_MS);
      cdp.once('Debugger.paused', async (event) => {
        clearTimeout(timer);
        try {
          // (parents past the depth kept inline come by id)
          const segments = [{ description: 'sync', callFrames: event.callFrames.map((f) => ({ url: scripts.get(f.location.scriptId), lineNumber: f.location.lineNumber, columnNumber: f.location.columnNumber })) }];
          let trace = event.asyncStackTrace;
          let id = event.asyncStackTraceId;
          while (trace || id) {
            if (!trace) trace = (await cdp.send('Debugger.getStackTrace', { stackTraceId: id })).stackTrace;
            segments.push({ description: trace.description || 'async', callFrames: trace.callFrames.map((f) => ({ ...f, url: f.url || scripts.get(f.scriptId) })) });
            id = trace.parentId;
            trace = trace.parent;
          }
          const { result: coverage } = await cdp.send('Profiler.takePreciseCoverage');
          resolve({ segments, coverage });
        } catch (e) {
          reject(e);
        } finally {
          cdp.send('Debugger.resume').catch(() => {});
        }
      });
    });
    await cdp.send('Profiler.takePreciseCoverage');
    await page.evaluate(() => void window.analytics.track('x'));
    const { segments, coverage } = await paused;
    await cdp.send('Profiler.stopPreciseCoverage');
    await cdp.send('Debugger.disable');
    await cdp.detach();
    const bundleUrl = server.origin + '/analytics.js';
    const chain = [];
    for (const s of segments)
      for (const f of s.callFrames) {
        if (f.url != bundleUrl) continue; // the page's own code, the engine's
        const at = originalPosition(map, decoded, f.lineNumber, f.columnNumber);
        if (!at || !at.source.startsWith('src/')) {
          chain.push({ file: at?.source || '(unmapped)', line: at?.line, fn: '?', segment: s.description });
          continue;
        }
        chain.push({ file: at.source, line: at.line, fn: enclosing(at.source, at.line, at.column), segment: s.description });
      }
    // What ran meanwhile: each function of the bundle called at least once, with its count.
    const text = fs.readFileSync(bundleFile, 'utf8');
    const lineStarts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] == '\n') lineStarts.push(i + 1);
    const ran = [];
    for (const script of coverage.filter((c) => c.url == bundleUrl))
      for (const f of script.functions) {
        const { startOffset, count } = f.ranges[0];
        if (!count || !f.functionName && startOffset == 0) continue; // (the script itself)
        let line = lineStarts.length - 1;
        while (lineStarts[line] > startOffset) line--;
        const at = originalPosition(map, decoded, line, startOffset - lineStarts[line]);
        if (!at || !at.source.startsWith('src/')) continue;
        ran.push({ file: at.source, line: at.line, fn: enclosing(at.source, at.line, at.column + 1), count });
      }
    // The gate's entries (its interface: the `_` methods of privacy/gate.ts) and the looks at the middleware stage.
    const gate = {};
    for (const r of ran) if (r.file == 'src/privacy/gate.ts' && r.fn[0] == '_') gate[r.fn] = (gate[r.fn] || 0) + r.count;
    const middleware = ran.filter((r) => r.file.startsWith('src/extend/') && r.fn == 'active').reduce((n, r) => n + r.count, 0);
    return { calls: chain.length, files: new Set(chain.map((c) => c.file)).size, chain, ran, gate, middleware };
  } finally {
    await server.close();
  }
}

/** Prints a measured chain, the fetch end first (as a stack reads). */
export function format({ calls, files, chain, ran, gate, middleware }, label) {
  const lines = [`${label}: ${calls} calls through ${files} files, from track() to fetch (the fetch end first)`];
  let segment;
  for (const c of chain) {
    if (c.segment != segment) lines.push(`  -- ${(segment = c.segment)}`);
    lines.push(`  ${c.file}:${c.line}  ${c.fn}`);
  }
  const invocations = ran.reduce((n, r) => n + r.count, 0);
  lines.push(`Ran from the call to the fetch (on the chain or not, delivery's work included): ${ran.length} functions, ${invocations} calls, in ${new Set(ran.map((r) => r.file)).size} files.`);
  lines.push(`Gate entries (privacy/gate.ts): ${Object.entries(gate).map(([k, v]) => `${k} ${v}`).join(', ')}. Middleware stage looked at: ${middleware}.`);
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) == fileURLToPath(import.meta.url)) {
  const json = process.argv.includes('--json');
  const min = process.argv.includes('--min');
  const { chromium } = await import('@playwright/test');
  const { executablePath, args } = await import('./chromium.mjs');
  const file = min ? path.join(ROOT, 'dist', 'analytics.min.js') : await buildPlain();
  const browser = await chromium.launch({ executablePath, args });
  try {
    const page = await browser.newPage();
    const result = await measure(page, file);
    console.log(json ? JSON.stringify(result, null, 2) : format(result, min ? 'dist/analytics.min.js' : 'the bundle unminified'));
  } finally {
    await browser.close();
  }
}
