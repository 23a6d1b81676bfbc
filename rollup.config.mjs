import { readFileSync } from 'node:fs';
import typescript from '@rollup/plugin-typescript';
import terser from '@rollup/plugin-terser';
import { nodeResolve } from '@rollup/plugin-node-resolve';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
/** Where the snippet loads the bundle from by default. */
const CDN_URL = 'https://cdn.svc.example/analytics.js/v1/analytics.min.js';
/** The localStorage key where the stub keeps the calls it records (src/snippet.ts, src/buffer.ts). */
const BUFFER_KEY = 'svc_buffer';

// Build-time constants, replaced in the source text.
const constants = () => ({
  name: 'constants',
  transform: (code) => ({ code: code.replaceAll('__VERSION__', pkg.version).replaceAll('__CDN_URL__', JSON.stringify(CDN_URL)).replaceAll('__BUFFER_KEY__', JSON.stringify(BUFFER_KEY)), map: null }),
});
// `import stub from 'virtual:snippet'`: the minified stub built by the first configuration below.
const snippetText = () => ({
  name: 'snippet-text',
  resolveId: (id) => (id == 'virtual:snippet' ? id : null),
  load: (id) => (id == 'virtual:snippet' ? `export default ${JSON.stringify(readFileSync('dist/snippet.min.js', 'utf8').trim())};` : null),
});
const ts = () => typescript({ tsconfig: './tsconfig.json', declaration: false, noEmitOnError: true });
const min = (extra = {}) =>
  terser({
    ecma: 2020,
    compress: { passes: 3, pure_getters: true, unsafe_arrows: true },
    mangle: { properties: { regex: /^_/ } },
    format: { comments: false },
    ...extra,
  });

export default [
  {
    input: 'src/snippet.ts',
    output: { file: 'dist/snippet.min.js', format: 'es' },
    plugins: [constants(), ts(), min({ toplevel: true })],
  },
  {
    input: 'src/browser.ts',
    output: {
      file: 'dist/analytics.min.js',
      format: 'iife',
      // A map for profiles and stack traces (bench/profile.mjs reads it); `hidden`: the bundle does not point to it.
      sourcemap: 'hidden',
      // Our code's `Promise` is the engine's own, taken from an async function, whatever a page puts (or put) in
      // window.Promise: old polyfills and libraries replace it. (async/await already use the engine's own.)
      intro: 'const Promise = (async () => {})().constructor;',
    },
    plugins: [constants(), nodeResolve({ browser: true }), ts(), min()],
  },
  {
    // Loaded by the bundle on `debug(true)` only.
    input: 'src/debug-browser.ts',
    output: { file: 'dist/analytics.debug.min.js', format: 'iife' },
    plugins: [ts(), min()],
  },
  {
    input: 'src/index.ts',
    // index.mjs, and the debug tools as a chunk of their own (debug.mjs), imported on `debug(true)` only.
    output: { dir: 'dist', format: 'es', entryFileNames: 'index.mjs', chunkFileNames: '[name].mjs' },
    external: Object.keys(pkg.dependencies),
    plugins: [constants(), ts()],
  },
  {
    input: 'src/snippet-gen.ts',
    output: { file: 'dist/snippet-gen.mjs', format: 'es' },
    plugins: [snippetText(), ts()],
  },
];
