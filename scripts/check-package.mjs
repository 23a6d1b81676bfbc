#!/usr/bin/env node
// npm run check:package: packs the package as `npm publish` would and checks the tarball with publint (package.json
// fields, exports, files) and @arethetypeswrong/cli (types under moduleResolution node10, node16/nodenext from CJS
// and ESM, bundler). Exits 1, listing the problems, when either reports one. Needs a build (npm run build).
//
// Accepted on purpose (and only these):
// - the script entries (analytics.min.js, analytics.debug.min.js, snippet.min.js) and sri.json are not modules:
//   they are not type-checked as entry points;
// - svc-analytics/playwright is ESM only (the kit imports the ESM collector): from CommonJS it needs `import()`
//   (or Node's require(esm)), which attw reports as cjs-resolves-to-esm.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => path.join(root, 'node_modules', '.bin', process.platform == 'win32' ? name + '.cmd' : name);
const NOT_MODULES = ['./analytics.min.js', './analytics.debug.min.js', './analytics.extend.min.js', './analytics.sources.min.js', './analytics.plan.min.js', './snippet.min.js', './service-worker.js', './sri.json', './plan.schema.json'];
const ACCEPTED = [{ kind: 'CJSResolvesToESM', entrypoint: './playwright' }];
/** Files the tarball must hold (the CLI's demo, the CommonJS entries and their types, the license...). */
const REQUIRED = ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'bin/svc-analytics.mjs', 'demo/index.html', 'collector/server.mjs',
  'dist/index.mjs', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/core.mjs', 'dist/core.cjs', 'dist/core.d.ts',
  'dist/core.d.cts', 'dist/npm.mjs', 'dist/npm.cjs', 'dist/snippet-gen.mjs', 'dist/snippet-gen.cjs',
  'dist/snippet-gen.d.ts', 'dist/snippet-gen.d.cts', 'dist/analytics.min.js', 'dist/snippet.min.js', 'dist/analytics.debug.min.js', 'dist/analytics.extend.min.js', 'dist/analytics.sources.min.js',
  'dist/sri.json', 'dist/analytics.plan.min.js', 'dist/service-worker.js', 'dist/service-worker.mjs', 'dist/service-worker.d.ts', 'dist/plan.mjs', 'dist/plan.d.ts', 'plan.schema.json', 'playwright/index.mjs', 'playwright/index.d.ts'];

const problems = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-analytics-pack-'));
try {
  if (!fs.existsSync(path.join(root, 'dist', 'index.cjs'))) throw new Error('dist/ is missing or stale: run npm run build first');
  // --ignore-scripts: packs what is built, as it is (no prepack here).
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))[0];
  const tarball = path.join(tmp, packed.filename);
  const files = packed.files.map((f) => f.path);
  for (const f of REQUIRED) if (!files.includes(f)) problems.push(`tarball: ${f} is missing`);
  console.log(`packed ${packed.filename}: ${files.length} files, ${(packed.size / 1024).toFixed(0)} kB (${(packed.unpackedSize / 1024).toFixed(0)} kB unpacked)`);

  const lint = spawnSync(bin('publint'), ['run', tarball, '--strict', '--level', 'suggestion'], { encoding: 'utf8' });
  const lintOut = (lint.stdout + lint.stderr).trim();
  if (lint.status !== 0 || !/All good!/.test(lintOut)) problems.push(`publint:\n${lintOut}`);
  else console.log('publint: all good');

  const attwJson = path.join(tmp, 'attw.json');
  const attw = spawnSync(bin('attw'), [tarball, '--format', 'json', '--exclude-entrypoints', ...NOT_MODULES], { encoding: 'utf8', stdio: ['ignore', fs.openSync(attwJson, 'w'), 'pipe'] });
  let analysis;
  try {
    analysis = JSON.parse(fs.readFileSync(attwJson, 'utf8')).analysis;
  } catch {
    problems.push(`attw: no report (exit ${attw.status}): ${attw.stderr.trim()}`);
  }
  if (analysis) {
    const found = analysis.problems || [];
    const accepted = (p) => ACCEPTED.some((a) => a.kind == p.kind && a.entrypoint == p.entrypoint);
    const bad = found.filter((p) => !accepted(p));
    for (const p of bad) problems.push(`attw: ${p.kind} at ${p.entrypoint ?? ''} (${p.resolutionKind ?? ''}${p.fileName ? ', ' + p.fileName : ''})`);
    const entrypoints = Object.keys(analysis.entrypoints || {});
    for (const e of ['.', './snippet', './playwright']) if (!entrypoints.includes(e)) problems.push(`attw: entry point ${e} not analysed`);
    if (!bad.length) console.log(`attw: all good for ${entrypoints.join(', ')} under node10, node16 (CJS and ESM) and bundler${found.length ? ` (accepted: ${found.map((p) => `${p.kind} at ${p.entrypoint} from ${p.resolutionKind}`).join('; ')})` : ''}`);
  }
} catch (e) {
  problems.push(String(e && e.message || e));
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}

if (problems.length) {
  console.error(`check:package: ${problems.length} problem(s)\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
