// The npm entry in a dedicated worker (CONTRACT section 1, "workers and extensions") in every engine of driver.mjs
// (Chromium, Firefox, WebKit): the worker of e2e/site/worker.html (e2e/worker/build.ts bundles it) tracks; each
// event arrives once, with the context a worker has (user agent and locale; no `page`, no `screen`), and the library
// reports no error.
import { ENGINES, type EngineName } from './driver.mjs';
import { test, expect, quiet, expectExactlyOnce, skipWhenMissing } from './fixtures';
import { buildWorker } from '../worker/build';

test.beforeAll(() => buildWorker());

for (const name of ENGINES) {
  test.describe(name, () => {
    test.use({ engineName: name as EngineName });
    skipWhenMissing(name as EngineName);
    test.describe.configure({ timeout: 30_000 });

    test('a dedicated worker tracks: each event arrives once, with no page context and no error', async ({ profile, site, collector }) => {
      const tab = await profile.newTab();
      await tab.goto(site.page('/worker.html'));
      const answer = await tab.evaluate(() => (window as any).runWorker('Engine Worker', 4));
      expect(answer.error).toBeUndefined();
      expect(answer.errors).toEqual([]);
      const got = await collector.waitFor(4, { event: 'Engine Worker' }, 15_000);
      await quiet(collector);
      expectExactlyOnce(await collector.messages({ event: 'Engine Worker' }), answer.ids);
      expect(got[0].context.page).toBeUndefined();
      expect(got[0].context.screen).toBeUndefined();
      expect(got[0].context.userAgent).toBe(await tab.evaluate(() => navigator.userAgent));
      expect(got[0].context.locale).toBe(await tab.evaluate(() => navigator.language));
      await tab.close();
    });
  });
}
