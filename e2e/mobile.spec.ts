import { devices, type Browser, type BrowserContext, type CDPSession, type Page } from '@playwright/test';
import { test, expect, ready, quiet, sendFirst } from './fixtures';

// Mobile devices (emulated, CPU throttled 4x), the page-hidden (beacon) path and screen().

async function mobile(browser: Browser, name: 'Pixel 7' | 'iPhone 13', init?: () => void) {
  const { defaultBrowserType: _ignored, ...device } = devices[name];
  const context: BrowserContext = await browser.newContext({ ...device });
  if (init) await context.addInitScript(init);
  const page: Page = await context.newPage();
  const cdp: CDPSession = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  return { context, page, cdp, device };
}

for (const name of ['Pixel 7', 'iPhone 13'] as const) {
  test(`${name} (CPU 4x slower): context has the device's screen density and user agent (and no os, device, userAgentData or network: CONTRACT section 4 never asked for them), and events flow`, async ({
    browser,
    site,
    collector,
  }) => {
    const { context, page, device } = await mobile(browser, name);
    try {
      await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
      await ready(page);
      await page.evaluate(() => {
        const a = (window as any).analytics;
        a.page();
        a.track('Mobile Tap', { button: 'buy' });
      });
      const got = await collector.waitFor(2, {}, 15000);
      expect(got.map((m) => m.type)).toEqual(['page', 'track']);
      for (const m of got) {
        expect(m.context.screen).toEqual({ width: device.screen.width, height: device.screen.height, density: device.deviceScaleFactor });
        expect(m.context.userAgent).toBe(device.userAgent);
        for (const cut of ['os', 'device', 'userAgentData', 'network']) expect(m.context).not.toHaveProperty(cut);
      }
      expect(got[1]).toMatchObject({ event: 'Mobile Tap', properties: { button: 'buy' } });
    } finally {
      await context.close();
    }
  });
}

async function setVisibility(page: Page, state: 'hidden' | 'visible') {
  await page.evaluate((s) => {
    Object.defineProperty(document, 'visibilityState', { value: s, configurable: true });
    Object.defineProperty(document, 'hidden', { value: s === 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  }, state);
}

test('page hidden: queued events leave at once by beacon (write key in the body); after freeze/resume and a bfcache pageshow tracking goes on without duplicates', async ({
  browser,
  site,
  collector,
}) => {
  const { context, page, cdp } = await mobile(browser, 'Pixel 7');
  try {
    // flushInterval 60 s, and the first message of the spell already sent: only the page-hidden path can send the
    // next ones within this test's waits.
    await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 60000 }) }));
    await ready(page);
    await sendFirst(page, collector);
    await collector.reset();
    const trackedAt = Date.now();
    await page.evaluate(async () => {
      const a = (window as any).analytics;
      await Promise.all([a.track('Hidden 1', { n: 1 }), a.track('Hidden 2', { n: 2 }), a.track('Hidden 3', { n: 3 })]);
    });
    await quiet(collector, 1500, 15_000, trackedAt);
    expect((await collector.requests()).filter((r) => r.path === '/v1/batch'), 'nothing sent before the page is hidden').toEqual([]);

    const hiddenAt = Date.now();
    await setVisibility(page, 'hidden');
    await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
    // flushInterval is 60 s, so arriving well within it proves the page-hidden path (15 s of margin for a loaded,
    // 4x-throttled machine).
    const sent = await collector.waitFor(3, { type: 'track' }, 15000);
    expect(sent.map((m) => m.event)).toEqual(['Hidden 1', 'Hidden 2', 'Hidden 3']);
    expect(Date.now() - hiddenAt).toBeLessThan(15000);
    const beaconReqs = (await collector.requests()).filter((r) => r.path === '/v1/batch');
    expect(beaconReqs).toHaveLength(1);
    expect(beaconReqs[0]).toMatchObject({ status: 200, auth: 'body' });
    expect(beaconReqs[0].contentType).toMatch(/^text\/plain/);

    // Back: unfrozen, visible, then restored from the back/forward cache.
    await cdp.send('Page.setWebLifecycleState', { state: 'active' });
    await setVisibility(page, 'visible');
    await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })));
    await page.evaluate(async () => {
      const a = (window as any).analytics;
      await a.track('After Resume', { n: 4 });
      await a.flush();
    });
    expect(await collector.waitFor(1, { event: 'After Resume' }, 15000)).toHaveLength(1);
    // Another flush, and the collector quiet for a spell: anything re-queued by the resume (adoption of stored
    // records) would show up.
    await page.evaluate(() => (window as any).analytics.flush());
    await quiet(collector);

    const all = await collector.messages();
    expect(all.map((m) => m.event)).toEqual(['Hidden 1', 'Hidden 2', 'Hidden 3', 'After Resume']);
    expect(new Set(all.map((m) => m.messageId)).size).toBe(4);
    const reqs = (await collector.requests()).filter((r) => r.path === '/v1/batch');
    expect(reqs.flatMap((r) => r.retryOf)).toEqual([]);
    // The normal path again: Basic auth header.
    expect(reqs[reqs.length - 1]).toMatchObject({ status: 200, auth: 'basic' });
  } finally {
    await context.close();
  }
});

test('screen() through the snippet, before and after the bundle loads, sends type screen with name and properties', async ({
  browser,
  site,
  collector,
}) => {
  const { context, page } = await mobile(browser, 'Pixel 7');
  try {
    await page.goto(site.page('/basic.html', { noload: '1' }));
    await page.evaluate(() => {
      const a = (window as any).analytics;
      if (a.VERSION) throw new Error('expected the stub');
      a.screen('Home', { tab: 'featured' });
      const q = new URLSearchParams(location.search);
      a.load('dev-write-key', { apiHost: q.get('api'), cdnUrl: '/dist/analytics.min.js', flushInterval: 100 });
    });
    await ready(page);
    await page.evaluate(() => (window as any).analytics.screen('Settings', 'Privacy', { toggles: 3 }));
    const got = await collector.waitFor(2, { type: 'screen' }, 15000);
    expect(got).toHaveLength(2);
    expect(got[0]).toMatchObject({ type: 'screen', name: 'Home' });
    expect(got[0].properties).toMatchObject({ tab: 'featured' });
    expect(got[1]).toMatchObject({ type: 'screen', name: 'Privacy', category: 'Settings' });
    expect(got[1].properties).toMatchObject({ toggles: 3 });
    for (const m of got) {
      expect(m.event).toBeUndefined();
    }
  } finally {
    await context.close();
  }
});
