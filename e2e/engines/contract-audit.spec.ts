// e2e/contract-audit.spec.ts's linkDomains probe in every engine of driver.mjs (Chromium, Firefox, WebKit): the link
// parameter as each browser reads it (a percent-encoded name) and in a route fragment is adopted from a listed
// referrer, and no occurrence stays in the address bar or the messages (CONTRACT section 3). Host names as in
// e2e/engines/link.spec.ts: 127.0.0.1 and localhost.
import { ENGINES, type EngineName } from './driver.mjs';
import { test, expect, ready, waitUntil, skipWhenMissing, linkPage } from './fixtures';

const on = linkPage;

for (const name of ENGINES) {
  test.describe(name, () => {
    test.use({ engineName: name as EngineName });
    skipWhenMissing(name as EngineName);
    test.describe.configure({ timeout: 45_000 });

    test('the parameter with a percent-encoded name and in a route fragment: adopted, and no occurrence left in the address bar or the messages', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await tab.goto(on(site, '127.0.0.1'));
      await ready(tab);
      const id: string = await tab.evaluate(() => (window as any).analytics.user().anonymousId());
      // (a link of this browser, now: as src/sources/decorate.ts makes its value; followed from this page, a listed referrer)
      await tab.evaluate((base) => {
        const id = (window as any).analytics.user().anonymousId();
        const t = Date.now().toString(36);
        let h = 0;
        for (const c of navigator.userAgent + navigator.language + t + id) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
        const v = encodeURIComponent(`${t}.${(h >>> 0).toString(36)}.${id}`);
        const a = Object.assign(document.createElement('a'), { id: 'go', textContent: 'go', href: `${base}&svc%5Flink=${v}#/pay?svc_link=${v}&step=2` });
        document.body.append(a);
        setTimeout(() => a.click());
        return true;
      }, on(site, 'localhost'));
      await waitUntil(tab, () => location.hostname == 'localhost' && !!(window as any).analytics?.initialized, undefined, 15_000, 'the other host name loaded');
      await ready(tab);
      const there = await tab.evaluate(() => ({ href: decodeURIComponent(location.href), id: (window as any).analytics.user().anonymousId() as string }));
      expect(there.id).toBe(id);
      expect(there.href).not.toContain('svc_link');
      expect(there.href).toContain('#/pay?step=2');
      await expect
        .poll(async () => (await collector.messages({ type: 'page' })).filter((m) => new URL(m.context.page.url).hostname == 'localhost').map((m) => ({ anonymousId: m.anonymousId, linked: decodeURIComponent(JSON.stringify(m)).includes('svc_link') })))
        .toEqual([{ anonymousId: id, linked: false }]);
    });
  });
}
