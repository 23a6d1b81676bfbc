import type { Page, Route } from '@playwright/test';
import { test, expect, open, quiet, expectExactlyOnce } from './fixtures';

// CONTRACT section 1, core and edges: source middleware and plugins come in a chunk of their own
// (dist/analytics.extend.min.js), fetched on the first addSourceMiddleware() or register(). A page that adds none
// fetches it never and waits for it never; a message made once one was added waits for it in call order and goes
// through every middleware added before it; a chunk that cannot load loses no call (held, reported, fetched again).

/** The basic test page with a short flush interval, ready (the fixtures' `open`). */
const openBasic = (page: Page, site: { page(p: string, q?: Record<string, string>): string }) => open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) }));

const EXTEND = '**/dist/analytics.extend.min.js*';

/** The URLs of the chunks the page fetches, as it fetches them. */
function chunkFetches(page: Page): string[] {
  const fetched: string[] = [];
  page.on('request', (r) => void (/analytics\.(extend|debug|plan|sources)\.min\.js/.test(r.url()) && fetched.push(r.url())));
  return fetched;
}

/** Holds the middleware chunk's requests until `release()`; the first `failures` of them answer 404. */
async function holdChunk(page: Page, failures = 0) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let seen = 0;
  await page.route(EXTEND, async (route: Route) => {
    const n = seen++;
    if (n < failures) return route.fulfill({ status: 404, body: '' });
    await released;
    await route.continue();
  });
  return { release, requests: () => seen };
}

test('a page that adds no middleware or plugin never fetches a chunk, and its calls go at once', async ({ page, site, collector }) => {
  const fetched = chunkFetches(page);
  await openBasic(page, site);
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.identify('u1');
    await a.track('No Chunk');
    await a.page();
    await a.group('g1');
  });
  expect(await collector.waitFor(1, { event: 'No Chunk' })).toHaveLength(1);
  expect(fetched).toEqual([]);
});

test('register() fetches the middleware chunk once, and the plugin runs on the next call', async ({ page, site, collector }) => {
  const fetched = chunkFetches(page);
  await openBasic(page, site);
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    const plugin = (name: string) => ({ name, type: 'enrichment', version: '1', isLoaded: () => true, load: () => Promise.resolve(), track: (ctx: any) => (ctx.updateEvent(`properties.${name}`, true), ctx) });
    await Promise.all([a.register(plugin('one')), a.register(plugin('two'))]);
    await a.track('Enriched');
  });
  const [msg] = await collector.waitFor(1, { event: 'Enriched' });
  expect(msg.properties).toMatchObject({ one: true, two: true });
  expect(fetched).toHaveLength(1);
  expect(fetched[0]).toContain('/dist/analytics.extend.min.js');
});

test('middleware across the chunk boundary: each message passes the middleware added before it, in call order', async ({ page, site, collector }) => {
  const chunk = await holdChunk(page);
  await openBasic(page, site);
  const ids = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const tag = (name: string) => ({ payload, next }: any) => ((payload.obj.properties[name] = true), next(payload));
    const before = await a.track('Before', {});
    a.addSourceMiddleware(tag('m1'));
    const b = a.track('After One', {});
    a.addSourceMiddleware(tag('m2'));
    const c = a.track('After Two', {});
    (window as any).__waiting = Promise.all([b, c]).then((r) => r.map((x: any) => x.event.messageId));
    return [before.event.messageId];
  });
  // Nothing made after the first middleware leaves while its chunk is on its way.
  await expect.poll(() => chunk.requests()).toBe(1);
  await collector.waitFor(1, { event: 'Before' });
  expect(await collector.messages()).toHaveLength(1);
  chunk.release();
  const later: string[] = await page.evaluate(() => (window as any).__waiting);
  const got = await collector.waitFor(3);
  const byEvent = Object.fromEntries(got.map((m: any) => [m.event, m]));
  expect(byEvent['Before'].properties).toEqual({});
  expect(byEvent['After One'].properties).toEqual({ m1: true });
  expect(byEvent['After Two'].properties).toEqual({ m1: true, m2: true });
  // queued in call order: their ids (ULIDs of the call time) come out of the queue in that order
  expect(got.map((m: any) => m.messageId)).toEqual([...ids, ...later]);
  await quiet(collector);
  expectExactlyOnce(await collector.messages(), [...ids, ...later]);
});

test('a middleware chunk that cannot load: reported, every call kept (none sent without its middleware), fetched again on the next call, then each sent once', async ({ page, site, collector }) => {
  const chunk = await holdChunk(page, 1);
  await openBasic(page, site);
  chunk.release();
  const out = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const errors: any[] = [];
    a.on('error', (e: any) => errors.push({ code: e.code, message: e.message }));
    a.addSourceMiddleware(({ payload, next }: any) => ((payload.obj.properties.scrubbed = true), next(payload)));
    const held = [a.track('During Chunk 1', {}), a.track('During Chunk 2', {})];
    (window as any).__held = Promise.all(held).then((r) => r.map((x: any) => x.event.messageId));
    for (let i = 0; i < 100 && !errors.length; i++) await new Promise((r) => setTimeout(r, 20));
    return { errors };
  });
  expect(out.errors.map((e) => e.code)).toEqual(['middleware_error']);
  // held: nothing went without the middleware
  await quiet(collector, 500, 3000);
  expect(await collector.messages()).toEqual([]);
  // the next call fetches the chunk again; everything goes, in call order, through the middleware
  const ids: string[] = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const next = await a.track('After Retry', {});
    return [...(await (window as any).__held), next.event.messageId];
  });
  expect(chunk.requests()).toBe(2);
  const got = await collector.waitFor(3);
  expect(got.map((m: any) => m.messageId)).toEqual(ids);
  for (const m of got) expect(m.properties).toEqual({ scrubbed: true });
  await quiet(collector);
  expectExactlyOnce(await collector.messages(), ids);
});

// The chunk checks what middleware pass on with the bundle's own message code (src/extend/lib.ts: it carries no copy):
// each piece of that code, used from the chunk in a real browser.
test("what middleware pass on is checked with the bundle's message code: copied, dated, measured, refused with clear errors", async ({ page, site, collector }) => {
  await openBasic(page, site);
  const out = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const errors: [string, string][] = [];
    a.on('error', (e: { code: string; message: string }) => errors.push([e.code, e.message]));
    a.addSourceMiddleware(({ payload, next }: any) => {
      const o = payload.obj;
      const how = o.properties?.how;
      if (how == 'date') o.timestamp = '2026-01-02T03:04:05.000Z';
      if (how == 'badDate') o.timestamp = 'not a date';
      if (how == 'big') o.properties.blob = 'é'.repeat(20000);
      if (how == 'notObject') o.properties = 'text';
      if (how == 'integrations') o.integrations = { x: 'yes' };
      if (how == 'throws') Object.defineProperty(o.properties, 'bad', { enumerable: true, get: () => { throw new Error('getter broke'); } });
      next(payload);
    });
    const codes: Record<string, string> = {};
    for (const how of ['date', 'badDate', 'big', 'notObject', 'integrations', 'throws'])
      await a.track('Checked', { how }).then(
        () => (codes[how] = 'ok'),
        (e: { code: string }) => (codes[how] = e.code),
      );
    const ok = await a.track('Checked', { how: 'date' });
    return { codes, errors, copy: ok.event.timestamp };
  });
  expect(out.codes).toEqual({ date: 'ok', badDate: 'invalid_payload', big: 'message_too_large', notObject: 'invalid_payload', integrations: 'invalid_payload', throws: 'invalid_payload' });
  expect(out.copy).toBe('2026-01-02T03:04:05.000Z');
  const said = out.errors.map((e) => e[1]).join('\n');
  for (const text of [/timestamp must be an ISO 8601 date-time/, /bytes, over the 32000 limit/, /properties must be an object/, /integrations\.x must be true or false/, /getter broke/]) expect(said).toMatch(text);
  const sent = await collector.waitFor(2, { event: 'Checked' });
  await quiet(collector, 500);
  expect((await collector.messages({ event: 'Checked' })).map((m) => m.timestamp)).toEqual(['2026-01-02T03:04:05.000Z', '2026-01-02T03:04:05.000Z']);
  expect(sent.length).toBe(2);
});
