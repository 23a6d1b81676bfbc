// Consent and opt-out (CONTRACT sections 2-3) in every engine of driver.mjs: consent-pending mode stores nothing
// (localStorage, sessionStorage, document.cookie, indexedDB.databases() where the engine has it) and sends
// nothing; the grant sends the held calls in call order; an opt-out survives a reload. The full matrix, with
// DevTools' view of storage and the network, is e2e/consent.spec.ts (Chromium).
import { ENGINES, type EngineName } from './driver.mjs';
import { test, expect, open, ready, quiet, skipWhenMissing, type Tab } from './fixtures';
import type { SiteHandle } from '../fixtures';

const CONSENT = { consent: { categories: ['analytics'] }, flushInterval: 100 };

/** consent.html (e2e/site) with these load options and query parameters. */
const consentPage = (site: SiteHandle, opts: object, params: Record<string, string> = {}) =>
  site.page('/consent.html', { opts: JSON.stringify(opts), ...params });

/** What the page's origin stores, read in the page (document.cookie sees this page's cookies). */
const stored = (tab: Tab) =>
  tab.evaluate(async () => ({
    cookie: document.cookie,
    localStorage: { ...localStorage } as Record<string, string>,
    sessionStorage: { ...sessionStorage } as Record<string, string>,
    databases: typeof indexedDB.databases == 'function' ? (await indexedDB.databases()).map((d) => d.name) : 'not available',
  }));

/** Makes the calls one after the other; each resolves with its message, or the refusal's code. */
const call = (tab: Tab, calls: [string, ...unknown[]][]) =>
  tab.evaluate(async (calls) => {
    const out: { ok: boolean; id?: string; anonymousId?: string; code?: string }[] = [];
    for (const [method, ...a] of calls) {
      try {
        const r = await (window as any).analytics[method](...a);
        out.push({ ok: true, id: r.event.messageId, anonymousId: r.event.anonymousId });
      } catch (e: any) {
        out.push({ ok: false, code: e && e.code });
      }
    }
    return out;
  }, calls);

/** Throws what the page reported as uncaught (each test page collects them from the start). */
const pageErrors = (tab: Tab) => tab.evaluate(() => ((window as any).__pageErrors || []) as string[]);
const collectErrors = (tab: Tab) =>
  tab.evaluate(() => {
    const w = window as any;
    w.__pageErrors = [];
    addEventListener('error', (e) => w.__pageErrors.push(String(e.message)));
    addEventListener('unhandledrejection', (e) => w.__pageErrors.push('unhandledrejection ' + String(e.reason)));
  });

for (const name of ENGINES) {
  test.describe(name, () => {
    test.use({ engineName: name as EngineName });
    skipWhenMissing(name as EngineName);
    test.describe.configure({ timeout: 30_000 });

    test('consent pending: calls through the stub and after the bundle are held; nothing is stored and nothing is sent', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await open(tab, consentPage(site, CONSENT, { early: '2' }));
      await collectErrors(tab);
      expect(await tab.evaluate(() => (window as any).__calls.map((c: any) => c.stub))).toEqual([true, true]);
      const held = await call(tab, [['track', 'Held'], ['identify', 'held-user'], ['page', 'Held Page']]);
      expect(held.map((o) => o.ok)).toEqual([true, true, true]);
      await tab.evaluate(() => (window as any).analytics.flush());
      const s = await stored(tab);
      expect(s.cookie, 'document.cookie').toBe('');
      expect(s.localStorage, 'localStorage (the stub kept no svc_buffer either)').toEqual({});
      expect(s.sessionStorage, 'sessionStorage').toEqual({});
      if (s.databases !== 'not available') expect(s.databases, 'indexedDB.databases()').toEqual([]);
      test.info().annotations.push({ type: 'indexedDB.databases()', description: s.databases === 'not available' ? 'not available' : 'checked' });
      // The anonymous id lives in memory.
      const anonymousId = await tab.evaluate(() => (window as any).analytics.user().anonymousId());
      expect(held.map((o) => o.anonymousId)).toEqual([anonymousId, anonymousId, anonymousId]);
      await quiet(collector, 1000);
      expect(await collector.requests(), 'requests to the API').toEqual([]);
      expect(await pageErrors(tab)).toEqual([]);
    });

    test('grant: the held calls go in call order under the same anonymous id, which then persists', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await open(tab, consentPage(site, CONSENT, { early: '2' }));
      await collectErrors(tab);
      const held = await call(tab, [['track', 'Held A'], ['page', 'Held Page'], ['track', 'Held B']]);
      const anonymousId = held[0].anonymousId;
      const grantAt = Date.now();
      await tab.evaluate(() => (window as any).analytics.consent({ analytics: true }));
      const got = await collector.waitFor(5, {}, 15_000);
      expect(got.map((m) => m.event || `${m.type} ${m.name}`)).toEqual(['Early 1', 'Early 2', 'Held A', 'page Held Page', 'Held B']);
      expect(got.slice(2).map((m) => m.messageId)).toEqual(held.map((o) => o.id));
      expect(new Set(got.map((m) => m.anonymousId))).toEqual(new Set([anonymousId]));
      for (const m of got) expect(m.context.consent).toEqual({ categoryPreferences: { analytics: true } });
      await quiet(collector);
      expect(await collector.messages(), 'each once').toHaveLength(5);
      // Nothing left the page while it waited for the decision.
      expect((await collector.requests()).filter((r) => r.at < grantAt), 'requests before the grant').toEqual([]);
      const s = await stored(tab);
      expect(s.cookie).toContain(`svc_anonymous_id=${encodeURIComponent(JSON.stringify(anonymousId))}`);
      expect(JSON.parse(s.localStorage.svc_anonymous_id)).toBe(anonymousId);
      expect(await pageErrors(tab)).toEqual([]);
    });

    test('withdraw while a request is in flight, then leave the page: the page exit stores nothing (no hand-off note)', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await open(tab, consentPage(site, CONSENT, { cmp: JSON.stringify({ analytics: true }) }));
      await collectErrors(tab);
      // The answer comes late: the request is in flight when consent is withdrawn and the page left.
      await collector.fault({ delayMs: 1_500, times: 1 });
      const [inFlight] = await call(tab, [['track', 'In Flight At Withdraw']]);
      for (const deadline = Date.now() + 10_000; ; ) {
        const reqs = await collector.requests();
        if (reqs.some((r) => r.status === null && r.messageIds.includes(inFlight.id))) break;
        if (Date.now() > deadline) throw new Error('the request never reached the collector');
        await new Promise((r) => setTimeout(r, 20));
      }
      await tab.evaluate(() => (window as any).analytics.consent({ analytics: false }));
      await open(tab, consentPage(site, CONSENT, { next: '1' }));
      await collectErrors(tab);
      await tab.evaluate(() => (window as any).analytics.flush());
      await quiet(collector, 1000);
      const s = await stored(tab);
      expect(Object.keys(s.localStorage).filter((k) => k.startsWith('svc_')), 'localStorage (the hand-off note too)').toEqual([]);
      expect(s.cookie).not.toContain('svc_');
      // What was in flight was already sent: it arrives, once.
      expect((await collector.messages({ event: 'In Flight At Withdraw' })).map((m) => m.messageId)).toEqual([inFlight.id]);
      expect(await pageErrors(tab)).toEqual([]);
    });

    test('opt-out: later calls are refused with opted_out, the stored identity is gone, and it survives a reload', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      const url = consentPage(site, { flushInterval: 100 });
      await open(tab, url);
      await collectErrors(tab);
      const [first] = await call(tab, [['track', 'Before Opt-Out']]);
      await collector.waitFor(1, { messageId: first.id! }, 15_000);
      expect((await stored(tab)).cookie).toContain('svc_anonymous_id=');
      await tab.evaluate(() => (window as any).analytics.optOut());
      expect((await call(tab, [['track', 'Refused'], ['identify', 'x']])).map((o) => o.code)).toEqual(['opted_out', 'opted_out']);
      expect(await pageErrors(tab)).toEqual([]);

      await tab.reload();
      await ready(tab);
      await collectErrors(tab);
      expect((await call(tab, [['track', 'Refused After Reload'], ['page']])).map((o) => o.code)).toEqual(['opted_out', 'opted_out']);
      const s = await stored(tab);
      expect(s.cookie).toContain('svc_opt_out=true');
      expect(s.cookie).not.toContain('svc_anonymous_id');
      expect(Object.keys(s.localStorage).filter((k) => /^svc_(anonymous|user|group)/.test(k))).toEqual([]);
      await tab.evaluate(() => (window as any).analytics.flush());
      await quiet(collector, 1000);
      expect((await collector.messages()).map((m) => m.event)).toEqual(['Before Opt-Out']);
      expect(await pageErrors(tab)).toEqual([]);
    });
  });
}
