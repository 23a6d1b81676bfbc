// Bundles e2e/worker/worker-app.js against the built npm entry (dist/index.mjs, `npm run build` first) into one
// classic script, e2e/site/.built/worker.js, served as /.built/worker.js: what a site's bundler makes of a worker
// that imports the package (its chunks inlined: no code loaded from elsewhere).
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { fileURLToPath } from 'node:url';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
let built: Promise<void> | undefined;

export const buildWorker = () =>
  (built ||= (async () => {
    const bundle = await rollup({ input: here('./worker-app.js'), plugins: [nodeResolve({ browser: true })], logLevel: 'silent' });
    await bundle.write({ file: here('../site/.built/worker.js'), format: 'iife', inlineDynamicImports: true });
    await bundle.close();
  })());
