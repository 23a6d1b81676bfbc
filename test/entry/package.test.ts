// @vitest-environment node
import { afterAll, afterEach, beforeAll, describe, it, expect } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ROOT, demoLoad, freePort, run, startCli, stopAll } from '../cli-helpers';

// The package's public entry points, resolved the way a user's bundler or Node resolves them: by name, through
// the `exports` map (run after `npm run build`).
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

describe('package exports', () => {
  it('resolves svc-analytics/snippet to the generator, and it works', async () => {
    const { snippet } = await import('svc-analytics/snippet');
    const js = snippet({ writeKey: 'wk', apiHost: 'api.example.com', page: true });
    expect(js).toContain('analytics.load("wk",{"apiHost":"api.example.com"})');
    expect(js).toContain('analytics.page()');
  });

  it('resolves svc-analytics to the npm entry with AnalyticsBrowser', async () => {
    const mod = await import('svc-analytics');
    expect(typeof mod.AnalyticsBrowser.load).toBe('function');
  });

  it('require() gets the CommonJS entries, with the same exports as the ES modules', async () => {
    const req = createRequire(import.meta.url);
    expect(req.resolve('svc-analytics')).toMatch(/dist[\\/]index\.cjs$/);
    expect(req.resolve('svc-analytics/snippet')).toMatch(/dist[\\/]snippet-gen\.cjs$/);
    expect(req.resolve('svc-analytics/core')).toMatch(/dist[\\/]core\.cjs$/);
    const cjs = req('svc-analytics');
    const esm = await import('svc-analytics');
    expect(Object.keys(cjs).sort()).toEqual(Object.keys(esm).sort());
    expect(Object.keys(req('svc-analytics/core'))).toEqual(Object.keys(await import('svc-analytics/core')));
    const gen = req('svc-analytics/snippet');
    const genEsm = await import('svc-analytics/snippet');
    expect(Object.keys(gen).sort()).toEqual(Object.keys(genEsm).sort());
    expect(gen.snippet({ writeKey: 'k' })).toBe(genEsm.snippet({ writeKey: 'k' }));
  });

  it('lists types first in every set of conditions, and the files it names exist', () => {
    const req = createRequire(import.meta.url);
    const walk = (name: string, target: any) => {
      if (typeof target == 'string') {
        expect(() => readFileSync(target), `${name}: ${target}`).not.toThrow();
        return;
      }
      const keys = Object.keys(target);
      if (keys.includes('types')) expect(keys[0], name).toBe('types');
      expect(keys.at(-1), `${name}: default (or require) last`).toMatch(/^(default|require)$/);
      for (const [cond, t] of Object.entries(target)) walk(`${name} ${cond}`, t);
    };
    for (const [name, target] of Object.entries<any>(pkg.exports)) {
      walk(name, target);
      if (typeof target == 'string') expect(() => req.resolve('svc-analytics/' + name.slice(2)), name).not.toThrow();
    }
    expect(pkg.type).toBe('module');
    expect(pkg.main).toBe('./dist/index.cjs');
    expect(pkg.module).toBe('./dist/index.mjs');
    for (const f of [pkg.main, pkg.module, pkg.types, pkg.unpkg, pkg.jsdelivr]) expect(() => readFileSync(f), f).not.toThrow();
    for (const files of Object.values<string[]>(pkg.typesVersions['*'])) for (const f of files) expect(() => readFileSync(f), f).not.toThrow();
  });

  it('lists the files with side effects (the scripts), so that bundlers keep `import "svc-analytics/analytics.min.js"`', () => {
    // (and svc-analytics/service-worker, whose import adds the worker's `sync` listener)
    expect(pkg.sideEffects).toEqual(['./dist/analytics.min.js', './dist/snippet.min.js', './dist/analytics.debug.min.js', './dist/analytics.extend.min.js', './dist/analytics.sources.min.js', './dist/analytics.plan.min.js', './dist/service-worker.mjs', './dist/service-worker.cjs', './dist/service-worker.js']);
    for (const f of pkg.sideEffects) expect(() => readFileSync(f), f).not.toThrow();
    // ...and every one of them is an export of its own
    for (const f of pkg.sideEffects) expect(JSON.stringify(pkg.exports)).toContain(JSON.stringify(f));
  });

  it('has the metadata of a published package (license file, changelog, links, engines)', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync('LICENSE', 'utf8')).toMatch(/^MIT License/);
    expect(readFileSync('CHANGELOG.md', 'utf8')).toContain(`## ${pkg.version}`);
    expect(pkg.repository.url).toMatch(/github\.com\/svc\/svc-analytics/);
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.bugs.url).toMatch(/^https:\/\//);
    expect(pkg.engines.node).toBe('>=18');
    expect(pkg.unpkg).toBe('./dist/analytics.min.js');
    expect(pkg.jsdelivr).toBe('./dist/analytics.min.js');
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'bin', 'collector', 'demo', 'playwright']));
  });

  it("the README's links work on the npm page too (no relative links to files of the repository)", () => {
    const readme = readFileSync('README.md', 'utf8');
    const relative = [...readme.matchAll(/\]\((?!https?:|#|mailto:)([^)]+)\)/g)].map((m) => m[1]);
    expect(relative).toEqual([]);
  });
});

// npm run check:package: publint and @arethetypeswrong/cli on the packed tarball (a few seconds).
describe('the packed package', () => {
  it('passes publint and arethetypeswrong (npm run check:package)', () => {
    const r = spawnSync(process.execPath, ['scripts/check-package.mjs'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr + r.stdout).toMatch(/publint: all good/);
    expect(r.status, r.stderr + r.stdout).toBe(0);
  }, 60_000);

  // Installed as npm would (the tarball unpacked into node_modules), used from a project of its own.
  let project: string;
  beforeAll(() => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-analytics-installed-'));
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))[0];
    const dir = path.join(project, 'node_modules', 'svc-analytics');
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-xzf', path.join(project, packed.filename), '-C', dir, '--strip-components=1']);
    fs.symlinkSync(path.join(ROOT, 'node_modules', 'idb-keyval'), path.join(project, 'node_modules', 'idb-keyval'));
    fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "app", "private": true }');
  }, 30_000);
  afterEach(stopAll);
  afterAll(() => project && fs.rmSync(project, { recursive: true, force: true }));

  // On this Node, and on Node 18, the oldest that `engines` names (.ci/run fetches it: NODE18_PATH or .tmp/node18).
  const node18 = [process.env.NODE18_PATH, path.join(ROOT, '.tmp/node18/bin/node')].find((p) => p && fs.existsSync(p));
  if (!node18) console.warn('package test: no Node 18 (NODE18_PATH or .tmp/node18/bin/node; .ci/run fetches it): the package runs on this Node only' + (process.env.CI ? '' : ', skipped'));
  const nodes = [process.execPath, ...(node18 ? [node18] : process.env.CI ? ['(Node 18 is missing)'] : [])];
  it.each(nodes)('require() works on Node (CommonJS app), and so does import (ES module app): %s', (node) => {
    expect(fs.existsSync(node), 'Node 18 (.ci/run fetches it)').toBe(true);
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    expect(version).toMatch(node == process.execPath ? /^v\d+\./ : /^v18\./);
    const cjs = spawnSync(node, ['-e', `
      const { AnalyticsBrowser } = require('svc-analytics');
      const { snippet, BUNDLE_INTEGRITY } = require('svc-analytics/snippet');
      const core = require('svc-analytics/core');
      const api = AnalyticsBrowser.load({ writeKey: 'k' });
      if (typeof core.AnalyticsBrowser.load({ writeKey: 'k' }).track != 'function') throw new Error('svc-analytics/core');
      Promise.all([api.ready(), api.flush(), api.track('x').catch((e) => e.code)]).then(([, , code]) =>
        console.log(JSON.stringify({ load: typeof AnalyticsBrowser.load, code, snippet: snippet({ writeKey: 'k' }).includes('analytics.load("k")'), sri: BUNDLE_INTEGRITY.slice(0, 7) })));
    `], { cwd: project, encoding: 'utf8', timeout: 10_000 });
    expect(cjs.stderr).toBe('');
    expect(JSON.parse(cjs.stdout)).toEqual({ load: 'function', code: 'not_loaded', snippet: true, sri: 'sha384-' });
    const esm = spawnSync(node, ['--input-type=module', '-e', `
      import { AnalyticsBrowser } from 'svc-analytics';
      import { snippet } from 'svc-analytics/snippet';
      import { AnalyticsBrowser as Core } from 'svc-analytics/core';
      console.log(typeof AnalyticsBrowser.load, typeof snippet, typeof Core.load);
    `], { cwd: project, encoding: 'utf8', timeout: 10_000 });
    expect(esm.stderr).toBe('');
    expect(esm.stdout.trim()).toBe('function function function');
    const cli = spawnSync(node, [path.join(project, 'node_modules/svc-analytics/bin/svc-analytics.mjs'), '--version'], { cwd: project, encoding: 'utf8', timeout: 10_000 });
    expect(cli.stdout.trim()).toBe(pkg.version);
  });

  it('its types compile in an app under moduleResolution bundler, node16 (CommonJS and ESM) and node10 (nodenext: attw)', async () => {
    // The app uses every entry with types (the global one too) and checks the package's declarations fully (no skipLibCheck).
    const app = `
      import { AnalyticsBrowser, type LoadOptions, type OrderCompletedProperties } from 'svc-analytics';
      import { AnalyticsBrowser as Core, type CoreAnalytics } from 'svc-analytics/core';
      const lean: CoreAnalytics = Core.load({ writeKey: 'k' });
      void lean.on('ready', () => {}).track('Lean');
      import { snippet, BUNDLE_INTEGRITY, type SnippetOptions } from 'svc-analytics/snippet';
      import type {} from 'svc-analytics/global';
      const options: LoadOptions = { flushAt: 3, consent: { categories: ['analytics'] } };
      const analytics = AnalyticsBrowser.load({ writeKey: 'k' }, options);
      const order: OrderCompletedProperties = { order_id: 'o1' };
      void analytics.ecommerce.orderCompleted(order);
      void analytics.ready().then(() => analytics.flush());
      const gen: SnippetOptions = { writeKey: 'k', cdnUrl: '/a.js', integrity: true, trackPageViews: true };
      export const text: string = snippet(gen) + BUNDLE_INTEGRITY;
      void window.analytics.track('Signed Up', { plan: 'pro' });
    `;
    fs.writeFileSync(path.join(project, 'app.ts'), app);
    fs.writeFileSync(path.join(project, 'app.mts'), app);
    // One `tsc -b` over a project per resolution (one process: the DOM lib is read once).
    const configs: [string, string, string, string][] = [
      ['bundler', 'bundler', 'esnext', 'app.ts'],
      ['node16-cjs', 'node16', 'node16', 'app.ts'], // package.json without "type": CommonJS, so `require` conditions and .d.cts
      ['node16-esm', 'node16', 'node16', 'app.mts'],
      ['node10', 'node10', 'commonjs', 'app.ts'],
    ];
    for (const [name, moduleResolution, module, file] of configs) {
      const compilerOptions = { composite: true, noEmit: true, strict: true, lib: ['es2020', 'dom'], target: 'es2020', moduleResolution, module, tsBuildInfoFile: `.tsbuildinfo.${name}` };
      fs.writeFileSync(path.join(project, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files: [file] }));
    }
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ files: [], references: configs.map(([name]) => ({ path: `./tsconfig.${name}.json` })) }));
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [tsc, '-b', '--verbose'], { cwd: project });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const timer = setTimeout(() => child.kill(), 50_000);
      child.on('close', (code) => (clearTimeout(timer), resolve({ code, out })));
    });
    expect(result.out).not.toMatch(/error TS/);
    expect(result.code, result.out).toBe(0);
    for (const [name] of configs) expect(result.out).toContain(`Building project '${path.join(project, `tsconfig.${name}.json`)}'`);
  }, 60_000);

  it.each(nodes)('works in Jest (CommonJS, as Jest loads packages): require, a call refused on the server, ready() settling: %s', (node) => {
    fs.writeFileSync(
      path.join(project, 'app.test.js'),
      `const { AnalyticsBrowser } = require('svc-analytics');
const { snippet } = require('svc-analytics/snippet');
test('the package works under Jest', async () => {
  const analytics = AnalyticsBrowser.load({ writeKey: 'k' });
  await expect(analytics.track('X')).rejects.toMatchObject({ code: 'not_loaded' });
  await analytics.ready();
  expect(snippet({ writeKey: 'k' })).toContain('analytics.load("k")');
});
`,
    );
    const jest = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
    const r = spawnSync(node, [jest, '--rootDir', project, '--ci', '--watchman=false'], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stderr).toMatch(/1 passed/);
  }, 60_000);

  it("a bundler keeps `import 'svc-analytics/analytics.min.js'` (sideEffects) and drops the unused npm entry", async () => {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    fs.writeFileSync(path.join(project, 'side-effects.mjs'), "import 'svc-analytics/analytics.min.js';\nimport { AnalyticsBrowser } from 'svc-analytics';\n");
    const build = await rollup({ input: path.join(project, 'side-effects.mjs'), plugins: [nodeResolve({ browser: true, rootDir: project })], external: ['idb-keyval'], logLevel: 'silent' });
    const { output } = await build.generate({ format: 'es' });
    await build.close();
    const bundle = readFileSync(path.join(ROOT, 'dist', 'analytics.min.js'), 'utf8');
    expect(output[0].code.length).toBeGreaterThan(bundle.length * 0.9);
    expect(output[0].code).toContain('__svcAnalyticsTest');
    expect(output[0].code).not.toContain('AnalyticsBrowser');
  });

  it('npx svc-analytics start works from the installed package: the demo, its bundle, and a collector on --port', async () => {
    const cli = path.join(project, 'node_modules', 'svc-analytics', 'bin', 'svc-analytics.mjs');
    expect(run(['--version'], project, cli).stdout.trim()).toBe(pkg.version);
    const port = await freePort();
    const { demo, inspector } = await startCli(['start', '--port', String(port), '--site-port', '0', '--no-log'], project, cli);
    expect(inspector).toBe(`http://127.0.0.1:${port}`);
    const html = await (await fetch(demo + '/')).text();
    expect(demoLoad(html).options.apiHost).toBe(inspector);
    expect(html).not.toContain('not found; run npm run build');
    expect((await fetch(demo + '/dist/analytics.min.js')).status).toBe(200);
    expect((await fetch(demo + '/shop.js')).status).toBe(200);
    expect((await fetch(inspector + '/')).status).toBe(200);
  });
});
