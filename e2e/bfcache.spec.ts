// The back/forward cache for real: the library on both pages, default options, the API on another origin (the
// collector, another port). Page A tracks as the visitor leaves, page B (same site, the library too) tracks, the
// visitor goes back: A must come back from the cache every time, and every event arrive exactly once.
//
// What used to evict A (Chromium's CDP reason "IgnoreEventAndEvict", in about a third of the rounds): an IndexedDB
// transaction of A's queue still open when A was frozen (a transaction commits by itself only once the page has
// handled its requests' results, which a frozen page does not), and B's first transaction on the same store waiting
// on it. src/queue.ts now commits each transaction as soon as its requests are placed.
import { chromium, type Page } from '@playwright/test';
import { executablePath, args } from '../scripts/chromium.mjs';
import { test, expect, ready, expectExactlyOnce, quiet } from './fixtures';

const ROUNDS = 5;
// Events tracked as the visitor follows the link (not awaited: the navigation starts at once). Many, so that the
// queue's write is more likely to be under way as A is frozen, yet few enough (about 1 KB each) that the request
// that sends them stays under the 64 KB keepalive limit: a bigger one, still in flight as the page goes into the
// cache, is beaconed again at pagehide (src/handoff.ts, a final exit) and arrives twice, another matter.
const LEAVING = 50;

/** Tracks `n` events named `event`, awaited or not; returns their message ids. */
function track(page: Page, event: string, n: number, wait: boolean): Promise<string[]> {
  return page.evaluate(
    async ([event, n, wait]) => {
      const a = (window as any).analytics;
      const calls = Array.from({ length: n }, (_, i) => a.track(event, { i }));
      if (!wait) return []; // (ids come from the collector)
      return (await Promise.all(calls)).map((r: any) => r.event.messageId);
    },
    [event, n, wait] as const,
  );
}

test('a page left with the library on the next page too comes back from the back/forward cache, 5 times out of 5', async ({ site, collector }) => {
  test.setTimeout(120_000);
  // Playwright launches Chromium with the cache off; the pages are served `no-cache` rather than the test server's
  // `no-store`, which keeps a page out of the cache (CacheControlNoStoreEnterBackForwardCache does not let them in,
  // in the Chromium these tests run).
  const browser = await chromium.launch({ executablePath, args, ignoreDefaultArgs: ['--disable-back-forward-cache'] });
  const rounds: string[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // A context of its own each round: fresh storage, as a new visitor.
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Page.enable');
      const notUsed: string[] = [];
      cdp.on('Page.backForwardCacheNotUsed', (e: any) => {
        for (const x of e.notRestoredExplanations || []) notUsed.push(`${x.reason}${x.details ? ' (' + JSON.stringify(x.details) + ')' : ''}`);
      });
      const url = (extra: Record<string, string>) => site.page('/basic.html', { cache: 'revalidate', round: String(round), ...extra });

      await page.goto(url({}));
      await ready(page);
      await page.evaluate(() => {
        (window as any).__kept = 'same document';
        (window as any).__pageshows = [];
        addEventListener('pageshow', (e) => (window as any).__pageshows.push(e.persisted));
      });
      const leaving = `Leaving A ${round}`;
      await track(page, leaving, LEAVING, false);
      await page.goto(url({ next: '1' }));
      await ready(page);
      const onB = await track(page, `On B ${round}`, 2, true);
      // A restore fires no load event: wait for the commit, then for the page to be complete.
      await page.goBack({ waitUntil: 'commit' });
      await page.waitForFunction(() => document.readyState == 'complete' && (window as any).analytics?.initialized);
      const state = await page.evaluate(() => ({ kept: (window as any).__kept, pageshows: (window as any).__pageshows }));
      const restored = state.kept == 'same document';
      rounds.push(restored ? 'restored' : `reloaded: ${notUsed.join(', ') || 'no reason given'}`);
      if (restored) expect(state.pageshows).toEqual([true]);

      // Whichever way it came back, nothing is lost or sent twice: A's events (by fetch, then by beacon at exit),
      // B's, and one tracked after coming back.
      await ready(page);
      const after = await track(page, `After Back ${round}`, 1, true);
      await page.evaluate(() => (window as any).analytics.flush());
      const sent = await collector.waitFor(LEAVING, { event: leaving }, 15_000);
      expect(sent.map((m) => m.properties.i).sort((x: number, y: number) => x - y)).toEqual(Array.from({ length: LEAVING }, (_, i) => i));
      expectExactlyOnce(await collector.waitFor(2, { event: `On B ${round}` }), onB);
      expectExactlyOnce(await collector.waitFor(1, { event: `After Back ${round}` }), after);
      await ctx.close();
    }
    // and nothing more arrives later (a duplicate would)
    await quiet(collector);
    const all = await collector.messages();
    expect(all).toHaveLength(ROUNDS * (LEAVING + 3));
    expect(new Set(all.map((m) => m.messageId)).size).toBe(all.length);
  } finally {
    await browser.close();
  }
  test.info().annotations.push({ type: 'bfcache', description: rounds.map((r, i) => `${i + 1}: ${r}`).join('; ') });
  expect(rounds, 'every round restored A from the back/forward cache').toEqual(Array(ROUNDS).fill('restored'));
});
