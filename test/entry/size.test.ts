// @vitest-environment node
import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

// Bytes are deterministic, so the budgets in size-budget.json are checked on every test run (after `npm run build`).
const budgets: Record<string, Record<string, number>> = JSON.parse(readFileSync('size-budget.json', 'utf8'));
const measure = (file: string) => {
  const b = readFileSync(file);
  return {
    minified: b.length,
    gzip: gzipSync(b, { level: 9 }).length,
    brotli: brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  } as Record<string, number>;
};

describe('size budget', () => {
  for (const [file, budget] of Object.entries(budgets).filter(([f]) => f != '_')) {
    for (const [kind, max] of Object.entries(budget)) {
      it(`${file} stays within ${max} bytes ${kind}`, () => {
        expect(measure(file)[kind]).toBeLessThanOrEqual(max);
      });
    }
  }
  it('the bundle is one IIFE with no eval or new Function', () => {
    const js = readFileSync('dist/analytics.min.js', 'utf8');
    // (terser writes the wrapper as an arrow where it may: unsafe_arrows, rollup.config.mjs)
    expect(js.startsWith('!function(){') || js.startsWith('(function') || (js.startsWith('(()=>{') && js.trimEnd().endsWith('})();'))).toBe(true);
    expect(js).not.toMatch(/\beval\(|new Function\(|import\(/);
  });
  it('no shipped file evaluates code: the stub, the bundle, every chunk and every npm entry (eval, new Function, Function)', () => {
    const files = readdirSync('dist').filter((f) => /\.(js|mjs|cjs)$/.test(f));
    // (every file the CDN serves: a new chunk is checked without being named here)
    expect(files).toEqual(expect.arrayContaining(['snippet.min.js', 'analytics.min.js', 'analytics.debug.min.js', 'analytics.plan.min.js', 'index.mjs', 'index.cjs']));
    const found = files.filter((f) => /\beval\s*\(|\bFunction\s*\(|\bFunction\s*`/.test(readFileSync(`dist/${f}`, 'utf8')));
    expect(found).toEqual([]);
  });
  it('the tracking-plan checker is a chunk of its own, with no eval or new Function (it runs under a strict CSP)', () => {
    const plan = readFileSync('dist/analytics.plan.min.js', 'utf8');
    expect(plan).not.toMatch(/\beval\(|new Function\(|import\(/);
    expect(plan).toContain('an event of the plan');
    expect(readFileSync('dist/analytics.min.js', 'utf8')).not.toContain('an event of the plan');
  });
  it('the debug tools (the ecommerce type checker, formatted console output) are not in the bundle, but in their own file', () => {
    const js = readFileSync('dist/analytics.min.js', 'utf8');
    const debug = readFileSync('dist/analytics.debug.min.js', 'utf8');
    for (const text of ['should be ', 'product_id sku category', 'console.warn'])
      expect({ text, inBundle: js.includes(text), inDebugTools: debug.includes(text) }).toEqual({ text, inBundle: false, inDebugTools: true });
  });
  it('source middleware, plugins and the check of what they pass on are an edge (CONTRACT section 1): in dist/analytics.extend.min.js, not in the bundle', () => {
    const js = readFileSync('dist/analytics.min.js', 'utf8');
    const extend = readFileSync('dist/analytics.extend.min.js', 'utf8');
    for (const text of ['did not pass message', '(after source middleware and plugins)', 'rawEvent'])
      expect({ text, inBundle: js.includes(text), inChunk: extend.includes(text) }).toEqual({ text, inBundle: false, inChunk: true });
  });
  it("the middleware chunk carries no second copy of the bundle's message code: it uses the bundle's (src/extend/lib.ts)", () => {
    const js = readFileSync('dist/analytics.min.js', 'utf8');
    const extend = readFileSync('dist/analytics.extend.min.js', 'utf8');
    // the serialiser's escapes, the UTF-8 count, the size refusal, the Date check: in the bundle only
    for (const text of ['ud800-', ' bytes, over the ', 'toISOString'])
      expect({ text, inBundle: js.includes(text), inChunk: extend.includes(text) }).toEqual({ text, inBundle: true, inChunk: false });
    // every shared function read at a place of the list (rollup.config.mjs reads the order from src/extend/lib.ts)
    const used = [...extend.matchAll(/\w\[(-?\d+)\]\(\.\.\.\w\)/g)].map((m) => +m[1]);
    expect(used.length).toBeGreaterThan(5);
    const names = [...readFileSync('src/extend/lib.ts', 'utf8').matchAll(/^ {2}(\w+): typeof \w+,$/gm)];
    expect(used.every((i) => i >= 0 && i < names.length)).toBe(true);
  });
  it('trackLink/trackForm and the watch of trackPageViews are an edge (CONTRACT section 1): in dist/analytics.sources.min.js, not in the bundle', () => {
    const js = readFileSync('dist/analytics.min.js', 'utf8');
    const sources = readFileSync('dist/analytics.sources.min.js', 'utf8');
    for (const text of ['http://www.w3.org/1999/xlink', 'a[href],area[href]', 'formtarget', 'requestAnimationFrame'])
      expect({ text, inBundle: js.includes(text), inChunk: sources.includes(text) }).toEqual({ text, inBundle: false, inChunk: true });
    // (every URL change is heard by the bundle from its load: back/forward and hash changes before an app's router, so
    // the page view stays first; pushState and replaceState so that a change made before the chunk came, or on a page
    // whose chunk cannot load, is still a page view: src/api/analytics.ts `watchPages`)
    for (const text of ['hashchange', 'popstate', 'pushState']) expect({ text, inBundle: js.includes(text), inChunk: sources.includes(text) }).toEqual({ text, inBundle: true, inChunk: false });
  });
});
