// A Manifest V3 extension built from the packed package (e2e/extension/build.ts), loaded unpacked into Chromium
// (CONTRACT section 1, "workers and extensions"): its service worker and its popup track and their events arrive; its
// service worker stopped (as the browser stops an idle one) with messages waiting, then woken: none is lost, none
// arrives twice; and the built extension holds no remotely loaded code.
import { chromium, type BrowserContext, type Worker } from '@playwright/test';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executablePath, args } from '../scripts/chromium.mjs';
import { test, expect, quiet, expectExactlyOnce } from './fixtures';
import { buildExtension } from './extension/build';

test.describe.configure({ timeout: 90_000 });

let dir = '';
let context: BrowserContext;
let worker: Worker;
let extensionId = '';

test.beforeAll(async ({ collector }) => {
  test.setTimeout(120_000);
  dir = await buildExtension(collector.url);
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'svc-ext-profile-')), {
    executablePath,
    headless: true,
    args: [...args, `--disable-extensions-except=${dir}`, `--load-extension=${dir}`, '--disable-features=DisableLoadExtensionCommandLineSwitch'],
  });
  worker = context.serviceWorkers()[0] || (await context.waitForEvent('serviceworker'));
  extensionId = new URL(worker.url()).host;
});

test.afterAll(async () => {
  await context?.close();
});

/** The extension's service worker now (a stopped one is started again by a message from its wake page). */
async function wake(): Promise<Worker> {
  const page = await context.newPage();
  await page.goto(`chrome-extension://${extensionId}/wake.html`);
  expect(await page.evaluate(() => (window as any).wake())).toEqual({ awake: true });
  await page.close();
  return context.serviceWorkers().find((w) => w.url().startsWith(`chrome-extension://${extensionId}/`))!;
}

test('the extension\'s service worker and popup track: each event arrives once, with no page context in the worker', async ({ collector }) => {
  const ids: string[] = await worker.evaluate(() => (self as any).trackSome('Extension Worker', 3));
  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${extensionId}/popup.html`);
  const popupId: string = await popup.evaluate(() => (window as any).opened);
  const got = await collector.waitFor(3, { event: 'Extension Worker' });
  await collector.waitFor(1, { event: 'Popup Opened' });
  await quiet(collector);
  expectExactlyOnce(await collector.messages({ event: 'Extension Worker' }), ids);
  expectExactlyOnce(await collector.messages({ event: 'Popup Opened' }), [popupId]);
  expect(got[0].context.page).toBeUndefined();
  expect(await worker.evaluate(() => (self as any).errors())).toEqual([]);
  await popup.close();
});

test('its service worker stopped with messages waiting loses none: they leave once it wakes', async ({ collector }) => {
  // The API fails: what the worker tracks stays queued (IndexedDB) when it is stopped.
  await collector.fault({ status: 503 });
  const live = await wake();
  const ids: string[] = await live.evaluate(() => (self as any).trackSome('Extension Waiting', 4));
  await expect.poll(async () => (await collector.requests()).some((r) => r.status == 503)).toBe(true);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  const versions: any[] = [];
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions: v }: any) => versions.push(...v));
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await expect.poll(() => versions.some((v) => v.scriptURL.startsWith(`chrome-extension://${extensionId}/`) && v.runningStatus == 'stopped')).toBe(true);
  await page.close();
  await collector.fault({});
  // Woken (a message from the wake page, which has no library): the new worker adopts what the stopped one left.
  await wake();
  await collector.waitFor(4, { event: 'Extension Waiting' }, 20_000);
  await quiet(collector);
  expectExactlyOnce(await collector.messages({ event: 'Extension Waiting' }), ids);
});

/** What of remotely loaded code a file's text holds. */
const remoteCode = (file: string, text: string) => ({
  file,
  scriptInserted: /createElement\(\s*["'`]script["'`]\s*\)/.test(text),
  // any import() but of a relative module of the extension's own
  importOfUrl: /\bimport\s*\(\s*(?!["'`]\.{0,2}\/)/.test(text),
  importScripts: /\bimportScripts\s*\(/.test(text),
  evalCall: /\beval\s*\(/.test(text),
  functionConstructor: /\bnew\s+Function\s*\(|\bFunction\s*\(\s*["'`]/.test(text),
  remoteScriptTag: /<script[^>]+src=["']https?:/i.test(text),
});
const none = (file: string) => ({ file, scriptInserted: false, importOfUrl: false, importScripts: false, evalCall: false, functionConstructor: false, remoteScriptTag: false });

test('the built extension holds no remotely loaded code: no script inserted, no import() of a URL, no eval or Function', () => {
  // (the scan finds what it looks for: the CDN bundle inserts its chunks' scripts, which an extension must not)
  expect(remoteCode('analytics.min.js', readFileSync('dist/analytics.min.js', 'utf8')).scriptInserted).toBe(true);
  const files = readdirSync(dir).filter((f) => f.endsWith('.js') || f.endsWith('.html'));
  expect(files.sort()).toEqual(['background.js', 'popup.html', 'popup.js', 'wake.html', 'wake.js']);
  for (const f of files) expect(remoteCode(f, readFileSync(join(dir, f), 'utf8'))).toEqual(none(f));
});
