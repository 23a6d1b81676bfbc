// Trust (CONTRACT sections 4 and 6) in every engine of driver.mjs: what goes on the wire and what a page's prototype
// decides, where the engines could differ (URL parsing and fragments, `location`, DOM named properties, prototype
// lookups). The full set, with DOM clobbering, the kit's override and CSP, is e2e/trust.spec.ts and
// e2e/entry-trust.spec.ts (Chromium).
import { ENGINES, type EngineName } from './driver.mjs';
import { test, expect, open, quiet, skipWhenMissing } from './fixtures';

for (const name of ENGINES) {
  test.describe(name, () => {
    test.use({ engineName: name as EngineName });
    skipWhenMissing(name as EngineName);
    test.describe.configure({ timeout: 30_000 });

    test('a URL fragment that carries parameters stays in the browser; a route fragment is sent', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      const base = site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 50 }) });
      await open(tab, base + '#access_token=SECRET_TOKEN&state=SECRET_STATE');
      await tab.evaluate(async () => {
        const a = (window as any).analytics;
        await a.page('Callback');
        location.hash = '#/cart/42?coupon=SECRET_COUPON';
        await a.page('Route');
        await a.page('Given', { url: location.origin + '/given#id_token=SECRET_ID' });
      });
      const pages = await collector.waitFor(3, { type: 'page' }, 15_000);
      const wire = JSON.stringify(pages);
      for (const secret of ['SECRET_TOKEN', 'SECRET_STATE', 'SECRET_COUPON', 'SECRET_ID']) expect(wire, secret).not.toContain(secret);
      const byName = Object.fromEntries(pages.map((m) => [m.name, m]));
      expect(byName.Callback.context.page.url).toBe(base);
      expect(byName.Route.context.page.url).toBe(base + '#/cart/42');
      expect(byName.Given.properties.url).toBe(new URL(base).origin + '/given');
    });

    test('a polluted Object.prototype decides no consent: consent({}) keeps calls held, and nothing is stored or sent', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await open(tab, site.page('/basic.html', { opts: JSON.stringify({ consent: { categories: ['analytics'] }, flushInterval: 50 }) }));
      const out = await tab.evaluate(async () => {
        const a = (window as any).analytics;
        Object.defineProperty(Object.prototype, 'analytics', { value: true, configurable: true, writable: true });
        try {
          await a.track('Polluted');
          a.consent({});
          // (a grant would store at once: the identity as consent() returns, and this call in the queue)
          await a.track('After Consent');
          return { stored: Object.keys(localStorage).filter((k) => k.startsWith('svc_')), cookie: document.cookie };
        } finally {
          delete (Object.prototype as any).analytics;
        }
      });
      expect(out).toEqual({ stored: [], cookie: '' });
      await quiet(collector, 1000);
      expect(await collector.requests(), 'requests to the API').toEqual([]);
    });
  });
}
