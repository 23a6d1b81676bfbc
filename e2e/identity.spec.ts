// Identity (CONTRACT section 2: identify, reset, user, setAnonymousId; section 3: storage): what persists, where,
// with which cookie attributes, and adoption of an existing analytics.js identity.
import { test, expect, ready, open } from './fixtures';
import type { Page } from '@playwright/test';

// A failing library should fail fast, not hang: every test here normally takes a few seconds.
test.describe.configure({ timeout: 20_000 });

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const DAY = 86400;

/** Tracks one event, waits for the collector to have it, and returns the message as received. */
async function trackAndGet(page: Page, collector: any, event: string) {
  const id: string = await page.evaluate(async (e) => (await (window as any).analytics.track(e)).event.messageId, event);
  const [m] = await collector.waitFor(1, { messageId: id }, 10000);
  expect(m, `message ${event} arrived`).toBeTruthy();
  return m;
}

const user = (page: Page) =>
  page.evaluate(() => {
    const u = (window as any).analytics.user();
    return { id: u.id(), anonymousId: u.anonymousId(), traits: u.traits() };
  });

test('the anonymous id survives a reload and a new page of the same site', async ({ page, context, site, collector }) => {
  const url = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) });
  await open(page, url);
  const first = await trackAndGet(page, collector, 'First');
  expect(first.anonymousId).toMatch(UUID_V4);
  expect(first.userId).toBeUndefined();

  await page.reload();
  await ready(page);
  const afterReload = await trackAndGet(page, collector, 'After Reload');
  expect(afterReload.anonymousId).toBe(first.anonymousId);

  const other = await context.newPage();
  await open(other, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }), other: '1' }));
  const onOther = await trackAndGet(other, collector, 'Other Page');
  expect(onOther.anonymousId).toBe(first.anonymousId);
  expect((await user(other)).anonymousId).toBe(first.anonymousId);
});

test('identify persists the user id and traits across reloads; reset() forgets them and renews the anonymous id', async ({ page, site, collector }) => {
  const url = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) });
  await open(page, url);
  const anon = (await user(page)).anonymousId;
  await page.evaluate(() => (window as any).analytics.identify('u-1', { email: 'u1@example.com', plan: 'pro' }));
  const idMsg = (await collector.waitFor(1, { type: 'identify' }))[0];
  expect(idMsg).toMatchObject({ userId: 'u-1', anonymousId: anon, traits: { email: 'u1@example.com', plan: 'pro' } });

  await page.reload();
  await ready(page);
  expect(await user(page)).toEqual({ id: 'u-1', anonymousId: anon, traits: { email: 'u1@example.com', plan: 'pro' } });
  const later = await trackAndGet(page, collector, 'Later');
  expect(later.userId).toBe('u-1');
  expect(later.anonymousId).toBe(anon);

  // a traits-only identify after the reload is for the same user, with the stored traits kept
  const id2: string = await page.evaluate(async () => (await (window as any).analytics.identify({ age: 30 })).event.messageId);
  const [again] = await collector.waitFor(1, { messageId: id2 });
  expect(again.userId).toBe('u-1');
  expect(again.traits).toEqual({ email: 'u1@example.com', plan: 'pro', age: 30 });

  await page.evaluate(() => (window as any).analytics.reset());
  const afterReset = await user(page);
  expect(afterReset.id).toBeNull();
  expect(afterReset.traits).toEqual({});
  expect(afterReset.anonymousId).toMatch(UUID_V4);
  expect(afterReset.anonymousId).not.toBe(anon);
  const fresh = await trackAndGet(page, collector, 'After Reset');
  expect(fresh.userId).toBeUndefined();
  expect(fresh.anonymousId).toBe(afterReset.anonymousId);

  // the reset is what persists
  await page.reload();
  await ready(page);
  expect(await user(page)).toEqual({ id: null, anonymousId: afterReset.anonymousId, traits: {} });
  const reloaded = await trackAndGet(page, collector, 'After Reset Reload');
  expect(reloaded.userId).toBeUndefined();
  expect(reloaded.anonymousId).toBe(afterReset.anonymousId);
});

test('identity cookies are SameSite=Lax with about a year of life', async ({ page, context, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  await page.evaluate(() => (window as any).analytics.identify('cookie-user'));
  expect(await collector.waitFor(1, { type: 'identify' })).toHaveLength(1);
  const { anonymousId } = await user(page);
  const cookies = await context.cookies(site.url);
  expect(cookies.length).toBeGreaterThan(0);
  const decoded = (v: string) => {
    try {
      return decodeURIComponent(v);
    } catch {
      return v;
    }
  };
  expect(cookies.some((c) => decoded(c.value).includes(anonymousId)), 'a cookie holds the anonymous id').toBe(true);
  expect(cookies.some((c) => decoded(c.value).includes('cookie-user')), 'a cookie holds the user id').toBe(true);
  const now = Date.now() / 1000;
  for (const c of cookies) {
    expect(c.sameSite, `${c.name} SameSite`).toBe('Lax');
    expect(c.path).toBe('/');
    expect(c.httpOnly).toBe(false);
    expect(c.expires - now, `${c.name} lifetime`).toBeGreaterThan(360 * DAY);
    expect(c.expires - now, `${c.name} lifetime`).toBeLessThan(367 * DAY);
  }
});

test("storage: 'localStorage' sets no cookie and still persists the identity", async ({ page, context, site, collector }) => {
  const url = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100, storage: 'localStorage' }) });
  await open(page, url);
  await page.evaluate(() => (window as any).analytics.identify('ls-user', { t: 1 }));
  const first = await trackAndGet(page, collector, 'LS One');
  expect(first.userId).toBe('ls-user');
  expect(await context.cookies(site.url)).toEqual([]);
  await page.reload();
  await ready(page);
  const second = await trackAndGet(page, collector, 'LS Two');
  expect(second.anonymousId).toBe(first.anonymousId);
  expect(second.userId).toBe('ls-user');
  expect(await context.cookies(site.url)).toEqual([]);
});

test("storage: 'memory' persists nothing: a reload starts a new anonymous visitor", async ({ page, context, site, collector }) => {
  const url = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100, storage: 'memory' }) });
  await open(page, url);
  await page.evaluate(() => (window as any).analytics.identify('mem-user', { t: 1 }));
  const first = await trackAndGet(page, collector, 'Mem One');
  expect(first.userId).toBe('mem-user');
  expect(await context.cookies(site.url)).toEqual([]);
  const stored: string = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  expect(stored).not.toContain(first.anonymousId);
  expect(stored).not.toContain('mem-user');

  await page.reload();
  await ready(page);
  const second = await trackAndGet(page, collector, 'Mem Two');
  expect(second.anonymousId).toMatch(UUID_V4);
  expect(second.anonymousId).not.toBe(first.anonymousId);
  expect(second.userId).toBeUndefined();
  expect((await user(page)).traits).toEqual({});
  expect(await context.cookies(site.url)).toEqual([]);
});

test('an existing analytics.js identity in cookies is adopted', async ({ page, context, site, collector }) => {
  await context.addCookies([
    { name: 'ajs_anonymous_id', value: '%22abc-123%22', url: site.url },
    { name: 'ajs_user_id', value: '%22u-9%22', url: site.url },
  ]);
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const m = await trackAndGet(page, collector, 'Adopted');
  expect(m.anonymousId).toBe('abc-123');
  expect(m.userId).toBe('u-9');
  expect(await user(page)).toMatchObject({ id: 'u-9', anonymousId: 'abc-123' });
  // and it stays adopted
  await page.reload();
  await ready(page);
  const again = await trackAndGet(page, collector, 'Adopted Again');
  expect(again.anonymousId).toBe('abc-123');
  expect(again.userId).toBe('u-9');
});

test('an existing analytics.js identity in localStorage is adopted', async ({ page, site, collector }) => {
  // a page of the site without the library, to seed what analytics.js would have left
  await page.goto(site.page('/basic.html', { noload: '1' }));
  await page.evaluate(() => {
    localStorage.setItem('ajs_anonymous_id', '"x-1"');
    localStorage.setItem('ajs_user_traits', '{"email":"x1@example.com"}');
  });
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const m = await trackAndGet(page, collector, 'Adopted LS');
  expect(m.anonymousId).toBe('x-1');
  expect(m.userId).toBeUndefined();
  expect((await user(page)).traits).toEqual({ email: 'x1@example.com' });
});

test('setAnonymousId replaces the anonymous id (and persists); user() reports id, anonymousId and traits', async ({ page, site, collector }) => {
  const url = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) });
  await open(page, url);
  const before = await user(page);
  expect(before.id).toBeNull();
  expect(before.anonymousId).toMatch(UUID_V4);
  expect(before.traits).toEqual({});

  await page.evaluate(() => (window as any).analytics.setAnonymousId('custom-anon-1'));
  expect((await user(page)).anonymousId).toBe('custom-anon-1');
  const m = await trackAndGet(page, collector, 'Custom Anon');
  expect(m.anonymousId).toBe('custom-anon-1');

  await page.evaluate(() => (window as any).analytics.identify('u-5', { x: 1 }));
  expect(await user(page)).toEqual({ id: 'u-5', anonymousId: 'custom-anon-1', traits: { x: 1 } });

  await page.reload();
  await ready(page);
  expect(await user(page)).toEqual({ id: 'u-5', anonymousId: 'custom-anon-1', traits: { x: 1 } });
  const m2 = await trackAndGet(page, collector, 'Custom Anon Reloaded');
  expect(m2.anonymousId).toBe('custom-anon-1');
  expect(m2.userId).toBe('u-5');
});
