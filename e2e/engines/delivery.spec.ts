// The delivery guarantees of CONTRACT sections 1 and 4, in every engine of driver.mjs (Chromium through
// Playwright, Firefox through WebDriver BiDi, WebKitGTK through WebDriver): one suite, one small driver interface.
// Each test asserts what reached the collector: messages by messageId, exactly once, within the limits.
import { readFileSync } from 'node:fs';
import { ENGINES, freePort, type EngineName } from './driver.mjs';
import { test, expect, open, ready, quiet, expectExactlyOnce, tally, trail, violations, startRelay, waitUntil, skipWhenMissing, type Tab } from './fixtures';
import type { CollectorHandle, SiteHandle } from '../fixtures';
import { holdQueueStore, notStored, watchDeletes } from '../cut-off';

const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** basic.html with these load options. */
const basic = (site: SiteHandle, opts: object = {}, params: Record<string, string> = {}) =>
  site.page('/basic.html', { opts: JSON.stringify(opts), ...params });

/** Only the page-exit path (or a later page) can send: nothing reaches flushAt, the interval is a minute. */
const HOLD = { flushAt: 100, flushInterval: 60_000 };

/** Makes `n` track calls named `event` and resolves with their messageIds once each is durably queued. */
function track(tab: Tab, event: string, n: number, from = 0): Promise<string[]> {
  return tab.evaluate(
    async ({ event, n, from }) => {
      const a = (window as any).analytics;
      const ids: string[] = [];
      for (let i = from; i < from + n; i++) ids.push((await a.track(event, { i })).event.messageId);
      return ids;
    },
    { event, n, from },
  );
}

/** Waits (bounded) until the collector holds `ids.length` messages named `event`, then until it goes quiet. */
async function arrived(collector: CollectorHandle, event: string, ids: string[], ms = 15_000) {
  await collector.waitFor(ids.length, { event }, ms);
  await quiet(collector);
  return collector.messages({ event });
}

/** `arrived`, then each of `ids` exactly once; a failure lists the requests that carried them. */
async function expectArrivedOnce(collector: CollectorHandle, event: string, ids: string[], ms = 15_000, at: { since?: number; note?: string } = {}) {
  const msgs = await arrived(collector, event, ids, ms);
  const t = tally(msgs, ids);
  if (t.missing.length || t.duplicated.length || t.unexpected.length) {
    expectExactlyOnce(msgs, ids, `${event}${at.note || ''}; requests: ${await trail(collector, ids, at.since)}`);
  }
  return msgs;
}

/**
 * `arrived`, then each of `ids` at least once, and never twice from the page that went away (requests that began
 * before `nextLoadAt`): a hand-off the browser could not confirm may be sent again by the next load, with the same
 * messageId (CONTRACT section 4, at least once). Says in the report how many the next load sent again.
 */
async function expectArrivedAtLeastOnce(collector: CollectorHandle, event: string, ids: string[], nextLoadAt: number, ms = 15_000, note = '') {
  const msgs = await arrived(collector, event, ids, ms);
  const began = new Map((await collector.requests()).map((r: any) => [r.id, r.at]));
  const t = tally(msgs, ids);
  const byLeavingPage = tally(msgs.filter((m) => (began.get(m._requestId) ?? Infinity) < nextLoadAt), ids);
  const detail = `${event}${note}; requests: ${await trail(collector, ids)}`;
  expect(t.missing, `missing: ${detail}`).toEqual([]);
  expect(t.unexpected, `unexpected: ${detail}`).toEqual([]);
  expect(byLeavingPage.duplicated, `sent twice by the page that went away: ${detail}`).toEqual([]);
  test.info().annotations.push({ type: 'sent again by the next load', description: `${t.duplicated.length}/${ids.length}` });
  return msgs;
}

for (const name of ENGINES) {
  test.describe(name, () => {
    test.use({ engineName: name as EngineName });
    skipWhenMissing(name as EngineName);
    // A failing library should fail fast, not hang: every test here normally takes a few seconds.
    test.describe.configure({ timeout: 30_000 });

    test('wire shape: track, identify and page carry the contract fields, in authenticated {batch, sentAt} bodies', async ({ profile, site, collector }) => {
      const relay = await startRelay(collector.url);
      try {
        const tab = await profile.newTab();
        await open(tab, basic(site, { flushInterval: 100 }, { api: relay.url, utm_campaign: 'engines', utm_source: 'e2e' }));
        const env = await tab.evaluate(() => ({
          href: location.href,
          search: location.search,
          title: document.title,
          userAgent: navigator.userAgent,
          locale: navigator.language,
          timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
          screen: { width: screen.width, height: screen.height, density: devicePixelRatio },
        }));
        const calls = await tab.evaluate(async () => {
          const a = (window as any).analytics;
          const out: Record<string, { before: number; after: number; id: string }> = {};
          const stamp = async (k: string, f: () => Promise<any>) => {
            const before = Date.now();
            const r = await f();
            out[k] = { before, after: Date.now(), id: r.event.messageId };
          };
          await stamp('identify', () => a.identify('engine-user', { plan: 'pro' }));
          await stamp('track', () => a.track('Wire Shape', { n: 1, nested: { ok: true } }));
          await stamp('page', () => a.page('Docs', 'Engines', { extra: 'yes' }));
          await a.flush();
          return out;
        });
        await collector.waitFor(3, {}, 15_000);
        await quiet(collector);
        const msgs = await collector.messages();
        expectExactlyOnce(msgs, Object.values(calls).map((c) => c.id));
        const byId = new Map(msgs.map((m) => [m.messageId, m]));
        const anonymousId = byId.get(calls.track.id).anonymousId;
        expect(typeof anonymousId === 'string' && anonymousId.length > 0, 'an anonymousId').toBe(true);
        for (const [k, c] of Object.entries(calls)) {
          const m = byId.get(c.id);
          expect(m.type, k).toBe(k);
          expect(m.messageId).toMatch(ULID);
          expect(m.timestamp).toMatch(ISO);
          expect(Date.parse(m.timestamp), `${k}: timestamp at call time`).toBeGreaterThanOrEqual(c.before);
          expect(Date.parse(m.timestamp), `${k}: timestamp at call time`).toBeLessThanOrEqual(c.after);
          expect(m.anonymousId).toBe(anonymousId);
          expect(m.userId).toBe('engine-user');
          expect(m.integrations).toEqual({});
          expect(m.context.library).toEqual({ name: 'svc-analytics', version: VERSION });
          expect(m.context.page).toEqual({ path: '/basic.html', referrer: '', search: env.search, title: env.title, url: env.href });
          expect(m.context.userAgent).toBe(env.userAgent);
          expect(m.context.locale).toBe(env.locale);
          expect(m.context.timezone).toBe(env.timezone);
          expect(m.context.channel).toBe('browser');
          expect(m.context.screen).toEqual(env.screen);
          expect(m.context.campaign).toMatchObject({ name: 'engines', source: 'e2e' });
        }
        expect(byId.get(calls.identify.id).traits).toMatchObject({ plan: 'pro' });
        expect(byId.get(calls.track.id)).toMatchObject({ event: 'Wire Shape', properties: { n: 1, nested: { ok: true } } });
        const pg = byId.get(calls.page.id);
        expect(pg).toMatchObject({ name: 'Engines', category: 'Docs' });
        expect(pg.properties).toMatchObject({ extra: 'yes', path: '/basic.html', referrer: '', search: env.search, title: env.title, url: env.href });

        // The bodies as the browser sent them: POST /v1/batch {batch, sentAt}, authenticated by header or body.
        const sent = relay.ingested();
        expect(sent.length).toBeGreaterThan(0);
        const basicAuth = 'Basic ' + Buffer.from('dev-write-key:').toString('base64');
        for (const r of sent) {
          expect(r.path).toBe('/v1/batch');
          const body = JSON.parse(r.body);
          expect(Array.isArray(body.batch)).toBe(true);
          expect(body.sentAt).toMatch(ISO);
          if (r.headers.authorization) {
            expect(r.headers.authorization).toBe(basicAuth);
            expect(r.headers['content-type']).toMatch(/^application\/json\b/);
          } else {
            expect(body.writeKey, 'a request without Authorization carries the write key in its body').toBe('dev-write-key');
          }
        }
        expect((await collector.requests()).filter((r) => r.status !== 200)).toEqual([]);
        expect(await violations(collector)).toEqual([]);
      } finally {
        await relay.close();
      }
    });

    test('1,000 events of ~300 B tracked in one task arrive exactly once, within the request and message limits', async ({ profile, site, collector }) => {
      test.setTimeout(60_000);
      const tab = await profile.newTab();
      await open(tab, basic(site));
      const ids: string[] = await tab.evaluate(async () => {
        const a = (window as any).analytics;
        const pad = 'p'.repeat(280);
        const calls = [];
        for (let i = 0; i < 1000; i++) calls.push(a.track('Bulk', { i, pad }));
        return (await Promise.all(calls)).map((r: any) => r.event.messageId);
      });
      expect(new Set(ids).size).toBe(1000);
      const msgs = await expectArrivedOnce(collector, 'Bulk', ids, 30_000);
      const reqs = await collector.requests();
      const biggestBody = Math.max(...reqs.map((r) => r.bytes));
      expect(biggestBody, 'largest request body').toBeLessThanOrEqual(500_000);
      const biggestMessage = Math.max(...msgs.map(({ _requestId, _receivedAt, ...m }) => Buffer.byteLength(JSON.stringify(m))));
      expect(biggestMessage, 'largest message').toBeLessThanOrEqual(32_000);
      expect((await collector.stats()).overLimit).toBe(0);
      expect(await violations(collector)).toEqual([]);
      test.info().annotations.push({ type: 'requests', description: `${reqs.length} requests, largest ${biggestBody} B` });
    });

    // Page exit: 10 messages wait (after the first of the spell, nothing reaches flushAt, the interval is a minute), so only the exit path can
    // send them; in the "in flight" cases a request is held by the collector while the page goes away. Then the
    // next page of the site loads (which sends what an earlier page left) and each must have arrived once.
    for (const how of ['navigation', 'tab close'] as const) {
      for (const inFlight of [false, true]) {
        const label = `exit by ${how}, ${inFlight ? 'with a flush in flight' : 'with messages waiting'}: each message arrives ${how == 'tab close' ? 'once from the closing tab, or again (same id) from the next load' : 'exactly once'}`;
        test(label, async ({ profile, site, collector }) => {
          const event = 'Exit ' + how + (inFlight ? ' in flight' : ' waiting');
          const start = Date.now();
          let tab = await profile.newTab();
          await open(tab, basic(site, HOLD));
          // The first message of a quiet spell goes at once (CONTRACT section 3): send one, so the next ones wait.
          await track(tab, 'First Of The Spell', 1);
          await collector.waitFor(1, { event: 'First Of The Spell' }, 10_000);
          let ids: string[];
          if (inFlight) {
            await collector.fault({ delayMs: 2000, times: 1 });
            ids = await track(tab, event, 5);
            await tab.evaluate(() => void (window as any).analytics.flush());
            await expect
              .poll(async () => (await collector.requests()).some((r) => r.fault === 'slow' && r.status === null), { timeout: 10_000, message: 'a request is held in flight' })
              .toBe(true);
            ids.push(...(await track(tab, event, 5, 5)));
          } else {
            ids = await track(tab, event, 10);
          }
          if (how === 'navigation') await tab.goto(site.page('/core-blank.html'));
          else await tab.close();
          // What the exit path delivered by itself (reported, not asserted: the next load may finish the job).
          const byExit = (await collector.waitFor(10, { event }, 3000)).length;
          test.info().annotations.push({ type: 'before the next load', description: `${byExit}/10 arrived` });
          if (how === 'tab close') tab = await profile.newTab();
          const nextLoadAt = Date.now();
          const note = ` (the next load began at +${nextLoadAt - start}ms)`;
          await open(tab, basic(site, { flushInterval: 100 }, { next: '1' }));
          // A closing tab may be cut off right after its beacon left (Firefox): the next load then sends the same
          // messages again. Navigation, where the page lives on long enough to note its hand-off, is exact.
          if (how === 'tab close') await expectArrivedAtLeastOnce(collector, event, ids, nextLoadAt, 15_000, note);
          else await expectArrivedOnce(collector, event, ids, 15_000, { since: start, note });
          expect(await violations(collector)).toEqual([]);
        });
      }
    }

    test('API unreachable (nothing listens on its port), then it comes up and the page reloads: all arrive exactly once', async ({ profile, site, collector }) => {
      const port = await freePort(); // nothing listens there until the relay starts on it
      const tab = await profile.newTab();
      await open(tab, basic(site, { flushInterval: 100 }, { api: `http://127.0.0.1:${port}` }));
      await tab.evaluate(() => {
        (window as any).__retries = 0;
        (window as any).analytics.on('retry', () => (window as any).__retries++);
      });
      const ids = await track(tab, 'Unreachable', 10);
      // the library tried and failed at least once (its 'retry' event); bounded, and reported either way
      const tried = await waitUntil(tab, () => (window as any).__retries > 0, undefined, 5000).then(
        () => true,
        () => false,
      );
      test.info().annotations.push({ type: 'retry event seen while unreachable', description: String(tried) });
      const relay = await startRelay(collector.url, port);
      try {
        await tab.reload();
        await ready(tab);
        await expectArrivedOnce(collector, 'Unreachable', ids);
        expect(await violations(collector)).toEqual([]);
      } finally {
        await relay.close();
      }
    });

    test('API answering 503 until fixed, then the page reloads: all arrive exactly once', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      const url = basic(site, { flushInterval: 100 });
      await open(tab, url);
      await collector.fault({ status: 503, times: 1000 });
      const ids = await track(tab, 'Until Fixed', 10);
      await expect
        .poll(async () => (await collector.requests()).some((r) => r.status === 503 && r.messageIds.some((id: string) => ids.includes(id))), {
          timeout: 10_000,
          message: 'the library tried and got a 503',
        })
        .toBe(true);
      await collector.fault({});
      await tab.reload();
      await ready(tab);
      await expectArrivedOnce(collector, 'Until Fixed', ids);
      expect(await violations(collector)).toEqual([]);
    });

    test('503 twice: all arrive exactly once after the retries, re-sent with their messageIds', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await open(tab, basic(site, { flushInterval: 100 }));
      await collector.fault({ status: 503, times: 2 });
      const ids = await track(tab, 'Retried', 5);
      await expectArrivedOnce(collector, 'Retried', ids, 20_000);
      const reqs = await collector.requests();
      const failed = reqs.filter((r) => r.status === 503);
      expect(failed.length).toBe(2);
      const resent = new Set(reqs.filter((r) => r.status === 200).flatMap((r) => r.retryOf));
      for (const id of failed.flatMap((r) => r.messageIds)) expect(resent.has(id), `${id} re-sent with its messageId`).toBe(true);
      expect(await violations(collector)).toEqual([]);
    });

    test('a batch answered just before the page goes away, whose delete from IndexedDB the unload cuts off, is not sent again by the next page', async ({ profile, site, collector }) => {
      const url = basic(site, { flushInterval: 100 });
      const tab = await profile.newTab();
      await open(tab, url);
      await tab.evaluate(watchDeletes);
      // Another tab of the site, to hold the queue's store (see e2e/cut-off.ts).
      const blocker = await profile.newTab();
      await blocker.goto(site.page('/basic.html', { noload: '1' }));
      // The answer comes late, so that the other tab can take the store first.
      await collector.fault({ delayMs: 2_000, times: 1 });
      const [id] = await track(tab, 'Cut Off', 1);
      await blocker.evaluate(holdQueueStore, id);
      // The 2xx came, and the page asked for the record's delete, which waits behind the other tab: it leaves now.
      await waitUntil(tab, (id) => (window as any).__deleting.includes(id), id, 10_000, 'the delete after the 2xx');
      await tab.goto(url);
      await blocker.evaluate(() => ((window as any).__release = true));
      await ready(tab);
      // Without the hand-off note, the next page adopts the record after ORPHAN_GRACE_MS (1.5 s) and sends it again.
      expectExactlyOnce(await collector.waitFor(2, { event: 'Cut Off' }, 4_000), [id]);
      await waitUntil(tab, notStored, id, 5_000, 'the next page deleted the record');
    });

    test('two tabs of the site track at once: all arrive exactly once', async ({ profile, site, collector }) => {
      const url = basic(site, { flushInterval: 200 });
      const tabs = [await profile.newTab(), await profile.newTab()];
      await Promise.all(tabs.map((t) => open(t, url)));
      // Start both bursts before waiting for either: the drivers return at once, the pages track concurrently.
      for (const [n, t] of tabs.entries()) {
        await t.evaluate((tabNo) => {
          const a = (window as any).analytics;
          const run = async () => {
            const ids: string[] = [];
            for (let i = 0; i < 100; i++) ids.push((await a.track('Tabbed', { tab: tabNo, i })).event.messageId);
            return ids;
          };
          (window as any).__burst = run().then((ids) => ((window as any).__ids = ids));
        }, n);
      }
      const ids: string[] = [];
      for (const t of tabs) ids.push(...((await waitUntil(t, () => (window as any).__ids, undefined, 20_000, 'a burst finished')) as string[]));
      expect(new Set(ids).size).toBe(200);
      await expectArrivedOnce(collector, 'Tabbed', ids);
      expect(await violations(collector)).toEqual([]);
    });

    for (const idb of ['undefined', 'throw'] as const) {
      test(`without IndexedDB (${idb === 'throw' ? 'indexedDB.open throws' : 'window.indexedDB undefined'}) calls are still delivered`, async ({ profile, site, collector }) => {
        const tab = await profile.newTab();
        await open(tab, site.page('/eng-noidb.html', { idb, opts: JSON.stringify({ flushInterval: 100 }) }));
        const r = await tab.evaluate(async () => {
          const a = (window as any).analytics;
          const ids: string[] = [];
          const refused: string[] = [];
          for (let i = 0; i < 5; i++) {
            try {
              ids.push((await a.track('No IDB', { i })).event.messageId);
            } catch (e: any) {
              refused.push(String(e && e.code) + ' ' + e);
            }
          }
          return { ids, refused, hasIdb: typeof indexedDB };
        });
        expect(r.refused).toEqual([]);
        await expectArrivedOnce(collector, 'No IDB', r.ids);
        expect(await violations(collector)).toEqual([]);
      });
    }

    test('under a strict CSP with a nonce: events arrive, no violation', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await open(tab, site.page('/eng-csp.html', { csp: "script-src 'nonce-abc123'; connect-src *" }));
      const id: string = await tab.evaluate(async () => (await (window as any).analytics.track('Under CSP', { ok: true })).event.messageId);
      await collector.waitFor(2, {}, 10_000);
      await quiet(collector, 500);
      const msgs = await collector.messages();
      expect(msgs.map((m) => m.event).sort()).toEqual(['Early Under CSP', 'Under CSP']);
      expect(msgs.find((m) => m.event === 'Under CSP').messageId).toBe(id);
      expect(await tab.evaluate(() => (window as any).__violations)).toEqual([]);
      // the policy is in force: an inline script without the nonce is blocked (and reported)
      const blocked = await tab.evaluate(async () => {
        const s = document.createElement('script');
        s.textContent = 'window.__inlineRan = true';
        document.head.appendChild(s);
        const t0 = Date.now();
        while (!(window as any).__violations.length && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 20));
        return { ran: !!(window as any).__inlineRan, violations: (window as any).__violations.length };
      });
      expect(blocked).toEqual({ ran: false, violations: 1 });
      expect(await violations(collector)).toEqual([]);
    });

    // CONTRACT section 1: the stub writes each call, as it is made, where a later page's bundle finds it. The
    // bundle of the first page never arrives (its cdnUrl is a 404); the page ends; the next page sends the calls.
    for (const how of ['navigation', 'tab close'] as const) {
      test(`calls made before the bundle arrives survive a page that ends first (${how}): sent once, with call-time timestamps and page`, async ({ profile, site, collector }) => {
        let tab = await profile.newTab();
        await tab.goto(basic(site, { cdnUrl: '/eng-never/analytics.min.js', flushInterval: 100 }));
        const calls = await tab.evaluate(async () => {
          const a = (window as any).analytics;
          const out: { before: number; after: number; url: string }[] = [];
          for (let i = 0; i < 10; i++) {
            // two page states: the calls keep the URL they were made on
            if (i === 5) history.pushState({}, '', location.pathname + location.search + '&step=2');
            const before = Date.now();
            a.track('Buffered', { i });
            out.push({ before, after: Date.now(), url: location.href });
            await new Promise((r) => setTimeout(r, 5));
          }
          return { out, bundle: !!a.initialized };
        });
        expect(calls.bundle, 'the bundle never arrived on the first page').toBe(false);
        if (how === 'navigation') await tab.goto(site.page('/core-blank.html'));
        else {
          await tab.close();
          tab = await profile.newTab();
        }
        await open(tab, basic(site, { flushInterval: 100 }, { next: '1' }));
        await collector.waitFor(10, { event: 'Buffered' }, 15_000);
        await quiet(collector);
        const msgs = await collector.messages({ event: 'Buffered' });
        const byI = new Map<number, any[]>();
        for (const m of msgs) byI.set(m.properties.i, [...(byI.get(m.properties.i) || []), m]);
        const counts = Array.from({ length: 10 }, (_, i) => (byI.get(i) || []).length);
        expect(counts, 'how many times each of the 10 calls arrived').toEqual(Array(10).fill(1));
        expect(new Set(msgs.map((m) => m.messageId)).size).toBe(10);
        for (const [i, c] of calls.out.entries()) {
          const [m] = byI.get(i)!;
          expect(Date.parse(m.timestamp), `call ${i}: timestamp at call time`).toBeGreaterThanOrEqual(c.before);
          expect(Date.parse(m.timestamp), `call ${i}: timestamp at call time`).toBeLessThanOrEqual(c.after);
          expect(m.context.page.url, `call ${i}: its own page`).toBe(c.url);
        }
        expect(tally(msgs, msgs.map((m) => m.messageId)).duplicated).toEqual([]);
        expect(await violations(collector)).toEqual([]);
      });
    }
  });
}
