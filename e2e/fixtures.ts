import { test as base, expect, type Page } from '@playwright/test';
import { fileURLToPath } from 'node:url';
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

/** Waits until the library on `page` is ready. */
export async function ready(page: Page) {
  await page.waitForFunction(() => (window as any).analytics && (window as any).analytics.initialized);
  await page.evaluate(() => (window as any).analytics.ready());
}

export { expect };
