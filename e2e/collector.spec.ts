// The local collector's trust boundary (CONTRACT section 6; security review M3), in a real Chromium: what
// `svc-analytics start` runs (the collector and the demo shop, the demo's origin allowed), a page on another origin
// (another loopback port, another host name), and a DNS-rebinding name. Every host name maps to 127.0.0.1
// (`--host-resolver-rules`), so nothing leaves the machine.
//
// Ingestion (/v1/*) answers any origin, as the real API does. The inspector and the control API (/_/*: captured
// messages, faults, reset) answer only the inspector's own origin and the demo's: another page can neither read
// them nor drive them, not even with a CORS-simple request the browser sends without asking.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as base, expect, chromium, type Browser, type Page } from '@playwright/test';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';
import { executablePath, args } from '../scripts/chromium.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'dev-write-key';

interface World {
  browser: Browser;
  collector: any;
  /** The demo shop, as `svc-analytics start` serves it (its origin allowed on the control API). */
  demo: string;
  /** Pages of other origins on this machine: another port of 127.0.0.1, and a name of their own. */
  others: string[];
}

const test = base.extend<{}, { world: World }>({
  world: [
    async ({}, use) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-collector-trust-'));
      fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Some other site</title><p>another origin</p>');
      const snippetFile = path.join(dir, 'snippet.js');
      const demo = await startStatic({ root: root + 'demo', port: 0, mounts: { '/dist/': root + 'dist' }, snippetFile });
      const collector = await startCollector({ port: 0, allowOrigins: [demo.url] });
      // As the CLI writes it: the demo names the collector it started.
      fs.writeFileSync(snippetFile, `window.svcDemo={apiHost:${JSON.stringify(collector.url)}};\n${fs.readFileSync(root + 'dist/snippet.min.js', 'utf8')}`);
      const other = await startStatic({ root: dir, port: 0 });
      const browser = await chromium.launch({ executablePath, args: [...args, '--host-resolver-rules=MAP *.test 127.0.0.1'] });
      await use({ browser, collector, demo: demo.url, others: [other.url, `http://other-site.test:${other.port}`] });
      await browser.close();
      await Promise.all([demo.close(), other.close(), collector.close()]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
    { scope: 'worker' },
  ],
});

/** A page of a fresh context of the world's browser. */
async function pageOf(world: World, url: string): Promise<Page> {
  const context = await world.browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

/** Walks the demo until its events panel shows the page views delivered: the collector then holds messages. */
async function shopped(world: World) {
  const page = await pageOf(world, world.demo + '/');
  await page.getByRole('button', { name: 'Accept' }).click();
  await page.getByTestId('products').getByRole('link').first().click();
  await expect(page.locator('.events-row')).not.toHaveCount(0);
  await expect(page.locator('.events-row .st:not(.sent)')).toHaveCount(0);
  return page;
}

test.beforeEach(({ world }) => {
  world.collector.reset();
});

test('the demo sends its events and its events panel ticks them delivered; its origin may read the control API', async ({ world }) => {
  const page = await shopped(world);
  expect(world.collector.state.messages.length).toBeGreaterThan(1);
  await expect(page.getByTestId('inspector-link')).toHaveAttribute('href', world.collector.url + '/');
  const read = await page.evaluate(async (url) => (await fetch(url + '/_/messages')).json(), world.collector.url);
  expect(read.length).toBe(world.collector.state.messages.length);
  await page.context().close();
});

test('a page on another origin can send events, but can neither read nor drive the control API', async ({ world }) => {
  await (await shopped(world)).context().close();
  const held = world.collector.state.messages.length;
  expect(held).toBeGreaterThan(1);
  for (const origin of world.others) {
    const page = await pageOf(world, origin + '/');
    const tried = await page.evaluate(
      async ({ url, key }) => {
        const attempt = async (fn: () => Promise<unknown>) => {
          try {
            return await fn();
          } catch (e) {
            return `refused: ${(e as Error).name}`;
          }
        };
        const json = { 'Content-Type': 'application/json' };
        return {
          messages: await attempt(async () => (await fetch(url + '/_/messages')).json()),
          requests: await attempt(async () => (await fetch(url + '/_/requests')).text()),
          inspector: await attempt(async () => (await fetch(url + '/')).text()),
          reset: await attempt(async () => (await fetch(url + '/_/reset', { method: 'POST', headers: json, body: '{}' })).status),
          fault: await attempt(async () => (await fetch(url + '/_/fault', { method: 'POST', headers: json, body: '{"status":503}' })).status),
          // CORS-simple requests: sent without a preflight, their answers opaque. They must change nothing.
          simpleReset: await attempt(async () => (await fetch(url + '/_/reset', { method: 'POST', mode: 'no-cors', body: '{}' })).type),
          simpleFault: await attempt(async () => (await fetch(url + '/_/fault', { method: 'POST', mode: 'no-cors', body: '{"status":503,"times":5}' })).type),
          bareReset: await attempt(async () => (await fetch(url + '/_/reset', { method: 'POST', mode: 'no-cors' })).type),
          stream: await new Promise((resolve) => {
            const source = new EventSource(url + '/_/stream');
            source.addEventListener('snapshot', () => (source.close(), resolve('snapshot read')));
            source.onerror = () => (source.close(), resolve('refused'));
          }),
          // Ingestion answers any origin, as the real API does.
          ingest: await attempt(async () => {
            const res = await fetch(url + '/v1/track', {
              method: 'POST',
              headers: { ...json, Authorization: 'Basic ' + btoa(key + ':') },
              body: JSON.stringify({ event: 'From Elsewhere', messageId: 'elsewhere-' + location.port + location.hostname, anonymousId: 'a', timestamp: new Date().toISOString() }),
            });
            return res.status;
          }),
        };
      },
      { url: world.collector.url, key: KEY },
    );
    expect(tried, origin).toEqual({
      messages: 'refused: TypeError',
      requests: 'refused: TypeError',
      inspector: 'refused: TypeError',
      reset: 'refused: TypeError',
      fault: 'refused: TypeError',
      simpleReset: 'opaque',
      simpleFault: 'opaque',
      bareReset: 'opaque',
      stream: 'refused',
      ingest: 200,
    });
    await page.context().close();
  }
  // Nothing was reset and no fault set: what the demo sent is all there, plus the two tracks from elsewhere.
  expect(world.collector.state.fault).toEqual({ status: null, delay: null, poison: null });
  expect(world.collector.state.messages.length).toBe(held + world.others.length);
  expect(world.collector.state.messages.filter((m: any) => m.event === 'From Elsewhere')).toHaveLength(world.others.length);
});

test('another site cannot frame the inspector', async ({ world }) => {
  const page = await pageOf(world, world.others[1] + '/');
  const blocked = page.waitForEvent('console', { predicate: (m) => /frame-ancestors|Refused to display/.test(m.text()), timeout: 10_000 });
  await page.evaluate((url) => {
    const frame = document.createElement('iframe');
    frame.src = url + '/';
    document.body.append(frame);
  }, world.collector.url);
  expect((await blocked).text()).toMatch(/frame-ancestors|Refused to display/);
  await page.context().close();
});

test('DNS rebinding: a name of another site pointed at 127.0.0.1 gets neither the inspector nor the data', async ({ world }) => {
  await (await shopped(world)).context().close();
  const rebound = `http://rebind.test:${world.collector.port}`;
  const context = await world.browser.newContext();
  const page = await context.newPage();
  const res = await page.goto(rebound + '/');
  expect(res!.status()).toBe(403);
  expect(await page.textContent('body')).toMatch(/not a loopback name/);
  // The page's own origin is now the collector's address under another name: same-origin reads, all refused.
  const reads = await page.evaluate(async () => {
    const out: Record<string, number> = {};
    for (const p of ['/_/messages', '/_/requests', '/_/stats']) out[p] = (await fetch(p)).status;
    out['/_/reset'] = (await fetch('/_/reset', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status;
    return out;
  });
  expect(reads).toEqual({ '/_/messages': 403, '/_/requests': 403, '/_/stats': 403, '/_/reset': 403 });
  expect(world.collector.state.messages.length).toBeGreaterThan(1);
  await context.close();
});

test('the inspector works at its own origin, under each loopback name: live list, faults, clear', async ({ world }) => {
  await (await shopped(world)).context().close();
  for (const name of ['127.0.0.1', 'localhost']) {
    const page = await pageOf(world, `http://${name}:${world.collector.port}/`);
    await expect(page.locator('#live')).toHaveClass(/live/);
    await expect(page.locator('#list tbody tr').first()).toBeVisible();
    await page.locator('#f503').click();
    await expect(page.locator('#faultState')).toContainText('503');
    expect(world.collector.state.fault.status).toMatchObject({ code: 503 });
    await page.locator('#fClear').click();
    await expect.poll(() => world.collector.state.fault.status).toBeNull();
    await page.locator('#clear').click();
    await expect.poll(() => world.collector.state.messages.length).toBe(0);
    await expect(page.locator('#cMessages')).toHaveText('0');
    await page.context().close();
    await (await shopped(world)).context().close();
  }
});
