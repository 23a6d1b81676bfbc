import { test, expect, watchErrors } from './fixtures';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startStatic } from '../collector/static.mjs';

// Two small Vite apps built from the packed package, as a front-end team builds theirs: one imports only the core
// (`svc-analytics/core`), the other the `svc-analytics` entry and its helpers. The helpers' tables must tree-shake
// away from the first, and both apps must work in the browser. Also measured: what the helpers cost an app.

const root = fileURLToPath(new URL('..', import.meta.url));
const ECOMMERCE = fs.readFileSync(path.join(root, 'src/helpers/ecommerce.ts'), 'utf8').match(/const EVENTS = `([^`]*)`/)![1].split('\n');
const SEMANTIC = fs.readFileSync(path.join(root, 'src/helpers/semantic.ts'), 'utf8').match(/const TABLE = `([^`]*)`/)![1].split('\n').map((r) => r.split('|')[0]);
// A line of the debug tools' ecommerce checker (src/debug/debug.ts): loaded on `debug(true)` only, in every app.
const CHECKER = 'product_id sku category name brand variant';

const APPS = {
  lean: `import { AnalyticsBrowser } from 'svc-analytics/core';
const q = new URLSearchParams(location.search);
const analytics = AnalyticsBrowser.load({ writeKey: q.get('key') }, { apiHost: q.get('api') });
analytics.track('Lean App Opened', { helpers: typeof analytics.ecommerce });
`,
  helpers: `import { AnalyticsBrowser } from 'svc-analytics';
const q = new URLSearchParams(location.search);
const analytics = AnalyticsBrowser.load({ writeKey: q.get('key') }, { apiHost: q.get('api') });
analytics.ecommerce.orderCompleted({ order_id: 'o1', total: 12.5 });
analytics.semantic.experimentViewed({ experiment_id: 'e1' });
`,
};
type App = keyof typeof APPS;

interface Built {
  dir: string;
  /** The JavaScript the page loads at start (its entry chunk), and the chunks it may import later. */
  entry: string;
  lazy: string[];
}

const gzip = (s: string) => zlib.gzipSync(s, { level: 9 }).length;

test.describe('Vite apps built from the packed package', () => {
  let project: string;
  const built = {} as Record<App, Built>;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-analytics-apps-'));
    // Installed as npm would: the tarball unpacked into node_modules (its one dependency linked from ours).
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 }),
    )[0];
    const pkg = path.join(project, 'node_modules', 'svc-analytics');
    fs.mkdirSync(pkg, { recursive: true });
    execFileSync('tar', ['-xzf', path.join(project, packed.filename), '-C', pkg, '--strip-components=1'], { timeout: 30_000 });
    fs.symlinkSync(path.join(root, 'node_modules', 'idb-keyval'), path.join(project, 'node_modules', 'idb-keyval'));
    fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "apps", "private": true, "type": "module" }');
    for (const app of Object.keys(APPS) as App[]) {
      const dir = path.join(project, app);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>app</title><script type="module" src="/main.js"></script>\n');
      fs.writeFileSync(path.join(dir, 'main.js'), APPS[app]);
      // Vite's own production build (its defaults: minified, tree-shaken, dynamic imports as chunks of their own).
      execFileSync(process.execPath, [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: dir, stdio: 'pipe', timeout: 60_000 });
      const html = fs.readFileSync(path.join(dir, 'dist', 'index.html'), 'utf8');
      const entryFile = html.match(/<script type="module"[^>]* src="\/([^"]+)"/)![1];
      const assets = fs.readdirSync(path.join(dir, 'dist', 'assets')).filter((f) => f.endsWith('.js'));
      built[app] = {
        dir: path.join(dir, 'dist'),
        entry: fs.readFileSync(path.join(dir, 'dist', entryFile), 'utf8'),
        lazy: assets.filter((f) => 'assets/' + f != entryFile).map((f) => fs.readFileSync(path.join(dir, 'dist', 'assets', f), 'utf8')),
      };
    }
  });
  test.afterAll(() => project && fs.rmSync(project, { recursive: true, force: true }));

  test('an app that imports only svc-analytics/core carries no helper table; the helpers app carries both; neither loads the debug checker at start', async ({}, testInfo) => {
    const { lean, helpers } = built;
    for (const name of [...ECOMMERCE, ...SEMANTIC]) {
      expect(lean.entry, name).not.toContain(name);
      expect(helpers.entry, name).toContain(name);
    }
    for (const app of [lean, helpers]) {
      expect(app.entry).not.toContain(CHECKER);
      // the checker is there, as a chunk of its own, for debug(true)
      expect(app.lazy.some((chunk) => chunk.includes(CHECKER))).toBe(true);
    }
    const sizes = {
      lean: { minified: lean.entry.length, gzip: gzip(lean.entry) },
      helpers: { minified: helpers.entry.length, gzip: gzip(helpers.entry) },
    };
    testInfo.annotations.push({ type: 'sizes', description: JSON.stringify(sizes) });
    console.log(`Vite apps, entry chunk: core only ${sizes.lean.minified} B minified, ${sizes.lean.gzip} B gzip; with the helpers ${sizes.helpers.minified} B, ${sizes.helpers.gzip} B gzip`);
    // The two tables are about 1.5 KB minified, 0.6 KB gzip (measured); the rest of the apps is the same code.
    expect(sizes.helpers.minified - sizes.lean.minified).toBeGreaterThan(1_000);
    expect(sizes.helpers.gzip - sizes.lean.gzip).toBeGreaterThan(400);
  });

  for (const app of Object.keys(APPS) as App[]) {
    test(`the ${app} app works in the browser: its events arrive, and only its entry chunk is loaded`, async ({ page, collector }) => {
      const server = await startStatic({ root: built[app].dir, port: 0 });
      try {
        const errors = await watchErrors(page);
        const scripts: string[] = [];
        page.on('request', (r) => r.resourceType() == 'script' && scripts.push(new URL(r.url()).pathname));
        await page.goto(`${server.url}/?${new URLSearchParams({ api: collector.url, key: collector.writeKey })}`);
        if (app == 'lean') {
          const [m] = await collector.waitFor(1, { event: 'Lean App Opened' });
          expect(m).toMatchObject({ type: 'track', properties: { helpers: 'undefined' }, context: { library: { name: 'svc-analytics' } } });
        } else {
          const got = await collector.waitFor(2, { type: 'track' });
          expect(got.map((m) => [m.event, m.properties])).toEqual([
            ['Order Completed', { order_id: 'o1', total: 12.5 }],
            ['Experiment Viewed', { experiment_id: 'e1' }],
          ]);
        }
        expect(scripts).toHaveLength(1);
        expect(errors).toEqual([]);
        expect(await collector.violations()).toEqual([]);
      } finally {
        await server.close();
      }
    });
  }
});
