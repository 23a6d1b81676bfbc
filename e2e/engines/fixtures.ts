// Fixtures and helpers for suites that run in every engine of driver.mjs (Chromium, Firefox, WebKit). They build
// on ../fixtures (the collector and the static site, once per worker) and add: the engine of the describe block
// (`engineName`), launched once per worker and kept while its tests run, and a fresh browser profile per test
// (`profile`), so no test sees another's stored queue.
import http from 'node:http';
import { test as base, expect, quiet, sleep, type CollectorHandle, type SiteHandle } from '../fixtures';

export { quiet };
import { launch, missing, type Context, type Engine, type EngineName, type Tab } from './driver.mjs';

export { expect };
export type { Tab };

/** CI=true: a browser that is not installed fails the run; elsewhere its tests are skipped with the reason. */
export const IN_CI = process.env.CI === 'true';

/** The engines this worker launched, one at a time: asking for another closes the one before. */
interface EngineCache {
  get(name: EngineName): Promise<Engine>;
}

export const test = base.extend<{ engineName: EngineName; engine: Engine; profile: Context }, { engines: EngineCache }>({
  // Set per describe block with test.use({ engineName }); a worker-scoped option could not be (it forces a worker).
  engineName: ['chromium', { option: true }],
  engines: [
    async ({}, use) => {
      let current: { name: EngineName; engine: Promise<Engine> } | null = null;
      const stop = async () => {
        const was = current;
        current = null;
        if (was) await (await was.engine.catch(() => null))?.close();
      };
      await use({
        async get(name) {
          if (current?.name !== name) {
            await stop();
            const why = missing(name);
            if (why) throw new Error(`${why}${IN_CI ? ' (CI=true: a missing browser fails the run)' : ''}`);
            current = { name, engine: launch(name) };
          }
          return current.engine;
        },
      });
      await stop();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  engine: async ({ engines, engineName }, use) => {
    await use(await engines.get(engineName));
  },
  profile: async ({ engine, collector }, use) => {
    const ctx = await engine.newContext();
    await use(ctx);
    await ctx.close();
    // What its pages sent as they closed lands now, not after the next test reset the collector.
    await quiet(collector, 300, 5000).catch(() => {});
  },
});

/**
 * Marks the tests of the calling describe block skipped when `name` is not installed (outside CI), and says so
 * once on the runner's console. In CI the engine fixture fails them instead.
 */
export function skipWhenMissing(name: EngineName) {
  const why = missing(name);
  if (why && !IN_CI && !process.env.TEST_WORKER_INDEX) console.log(`engines: skipping ${name}: ${why}`);
  test.skip(!!why && !IN_CI, `${why}: not installed, skipped (with CI=true this fails)`);
}

/** Polls `fn(arg)` in the tab until it returns something truthy; throws after `ms`. Errors (navigation) retry. */
export async function waitUntil<A>(tab: Tab, fn: (arg: A) => unknown, arg?: A, ms = 15_000, what = 'a page condition') {
  const deadline = Date.now() + ms;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await tab.evaluate(fn, arg as A);
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not true after ${ms} ms (last: ${String(last)})`);
    await sleep(50);
  }
}

/** Navigates `tab` to `url` and waits until the library there is ready. */
export async function open(tab: Tab, url: string) {
  await tab.goto(url);
  await ready(tab);
}

/** Waits until the bundle took over the stub on the tab's page and the library is ready. */
export async function ready(tab: Tab) {
  await waitUntil(tab, () => !!((window as any).analytics && (window as any).analytics.initialized), undefined, 15_000, 'the library took over');
  await tab.evaluate(() => new Promise<boolean>((r) => (window as any).analytics.ready(() => r(true))));
}

/** How `msgs` differ from "each of `ids` exactly once, nothing else". */
export function tally(msgs: any[], ids: string[]) {
  const counts = new Map<string, number>();
  for (const m of msgs) counts.set(m.messageId, (counts.get(m.messageId) || 0) + 1);
  const wanted = new Set(ids);
  return {
    missing: ids.filter((id) => !counts.has(id)),
    duplicated: [...counts].filter(([id, n]) => n > 1 && wanted.has(id)).map(([id, n]) => `${id} x${n}`),
    unexpected: [...counts.keys()].filter((id) => !wanted.has(id)),
  };
}

/** Asserts that `msgs` hold each of `ids` exactly once and nothing else, naming what is missing or doubled. */
export function expectExactlyOnce(msgs: any[], ids: string[], what = 'messages') {
  const t = tally(msgs, ids);
  expect(
    { missing: t.missing.length, duplicated: t.duplicated.length, unexpected: t.unexpected.length },
    `${what}: ${ids.length} expected once each; missing ${JSON.stringify(t.missing)}, duplicated ${JSON.stringify(t.duplicated)}, unexpected ${JSON.stringify(t.unexpected)}`,
  ).toEqual({ missing: 0, duplicated: 0, unexpected: 0 });
}

/**
 * The requests that carried any of `ids`, one line each (for failure messages): when, how (beacon: the write key
 * in the body; fetch: Basic auth), the answer, any injected fault, and which of `ids` (by index) it carried.
 */
export async function trail(collector: CollectorHandle, ids: string[], since?: number): Promise<string> {
  const all = await collector.requests();
  since ??= all.length ? all[0].at : 0;
  const reqs = all.filter((r) => r.messageIds.some((id: string) => ids.includes(id)));
  const lines = reqs.map((r) => {
    const which = r.messageIds.map((id: string) => ids.indexOf(id)).filter((i: number) => i >= 0);
    const how = r.auth === 'body' ? 'beacon' : 'fetch';
    return `+${r.at - since}ms ${how} ${r.status}${r.fault ? ' fault:' + r.fault : ''} [${which.join(',')}]`;
  });
  return lines.join('; ') || 'no request carried them';
}

/** The collector's requests that broke a rule (size limits, write key, malformed messages): none, for a correct client. */
export async function violations(collector: CollectorHandle): Promise<any[]> {
  return (await fetch(collector.url + '/_/violations')).json();
}

/** One request as it reached the relay: what the browser sent, byte for byte. */
export interface Relayed {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * An HTTP relay on 127.0.0.1 (`port`, or a free one) that records each request's raw headers and body and passes
 * it on to `target` (the collector), answering what the collector answers. For what the collector does not keep
 * (the body's `sentAt`), and for an API host that is down at first and comes up later (start it late on a port).
 */
export async function startRelay(target: string, port = 0) {
  const seen: Relayed[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method || '', path: req.url || '', headers: req.headers, body: body.toString('utf8') });
      const out = http.request(target + req.url, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
        res.writeHead(answer.statusCode || 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      res.on('close', () => {
        if (!res.writableFinished) out.destroy();
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    /** The ingestion requests (`POST /v1/...`) seen so far. */
    ingested: () => seen.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/')),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** e2e/site/link.html on one of the site's two host names (127.0.0.1, localhost), with the other in `linkDomains`. */
export const linkPage = (site: SiteHandle, host: '127.0.0.1' | 'localhost', extra = '') => {
  const u = new URL(site.page('/link.html', { opts: JSON.stringify({ linkDomains: [host == 'localhost' ? '127.0.0.1' : 'localhost'] }) }) + extra);
  u.hostname = host;
  return u.toString();
};
