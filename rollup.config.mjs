import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import typescript from '@rollup/plugin-typescript';
import terser from '@rollup/plugin-terser';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { dts } from 'rollup-plugin-dts';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
/** Where the snippet loads the bundle from by default. */
const CDN_URL = 'https://cdn.svc.example/analytics.js/v1/analytics.min.js';
/** The localStorage key where the stub keeps the calls it records (src/stub/snippet.ts, src/stub/buffer.ts). */
const BUFFER_KEY = 'svc_buffer';

// Build-time constants, replaced in the source text.
const constants = () => ({
  name: 'constants',
  transform: (code) => ({ code: code.replaceAll('__VERSION__', pkg.version).replaceAll('__CDN_URL__', JSON.stringify(CDN_URL)).replaceAll('__BUFFER_KEY__', JSON.stringify(BUFFER_KEY)), map: null }),
});
// `__PAGE_ONLY__` (src/offline/scope.ts): true in the CDN bundle, which runs in pages only (its worker checks fold
// away), false in the npm builds (they run in workers and extensions too).
// In the CDN bundle each call `hasDocument()` is `true` too, so that rollup drops the worker-only branches (and
// modules: offline/worker-storage.ts) before terser, which does not always inline it.
const pageOnly = (value) => ({
  name: 'page-only',
  transform: (code) =>
    code.includes('__PAGE_ONLY__') || (value && code.includes('hasDocument()'))
      ? { code: code.replaceAll('__PAGE_ONLY__', String(value)).replaceAll(value ? 'hasDocument()' : '\0', 'true'), map: null }
      : null,
});
// `'__CHUNK_SRI__'` in the bundle's source: the SRI hash of the lazy chunk, built by the configuration before it; the
// bundle sets it on the chunk's <script> when its own <script> has an `integrity` (a site that pins the bundle pins
// what it loads too).
// (`'__PLAN_SRI__'`: the same for the tracking-plan chunk, in the lazy chunk that loads it.)
// (sha256, the shortest hash SRI takes: the bundle carries three, base64 that brotli cannot shorten; sha384 would add
// 63 B brotli to every page. The bundle itself, which sites pin, keeps sha384: see `SRI_HASH`.)
const chunkSri = (placeholder = '__CHUNK_SRI__', file = 'analytics.debug.min.js') => ({
  name: 'chunk-sri',
  transform: (code) => (code.includes(placeholder) ? { code: code.replaceAll(placeholder, sriOf(file)), map: null } : null),
});
// `import stub from 'virtual:snippet'`: the minified stub built by the first configuration below.
const snippetText = () => ({
  name: 'snippet-text',
  resolveId: (id) => (id == 'virtual:snippet' ? id : null),
  load: (id) => (id == 'virtual:snippet' ? `export default ${JSON.stringify(readFileSync('dist/snippet.min.js', 'utf8').trim())};` : null),
});
// Subresource Integrity of the files a page loads by URL: written as dist/sri.json (and `<file>.sri`) once the
// browser configurations are built, and inlined in the snippet generator (`snippet({ integrity: true })`).
const SRI_FILES = ['analytics.min.js', 'analytics.debug.min.js', 'analytics.extend.min.js', 'analytics.sources.min.js', 'analytics.plan.min.js'];
// The hash of each file in dist/sri.json: the one the library itself sets (the chunks' by the bundle), sha384 for the bundle.
const SRI_HASH = (file) => (file == 'analytics.min.js' ? 'sha384' : 'sha256');
const sriOf = (file, hash = SRI_HASH(file)) => hash + '-' + createHash(hash).update(readFileSync(`dist/${file}`)).digest('base64');
const sriManifest = () => ({
  name: 'sri-manifest',
  writeBundle() {
    if (!SRI_FILES.every((f) => { try { return readFileSync(`dist/${f}`), true; } catch { return false; } })) return;
    const sri = Object.fromEntries(SRI_FILES.map((f) => [f, sriOf(f)]));
    writeFileSync('dist/sri.json', JSON.stringify(sri, null, 2) + '\n');
    for (const [f, hash] of Object.entries(sri)) writeFileSync(`dist/${f}.sri`, hash + '\n');
  },
});
// `__BUNDLE_SRI__` in the generator's source: the SRI hash of the bundle built by the second configuration below.
const sriText = () => ({
  name: 'sri-text',
  transform: (code) => ({ code: code.replaceAll('__BUNDLE_SRI__', JSON.stringify(sriOf('analytics.min.js'))), map: null }),
});
// rollup-plugin-dts turns the declarations reached through `export type * from` (src/index.ts) into value exports:
// only what the built module really exports (its `export { ... }` line) stays a value export, the rest becomes
// `export type`, as in the source (so `import { createEcommerce } from 'svc-analytics'` is an error, as at run time).
const typeOnlyExports = (moduleFile) => ({
  name: 'type-only-exports',
  renderChunk(code) {
    const js = readFileSync(moduleFile, 'utf8');
    const values = new Set([...js.matchAll(/^export \{([^}]*)\};?$/gm)].flatMap((m) => m[1].split(',').map((n) => n.trim().split(/\s+as\s+/).pop())));
    return code.replace(/^export \{([^}]*)\};$/m, (_, list) => {
      const names = list.split(',').map((n) => n.trim()).filter(Boolean);
      const kept = names.filter((n) => values.has(n.split(/\s+as\s+/).pop()));
      const types = names.filter((n) => !kept.includes(n));
      return [kept.length && `export { ${kept.join(', ')} };`, types.length && `export type { ${types.join(', ')} };`].filter(Boolean).join('\n');
    });
  },
});
// The middleware chunk's imports of the bundle's message code (src/extend/lib.ts): in that chunk's build only, each
// of these modules is one that reads the function from `lib`, which the bundle gives as it loads the chunk, so that
// the chunk does not carry a second copy (a constant is inlined from the source).
const SHARED = { 'message/validate': ['byteLength', 'copyJSON', 'ownKeys', 'sanitize', 'stringify', 'timestamp', 'tooLarge'], 'message/boundary': ['isObject'], 'message/errors': ['analyticsError', 'describe'], 'message/message': ['over'] };
const shared = () => ({
  name: 'shared',
  resolveId(source, importer) {
    if (!importer || !source.startsWith('.')) return null;
    const file = resolvePath(dirname(importer), source).replace(/\.ts$/, '');
    const name = Object.keys(SHARED).find((m) => file.endsWith('/src/' + m));
    return name ? '\0shared:' + name : null;
  },
  load(id) {
    if (!id.startsWith('\0shared:')) return null;
    const name = id.slice(8);
    const order = [...readFileSync('src/extend/lib.ts', 'utf8').matchAll(/^ {2}(\w+): typeof \w+,$/gm)].map((m) => m[1]);
    const limit = /MESSAGE_LIMIT = (\d+)/.exec(readFileSync('src/message/validate.ts', 'utf8'))[1];
    return [
      `import { lib } from ${JSON.stringify(resolvePath('src/extend/lib.ts'))};`,
      ...SHARED[name].map((f) => `export const ${f} = (...a) => lib[${order.indexOf(f)}](...a);`),
      name == 'message/validate' ? `export const MESSAGE_LIMIT = ${limit};` : '',
    ].join('\n');
  },
});
const ts = () => typescript({ tsconfig: './tsconfig.json', declaration: false, noEmitOnError: true });
// Our code's `Promise` is the engine's own, taken from an async function, whatever a page puts (or put) in
// window.Promise: old polyfills and libraries (zone.js) replace it. (async/await already use the engine's own.) For the
// bundle and every chunk that makes promises.
const ENGINE_PROMISE = 'const Promise = (async () => {})().constructor;';
const min = (extra = {}) =>
  terser({
    ecma: 2020,
    // (hoist_funs and 5 passes: 52 B brotli fewer in the bundle than the defaults and 3 passes)
    compress: { passes: 5, hoist_funs: true, pure_getters: true, unsafe_arrows: true },
    mangle: { properties: { regex: /^_/ } },
    format: { comments: false },
    ...extra,
  });

export default [
  {
    input: 'src/stub/snippet.ts',
    output: { file: 'dist/snippet.min.js', format: 'es' },
    // (no line end after it: a site pastes it inside its own <script>; every byte of its 1,000 counts)
    plugins: [constants(), ts(), min({ toplevel: true }), { name: 'trim', generateBundle: (_, bundle) => Object.values(bundle).forEach((f) => f.code && (f.code = f.code.trimEnd())) }],
  },
  {
    // The tracking-plan checker (CONTRACT section 7), loaded for a `plan` load option only, by the lazy chunk, which
    // carries its SRI hash (built before it).
    input: 'src/entry/plan-browser.ts',
    output: { file: 'dist/analytics.plan.min.js', format: 'iife' },
    plugins: [ts(), min()],
  },
  {
    // The middleware chunk (source middleware and plugins: an edge, CONTRACT section 1), loaded by the bundle on the
    // first `addSourceMiddleware()` or `register()`. Built before the bundle, which carries its SRI hash. It uses the
    // bundle's message code (`shared` above).
    input: 'src/entry/extend-browser.ts',
    // (the engine's own Promise, as the bundle's below: a page's polyfill, zone.js's, would make the stage's promises
    // ones the bundle does not take for promises)
    output: { file: 'dist/analytics.extend.min.js', format: 'iife', intro: ENGINE_PROMISE },
    plugins: [shared(), ts(), min()],
  },
  {
    // The sources chunk (trackLink/trackForm: an edge, CONTRACT section 1), loaded by the bundle on the first of those
    // calls. Built before the bundle, which carries its SRI hash.
    input: 'src/entry/sources-browser.ts',
    output: { file: 'dist/analytics.sources.min.js', format: 'iife' },
    plugins: [ts(), min()],
  },
  {
    // The lazy chunk, loaded by the bundle on `debug(true)`, `linkDomains`, `serverCookies` or a `plan` option. Built before the
    // bundle, which carries its SRI hash.
    input: 'src/entry/debug-browser.ts',
    output: { file: 'dist/analytics.debug.min.js', format: 'iife', intro: ENGINE_PROMISE },
    // (nodeResolve: the take-over of other pages' calls reaches modules that import idb-keyval, none of it used here)
    plugins: [chunkSri('__PLAN_SRI__', 'analytics.plan.min.js'), nodeResolve({ browser: true }), ts(), min()],
  },
  {
    input: 'src/entry/browser.ts',
    output: {
      file: 'dist/analytics.min.js',
      format: 'iife',
      // A map for profiles and stack traces (bench/profile.mjs reads it); `hidden`: the bundle does not point to it.
      sourcemap: 'hidden',
      intro: ENGINE_PROMISE,
    },
    plugins: [constants(), pageOnly(true), chunkSri(), chunkSri('__EXTEND_SRI__', 'analytics.extend.min.js'), chunkSri('__SOURCES_SRI__', 'analytics.sources.min.js'), nodeResolve({ browser: true }), ts(), min(), sriManifest()],
  },
  {
    // The npm entries, `svc-analytics` (index) and `svc-analytics/core` (without the helper namespaces), as .mjs
    // (import) and .cjs (require: Node 18+, Jest). What they share is a chunk of its own (npm.mjs), and so are the
    // debug tools (debug.mjs), imported on `debug(true)` only.
    input: { index: 'src/entry/index.ts', core: 'src/entry/core.ts' },
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].mjs', chunkFileNames: '[name].mjs' },
      { dir: 'dist', format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: '[name].cjs', exports: 'named' },
    ],
    external: Object.keys(pkg.dependencies),
    plugins: [constants(), pageOnly(false), ts()],
  },
  {
    // svc-analytics/service-worker: for a site's own service worker (src/offline). As a module for bundlers, and as
    // one self-contained classic script (dist/service-worker.js, idb-keyval inside) for `importScripts` from the
    // site's own origin.
    input: 'src/entry/service-worker.ts',
    output: [
      { file: 'dist/service-worker.mjs', format: 'es' },
      { file: 'dist/service-worker.cjs', format: 'cjs', exports: 'named' },
    ],
    external: Object.keys(pkg.dependencies),
    plugins: [ts()],
  },
  {
    input: 'src/entry/service-worker.ts',
    output: { file: 'dist/service-worker.js', format: 'iife', name: 'svcAnalyticsServiceWorker' },
    plugins: [nodeResolve({ browser: true }), ts(), min()],
  },
  {
    // svc-analytics/plan: the same checker for Node (the collector's --plan, the kit, `svc-analytics plan`).
    input: 'src/entry/plan.ts',
    output: [
      { file: 'dist/plan.mjs', format: 'es' },
      { file: 'dist/plan.cjs', format: 'cjs', exports: 'named' },
    ],
    plugins: [ts()],
  },
  {
    input: 'src/entry/snippet-gen.ts',
    output: [
      { file: 'dist/snippet-gen.mjs', format: 'es' },
      { file: 'dist/snippet-gen.cjs', format: 'cjs', exports: 'named' },
    ],
    plugins: [snippetText(), sriText(), ts()],
  },
  {
    // svc-analytics/global: types only (window.analytics for snippet users); empty modules so that it resolves at run
    // time too (`import type {} from 'svc-analytics/global'` is erased anyway).
    input: 'src/entry/global.ts',
    output: [
      { file: 'dist/global.mjs', format: 'es' },
      { file: 'dist/global.cjs', format: 'cjs' },
    ],
    plugins: [ts()],
    onwarn: (w, warn) => w.code != 'EMPTY_BUNDLE' && warn(w),
  },
  // The declarations: one self-contained file per entry, as .d.ts (for `import`) and .d.cts (for `require`), so
  // that they resolve under every moduleResolution (bundler, node16/nodenext in ESM and CommonJS, node10).
  ...['index', 'core', 'snippet-gen', 'global', 'plan', 'service-worker'].map((name) => ({
    input: `src/entry/${name}.ts`,
    output: [
      { file: `dist/${name}.d.ts`, format: 'es' },
      { file: `dist/${name}.d.cts`, format: 'es' },
    ],
    external: Object.keys(pkg.dependencies),
    plugins: [dts({ tsconfig: './tsconfig.json' }), typeOnlyExports(`dist/${name}.mjs`)],
  })),
];
