// linkDomains in every engine of driver.mjs (Chromium, Firefox, WebKit): a link from one host name of the site to the
// other carries the anonymous id, and the page there adopts it before its first message and takes the parameter off
// its address bar and its messages (CONTRACT section 3). The two host names are 127.0.0.1 and localhost (one static
// server: two origins, resolved by every browser without flags). Page: e2e/site/link.html.
import { ENGINES, type EngineName } from './driver.mjs';
import { test, expect, ready, waitUntil, skipWhenMissing, linkPage } from './fixtures';

const on = linkPage;

for (const name of ENGINES) {
  test.describe(name, () => {
    test.use({ engineName: name as EngineName });
    skipWhenMissing(name as EngineName);
    test.describe.configure({ timeout: 45_000 });

    test('a link to the other host name carries the anonymous id, adopted there before the first message, and kept out of the address bar and the messages', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await tab.goto(on(site, '127.0.0.1'));
      await ready(tab);
      // Decoration comes with the lazy chunk, requested at load.
      await waitUntil(tab, () => !!(window as any).svcAnalyticsDebug, undefined, 15_000, 'the chunk loaded');
      const id: string = await tab.evaluate(() => (window as any).analytics.user().anonymousId());
      const target = on(site, 'localhost', '&step=2#pay');
      await tab.evaluate((href) => {
        const a = Object.assign(document.createElement('a'), { id: 'go', href, textContent: 'go' });
        document.body.append(a);
        setTimeout(() => a.click());
        return true;
      }, target);
      await waitUntil(tab, () => location.hostname == 'localhost' && !!(window as any).analytics?.initialized, undefined, 15_000, 'the other host name loaded');
      await ready(tab);
      const there = await tab.evaluate(() => ({ href: location.href, id: (window as any).analytics.user().anonymousId() as string }));
      expect(there).toEqual({ href: target, id });
      await expect
        .poll(async () => (await collector.messages({ type: 'page' })).filter((m) => new URL(m.context.page.url).hostname == 'localhost').map((m) => ({ anonymousId: m.anonymousId, url: m.context.page.url, propertiesUrl: m.properties.url, linked: JSON.stringify(m).includes('svc_link') })))
        .toEqual([{ anonymousId: id, url: target, propertiesUrl: target, linked: false }]);
    });
  });
}
