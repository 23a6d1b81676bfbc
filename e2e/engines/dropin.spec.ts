// trackLink and trackForm in every engine of driver.mjs (Chromium, Firefox, WebKit): a click on a tracked link (same
// origin and another origin) and a native form submission by a button go ahead at once, unprevented, and their
// event arrives exactly once, handed to the browser by the page-exit path (CONTRACT section 2, trackLink/trackForm).
// Pages: e2e/site/dropin-lab.html (links, forms, and a probe of each click and submit), dropin-next.html.
import { ENGINES, type EngineName } from './driver.mjs';
import { test, expect, open, ready, quiet, trail, violations, waitUntil, skipWhenMissing, type Tab } from './fixtures';
import { startOtherOrigin, type CollectorHandle, type SiteHandle } from '../fixtures';

/** Nothing reaches flushAt and the interval is a minute: after the snippet's page view, only the exit path sends. */
const HOLD = { flushAt: 100, flushInterval: 60_000 };

const lab = (site: SiteHandle, params: Record<string, string> = {}) => site.page('/dropin-lab.html', { opts: JSON.stringify(HOLD), ...params });

interface Probe {
  kind: string;
  id: string;
  at: number;
  prevented?: boolean;
}
const readProbe = (tab: Tab): Promise<Probe> => tab.evaluate(() => JSON.parse(localStorage.getItem('dropin_probe') || 'null'));

/** Opens the lab page, waits for the library and the site's code, and for the snippet's page view to arrive. */
async function openLab(tab: Tab, site: SiteHandle, collector: CollectorHandle, params: Record<string, string> = {}) {
  await open(tab, lab(site, params));
  await waitUntil(tab, () => (window as any).__siteReady === true, undefined, 15_000, 'the site code ran');
  const first = await collector.waitFor(1, { type: 'page' }, 10_000);
  expect(first.length, 'the first message of the quiet spell (the snippet\'s page view) arrived').toBe(1);
}

/** Clicks element `id` the way a script does (`el.click()`, which follows a link or submits with the button), after the driver call returned. */
const click = (tab: Tab, id: string) =>
  tab.evaluate((id) => {
    setTimeout(() => (document.getElementById(id) as HTMLElement).click());
    return true;
  }, id);

/** `event` arrived once (one message, one messageId), carried by a beacon (the exit path: the write key in the body). */
async function arrivedOnceByExit(collector: CollectorHandle, event: string, since: number) {
  await collector.waitFor(1, { event }, 15_000);
  await quiet(collector);
  const msgs = await collector.messages({ event });
  const ids = msgs.map((m) => m.messageId);
  const how = await trail(collector, ids, since);
  expect(ids, `"${event}" exactly once; requests: ${how}`).toHaveLength(1);
  const carriers = (await collector.requests()).filter((r) => r.messageIds.includes(ids[0]));
  expect(carriers.map((r) => r.auth), `carried by the exit hand-off; requests: ${how}`).toEqual(['body']);
  expect(await violations(collector)).toEqual([]);
  return msgs[0];
}

for (const name of ENGINES) {
  test.describe(name, () => {
    test.use({ engineName: name as EngineName });
    skipWhenMissing(name as EngineName);
    test.describe.configure({ timeout: 45_000 });

    for (const where of ['same', 'cross'] as const) {
      test(`trackLink: a click on a link to ${where === 'same' ? 'a page of the same site' : 'another origin'} navigates unprevented; the track arrives exactly once by the exit path`, async ({ profile, site, collector }) => {
        const other = where === 'cross' ? await startOtherOrigin() : null;
        try {
          const start = Date.now();
          const tab = await profile.newTab();
          await openLab(tab, site, collector, other ? { ext: other.url + '/landing?from=cross' } : {});
          await click(tab, where);
          let probe: Probe;
          let timeOrigin: number;
          if (other) {
            await waitUntil(tab, (origin) => location.origin === origin && document.readyState === 'complete', other.url, 15_000, 'on the other origin');
            timeOrigin = await tab.evaluate(() => performance.timeOrigin);
            const back = await profile.newTab();
            await back.goto(site.url + '/core-blank.html');
            probe = await readProbe(back);
          } else {
            await waitUntil(tab, () => location.pathname === '/dropin-next.html' && document.readyState === 'complete', undefined, 15_000, 'on the next page');
            expect(await tab.evaluate(() => location.search)).toBe('?from=same');
            await ready(tab); // the next page's library would send again what the hand-off lost
            timeOrigin = await tab.evaluate(() => performance.timeOrigin);
            probe = await readProbe(tab);
          }
          expect(probe).toMatchObject({ kind: 'click', id: where, prevented: false });
          const serverAt = other?.pages()[0]?.at;
          test.info().annotations.push({
            type: 'click to navigation',
            description: `${(timeOrigin - probe.at).toFixed(1)} ms to the next document's time origin${serverAt ? `, ${(serverAt - probe.at).toFixed(1)} ms to its request at the server` : ''}`,
          });
          const msg = await arrivedOnceByExit(collector, where === 'same' ? 'Link Same' : 'Link Cross', start);
          expect(msg.properties).toEqual({ to: where });
        } finally {
          await other?.close();
        }
      });
    }

    test('trackForm: a native submit by a button goes ahead unprevented with its submitter; the event arrives exactly once by the exit path', async ({ profile, site, collector }) => {
      const start = Date.now();
      const tab = await profile.newTab();
      await openLab(tab, site, collector);
      await click(tab, 'native-go');
      await waitUntil(tab, () => location.pathname === '/dropin-next.html' && document.readyState === 'complete', undefined, 15_000, 'on the next page');
      expect(await tab.evaluate(() => location.search), "the submitter's name and value reached the server").toBe('?q=hello&choice=native-button');
      await ready(tab);
      const probe = await readProbe(tab);
      expect(probe).toMatchObject({ kind: 'submit', id: 'native', prevented: false });
      const timeOrigin = await tab.evaluate(() => performance.timeOrigin);
      test.info().annotations.push({ type: 'submit to navigation', description: `${(timeOrigin - probe.at).toFixed(1)} ms` });
      const msg = await arrivedOnceByExit(collector, 'Form Native', start);
      expect(msg.properties).toEqual({ q: 'hello' });
    });
  });
}
