// The inline stub in Chromium: it writes its calls to the buffer once per task, at the end of the task, and calls made
// just before the page is left in that same task still reach the API exactly once, through the next page's bundle.
import type { Page } from '@playwright/test';
import { test, expect, ready, quiet, watchErrors, type CollectorHandle, type SiteHandle } from './fixtures';

// The first page's bundle never arrives (a 404): its calls can only reach the API through the buffer.
const noBundle = (site: SiteHandle) => site.page('/basic.html', { opts: JSON.stringify({ cdnUrl: '/never-arrives.js' }) });
const withBundle = (site: SiteHandle) => site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) });

/** Each event of `names` arrived exactly once, recorded on `url` (the stub's page) around `time`. */
async function expectOnceEach(collector: CollectorHandle, names: string[], url: string, time: number) {
  // another page's calls are taken once it gave no news for BUFFER_GRACE_MS (5 s)
  await collector.waitFor(names.length, {}, 30000);
  await quiet(collector);
  const got = (await collector.messages()).filter((m) => names.includes(m.event));
  expect(got.map((m) => m.event).sort()).toEqual([...names].sort());
  for (const m of got) {
    expect(m.context.page.url).toBe(url);
    expect(Math.abs(Date.parse(m.timestamp) - time)).toBeLessThan(2000);
  }
}

test('the stub reads and writes its buffer once per task, however many calls the task makes', async ({ page, site }) => {
  const errors = await watchErrors(page);
  // Counts the stub's accesses to the buffer (it uses localStorage's named properties, not getItem/setItem).
  await page.addInitScript(() => {
    const real = window.localStorage;
    const count = ((window as any).__bufferAccess = { reads: 0, writes: 0 });
    const proxy = new Proxy(real, {
      get: (t, k) => {
        if (k == 'svc_buffer') count.reads++;
        const v = (t as any)[k];
        return typeof v == 'function' ? v.bind(t) : v; // getItem and the like, called by the test
      },
      set: (t, k, v) => (k == 'svc_buffer' && count.writes++, ((t as any)[k] = v), true),
    });
    Object.defineProperty(window, 'localStorage', { get: () => proxy, configurable: true });
  });
  await page.goto(site.page('/basic.html', { noload: '1' }));
  const during = await page.evaluate(() => {
    const a = (window as any).analytics;
    a.page();
    for (let i = 0; i < 5; i++) a.track('Once Per Task ' + i);
    a.load('dev-write-key', { cdnUrl: '/never-arrives.js' });
    return { ...(window as any).__bufferAccess };
  });
  expect(during, 'nothing read or written while the task runs').toEqual({ reads: 0, writes: 0 });
  expect(await page.evaluate(() => (window as any).__bufferAccess), 'one read and one write at its end').toEqual({ reads: 1, writes: 1 });
  const second = await page.evaluate(() => {
    const a = (window as any).analytics;
    for (let i = 0; i < 20; i++) a.track('Second Task ' + i);
  });
  expect(second).toBeUndefined();
  expect(await page.evaluate(() => (window as any).__bufferAccess), 'one more of each for the second task').toEqual({ reads: 2, writes: 2 });
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('svc_buffer') || '[]').map((c: any) => c[0]));
  expect(stored).toEqual(['page', ...Array(5).fill('track'), 'load', ...Array(20).fill('track')]);
  expect(errors).toEqual([]);
});

test.describe('calls made in the task that leaves the page, before the bundle arrives', () => {
  async function leave(page: Page, site: SiteHandle, how: 'location' | 'link', names: string[]) {
    await page.goto(noBundle(site));
    const url = page.url();
    const time = Date.now();
    const next = withBundle(site);
    if (how == 'location') {
      // the calls and the navigation in one task (the evaluation's result never comes back: the page is gone)
      void page
        .evaluate(
          ([names, next]) => {
            const a = (window as any).analytics;
            for (const n of names) a.track(n);
            location.href = next;
          },
          [names, next] as const,
        )
        .catch(() => {});
    } else {
      // a click handler that tracks, then the link's own navigation
      await page.evaluate(
        ([names, next]) => {
          const link = document.getElementById('next') as HTMLAnchorElement;
          link.href = next;
          link.addEventListener('click', () => names.forEach((n) => (window as any).analytics.track(n)));
        },
        [names, next] as const,
      );
      await page.click('#next');
    }
    await page.waitForURL(next);
    await ready(page);
    return { url, time };
  }

  test('location.href = ... right after the calls: the next page sends them exactly once', async ({ page, site, collector }) => {
    const names = ['Before Leaving 1', 'Before Leaving 2', 'Before Leaving 3'];
    const { url, time } = await leave(page, site, 'location', names);
    await expectOnceEach(collector, names, url, time);
  });

  test("a link's click handler tracks, then the link navigates: the next page sends them exactly once", async ({ page, site, collector }) => {
    const names = ['Clicked 1', 'Clicked 2'];
    const { url, time } = await leave(page, site, 'link', names);
    await expectOnceEach(collector, names, url, time);
  });
});

test('a bundle run in the task of the calls takes them from memory, and the stub does not write them back for another page', async ({ page, site, collector }) => {
  const errors = await watchErrors(page);
  await page.goto(site.page('/basic.html', { noload: '1' }));
  const bundle = await page.evaluate(() => fetch('/dist/analytics.min.js').then((r) => r.text()));
  const names = ['Same Task 1', 'Same Task 2', 'Same Task 3'];
  const { pid, afterTask } = await page.evaluate(
    ([names, bundle]) => {
      const a = (window as any).analytics;
      for (const n of names) a.track(n);
      a.load('dev-write-key', { apiHost: new URLSearchParams(location.search).get('api'), cdnUrl: '/never-arrives.js', flushInterval: 100 });
      // the bundle, run in this same task (as a page that inlines it after the stub in one script would)
      (0, eval)(bundle);
      // Right after the task: no call of this page waits unclaimed in the buffer (another page would send it again
      // if this one were left now, before its bundle is done with them).
      const unclaimed = () => JSON.parse(localStorage.getItem('svc_buffer') || '[]').filter((c: any) => c[4] === a.invoked && !c[6]);
      return new Promise<{ pid: number; afterTask: unknown[] }>((r) => setTimeout(() => r({ pid: a.invoked, afterTask: unclaimed() }), 0));
    },
    [names, bundle] as const,
  );
  expect(afterTask).toEqual([]);
  await ready(page);
  await expectOnceEach(collector, names, page.url(), Date.now());
  const unclaimed = (pid: number) => JSON.parse(localStorage.getItem('svc_buffer') || '[]').filter((c: any) => c[4] === pid && !c[6]);
  expect(await page.evaluate(unclaimed, pid)).toEqual([]);
  // and a later page finds nothing of them to send
  await page.goto(withBundle(site));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.flush());
  expect(await page.evaluate(() => JSON.parse(localStorage.getItem('svc_buffer') || '[]').filter((c: any) => c[0] == 'track'))).toEqual([]);
  expect((await collector.messages()).filter((m) => names.includes(m.event))).toHaveLength(3);
  expect(errors).toEqual([]);
});

test("reset() made just before a logout link is followed, before the bundle arrived: the next page's first page view is already logged out (found by review 6)", async ({ page, site, collector }) => {
  await page.goto(withBundle(site));
  await ready(page);
  const before = await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.identify('user-before-logout');
    return a.user().anonymousId();
  });
  await page.goto(noBundle(site));
  const next = withBundle(site) + '&after=logout';
  // the logout: reset(), and the navigation, in one task (the evaluation's result never comes back)
  void page
    .evaluate((next) => {
      (window as any).analytics.reset();
      location.href = next;
    }, next)
    .catch(() => {});
  await page.waitForURL(next);
  // the next page's page view, made as the page starts (on the stub, or the bundle if it is there already)
  await page.evaluate(() => (window as any).analytics.page('After Logout'));
  await ready(page);
  const [view] = await collector.waitFor(1, { type: 'page', name: 'After Logout' }, 10_000);
  expect(view.userId, 'logged out').toBeUndefined();
  expect(view.anonymousId, 'a new anonymous id').not.toBe(before);
  expect(await page.evaluate(() => (window as any).analytics.user().id())).toBeNull();
});
