import { test as base, expect, type Page } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The collector as tests see it: its URL and helpers over its test API (`/_/...`). */
export interface CollectorHandle {
  url: string;
  writeKey: string;
  messages(query?: Record<string, string | number>): Promise<any[]>;
  /** Waits (bounded, server-side) until at least `min` accepted messages match `query`. */
  waitFor(min: number, query?: Record<string, string | number>, timeoutMs?: number): Promise<any[]>;
  requests(): Promise<any[]>;
  /** Requests a correct client never sends: over a size limit, bad auth, malformed messages. */
  violations(): Promise<any[]>;
  stats(): Promise<any>;
  fault(f: Record<string, unknown>): Promise<void>;
  reset(): Promise<void>;
}

/** The site the tests load (a real local origin, another port than the collector: cross-origin, as in production). */
export interface SiteHandle {
  url: string;
  /** URL of a page under e2e/site with the collector passed as `?api=` (pages read it in their load call). */
  page(path: string, params?: Record<string, string>): string;
}

export const test = base.extend<{ collector: CollectorHandle; site: SiteHandle }, { servers: { col: any; site: any } }>({
  servers: [
    async ({}, use) => {
      const col = await startCollector({ port: 0 });
      const site = await startStatic({
        root: root + 'e2e/site',
        port: 0,
        mounts: { '/dist/': root + 'dist', '/demo/': root + 'demo', '/node_modules/': root + 'node_modules' },
        snippetFile: root + 'dist/snippet.min.js',
        // A first-party API path, as a site proxies it (CONTRACT section 3 `apiHost`).
        proxies: { '/ingest': col.url },
      });
      await use({ col, site });
      await col.close();
      await site.close();
    },
    { scope: 'worker' },
  ],
  collector: async ({ servers }, use) => {
    const url: string = servers.col.url;
    const get = async (path: string) => (await fetch(url + path)).json();
    const post = async (path: string, body: unknown) => {
      await fetch(url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    };
    const qs = (q: Record<string, string | number> = {}) => new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
    await post('/_/reset', {});
    await use({
      url,
      writeKey: 'dev-write-key',
      messages: (q) => get('/_/messages?' + qs(q)),
      waitFor: (min, q = {}, timeoutMs = 20000) => get('/_/messages?' + qs({ ...q, min, timeout: timeoutMs })),
      requests: () => get('/_/requests'),
      violations: () => get('/_/violations'),
      stats: () => get('/_/stats'),
      fault: (f) => post('/_/fault', f),
      reset: () => post('/_/reset', {}),
    });
    await post('/_/fault', {});
  },
  site: async ({ servers }, use) => {
    await use({
      url: servers.site.url,
      page: (path, params = {}) => {
        const u = new URL(path, servers.site.url);
        u.searchParams.set('api', servers.col.url);
        for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
        return u.toString();
      },
    });
  },
});

/**
 * Waits `ms`. Only for deliberate spacing between calls (call times told apart from load time, a burst spread out),
 * never before a check: a check waits for its condition (`collector.waitFor`, `expect.poll`, `quiet`).
 */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Navigates `page` to `url` and waits until the library there is ready. */
export async function open(page: Page, url: string) {
  await page.goto(url);
  await ready(page);
}

/** Waits until the library on `page` is ready. */
export async function ready(page: Page) {
  await page.waitForFunction(() => (window as any).analytics && (window as any).analytics.initialized);
  await page.evaluate(() => (window as any).analytics.ready());
}

/**
 * Sends one message and waits for it to arrive: the first message of a quiet spell goes at once (CONTRACT section 3
 * `flushAt`), so the messages after it wait for `flushAt` or `flushInterval` (or a page exit). Returns its id.
 */
export async function sendFirst(page: Page, collector: CollectorHandle, event = 'First Of The Spell'): Promise<string> {
  const id: string = await page.evaluate(async (name) => (await (window as any).analytics.track(name)).event.messageId, event);
  await collector.waitFor(1, { messageId: id }, 10000);
  return id;
}

/** Counts of each value of `key` among `msgs`. */
export function countBy(msgs: any[], key: (m: any) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of msgs) out.set(key(m), (out.get(key(m)) || 0) + 1);
  return out;
}

/** Asserts that `msgs` hold each of `ids` exactly once and nothing else. */
export function expectExactlyOnce(msgs: any[], ids: string[]) {
  const counts = countBy(msgs, (m) => m.messageId);
  const missing = ids.filter((id) => !counts.has(id));
  const dup = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
  const extra = [...counts.keys()].filter((id) => !ids.includes(id));
  expect({ missing: missing.length, duplicated: dup.length, unexpected: extra.length }).toEqual({ missing: 0, duplicated: 0, unexpected: 0 });
}

/** Collects uncaught page errors and unhandled rejections of `page` (read them with `page.evaluate(() => __errors)` too). */
export async function watchErrors(page: Page): Promise<string[]> {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => addEventListener('unhandledrejection', (e) => console.error('unhandledrejection', String(e.reason))));
  page.on('console', (m) => m.type() == 'error' && m.text().startsWith('unhandledrejection') && errors.push(m.text()));
  return errors;
}

/**
 * Waits until the collector has had no request in flight and none arriving for `quietMs` (bounded by `maxMs`):
 * what a duplicate would need to show up. There is no event to wait for when nothing more should come.
 * The quiet spell counts from the last request, or from `from` (a `Date.now()` taken when whatever might send
 * began) if that is later: without it, a collector that has had no request at all is quiet at once.
 */
export async function quiet(collector: CollectorHandle, quietMs = 1500, maxMs = 15_000, from = 0) {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const reqs = await collector.requests();
    const busy = reqs.some((r) => r.status === null);
    const lastAt = reqs.reduce((t, r) => Math.max(t, r.at + (r.durationMs || 0)), from);
    if (!busy && Date.now() - lastAt >= quietMs) return;
    if (Date.now() > deadline) throw new Error(`the collector did not go quiet for ${quietMs} ms within ${maxMs} ms`);
    await sleep(100);
  }
}

/**
 * Waits until every console message `page` logged so far has reached the test: logs a marker (at level `debug`,
 * not a warning or an error) and waits for it, as console messages arrive in order.
 */
export async function consoleSettled(page: Page, timeout = 10_000) {
  const marker = `console settled ${Date.now()} ${Math.random()}`;
  const seen = page.waitForEvent('console', { predicate: (m) => m.text() === marker, timeout });
  await page.evaluate((m) => console.debug(m), marker);
  await seen;
}

/** A page on another origin (127.0.0.1, another port) that records when each request reached it, and its body. */
export async function startOtherOrigin() {
  const hits: { method: string; url: string; at: number; body: string }[] = [];
  const server = http.createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      hits.push({ method: req.method || '', url: req.url || '', at, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end('<!doctype html><html><head><link rel="icon" href="data:,"><title>Elsewhere</title></head><body>another site</body></html>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    pages: () => hits.filter((h) => !h.url.startsWith('/favicon')),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export { expect };

/** register()s an enrichment plugin (which loads the lazy chunk), then tracks `event`: `registered` is 'resolved' or the error code of register, `id` the tracked message's. */
export const registerAndTrack = (page: Page, event: string) =>
  page.evaluate(async (event) => {
    const a = (window as any).analytics;
    const plugin = { name: 'mark', type: 'enrichment', version: '1', isLoaded: () => true, load: () => Promise.resolve(), track: (ctx: any) => (ctx.updateEvent('properties.marked', true), ctx) };
    const registered = await a.register(plugin).then(
      () => 'resolved',
      (e: any) => e.code,
    );
    const ctx = await a.track(event);
    return { registered, id: ctx.event.messageId as string };
  }, event);

/**
 * A valid `svc_link` value for `id`, made in `page`'s browser now, as src/sources/decorate.ts makes it (and as any page on
 * the web can: security-5 N1, the hash has no key).
 */
export const linkValue = (page: Page, id: string) =>
  page.evaluate((id) => {
    const t = Date.now().toString(36);
    let h = 0;
    for (const c of navigator.userAgent + navigator.language + t + id) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
    return `${t}.${(h >>> 0).toString(36)}.${id}`;
  }, id);
