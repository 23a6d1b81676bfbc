// Consent and opt-out (CONTRACT section 2 `consent`, `optOut`/`optIn`; section 3 `consent`, `respectGPC`), checked
// in the browser itself: its cookie jar (context.cookies()), localStorage and sessionStorage (read in the page),
// IndexedDB (indexedDB.databases() in the page, and DevTools' IndexedDB and Storage domains, which see the
// database without opening it) and every request the page made (page.on('request')).
//
// Pages: e2e/site/consent.html (load options from ?opts=, stub calls from ?early=, a site's consent platform
// calling consent() from ?cmp=).
import { chromium, type BrowserContext, type CDPSession, type Page } from '@playwright/test';
import { test, expect, ready, watchErrors, type CollectorHandle, type SiteHandle } from './fixtures';
import { executablePath, args } from '../scripts/chromium.mjs';

// A failing library should fail fast, not hang: every test here normally takes a few seconds.
test.describe.configure({ timeout: 45_000 });

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const CATEGORIES = { categories: ['analytics'] };
const DB = 'svc-analytics';
const IDENTITY_KEYS = ['svc_anonymous_id', 'svc_user_id', 'svc_user_traits', 'svc_group_id', 'svc_group_properties'];

/** consent.html with these load options and query parameters. */
const consentPage = (site: SiteHandle, opts: object, params: Record<string, string> = {}) =>
  site.page('/consent.html', { opts: JSON.stringify(opts), ...params });

/** What a stored value holds (the library writes JSON, URI-encoded in cookies). */
function decoded(v: string | null | undefined): unknown {
  if (v == null) return v;
  let s = v;
  try {
    s = decodeURIComponent(v);
  } catch {
    // not URI-encoded
  }
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

/** The result of each call, made one after the other in the page: the event it resolved with, or the refusal's code. */
interface Outcome {
  ok: boolean;
  before: number;
  after: number;
  event?: any;
  code?: string;
}
function call(page: Page, calls: [string, ...unknown[]][]): Promise<Outcome[]> {
  return page.evaluate(async (calls) => {
    const out: Outcome[] = [];
    for (const [method, ...a] of calls) {
      const before = Date.now();
      try {
        const r = await (window as any).analytics[method](...a);
        out.push({ ok: true, before, after: Date.now(), event: r && r.event });
      } catch (e: any) {
        out.push({ ok: false, before, after: Date.now(), code: e && e.code });
      }
    }
    return out;
  }, calls);
}

/** Waits (condition, bounded) until the page's clock passed `t` by `ms`: later calls then have later timestamps. */
const clockPast = (page: Page, t: number, ms = 30) => page.waitForFunction(([t, ms]) => Date.now() > t + ms, [t, ms], { timeout: 5000 });

/** Everything the page's origin holds, read for real: the cookie jar, both web storages and IndexedDB. */
async function storageOf(page: Page, cdp: CDPSession) {
  const origin = new URL(page.url()).origin;
  const inPage = await page.evaluate(async () => ({
    localStorage: { ...localStorage } as Record<string, string>,
    sessionStorage: { ...sessionStorage } as Record<string, string>,
    databases: indexedDB.databases ? (await indexedDB.databases()).map((d) => d.name) : null,
  }));
  const cookies = await page.context().cookies();
  const { databaseNames } = await cdp.send('IndexedDB.requestDatabaseNames', { securityOrigin: origin });
  let queued = 0;
  if (databaseNames.includes(DB)) {
    const meta = await cdp.send('IndexedDB.getMetadata', { securityOrigin: origin, databaseName: DB, objectStoreName: 'queue' }).catch(() => null);
    queued = meta ? meta.entriesCount : 0;
  }
  const { usage, usageBreakdown } = await cdp.send('Storage.getUsageAndQuota', { origin });
  return { cookies, ...inPage, cdpDatabases: databaseNames, queued, usage, usageBreakdown: usageBreakdown.filter((u) => u.usage > 0) };
}

/** Asserts that the browser holds nothing at all for the site: no cookie, no web storage, no database. */
async function expectNothingStored(page: Page, cdp: CDPSession, when: string) {
  const s = await storageOf(page, cdp);
  expect(s.cookies, `${when}: cookies`).toEqual([]);
  expect(s.localStorage, `${when}: localStorage`).toEqual({});
  expect(s.sessionStorage, `${when}: sessionStorage`).toEqual({});
  expect(s.databases, `${when}: indexedDB.databases()`).toEqual([]);
  expect(s.cdpDatabases, `${when}: IndexedDB.requestDatabaseNames`).toEqual([]);
  expect(s.usageBreakdown, `${when}: Storage.getUsageAndQuota`).toEqual([]);
}

/** The number of records in the library's IndexedDB queue, as DevTools sees it (0 when there is no database). */
async function queued(page: Page, cdp: CDPSession) {
  return (await storageOf(page, cdp)).queued;
}

/** The library's identity as the browser stores it: cookies by name and localStorage by key (decoded). */
async function storedIdentity(page: Page) {
  const cookies = Object.fromEntries((await page.context().cookies()).map((c) => [c.name, decoded(c.value)]));
  const ls = await page.evaluate(() => ({ ...localStorage }) as Record<string, string>);
  const local = Object.fromEntries(Object.entries(ls).map(([k, v]) => [k, decoded(v)]));
  return { cookies, local };
}

/** Every request the page makes, as URLs. */
function recordRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (r) => urls.push(r.url()));
  return urls;
}

/** The request URLs allowed before consent: the page itself and the bundle. */
const onlyPageAndBundle = (urls: string[], pageUrl: string) =>
  urls.filter((u) => u !== pageUrl && new URL(u).pathname !== '/dist/analytics.min.js');

/** Holds the bundle's response until `release()`: calls made meanwhile go to the snippet's stub. */
async function holdBundle(page: Page) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let asked!: () => void;
  const requested = new Promise<void>((r) => (asked = r));
  await page.route('**/dist/analytics.min.js', async (route) => {
    asked();
    await released;
    await route.continue();
    // Done with: while a route is on, Playwright intercepts every request of the page and answers CORS preflights
    // itself, and a keepalive fetch whose preflight it has not answered when the page unloads is never sent.
    await page.unroute('**/dist/analytics.min.js');
  });
  return { requested, release };
}

/** Waits until the page has sent everything it would send (flush settled, no request for 500 ms). */
async function settle(page: Page) {
  await page.evaluate(() => (window as any).analytics.flush());
  await page.waitForLoadState('networkidle');
}

const user = (page: Page) => page.evaluate(() => ({ id: (window as any).analytics.user().id(), anonymousId: (window as any).analytics.user().anonymousId() }));

// ---------------------------------------------------------------------------------------------------------------

test('consent pending: calls before and after the bundle are held in memory; nothing is stored and only the page and the bundle load', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const requests = recordRequests(page);
  const cdp = await context.newCDPSession(page);
  const bundle = await holdBundle(page);
  const url = consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { early: '2' });
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await bundle.requested;

  // The bundle has not come: the stub has the calls, and writes none of them down (the `load` had `consent`).
  const early = await page.evaluate(() => (window as any).__calls);
  expect(early.map((c: any) => c.stub)).toEqual([true, true]);
  const stubbed = await page.evaluate(() => {
    const a = (window as any).analytics;
    a.page();
    a.identify('held-user', { plan: 'pro' });
    a.track('Stub Held');
    return { version: a.VERSION, recorded: a.filter((c: any) => Array.isArray(c)).map((c: any) => c[0]), buffer: localStorage.getItem('svc_buffer') };
  });
  expect(stubbed.version, 'the stub is still in charge').toBeUndefined();
  expect(stubbed.recorded).toEqual(['load', 'track', 'track', 'page', 'identify', 'track']);
  expect(stubbed.buffer, 'the stub kept nothing in localStorage').toBeNull();
  await expectNothingStored(page, cdp, 'before the bundle');

  bundle.release();
  await ready(page);
  // After the bundle: each call is accepted (its promise resolves once held), with its message.
  const after = await call(page, [['track', 'Bundle Held', { n: 1 }], ['group', 'g-1', { name: 'G' }], ['page', 'Docs']]);
  expect(after.map((o) => o.ok)).toEqual([true, true, true]);
  for (const o of after) expect(o.event.messageId).toBeTruthy();
  // The anonymous id lives in memory, the same for every call, and is stored nowhere.
  const { anonymousId, id } = await user(page);
  expect(anonymousId).toMatch(UUID_V4);
  expect(id, 'the identify held in memory').toBe('held-user');
  expect(after.map((o) => o.event.anonymousId)).toEqual([anonymousId, anonymousId, anonymousId]);
  expect(after[0].event.userId).toBe('held-user');

  await settle(page);
  await expectNothingStored(page, cdp, 'after the bundle and its calls');
  const s = await storageOf(page, cdp);
  expect(JSON.stringify(s)).not.toContain(anonymousId);
  expect(onlyPageAndBundle(requests, url), 'requests other than the page and the bundle').toEqual([]);
  expect(await collector.requests()).toEqual([]);
  expect(errors).toEqual([]);
});

test('control: without the consent option the stub does write its buffer, and the library its identity (the checks above can fail)', async ({ page, context, site }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  const bundle = await holdBundle(page);
  await page.goto(consentPage(site, { flushInterval: 100 }, { early: '1' }), { waitUntil: 'domcontentloaded' });
  await bundle.requested;
  expect(await page.evaluate(() => localStorage.getItem('svc_buffer'))).toContain('Early 1');
  bundle.release();
  await ready(page);
  await call(page, [['track', 'Open']]);
  const s = await storageOf(page, cdp);
  expect(s.cookies.map((c) => c.name)).toContain('svc_anonymous_id');
  expect(s.cdpDatabases).toContain(DB);
  expect(errors).toEqual([]);
});

test('grant: the held calls go in call order with their call-time timestamps under the same anonymous id, which then persists', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  const url = consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { early: '2' });
  await page.goto(url);
  await ready(page);
  const early = await page.evaluate(() => (window as any).__calls);
  expect(early.map((c: any) => c.stub), 'the early calls went through the stub').toEqual([true, true]);
  // Calls spread in time after the bundle took over.
  const made: Outcome[] = [];
  for (const c of [['track', 'Held A'], ['identify', 'user-7', { plan: 'pro' }], ['page', 'Pricing'], ['track', 'Held B', { x: 1 }]] as [string, ...unknown[]][]) {
    await clockPast(page, made.length ? made[made.length - 1].after : early[1].after);
    made.push(...(await call(page, [c])));
  }
  expect(made.every((o) => o.ok)).toBe(true);
  const { anonymousId } = await user(page);
  await expectNothingStored(page, cdp, 'before the grant');
  expect(await collector.requests()).toEqual([]);

  await clockPast(page, made[made.length - 1].after, 200);
  const grantAt: number = await page.evaluate(() => {
    const t = Date.now();
    (window as any).analytics.consent({ analytics: true });
    return t;
  });
  const got = await collector.waitFor(6, {}, 10_000);
  expect(got.map((m) => m.event || m.type + ' ' + (m.name || m.userId))).toEqual(['Early 1', 'Early 2', 'Held A', 'identify user-7', 'page Pricing', 'Held B']);
  // Call-time timestamps (between the time around each call), all before the grant.
  const windows = [...early, ...made];
  got.forEach((m, i) => {
    const t = Date.parse(m.timestamp);
    expect(t, `${i}: timestamp at call time`).toBeGreaterThanOrEqual(windows[i].before);
    expect(t, `${i}: timestamp at call time`).toBeLessThanOrEqual(windows[i].after);
    expect(t, `${i}: before the grant`).toBeLessThan(grantAt);
  });
  const ids = got.map((m) => m.messageId);
  expect([...ids].sort(), 'messageIds sort in call order').toEqual(ids);
  expect(new Set(got.map((m) => m.anonymousId))).toEqual(new Set([anonymousId]));
  expect(got.slice(3).map((m) => m.userId)).toEqual(['user-7', 'user-7', 'user-7']);
  for (const m of got) expect(m.context.consent, m.messageId).toEqual({ categoryPreferences: { analytics: true } });
  expect((await collector.messages()).length, 'each once').toBe(6);

  // Now it persists: the cookies and localStorage hold the same anonymous id (and the user id).
  await expect.poll(async () => (await storedIdentity(page)).cookies.svc_anonymous_id).toBe(anonymousId);
  const stored = await storedIdentity(page);
  expect(stored.local.svc_anonymous_id).toBe(anonymousId);
  expect(stored.cookies.svc_user_id).toBe('user-7');
  expect(stored.local.svc_user_id).toBe('user-7');

  // The next page: the site's consent platform calls consent() again; the visitor is the same.
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { cmp: JSON.stringify({ analytics: true }), next: '1' }));
  await ready(page);
  expect(await user(page)).toEqual({ id: 'user-7', anonymousId });
  const [next] = await call(page, [['track', 'Next Page']]);
  const [arrived] = await collector.waitFor(1, { messageId: next.event.messageId }, 10_000);
  expect(arrived).toMatchObject({ anonymousId, userId: 'user-7', context: { consent: { categoryPreferences: { analytics: true } } } });
  expect(errors).toEqual([]);
});

test('deny: the held calls are discarded and nothing is ever written or sent; later calls are refused with consent_denied; a later grant works', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const requests = recordRequests(page);
  const cdp = await context.newCDPSession(page);
  const url = consentPage(site, { consent: { categories: ['analytics', 'advertising'] }, flushInterval: 100 }, { early: '1' });
  await page.goto(url);
  await ready(page);
  const held = await call(page, [['track', 'Held Then Denied'], ['page', 'Held Page']]);
  expect(held.map((o) => o.ok)).toEqual([true, true]);

  // One category refused is a denial.
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true, advertising: false }));
  const refused = await call(page, [['track', 'After Deny'], ['page'], ['identify', 'x']]);
  expect(refused.map((o) => o.code)).toEqual(['consent_denied', 'consent_denied', 'consent_denied']);
  // A decision that still refuses one category leaves it denied.
  await page.evaluate(() => (window as any).analytics.consent({ analytics: false, advertising: false }));
  expect((await call(page, [['track', 'Still Denied']]))[0].code).toBe('consent_denied');
  await settle(page);
  await expectNothingStored(page, cdp, 'after the denial');
  expect(onlyPageAndBundle(requests, url), 'requests after the denial').toEqual([]);
  expect(await collector.requests()).toEqual([]);

  // The site asks again and the visitor grants: what comes after is sent, with the new decision; nothing from before.
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true, advertising: true }));
  const [granted] = await call(page, [['track', 'After Grant']]);
  expect(granted.ok).toBe(true);
  await collector.waitFor(1, { event: 'After Grant' }, 10_000);
  await settle(page);
  const all = await collector.messages();
  expect(all.map((m) => m.event || m.type)).toEqual(['After Grant']);
  expect(all[0].context.consent).toEqual({ categoryPreferences: { analytics: true, advertising: true } });
  await expect.poll(async () => (await storedIdentity(page)).cookies.svc_anonymous_id).toBe(all[0].anonymousId);
  expect(errors).toEqual([]);
});

test('deny: a held identify is discarded with its user id and traits (a later grant neither sends nor stores them)', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }));
  await ready(page);
  expect((await call(page, [['identify', 'denied-user', { email: 'denied@example.com' }]]))[0].ok).toBe(true);
  await page.evaluate(() => (window as any).analytics.consent({ analytics: false }));
  // A call refused after the denial changes nothing (the library checks before it applies the identify) ...
  expect((await call(page, [['identify', 'refused-user']]))[0].code).toBe('consent_denied');
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  const [t] = await call(page, [['track', 'After Grant']]);
  const [m] = await collector.waitFor(1, { messageId: t.event.messageId }, 10_000);
  // ... and neither should the identify the denial discarded: its message was never sent.
  const stored = await storedIdentity(page);
  expect({ userId: m.userId, stored: stored.cookies.svc_user_id, traits: stored.local.svc_user_traits ?? {} }).toEqual({ userId: undefined, stored: undefined, traits: {} });
  expect(errors).toEqual([]);
});

test('deny on a later page (consent withdrawn where the library did not see it) removes what an earlier grant stored', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { cmp: JSON.stringify({ analytics: true }) }));
  await ready(page);
  const [i] = await call(page, [['identify', 'granted-user', { plan: 'pro' }]]);
  await collector.waitFor(1, { messageId: i.event.messageId }, 10_000);
  expect((await storedIdentity(page)).cookies.svc_anonymous_id).toBe(i.event.anonymousId);

  // The visitor changed their mind in the site's consent platform; its next page tells the library "denied".
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { cmp: JSON.stringify({ analytics: false }) }));
  await ready(page);
  expect((await call(page, [['track', 'Denied']]))[0].code).toBe('consent_denied');
  const s = await storedIdentity(page);
  expect(
    { cookies: Object.keys(s.cookies).filter((k) => IDENTITY_KEYS.includes(k)), localStorage: Object.keys(s.local).filter((k) => IDENTITY_KEYS.includes(k)) },
    'no identifier is kept once consent is denied',
  ).toEqual({ cookies: [], localStorage: [] });
  expect(errors).toEqual([]);
});

test('held calls are within the queue bounds: every call whose promise resolved while held is delivered after the grant', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100, queue: { maxCount: 5 } }));
  await ready(page);
  await page.evaluate(() => {
    (window as any).__errors = [];
    (window as any).analytics.on('error', (e: any) => (window as any).__errors.push(e.code));
  });
  const held = await call(page, Array.from({ length: 8 }, (_, n) => ['track', 'Bounded', { n }] as [string, ...unknown[]]));
  const resolved = held.filter((o) => o.ok).map((o) => o.event.messageId);
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  // Sent in rounds of at most maxCount: each flush frees room.
  await collector.waitFor(Math.min(resolved.length, 5), { event: 'Bounded' }, 10_000);
  await page.evaluate(() => (window as any).analytics.flush());
  await settle(page);
  const delivered = (await collector.messages({ event: 'Bounded' })).map((m) => m.messageId);
  const lost = resolved.filter((id) => !delivered.includes(id));
  expect(
    { resolved: resolved.length, delivered: delivered.length, lost: lost.length, errors: await page.evaluate(() => (window as any).__errors) },
    'a call refused for the queue bound should be refused when made (queue_full), not resolved and dropped at the grant',
  ).toMatchObject({ resolved: delivered.length, lost: 0 });
  expect(errors).toEqual([]);
});

test('while held, a message must leave room for the decision it will carry: one without room is refused at call time, one with room is delivered', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }));
  await ready(page);
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const codes: string[] = [];
    a.on('error', (e: any) => codes.push(e.code));
    const size = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
    const probe = await a.track('Big', { pad: '' });
    // 31,960 bytes: under the limit, but not with `context.consent` added when it is sent
    const tooBig = await a.track('Big', { pad: 'x'.repeat(31_960 - size(probe.event)) }).then(
      () => 'resolved',
      (e: any) => e.code,
    );
    const fits = await a.track('Big', { pad: 'x'.repeat(31_500 - size(probe.event)) });
    return { tooBig, id: fits.event.messageId, bytes: size(fits.event), codes };
  });
  // refused as it was made (its promise never resolved), and reported
  expect(r.tooBig).toBe('message_too_large');
  expect(r.codes).toEqual(['message_too_large']);
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  await collector.waitFor(2, { event: 'Big' }, 10_000);
  await settle(page);
  const got = await collector.messages({ event: 'Big' });
  const big = got.find((m) => m.messageId == r.id);
  expect(big, 'the message with room is delivered').toBeTruthy();
  expect(big.context.consent).toEqual({ categoryPreferences: { analytics: true } });
  expect(got).toHaveLength(2); // the probe and the one with room
  expect(await collector.violations()).toEqual([]);
  expect(errors).toEqual([]);
});

test('withdraw: the queued records in IndexedDB and the stored identity are removed, and calls are held again', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { cmp: JSON.stringify({ analytics: true }) }));
  await ready(page);
  const [first] = await call(page, [['identify', 'w-user', { a: 1 }]]);
  await collector.waitFor(1, { messageId: first.event.messageId }, 10_000);
  // The API fails from now on: what follows stays queued in IndexedDB.
  await collector.fault({ status: 503 });
  const queuedCalls = await call(page, [['track', 'Queued 1'], ['track', 'Queued 2'], ['track', 'Queued 3']]);
  expect(queuedCalls.every((o) => o.ok)).toBe(true);
  expect(await queued(page, cdp), 'records in IndexedDB').toBeGreaterThanOrEqual(3);
  const before = await storedIdentity(page);
  expect(before.cookies.svc_anonymous_id).toBe(first.event.anonymousId);
  expect(before.local.svc_user_id).toBe('w-user');

  await page.evaluate(() => (window as any).analytics.consent({ analytics: false }));
  await expect.poll(() => queued(page, cdp), { message: 'the IndexedDB queue is emptied' }).toBe(0);
  const after = await storedIdentity(page);
  expect(Object.keys(after.cookies).filter((k) => k.startsWith('svc_')), 'identity cookies').toEqual([]);
  expect(Object.keys(after.local).filter((k) => k.startsWith('svc_')), 'identity in localStorage').toEqual([]);
  expect(await page.evaluate(() => ({ ...sessionStorage }))).toEqual({});

  // Held again: accepted, and nothing stored.
  const heldAgain = await call(page, [['track', 'Held After Withdraw'], ['page', 'Again']]);
  expect(heldAgain.map((o) => o.ok)).toEqual([true, true]);
  await settle(page);
  expect(await queued(page, cdp)).toBe(0);
  const still = await storedIdentity(page);
  expect(Object.keys(still.cookies).filter((k) => IDENTITY_KEYS.includes(k))).toEqual([]);
  expect(Object.keys(still.local).filter((k) => k.startsWith('svc_'))).toEqual([]);

  // The API recovers and the visitor grants again: the calls held since the withdrawal go; the removed ones never.
  await collector.fault({});
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  await page.evaluate(() => (window as any).analytics.flush()); // past any retry backoff left from the failing API
  await collector.waitFor(1, { event: 'Held After Withdraw' }, 10_000);
  await collector.waitFor(1, { name: 'Again' }, 10_000);
  await settle(page);
  const accepted = await collector.messages();
  expect(accepted.map((m) => m.event || `${m.type} ${m.name || m.userId}`)).toEqual(['identify w-user', 'Held After Withdraw', 'page Again']);
  expect(errors).toEqual([]);
});

test('withdraw, then leave the page: the page exit stores and sends nothing of what was held', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { cmp: JSON.stringify({ analytics: true }) }));
  await ready(page);
  const [first] = await call(page, [['track', 'Granted']]);
  await collector.waitFor(1, { messageId: first.event.messageId }, 10_000);
  await page.evaluate(() => (window as any).analytics.consent({ analytics: false }));
  expect((await call(page, [['track', 'Held At Exit 1'], ['track', 'Held At Exit 2']])).every((o) => o.ok)).toBe(true);
  // Another page of the site, where the visitor has not decided yet (pending): what did the exit leave?
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { next: '1' }));
  await ready(page);
  await settle(page);
  const s = await storedIdentity(page);
  expect(Object.keys(s.cookies).filter((k) => k.startsWith('svc_')), 'cookies').toEqual([]);
  expect(Object.keys(s.local).filter((k) => k.startsWith('svc_')), 'localStorage').toEqual([]);
  expect(await queued(page, cdp), 'IndexedDB records').toBe(0);
  expect((await collector.messages()).map((m) => m.event)).toEqual(['Granted']);
  expect(errors).toEqual([]);
});

test('withdraw while a request is in flight, then leave the page: the page exit notes nothing in storage', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { cmp: JSON.stringify({ analytics: true }) }));
  await ready(page);
  // The answer comes late: the request is still in flight (kept alive) when consent is withdrawn and the page left.
  await collector.fault({ delayMs: 1_500, times: 1 });
  const sent = page.waitForRequest((r) => r.url().endsWith('/v1/batch'), { timeout: 10_000 });
  const [inFlight] = await call(page, [['track', 'In Flight At Withdraw']]);
  await sent;
  await page.evaluate(() => (window as any).analytics.consent({ analytics: false }));
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { next: '1' }));
  await ready(page);
  await settle(page);
  const s = await storedIdentity(page);
  expect(Object.keys(s.cookies).filter((k) => k.startsWith('svc_')), 'cookies').toEqual([]);
  expect(Object.keys(s.local).filter((k) => k.startsWith('svc_')), 'localStorage (the hand-off note too)').toEqual([]);
  expect(await queued(page, cdp), 'IndexedDB records').toBe(0);
  // What was in flight was already sent: it arrives (once).
  expect((await collector.waitFor(1, { event: 'In Flight At Withdraw' }, 10_000)).map((m) => m.messageId)).toEqual([inFlight.event.messageId]);
  expect(errors).toEqual([]);
});

test('opt-out while consent is pending discards the held calls; after opting in, a grant sends only later calls', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }, { early: '1' }));
  await ready(page);
  expect((await call(page, [['track', 'Held Before Opt-Out']]))[0].ok).toBe(true);
  await page.evaluate(() => (window as any).analytics.optOut());
  expect((await call(page, [['track', 'Refused']]))[0].code).toBe('opted_out');
  // A grant while opted out changes nothing: the opt-out wins.
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  expect((await call(page, [['track', 'Refused Despite Grant']]))[0].code).toBe('opted_out');
  await page.evaluate(() => (window as any).analytics.optIn());
  // The grant made while opted out is this page's decision: after opting in, calls go.
  const [after] = await call(page, [['track', 'After Opt-In']]);
  expect(after.ok).toBe(true);
  await collector.waitFor(1, { messageId: after.event.messageId }, 10_000);
  await settle(page);
  expect((await collector.messages()).map((m) => m.event)).toEqual(['After Opt-In']);
  expect(errors).toEqual([]);
});

test('optIn() without an earlier opt-out, while consent is pending, writes nothing', async ({ page, context, site }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  await page.goto(consentPage(site, { consent: CATEGORIES, flushInterval: 100 }));
  await ready(page);
  // (a consent platform may call optIn() on every "accept all"; here the visitor has decided nothing yet)
  await page.evaluate(() => (window as any).analytics.optIn());
  expect((await call(page, [['track', 'Held']]))[0].ok).toBe(true);
  await settle(page);
  await expectNothingStored(page, cdp, 'after optIn() in consent-pending mode');
  expect(errors).toEqual([]);
});

test('every message sent after a decision carries context.consent.categoryPreferences, the latest decision', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  // The decision made through the stub, after calls of its own: those calls carry it too.
  await page.goto(consentPage(site, { consent: { categories: ['analytics'] }, flushInterval: 100 }, { early: '2', cmp: JSON.stringify({ analytics: true, advertising: false }) }));
  await ready(page);
  const first = { analytics: true, advertising: false };
  await collector.waitFor(2, {}, 10_000);
  const more = await call(page, [['page', 'P'], ['identify', 'cp-user'], ['group', 'cp-group'], ['screen', 'S'], ['alias', 'cp-user-2'], ['track', 'T']]);
  await page.evaluate(() => (window as any).analytics.flush());
  await collector.waitFor(8, {}, 10_000);
  // A new decision: every later message carries it.
  const second = { analytics: true, advertising: true, functional: false };
  await page.evaluate((p) => (window as any).analytics.consent(p), second);
  const later = await call(page, [['track', 'Later'], ['page', 'Later Page']]);
  await page.evaluate(() => (window as any).analytics.flush());
  const got = await collector.waitFor(10, {}, 10_000);
  expect(got).toHaveLength(10);
  for (const m of got.slice(0, 8)) expect(m.context.consent, `${m.type} ${m.event || m.name || ''}`).toEqual({ categoryPreferences: first });
  for (const m of got.slice(8)) expect(m.context.consent, `${m.type} ${m.event || m.name || ''}`).toEqual({ categoryPreferences: second });
  expect(more.concat(later).every((o) => o.ok)).toBe(true);
  // What the call resolved with says the same.
  expect(later[0].event.context.consent).toEqual({ categoryPreferences: second });
  expect(errors).toEqual([]);
});

test('without the consent option, messages carry the decision once one is made, and none before', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(consentPage(site, { flushInterval: 100 }));
  await ready(page);
  const [before] = await call(page, [['track', 'Before Decision']]);
  const [m0] = await collector.waitFor(1, { messageId: before.event.messageId }, 10_000);
  expect(m0.context.consent).toBeUndefined();
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true }));
  const after = await call(page, [['track', 'After Decision'], ['page', 'After']]);
  await page.evaluate(() => (window as any).analytics.flush());
  for (const o of after) {
    const [m] = await collector.waitFor(1, { messageId: o.event.messageId }, 10_000);
    expect(m.context.consent).toEqual({ categoryPreferences: { analytics: true } });
  }
  expect(errors).toEqual([]);
});

test('opt-out removes the queue and the stored identity, refuses later calls with opted_out, and survives reloads; opt-in gives a fresh anonymous id that survives reloads', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  const url = consentPage(site, { flushInterval: 100 });
  await page.goto(url);
  await ready(page);
  const [first] = await call(page, [['identify', 'oo-user', { plan: 'pro' }]]);
  await collector.waitFor(1, { messageId: first.event.messageId }, 10_000);
  const oldId = first.event.anonymousId;
  await collector.fault({ status: 503 });
  expect((await call(page, [['track', 'Queued 1'], ['track', 'Queued 2']])).every((o) => o.ok)).toBe(true);
  expect(await queued(page, cdp)).toBeGreaterThanOrEqual(2);

  await page.evaluate(() => (window as any).analytics.optOut());
  await expect.poll(() => queued(page, cdp), { message: 'the IndexedDB queue is emptied' }).toBe(0);
  const out = await storedIdentity(page);
  expect(Object.keys(out.cookies).filter((k) => IDENTITY_KEYS.includes(k)), 'identity cookies').toEqual([]);
  expect(Object.keys(out.local).filter((k) => IDENTITY_KEYS.includes(k)), 'identity in localStorage').toEqual([]);
  expect(out.cookies.svc_opt_out, 'the choice persists in a cookie').toBe(true);
  const optCookie = (await context.cookies()).find((c) => c.name === 'svc_opt_out')!;
  expect(optCookie.expires - Date.now() / 1000, 'for about a year').toBeGreaterThan(360 * 86400);
  expect((await call(page, [['track', 'Refused'], ['page'], ['identify', 'z']])).map((o) => o.code)).toEqual(['opted_out', 'opted_out', 'opted_out']);
  await collector.fault({});

  // Reloads: still out, nothing stored but the choice, nothing sent.
  const requests = recordRequests(page);
  for (let i = 0; i < 2; i++) {
    await page.reload();
    await ready(page);
    expect((await call(page, [['track', 'Refused After Reload'], ['page']])).map((o) => o.code)).toEqual(['opted_out', 'opted_out']);
    await settle(page);
    const s = await storedIdentity(page);
    expect(Object.keys(s.cookies).filter((k) => IDENTITY_KEYS.includes(k))).toEqual([]);
    expect(Object.keys(s.local).filter((k) => IDENTITY_KEYS.includes(k))).toEqual([]);
    expect(await queued(page, cdp)).toBe(0);
    expect((await user(page)).anonymousId).not.toBe(oldId);
  }
  expect(requests.filter((u) => u.startsWith(collector.url)), 'requests to the API while opted out').toEqual([]);

  // Opt in: a fresh anonymous id, used and stored, across reloads.
  await page.evaluate(() => (window as any).analytics.optIn());
  const fresh = await user(page);
  expect(fresh.anonymousId).toMatch(UUID_V4);
  expect(fresh.anonymousId).not.toBe(oldId);
  expect(fresh.id).toBeNull();
  const [inMsg] = await call(page, [['track', 'Opted In']]);
  const [m1] = await collector.waitFor(1, { messageId: inMsg.event.messageId }, 10_000);
  expect(m1.anonymousId).toBe(fresh.anonymousId);
  expect(m1.userId).toBeUndefined();
  expect((await storedIdentity(page)).cookies.svc_anonymous_id).toBe(fresh.anonymousId);
  for (let i = 0; i < 2; i++) {
    await page.reload();
    await ready(page);
    const [r] = await call(page, [['track', 'After Opt-In Reload ' + i]]);
    expect(r.ok).toBe(true);
    const [m] = await collector.waitFor(1, { messageId: r.event.messageId }, 10_000);
    expect(m.anonymousId).toBe(fresh.anonymousId);
  }
  await settle(page);
  // Nothing of the opted-out time arrived: not the queued calls the opt-out removed, not the refused ones.
  const events = (await collector.messages()).map((m) => m.event || m.type);
  expect(events).toEqual(['identify', 'Opted In', 'After Opt-In Reload 0', 'After Opt-In Reload 1']);
  expect(errors).toEqual([]);
});

test('opt-out in one tab: another open tab of the site refuses its later calls and stores no identity again', async ({ context, site, collector }) => {
  const a = await context.newPage();
  const b = await context.newPage();
  const errors = [await watchErrors(a), await watchErrors(b)];
  for (const p of [a, b]) {
    await p.goto(consentPage(site, { flushInterval: 100 }, { tab: p === a ? 'a' : 'b' }));
    await ready(p);
  }
  const [fromB] = await call(b, [['track', 'B Before']]);
  await collector.waitFor(1, { messageId: fromB.event.messageId }, 10_000);

  await a.evaluate(() => (window as any).analytics.optOut());
  await expect.poll(async () => (await storedIdentity(a)).cookies.svc_opt_out).toBe(true);
  const later = await call(b, [['identify', 'b-user'], ['track', 'B After Opt-Out']]);
  await settle(b);
  const sent = (await collector.messages()).filter((m) => m.event === 'B After Opt-Out' || m.userId === 'b-user');
  const s = await storedIdentity(b);
  expect(
    {
      codes: later.map((o) => o.code),
      sent: sent.length,
      identityCookies: Object.keys(s.cookies).filter((k) => IDENTITY_KEYS.includes(k)),
    },
    'the visitor opted out of the site: "refuses every later call with opted_out, sending nothing"',
  ).toEqual({ codes: ['opted_out', 'opted_out'], sent: 0, identityCookies: [] });
  expect(errors.flat()).toEqual([]);
});

test('opt-out is shared with the subdomains of the site, and so is opting in again', async ({ site, collector }) => {
  // Hosts under example.com, resolved to 127.0.0.1 by this browser only (the static server answers any Host).
  const browser = await chromium.launch({ executablePath, args: [...args, '--host-resolver-rules=MAP *.example.com 127.0.0.1'] });
  try {
    const context: BrowserContext = await browser.newContext();
    const port = new URL(site.url).port;
    const on = (host: string, params: Record<string, string> = {}) => {
      const u = new URL(consentPage(site, { flushInterval: 100 }, params));
      u.hostname = host;
      expect(u.port).toBe(port);
      return u.toString();
    };
    const www = await context.newPage();
    const errors = await watchErrors(www);
    await www.goto(on('www.example.com'));
    await ready(www);
    const [first] = await call(www, [['track', 'On WWW']]);
    await collector.waitFor(1, { messageId: first.event.messageId }, 10_000);
    const idCookie = (await context.cookies()).find((c) => c.name === 'svc_anonymous_id');
    expect(idCookie?.domain, 'the identity is on the registrable domain').toBe('.example.com');

    await www.evaluate(() => (window as any).analytics.optOut());
    await expect.poll(async () => (await context.cookies()).map((c) => `${c.name}@${c.domain}`)).toEqual(['svc_opt_out@.example.com']);

    // Another subdomain, another origin (its own localStorage): opted out there too.
    const shop = await context.newPage();
    const shopErrors = await watchErrors(shop);
    await shop.goto(on('shop.example.com'));
    await ready(shop);
    expect(await shop.evaluate(() => ({ ...localStorage }))).toEqual({});
    expect((await call(shop, [['track', 'On Shop']])).map((o) => o.code)).toEqual(['opted_out']);
    expect((await context.cookies()).map((c) => c.name)).toEqual(['svc_opt_out']);

    // Opting in on the subdomain reverses it for the whole site, the first subdomain included (after a reload).
    await shop.evaluate(() => (window as any).analytics.optIn());
    const [shopIn] = await call(shop, [['track', 'Shop Opted In']]);
    expect(shopIn.ok).toBe(true);
    await collector.waitFor(1, { messageId: shopIn.event.messageId }, 10_000);
    await www.reload();
    await ready(www);
    const [back] = await call(www, [['track', 'WWW Back']]);
    expect(back.ok, `WWW Back: ${back.code}`).toBe(true);
    const [m] = await collector.waitFor(1, { messageId: back.event.messageId }, 10_000);
    expect(m.anonymousId, 'the fresh anonymous id of the opt-in, shared by the subdomains').toBe(shopIn.event.anonymousId);
    expect(m.anonymousId).not.toBe(first.event.anonymousId);
    expect([...errors, ...shopErrors]).toEqual([]);
  } finally {
    await browser.close();
  }
});

/** Makes `navigator.globalPrivacyControl` true on every page of `page` (as a browser that sends GPC). */
const sendGPC = (page: Page) =>
  page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true, configurable: true }));

test('GPC with respectGPC counts as an opt-out: the stored identity is removed, calls are refused, nothing is sent', async ({ page, context, site, collector }) => {
  // An earlier visit, without GPC, left an identity.
  const earlier = await context.newPage();
  await earlier.goto(consentPage(site, { flushInterval: 100, respectGPC: true }));
  await ready(earlier);
  const [e] = await call(earlier, [['track', 'Before GPC']]);
  await collector.waitFor(1, { messageId: e.event.messageId }, 10_000);
  await earlier.close();
  expect((await context.cookies()).map((c) => c.name)).toContain('svc_anonymous_id');

  const errors = await watchErrors(page);
  await sendGPC(page);
  const requests = recordRequests(page);
  const url = consentPage(site, { flushInterval: 100, respectGPC: true });
  await page.goto(url);
  await ready(page);
  expect(await page.evaluate(() => (navigator as any).globalPrivacyControl)).toBe(true);
  expect((await call(page, [['track', 'With GPC'], ['page'], ['identify', 'gpc-user']])).map((o) => o.code)).toEqual(['opted_out', 'opted_out', 'opted_out']);
  await settle(page);
  const s = await storedIdentity(page);
  expect(Object.keys(s.cookies).filter((k) => IDENTITY_KEYS.includes(k)), 'identity cookies').toEqual([]);
  expect(Object.keys(s.local).filter((k) => IDENTITY_KEYS.includes(k)), 'identity in localStorage').toEqual([]);
  expect(onlyPageAndBundle(requests, url)).toEqual([]);
  expect((await collector.messages()).map((m) => m.event)).toEqual(['Before GPC']);

  // The visitor opts in on this site: that choice wins over GPC, with a fresh id, across a reload.
  await page.evaluate(() => (window as any).analytics.optIn());
  await page.reload();
  await ready(page);
  const [r] = await call(page, [['track', 'Opted In Despite GPC']]);
  expect(r.ok, `${r.code}`).toBe(true);
  const [m] = await collector.waitFor(1, { messageId: r.event.messageId }, 10_000);
  expect(m.anonymousId).not.toBe(e.event.anonymousId);
  expect(errors).toEqual([]);
});

test('GPC without respectGPC changes nothing; respectGPC without GPC changes nothing', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  await sendGPC(page);
  await page.goto(consentPage(site, { flushInterval: 100 }));
  await ready(page);
  expect(await page.evaluate(() => (navigator as any).globalPrivacyControl)).toBe(true);
  const [a] = await call(page, [['track', 'GPC Ignored']]);
  expect(a.ok).toBe(true);
  await collector.waitFor(1, { messageId: a.event.messageId }, 10_000);

  const other = await context.newPage();
  const otherErrors = await watchErrors(other);
  await other.goto(consentPage(site, { flushInterval: 100, respectGPC: true }));
  await ready(other);
  expect(await other.evaluate(() => (navigator as any).globalPrivacyControl)).not.toBe(true);
  const [b] = await call(other, [['track', 'No GPC']]);
  expect(b.ok).toBe(true);
  await collector.waitFor(1, { messageId: b.event.messageId }, 10_000);
  expect([...errors, ...otherErrors]).toEqual([]);
});

// ---- the demo shop's banner (demo/consent.js) and the inspector (collector/inspector.html) ----------------------

test('demo shop: events wait for the banner; Accept sends them and persists the id; Privacy settings → Reject withdraws; the footer opts out and back in', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  const cdp = await context.newCDPSession(page);
  const requests = recordRequests(page);
  const shop = `${site.url}/demo/?api=${encodeURIComponent(collector.url)}`;
  await page.goto(shop);
  const banner = page.getByTestId('consent-banner');
  await expect(banner).toBeVisible();
  await expect(page.getByTestId('products').getByRole('link')).toHaveCount(6);
  // The page view and Product List Viewed are held (the events corner shows them as held).
  await expect(page.locator('.events-row .st.held')).toHaveCount(2);
  await settle(page);
  const s = await storageOf(page, cdp);
  expect(s.cookies, 'cookies before a decision').toEqual([]);
  expect(Object.keys(s.localStorage).filter((k) => !k.startsWith('field-goods:')), 'the library stored nothing').toEqual([]);
  expect(s.cdpDatabases).toEqual([]);
  expect(requests.filter((u) => u.startsWith(collector.url)), 'requests to the API before a decision').toEqual([]);
  expect(await collector.requests()).toEqual([]);

  await page.getByRole('button', { name: 'Accept' }).click();
  await expect(banner).toBeHidden();
  const held = await collector.waitFor(2, {}, 10_000);
  expect(held.map((m) => m.event || m.type)).toEqual(['page', 'Product List Viewed']);
  for (const m of held) expect(m.context.consent).toEqual({ categoryPreferences: { analytics: true } });
  await expect(page.locator('.events-row .st.sent')).toHaveCount(2);
  await expect(page.getByTestId('events-consent')).toContainText('Accepted');
  expect(await page.evaluate(() => localStorage.getItem('field-goods:consent'))).toBe('granted');
  const anonymousId = held[0].anonymousId;
  await expect.poll(async () => (await storedIdentity(page)).cookies.svc_anonymous_id).toBe(anonymousId);

  // The next page load: no banner, the shop gives the library its remembered decision, the visitor is the same.
  await page.reload();
  await expect(page.getByTestId('products').getByRole('link')).toHaveCount(6);
  await expect(banner).toBeHidden();
  const [again] = await collector.waitFor(2, { type: 'page' }, 10_000).then((p) => p.slice(1));
  expect(again.anonymousId).toBe(anonymousId);
  expect(again.context.consent).toEqual({ categoryPreferences: { analytics: true } });

  // Privacy settings → Reject: a withdrawal; the stored identity goes.
  await page.getByRole('button', { name: 'Privacy settings' }).click();
  await expect(banner).toBeVisible();
  await banner.getByRole('button', { name: 'Reject' }).click();
  await expect(banner).toBeHidden();
  await expect.poll(async () => Object.keys((await storedIdentity(page)).cookies).filter((k) => IDENTITY_KEYS.includes(k))).toEqual([]);
  await page.reload();
  await expect(page.getByTestId('products').getByRole('link')).toHaveCount(6);
  await expect(banner).toBeHidden();
  await ready(page);
  expect((await call(page, [['track', 'Rejected']]))[0].code).toBe('consent_denied');

  // The footer: opt out (the library keeps that choice), then opt back in and accept.
  await page.getByRole('button', { name: 'Opt out of analytics' }).click();
  await expect.poll(async () => (await storedIdentity(page)).cookies.svc_opt_out).toBe(true);
  expect((await call(page, [['track', 'Out']]))[0].code).toBe('opted_out');
  await page.reload();
  await ready(page);
  expect((await call(page, [['track', 'Still Out']]))[0].code).toBe('opted_out');
  await expect(page.getByTestId('events-consent')).toContainText('Opted out');
  await page.getByRole('button', { name: 'Opt back in to analytics' }).click();
  await page.getByRole('button', { name: 'Privacy settings' }).click();
  await banner.getByRole('button', { name: 'Accept' }).click();
  const [back] = await call(page, [['track', 'Back In']]);
  expect(back.ok, `${back.code}`).toBe(true);
  const [m] = await collector.waitFor(1, { messageId: back.event.messageId }, 10_000);
  expect(m.anonymousId, 'a fresh anonymous id after opting back in').not.toBe(anonymousId);
  const events = (await collector.messages()).map((x) => x.event).filter(Boolean);
  expect(events.filter((e) => ['Rejected', 'Out', 'Still Out'].includes(e))).toEqual([]);
  expect(errors).toEqual([]);
});

test('inspector: each message shows the consent it carries, in the list and the details, and the filter finds it', async ({ page, context, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(consentPage(site, { flushInterval: 100 }));
  await ready(page);
  const [none] = await call(page, [['track', 'No Decision']]);
  await collector.waitFor(1, { messageId: none.event.messageId }, 10_000);
  await page.evaluate(() => (window as any).analytics.consent({ analytics: true, advertising: false }));
  const [withIt] = await call(page, [['track', 'With Decision']]);
  await collector.waitFor(1, { messageId: withIt.event.messageId }, 10_000);

  const inspector = await context.newPage();
  const inspectorErrors = await watchErrors(inspector);
  await inspector.goto(collector.url + '/');
  const rowWith = inspector.locator('tbody tr', { hasText: 'With Decision' });
  const rowNone = inspector.locator('tbody tr', { hasText: 'No Decision' });
  await expect(inspector.locator('thead th', { hasText: 'consent' }).first()).toBeVisible();
  await expect(rowWith.locator('.cp.yes')).toHaveText(['analytics']);
  await expect(rowWith.locator('.cp.no')).toHaveText(['advertising']);
  await expect(rowNone.locator('td.consent')).toHaveText('—');
  await rowWith.click();
  await expect(inspector.locator('#detailConsent .cp.yes')).toHaveText(['analytics']);
  await expect(inspector.locator('#detailConsent .cp.no')).toHaveText(['advertising']);
  await expect(inspector.locator('#detail')).toContainText('"categoryPreferences"');
  await rowNone.click();
  await expect(inspector.locator('#detailConsent')).toContainText('—');
  await inspector.locator('#filter').fill('consent:advertising=false');
  await expect(rowWith).toBeVisible();
  await expect(rowNone).toBeHidden();
  expect([...errors, ...inspectorErrors]).toEqual([]);
});
