// The analytics.js drop-in (issue 9, CONTRACT section 2): a page written for analytics.js runs unchanged on the stub
// and on the bundle; trackLink/trackForm deliver their event exactly once without holding the click or the submit
// (the page-exit hand-off sends it), and hold them only while a source middleware or plugin answers later;
// addSourceMiddleware, register (plugins), group() and pageview() as analytics.js has them.
// Pages: e2e/site/dropin.html (a site written for analytics.js), dropin-lab.html (links and forms),
// dropin-next.html (where they lead), dropin-npm.html (the npm entry with plugins).
import type { BrowserContext, Page } from '@playwright/test';
import { test, expect, ready, quiet, startOtherOrigin, type CollectorHandle, type SiteHandle } from './fixtures';

test.describe.configure({ timeout: 30_000 });

/**
 * Only the page-exit hand-off can send what the page tracks: the snippet's page() is the first message of a quiet
 * spell and leaves at once (what `sendFirst` does), after which nothing reaches flushAt and the interval is a minute.
 */
const HOLD = { flushAt: 100, flushInterval: 60_000 };
/** Messages leave within ~100 ms: for tests that only look at what arrives. */
const QUICK = { flushInterval: 100 };

const lab = (site: SiteHandle, opts: object = {}, params: Record<string, string> = {}) =>
  site.page('/dropin-lab.html', { opts: JSON.stringify(opts), ...params });

/** Opens dropin-lab.html and waits until the library and the site's code are ready. */
async function openLab(page: Page, site: SiteHandle, opts: object = {}, params: Record<string, string> = {}) {
  await page.goto(lab(site, opts, params));
  await ready(page);
  await page.waitForFunction(() => (window as any).__siteReady === true);
}

/** With HOLD: the snippet's page() arrived, so from now on only the exit hand-off (or a later page) sends. */
async function quietSpellStarted(collector: CollectorHandle) {
  const first = await collector.waitFor(1, { type: 'page' }, 10_000);
  expect(first.length, 'the page view of the snippet arrived (the first message of the spell)').toBe(1);
}

/**
 * Waits for `event` to arrive, lets everything settle (a duplicate would show up meanwhile), then asserts it arrived
 * exactly once (one message, one messageId). Returns it with the requests that carried it. The quiet spell outlasts
 * ORPHAN_GRACE_MS (1.5 s, src/delivery/tabs.ts): a next page that adopts a record left in IndexedDB sends it only then.
 */
async function arrivedOnce(collector: CollectorHandle, event: string) {
  await collector.waitFor(1, { event }, 15_000);
  await quiet(collector, 2500);
  const msgs = await collector.messages({ event });
  expect(msgs.map((m) => m.messageId), `"${event}" arrived exactly once (messageIds received)`).toHaveLength(1);
  const requests = (await collector.requests()).filter((r) => r.messageIds.includes(msgs[0].messageId));
  return { msg: msgs[0], requests };
}

/** Nothing with `event` arrived, once everything the page had was flushed and the collector went quiet. */
async function neverArrived(page: Page, collector: CollectorHandle, event: string) {
  await page.evaluate(() => (window as any).analytics.flush());
  await quiet(collector, 500);
  expect(await collector.messages({ event }), `"${event}" must not be sent`).toEqual([]);
}

/** The probe of dropin-lab.html (see its first script): when the last click or submit happened, and if prevented. */
interface Probe {
  kind: string;
  id: string;
  at: number;
  prevented?: boolean;
}
const readProbe = (page: Page): Promise<Probe> => page.evaluate(() => JSON.parse(localStorage.getItem('dropin_probe') || 'null'));
/** The probe, read from another tab of the site's origin (for when the tab left for another origin). */
async function readProbeFromSite(context: BrowserContext, site: SiteHandle): Promise<Probe> {
  const other = await context.newPage();
  try {
    await other.goto(site.url + '/core-blank.html');
    return await readProbe(other);
  } finally {
    await other.close();
  }
}

async function throttle(page: Page, rate: number) {
  if (rate === 1) return;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate });
}

/** Uncaught errors, unhandled rejections and console errors of `page`. */
function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push('pageerror: ' + String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push('console.error: ' + m.text()));
  return errors;
}

/** Navigations of the main frame to a new document (requests), from now on. */
function documentRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (r) => r.isNavigationRequest() && r.frame() === page.mainFrame() && urls.push(r.url()));
  return urls;
}

/** Adds a source middleware that passes each message on after `ms`, marked `properties.held = true`. */
const addSlowMiddleware = (page: Page, ms: number) =>
  page.evaluate((ms) => {
    (window as any).analytics.addSourceMiddleware(({ payload, next }: any) => {
      setTimeout(() => {
        payload.obj.properties = { ...payload.obj.properties, held: true };
        next(payload);
      }, ms);
    });
  }, ms);

// ---------------------------------------------------------------------------------------------------------------
test.describe('a page written for analytics.js', () => {
  const SNIPPET_METHODS = [
    'trackSubmit', 'trackClick', 'trackLink', 'trackForm', 'pageview', 'identify', 'reset', 'group', 'track', 'ready', 'alias',
    'debug', 'page', 'screen', 'once', 'off', 'on', 'addSourceMiddleware', 'addIntegrationMiddleware', 'setAnonymousId',
    'addDestinationMiddleware', 'register',
  ];

  test('every method of the analytics.js snippet, on the stub before the bundle and on the instance after: no page error, the stub chains, the events arrive with their fields', async ({ page, site, collector }) => {
    const errors = pageErrors(page);
    // The bundle is held until the site's code has run on the stub.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await page.route('**/dist/analytics.min.js', async (route) => {
      await gate;
      await route.continue();
    });
    await page.goto(site.page('/dropin.html', { opts: JSON.stringify(QUICK) }), { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => !!(window as any).__site);
    const stubbed = await page.evaluate(() => {
      const s = (window as any).__site;
      return { stubPhase: s.stubPhase, stub: s.stub, stillStub: Array.isArray((window as any).analytics) && !(window as any).analytics.VERSION };
    });
    expect(stubbed.stubPhase && stubbed.stillStub, 'the site code ran on the stub, before the bundle').toBe(true);
    // Each stub method returns the stub (analytics.js's snippet does), so code that chains them runs.
    expect(stubbed.stub).toEqual(Object.fromEntries(SNIPPET_METHODS.map((m) => [m, 'instance'])));
    const releasedAt = Date.now();
    release();
    await ready(page);
    // The gate is done with. A route makes Playwright intercept every request of the page and answer CORS preflights
    // itself, and a keepalive fetch whose preflight it has not answered when the page unloads is never sent (Chromium
    // sends it without interception): the nav click below would lose its event to the harness, not to the library.
    await page.unroute('**/dist/analytics.min.js');
    await page.waitForFunction(() => (window as any).__site.afterDone === true, undefined, { timeout: 15_000 });

    const s = await page.evaluate(() => (window as any).__site);
    expect(s.realAtReady, 'the ready callback runs with the real instance').toBe(true);
    expect(s.readyCalls).toBe(1);
    // (the 'page' event comes once the message is stored, which may be after the ready callback ran)
    await expect
      .poll(() => page.evaluate(() => (window as any).__site.firstPage), { message: 'once("page") on the stub: called for the snippet\'s page() only', timeout: 10_000 })
      .toEqual(['/dropin.html']);
    expect(s.unwanted, 'off() on the stub removed the handler on() added before it').toBe(0);
    expect(s.groupAtReady).toEqual({ id: 'acme-inc', traits: { name: 'Acme Inc', plan: 'pro', seats: 5 } });
    expect(s.userAtReady).toEqual({ id: 'user-42', anonymousId: 'acme-anon-1' });
    expect(s.afterReset).toEqual({ user: null, group: null, groupTraits: {} });
    // Methods that make a message return a promise after the bundle, those analytics.js chains return the instance.
    for (const m of ['track', 'page', 'identify', 'group', 'alias', 'screen', 'pageview', 'register', 'ready']) expect(s.after[m], m).toBe('promise');
    for (const m of ['trackLink', 'trackClick', 'trackForm', 'trackSubmit', 'addSourceMiddleware', 'addDestinationMiddleware', 'addIntegrationMiddleware'])
      expect(s.after[m], m).toBe('instance');

    // The visitor uses the page: a tracked button, the AJAX forms (tracked twice: on the stub and after), the other button.
    await page.click('#cta');
    await page.click('#subscribe');
    await expect(page.locator('#status')).toHaveText('thanks (newsletter)');
    await page.click('#cta2');
    await page.click('#feedback-send');
    await expect(page.locator('#status')).toHaveText('thanks (feedback)');
    expect(new URL(page.url()).pathname, 'the AJAX forms kept the page where it is').toBe('/dropin.html');

    const clicks = ['CTA Clicked', 'Newsletter Subscribed', 'Newsletter Form Seen Twice', 'Sales Clicked', 'Feedback Sent', 'Feedback Form Seen Twice'];
    for (const e of clicks) await collector.waitFor(1, { event: e }, 10_000);
    // 8 stub-phase messages (the snippet's page included), 7 after ready, 6 from the clicks
    const msgs = await collector.waitFor(21, {}, 15_000);
    await quiet(collector, 500);
    const all = await collector.messages();
    expect(new Set(all.map((m) => m.messageId)).size, 'no message twice').toBe(all.length);
    const byName = (type: string, name?: string) => all.filter((m) => m.type === type && (name === undefined || m.event === name || m.name === name));
    const one = (type: string, name?: string, n = 0) => {
      const found = byName(type, name);
      expect(found.length, `${type} ${name ?? ''}`).toBeGreaterThan(n);
      return found[n];
    };

    // On the stub, in call order after the snippet's page(): reset, setAnonymousId, alias, identify, group, track,
    // screen, pageview, page.
    const snippetPage = one('page');
    expect(snippetPage.properties).toMatchObject({ path: '/dropin.html', title: 'Acme: a site written for analytics.js' });
    expect(snippetPage.anonymousId, 'the snippet\'s page() came before reset() and setAnonymousId()').not.toBe('acme-anon-1');
    const stubPhase = [
      snippetPage,
      one('alias'),
      one('identify'),
      one('group'),
      one('track', 'Pricing Viewed'),
      one('screen', 'Onboarding'),
      byName('page').find((m) => m.properties.path === '/virtual/welcome'),
      one('page', 'Getting Started'),
    ];
    expect(stubPhase.every(Boolean), 'every stub-phase call arrived').toBe(true);
    // (the collector keeps arrival order, which is queue order: requests leave one at a time in each tab)
    const label = (m: any) => `${m.type} ${m.event ?? m.name ?? m.properties?.path ?? ''}`.trim();
    const arrived = all.filter((m) => stubPhase.includes(m)).map(label);
    expect.soft(arrived, 'stub-phase calls are queued and arrive in call order').toEqual(stubPhase.map(label));
    for (const m of stubPhase) {
      expect(Date.parse(m.timestamp), `${m.type} ${m.event ?? m.name ?? ''}: timestamp of the call on the stub`).toBeLessThanOrEqual(releasedAt);
      // the source middleware and the enrichment plugin were added on the stub, after page(): they still saw it
      expect(m.context.site, `${m.type}: the source middleware (added on the stub) ran`).toBe('acme');
    }
    for (const m of stubPhase.slice(1)) expect(m.anonymousId).toBe('acme-anon-1');
    expect(snippetPage.context.app, 'the enrichment plugin registered on the stub saw the snippet\'s page()').toEqual({ name: 'acme-web', version: '4.2' });
    expect(one('alias')).toMatchObject({ userId: 'user-42', previousId: 'acme-anon-1' });
    expect(one('identify')).toMatchObject({ userId: 'user-42', traits: { email: 'jane@example.com', plan: 'trial' } });
    expect(one('group')).toMatchObject({ groupId: 'acme-inc', userId: 'user-42', traits: { name: 'Acme Inc', plan: 'pro' } });
    const pricing = one('track', 'Pricing Viewed');
    expect(pricing.properties, 'the personal-data middleware removed the email').toEqual({ plan: 'pro' });
    expect(pricing).toMatchObject({ userId: 'user-42', context: { app: { name: 'acme-web', version: '4.2' } } });
    expect(one('screen', 'Onboarding').properties).toMatchObject({ step: 1 });
    expect(one('page', 'Getting Started')).toMatchObject({ category: 'Docs', properties: { section: 'intro' } });

    // After ready, on the instance (reset() came last, so these are user-42's).
    const checkout = one('track', 'Checkout Started');
    expect(checkout).toMatchObject({ userId: 'user-42', anonymousId: 'acme-anon-1', properties: { value: 10 } });
    expect(checkout.properties.email).toBeUndefined();
    expect(checkout.context).toMatchObject({ site: 'acme', secondMiddleware: true, app: { name: 'acme-web', version: '4.2' } });
    expect(one('identify', undefined, 1)).toMatchObject({ userId: 'user-42', traits: { plan: 'trial', seats: 5 } });
    expect(one('group', undefined, 1)).toMatchObject({ groupId: 'acme-inc', userId: 'user-42', traits: { seats: 5 } });
    expect(one('alias', undefined, 1)).toMatchObject({ userId: 'user-42', previousId: 'acme-anon-1' });
    expect(one('screen', 'Checkout Modal')).toBeTruthy();
    expect(byName('page').some((m) => m.properties.path === '/virtual/checkout'), 'pageview() after ready').toBe(true);
    expect(one('page', 'Checkout').userId).toBe('user-42');

    // The clicks and submissions, made after reset(): a new anonymous visitor.
    expect(one('track', 'CTA Clicked').properties).toEqual({ plan: 'pro' });
    expect(one('track', 'Sales Clicked').properties).toEqual({ plan: 'team' });
    expect(one('track', 'Newsletter Subscribed').properties).toEqual({ list: 'weekly' });
    expect(one('track', 'Feedback Sent').properties).toEqual({ text: 'nice' });
    for (const e of clicks) {
      expect(byName('track', e), `${e} once`).toHaveLength(1);
      expect(one('track', e).userId).toBeUndefined();
    }

    const seen = await page.evaluate(() => (window as any).__site);
    expect(seen.tracks, 'on("track") added on the stub heard every track').toEqual(expect.arrayContaining(['Pricing Viewed', 'Checkout Started', ...clicks]));
    expect(seen.onceAfter, 'once("track") after ready heard one track only').toHaveLength(1);
    expect(seen.queued, 'the after plugin saw each queued track with its messageId').toEqual(
      expect.arrayContaining([`Checkout Started ${checkout.messageId}`, `CTA Clicked ${one('track', 'CTA Clicked').messageId}`]),
    );
    expect(seen.errors, 'no error event').toEqual([]);

    // Last, a nav link tracked on the stub: the page goes to the next one, the event arrives once.
    await page.click('#nav-pricing');
    await page.waitForURL(/\/dropin-next\.html\?from=nav-pricing$/);
    await ready(page);
    const { msg } = await arrivedOnce(collector, 'Nav Clicked');
    expect(msg.properties).toEqual({ label: 'Pricing' });
    expect(await collector.violations()).toEqual([]);
    expect(errors).toEqual([]);
    expect(msgs.length).toBeGreaterThanOrEqual(21);
  });

  test('after the bundle, the methods analytics.js chains return the instance (on, once, off and debug too, as analytics.js\'s Emitter and debug())', async ({ page, site }) => {
    await page.goto(site.page('/dropin.html', { opts: JSON.stringify(QUICK) }));
    await page.waitForFunction(() => (window as any).__site && (window as any).__site.afterDone === true, undefined, { timeout: 15_000 });
    const after = await page.evaluate(() => (window as any).__site.after);
    const chained = ['on', 'once', 'off', 'debug', 'trackLink', 'trackClick', 'trackForm', 'trackSubmit', 'addSourceMiddleware', 'addDestinationMiddleware', 'addIntegrationMiddleware'];
    // analytics.on('track', f).on('page', g) and analytics.debug(true).track(...) work with analytics.js
    expect(Object.fromEntries(chained.map((m) => [m, after[m]]))).toEqual(Object.fromEntries(chained.map((m) => [m, 'instance'])));
  });
});

// ---------------------------------------------------------------------------------------------------------------
test.describe('trackLink', () => {
  for (const rate of [1, 4]) {
    for (const where of ['same', 'cross'] as const) {
      test(`a click on a link to ${where === 'same' ? 'a page of the same site' : 'another origin'} navigates at once, not prevented, and the track arrives once by the exit hand-off (CPU ${rate}x)`, async ({ page, site, collector }) => {
        const other = where === 'cross' ? await startOtherOrigin() : null;
        try {
          await throttle(page, rate);
          await openLab(page, site, HOLD, other ? { ext: other.url + '/landing?from=cross' } : {});
          await quietSpellStarted(collector);
          await page.click('#' + where);
          await page.waitForURL(other ? other.url + '/landing?from=cross' : /\/dropin-next\.html\?from=same$/);
          const timeOrigin: number = await page.evaluate(() => performance.timeOrigin);
          const probe = where === 'same' ? await readProbe(page) : await readProbeFromSite(page.context(), site);
          expect(probe).toMatchObject({ kind: 'click', id: where });
          expect(probe.prevented, 'the click was not prevented: the browser navigates by itself').toBe(false);
          const navDelay = timeOrigin - probe.at;
          const serverDelay = other ? other.pages()[0].at - probe.at : undefined;
          test.info().annotations.push({
            type: 'click to navigation',
            description: `${navDelay.toFixed(1)} ms to the next document's navigation start${other ? `, ${serverDelay!.toFixed(1)} ms to its request at the server` : ''}`,
          });
          expect(navDelay, 'ms from the click to the start of the navigation').toBeLessThan(rate === 1 ? 50 : 150);
          if (other) expect(serverDelay!, 'ms from the click to the request at the other origin').toBeLessThan(rate === 1 ? 100 : 250);
          if (where === 'same') await ready(page); // the next page of the site loads the library: it would send again what was lost
          const { msg, requests } = await arrivedOnce(collector, where === 'same' ? 'Link Same' : 'Link Cross');
          expect(msg.properties).toEqual({ to: where });
          expect(requests.map((r) => r.auth), 'carried by the exit hand-off (a beacon: the write key in the body)').toEqual(['body']);
          expect(await collector.violations()).toEqual([]);
        } finally {
          await other?.close();
        }
      });
    }
  }

  test('target=_blank opens a new tab and leaves this page where it is; the click is tracked once', async ({ page, context, site, collector }) => {
    await openLab(page, site, QUICK);
    const alive = await page.evaluate(() => (window as any).__alive);
    const [tab] = await Promise.all([context.waitForEvent('page'), page.click('#blank')]);
    await tab.waitForURL(/\/dropin-next\.html\?from=blank$/);
    expect(await readProbe(page)).toMatchObject({ id: 'blank', prevented: false });
    expect(new URL(page.url()).pathname).toBe('/dropin-lab.html');
    expect(await page.evaluate(() => (window as any).__alive)).toBe(alive);
    await page.evaluate(() => (window as any).analytics.flush());
    const { msg } = await arrivedOnce(collector, 'Link Blank');
    expect(msg.properties).toEqual({ to: 'blank' });
  });

  for (const modifiers of [['ControlOrMeta'], ['Shift']] as const) {
    test(`a ${modifiers[0]}-click opens the link elsewhere and leaves this page where it is; the click is tracked once`, async ({ page, context, site, collector }) => {
      await openLab(page, site, QUICK);
      const alive = await page.evaluate(() => (window as any).__alive);
      const navigations = documentRequests(page);
      const opened = context.waitForEvent('page', { timeout: 10_000 });
      await page.click('#same', { modifiers: [...modifiers] });
      const tab = await opened;
      await tab.waitForURL(/\/dropin-next\.html\?from=same$/);
      expect(await readProbe(page)).toMatchObject({ id: 'same', prevented: false });
      await page.evaluate(() => (window as any).analytics.flush());
      await arrivedOnce(collector, 'Link Same');
      expect(await page.evaluate(() => (window as any).__alive), 'this page was not replaced').toBe(alive);
      expect(navigations).toEqual([]);
    });
  }

  const kinds = [
    { id: 'fn-docs', event: 'Link Docs', properties: { name: 'Docs', href: 'dropin-next.html?from=fn-docs' }, what: '`event` and `properties` as functions of the element' },
    { id: 'jq-2', event: 'Link jQuery', properties: { id: 'jq-2' }, what: 'a jQuery-like object (toArray), through trackClick' },
    { id: 'nl-2', event: 'Link NodeList', properties: { id: 'nl-2' }, what: 'a NodeList' },
    { id: 'svg', event: 'Link SVG', properties: { to: 'svg' }, what: 'an SVG link with xlink:href' },
  ];
  for (const k of kinds) {
    test(`${k.what}: the click navigates, unprevented, and the event arrives once with its values`, async ({ page, site, collector }) => {
      await openLab(page, site, HOLD);
      await quietSpellStarted(collector);
      await page.click('#' + k.id);
      await page.waitForURL(new RegExp(`/dropin-next\\.html\\?from=${k.id}$`));
      expect(await readProbe(page)).toMatchObject({ id: k.id, prevented: false });
      await ready(page);
      const { msg } = await arrivedOnce(collector, k.event);
      expect(msg.properties).toEqual(k.properties);
      expect(await collector.messages({ type: 'track' }), 'the other tracked elements were not clicked').toHaveLength(1);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------------
test.describe('trackForm', () => {
  test('native submit by a button: not prevented, the submitter\'s name and value reach the server, the event arrives once', async ({ page, site, collector }) => {
    await openLab(page, site, HOLD);
    await quietSpellStarted(collector);
    await page.click('#native-go');
    await page.waitForURL(/\/dropin-next\.html\?q=hello&choice=native-button$/);
    expect(await readProbe(page)).toMatchObject({ kind: 'submit', id: 'native', prevented: false });
    await ready(page);
    const { msg, requests } = await arrivedOnce(collector, 'Form Native');
    expect(msg.properties).toEqual({ q: 'hello' });
    expect(requests.map((r) => r.auth), 'carried by the exit hand-off').toEqual(['body']);
  });

  for (const how of ['requestSubmit', 'submit'] as const) {
    test(`form.${how}() by script: the form is submitted and the event arrives once`, async ({ page, site, collector }) => {
      await openLab(page, site, HOLD);
      await quietSpellStarted(collector);
      await page.evaluate((how) => setTimeout(() => (document.getElementById('native') as any)[how]()), how);
      await page.waitForURL(/\/dropin-next\.html\?q=hello$/);
      await ready(page);
      const { msg } = await arrivedOnce(collector, 'Form Native');
      expect(msg.properties).toEqual({ q: 'hello' });
    });
  }

  for (const [id, order] of [
    ['ajax', "the site's handler runs before the library's"],
    ['ajax2', "the library's handler runs first"],
  ] as const) {
    test(`an AJAX form (its handler calls preventDefault; ${order}): tracked once, the page stays`, async ({ page, site, collector }) => {
      await openLab(page, site, QUICK);
      const alive = await page.evaluate(() => (window as any).__alive);
      const navigations = documentRequests(page);
      await page.click(`#${id}-go`);
      await expect(page.locator('#status')).toHaveText(`ajax ${id} 1`);
      await arrivedOnce(collector, id === 'ajax' ? 'Form Ajax' : 'Form Ajax 2');
      expect(navigations, 'no navigation').toEqual([]);
      expect(await page.evaluate(() => (window as any).__alive)).toBe(alive);
      expect(new URL(page.url()).pathname).toBe('/dropin-lab.html');
    });
  }

  for (const [id, order] of [
    ['later', "the site's handler runs before the library's"],
    ['later2', "the library's handler runs first"],
  ] as const) {
    test(`a handler that prevents the submit and calls form.submit() later (${order}): tracked once, submitted`, async ({ page, site, collector }) => {
      await openLab(page, site, HOLD);
      await quietSpellStarted(collector);
      await page.click(`#${id}-go`);
      await page.waitForURL(new RegExp(`/dropin-next\\.html\\?which=${id}$`));
      await ready(page);
      await arrivedOnce(collector, id === 'later' ? 'Form Later' : 'Form Later 2');
    });
  }
});

/**
 * Waits until a hold is over whatever happened (the message queued, as the page's `track` handler saw, or
 * `middlewareTimeout` ms passed since the click the lab's probe noted): after it, nothing may navigate or submit.
 */
async function holdIsOver(page: Page, middlewareTimeout: number) {
  await page.waitForFunction(() => (window as any).__trackedAt > 0);
  await page.waitForFunction(
    (timeout) => performance.timeOrigin + performance.now() > JSON.parse(localStorage.getItem('dropin_probe')!).at + timeout + 100,
    middlewareTimeout,
  );
}

// ---------------------------------------------------------------------------------------------------------------
test.describe('held: a source middleware that answers later', () => {
  test('trackLink: the click is held until the middleware passed the event, then the page navigates; the changed event arrives once', async ({ page, site, collector }) => {
    await openLab(page, site, { ...HOLD, middlewareTimeout: 1000 });
    await quietSpellStarted(collector);
    await addSlowMiddleware(page, 100);
    await page.click('#same');
    await page.waitForURL(/\/dropin-next\.html\?from=same$/);
    const timeOrigin: number = await page.evaluate(() => performance.timeOrigin);
    const probe = await readProbe(page);
    expect(probe.prevented, 'held: the library stopped the click').toBe(true);
    const held = timeOrigin - probe.at;
    test.info().annotations.push({ type: 'click to navigation (held)', description: `${held.toFixed(1)} ms` });
    expect(held, 'held for the middleware (100 ms), not for middlewareTimeout').toBeGreaterThanOrEqual(95);
    expect(held).toBeLessThan(900);
    await ready(page);
    const { msg, requests } = await arrivedOnce(collector, 'Link Same');
    expect(msg.properties).toEqual({ to: 'same', held: true });
    expect(requests.map((r) => r.auth), 'carried by the exit hand-off').toEqual(['body']);
  });

  test('trackForm: the submit is held until the middleware passed the event, then the form is submitted with its submitter; the changed event arrives once', async ({ page, site, collector }) => {
    await openLab(page, site, { ...HOLD, middlewareTimeout: 1000 });
    await quietSpellStarted(collector);
    await addSlowMiddleware(page, 100);
    await page.click('#native-go');
    await page.waitForURL(/\/dropin-next\.html\?q=hello&choice=native-button$/);
    expect((await readProbe(page)).prevented).toBe(true);
    await ready(page);
    const { msg } = await arrivedOnce(collector, 'Form Native');
    expect(msg.properties).toEqual({ q: 'hello', held: true });
  });

  test("a router's handler that calls preventDefault after the library's keeps the page where it is; the event arrives once", async ({ page, site, collector }) => {
    await openLab(page, site, { ...QUICK, middlewareTimeout: 400 });
    const alive = await page.evaluate(() => (window as any).__alive);
    await page.evaluate(() => (window as any).analytics.on('track', () => ((window as any).__trackedAt = performance.now())));
    await addSlowMiddleware(page, 100);
    const navigations = documentRequests(page);
    await page.click('#routed');
    await expect(page.locator('#view')).toHaveText('routed');
    const { msg } = await arrivedOnce(collector, 'Link Routed');
    expect(msg.properties).toEqual({ to: 'routed', held: true });
    // Until the hold is over whatever happens (queued, or middlewareTimeout passed): then nothing may navigate.
    await holdIsOver(page, 400);
    expect(navigations, 'no navigation').toEqual([]);
    expect(await page.evaluate(() => (window as any).__alive)).toBe(alive);
    expect(new URL(page.url()).pathname).toBe('/dropin-lab/routed');
  });

  for (const [id, order] of [
    ['ajax', "the site's handler runs before the library's"],
    ['ajax2', "the library's handler runs first"],
  ] as const) {
    test(`an AJAX form that leaves a prevented submit alone, as React Router's <Form> does, while a middleware holds the event (${order}): its handler has the submit, the page stays, tracked once`, async ({ page, site, collector }) => {
      await openLab(page, site, { ...QUICK, middlewareTimeout: 400 });
      const alive = await page.evaluate(() => (window as any).__alive);
      await page.evaluate(() => (window as any).analytics.on('track', () => ((window as any).__trackedAt = performance.now())));
      await addSlowMiddleware(page, 100);
      const navigations = documentRequests(page);
      await page.click(`#${id}-go`);
      await expect(page.locator('#status')).toHaveText(`ajax ${id} 1`);
      const { msg } = await arrivedOnce(collector, id === 'ajax' ? 'Form Ajax' : 'Form Ajax 2');
      expect(msg.properties).toEqual({ held: true });
      // Until the hold is over whatever happens (queued, or middlewareTimeout passed): then nothing may submit.
      await holdIsOver(page, 400);
      expect(navigations, 'no navigation').toEqual([]);
      expect(await page.evaluate(() => (window as any).__alive)).toBe(alive);
    });
  }

  test('target=_blank and a ctrl/meta-click are not intercepted while a middleware holds events: new tab, this page stays, tracked once each', async ({ page, context, site, collector }) => {
    await openLab(page, site, { ...QUICK, middlewareTimeout: 1000 });
    await addSlowMiddleware(page, 100);
    const alive = await page.evaluate(() => (window as any).__alive);
    const navigations = documentRequests(page);
    const [blank] = await Promise.all([context.waitForEvent('page'), page.click('#blank')]);
    await blank.waitForURL(/from=blank$/);
    expect(await readProbe(page)).toMatchObject({ id: 'blank', prevented: false });
    const [modified] = await Promise.all([context.waitForEvent('page'), page.click('#same', { modifiers: ['ControlOrMeta'] })]);
    await modified.waitForURL(/from=same$/);
    expect(await readProbe(page)).toMatchObject({ id: 'same', prevented: false });
    const blankMsg = (await arrivedOnce(collector, 'Link Blank')).msg;
    expect(blankMsg.properties).toEqual({ to: 'blank', held: true });
    await arrivedOnce(collector, 'Link Same');
    expect(navigations).toEqual([]);
    expect(await page.evaluate(() => (window as any).__alive)).toBe(alive);
  });

  test('an SVG link with target=_blank is not intercepted while a middleware holds events: it opens a new tab and this page stays', async ({ page, context, site, collector }) => {
    await openLab(page, site, { ...QUICK, middlewareTimeout: 1000 });
    await addSlowMiddleware(page, 100);
    const alive = await page.evaluate(() => (window as any).__alive);
    const navigations = documentRequests(page);
    const opened = context.waitForEvent('page', { timeout: 5000 }).catch(() => null);
    await page.click('#svgblank text');
    await arrivedOnce(collector, 'Link SVG Blank');
    const probe = await readProbe(page).catch(() => null);
    expect({ prevented: probe?.prevented, newTab: !!(await opened), navigatedThisPage: navigations.length > 0 }).toEqual({
      prevented: false,
      newTab: true,
      navigatedThisPage: false,
    });
    expect(await page.evaluate(() => (window as any).__alive)).toBe(alive);
  });

  for (const held of [false, true]) {
    test(`a link that targets an iframe (target="sink")${held ? ' while a middleware holds events' : ''}: it loads in the iframe, this page stays, tracked once`, async ({ page, site, collector }) => {
      await openLab(page, site, { ...QUICK, middlewareTimeout: 1000 });
      if (held) await addSlowMiddleware(page, 100);
      const alive = await page.evaluate(() => (window as any).__alive);
      const navigations = documentRequests(page);
      const frame = page.frame({ name: 'sink' })!;
      await page.click('#framedlink');
      await arrivedOnce(collector, 'Link Framed');
      expect({ frame: frame.isDetached() ? 'detached' : new URL(frame.url()).search, navigatedThisPage: navigations.length > 0 }).toEqual({
        frame: '?from=framedlink',
        navigatedThisPage: false,
      });
      expect(await page.evaluate(() => (window as any).__alive)).toBe(alive);
    });
  }

  test("a held submit by a button with formaction goes to the button's formaction, as the browser's own submit would", async ({ page, site, collector }) => {
    await openLab(page, site, { ...QUICK, middlewareTimeout: 1000 });
    await addSlowMiddleware(page, 100);
    await page.click('#native-alt');
    await page.waitForURL((u) => u.pathname !== '/dropin-lab.html');
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/core-blank.html?q=hello&choice=alt-button');
    await arrivedOnce(collector, 'Form Native');
  });

  test('a held form that targets an iframe, submitted twice by two buttons: each submission carries only its own button', async ({ page, site, collector }) => {
    await openLab(page, site, { ...QUICK, middlewareTimeout: 1000 });
    await addSlowMiddleware(page, 50);
    const frame = page.frame({ name: 'sink' })!;
    await page.click('#framed-a');
    await expect.poll(() => frame.url(), { timeout: 10_000 }).toContain('/core-blank.html?');
    expect(new URL(frame.url()).search).toBe('?choice=a');
    await page.click('#framed-b');
    await expect.poll(() => new URL(frame.url()).search, { timeout: 10_000 }).not.toBe('?choice=a');
    expect(new URL(frame.url()).search, 'the second submission carries button b only').toBe('?choice=b');
    await collector.waitFor(2, { event: 'Form Framed' }, 10_000);
  });

  for (const [id, order] of [
    ['later', "the site's handler runs before the library's"],
    ['later2', "the library's handler runs first"],
  ] as const) {
    test(`a handler that prevents the submit and calls form.submit() 50 ms later, while the middleware holds the event for 300 ms (${order}): the event still arrives once`, async ({ page, site, collector }) => {
      await openLab(page, site, { ...HOLD, middlewareTimeout: 1000 });
      await quietSpellStarted(collector);
      await addSlowMiddleware(page, 300);
      await page.click(`#${id}-go`);
      await page.waitForURL(new RegExp(`/dropin-next\\.html\\?which=${id}$`));
      await ready(page);
      const { msg } = await arrivedOnce(collector, id === 'later' ? 'Form Later' : 'Form Later 2');
      expect(msg.properties).toEqual({ held: true });
    });
  }

  test('a source middleware that calls next at once does not hold the click: it is not prevented and the browser navigates by itself', async ({ page, site, collector }) => {
    await openLab(page, site, HOLD);
    await quietSpellStarted(collector);
    await page.evaluate(() =>
      (window as any).analytics.addSourceMiddleware(({ payload, next }: any) => {
        payload.obj.context.checked = true;
        next(payload);
      }),
    );
    // (once the middleware chunk is here: until then a click waits for it, held as for a middleware that answers later)
    await page.waitForFunction(() => !!(window as any).svcAnalyticsExtend);
    await page.click('#same');
    await page.waitForURL(/\/dropin-next\.html\?from=same$/);
    const timeOrigin: number = await page.evaluate(() => performance.timeOrigin);
    const probe = await readProbe(page);
    test.info().annotations.push({ type: 'click to navigation', description: `${(timeOrigin - probe.at).toFixed(1)} ms, prevented: ${probe.prevented}` });
    await ready(page);
    const { msg } = await arrivedOnce(collector, 'Link Same');
    expect(msg.context.checked).toBe(true);
    expect(probe.prevented, 'not held: the middleware answered at once').toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------------
test.describe('addSourceMiddleware', () => {
  test('changes made by two middlewares arrive, applied in the order added; the promise gives the changed message', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const event = await page.evaluate(async () => {
      const a = (window as any).analytics;
      a.addSourceMiddleware(({ payload, next }: any) => {
        payload.obj.properties.order = [...(payload.obj.properties.order || []), 'first'];
        payload.obj.context.campaign = { name: 'from middleware' };
        next(payload);
      });
      a.addSourceMiddleware(async ({ payload, next }: any) => {
        await new Promise((r) => setTimeout(r, 20));
        payload.obj.properties.order.push('second');
        delete payload.obj.properties.secret;
        next(payload);
      });
      return (await a.track('Middleware Changed', { keep: 1, secret: 's3cr3t' })).event;
    });
    const { msg } = await arrivedOnce(collector, 'Middleware Changed');
    expect(msg.properties).toEqual({ keep: 1, order: ['first', 'second'] });
    expect(msg.context.campaign).toEqual({ name: 'from middleware' });
    expect(msg.messageId).toBe(event.messageId);
    expect(event.properties).toEqual(msg.properties);
  });

  test('with a plugin that hooks some message types only, messages are still queued (and arrive) in call order', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    await page.evaluate(async () => {
      const a = (window as any).analytics;
      await a.register({
        name: 'Track Enricher',
        type: 'enrichment',
        version: '1.0.0',
        isLoaded: () => true,
        load: () => Promise.resolve(),
        track: (ctx: any) => (ctx.updateEvent('context.enriched', true), ctx),
      });
      // as a sign-up handler makes them, without waiting between calls
      await Promise.all([a.track('Signed Up'), a.identify('u-1', { plan: 'pro' }), a.track('Plan Chosen'), a.group('g-1')]);
    });
    const msgs = await collector.waitFor(5, {}, 10_000); // with the snippet's page view
    const order = msgs.filter((m) => m.type !== 'page').map((m) => `${m.type} ${m.type === 'track' ? m.event : m.type === 'group' ? m.groupId : m.userId}`);
    expect(order).toEqual(['track Signed Up', 'identify u-1', 'track Plan Chosen', 'group g-1']);
  });

  test('a middleware that drops (next(null), or an async one that returns without next): nothing sent, the promise rejects with "dropped", no error event', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const errors: string[] = [];
      a.on('error', (e: any) => errors.push(e.code));
      a.addSourceMiddleware(({ payload, next }: any) => next(payload.obj.event === 'Dropped By Null' ? null : payload));
      a.addSourceMiddleware(async ({ payload, next }: any) => {
        if (payload.obj.event === 'Dropped By Async') return;
        next(payload);
      });
      const out: Record<string, string> = {};
      for (const e of ['Dropped By Null', 'Dropped By Async', 'Kept'])
        out[e] = await a.track(e).then(
          () => 'resolved',
          (err: any) => err.code,
        );
      return { out, errors };
    });
    expect(r.out).toEqual({ 'Dropped By Null': 'dropped', 'Dropped By Async': 'dropped', Kept: 'resolved' });
    expect(r.errors).toEqual([]);
    await arrivedOnce(collector, 'Kept');
    await neverArrived(page, collector, 'Dropped By Null');
    await neverArrived(page, collector, 'Dropped By Async');
  });

  test('a personal-data filter that throws: "error" event middleware_error, the promise rejects, nothing is sent, no page error', async ({ page, site, collector }) => {
    const errors = pageErrors(page);
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const reported: { code: string; ids: string[] }[] = [];
      a.on('error', (e: any) => reported.push({ code: e.code, ids: e.messageIds }));
      a.addSourceMiddleware(({ payload, next }: any) => {
        // throws when there is no email (a bug in the site's filter)
        payload.obj.properties.email = payload.obj.properties.email.replace(/@.*/, '@redacted');
        next(payload);
      });
      const refused = await a.track('Signed Up', { plan: 'pro', phone: '555-0100' }).then(
        () => 'resolved',
        (e: any) => e.code,
      );
      const ok = await a.track('Signed Up With Email', { email: 'jane@example.com' });
      return { refused, reported, okId: ok.event.messageId };
    });
    expect(r.refused).toBe('middleware_error');
    expect(r.reported.map((e) => e.code)).toEqual(['middleware_error']);
    expect(r.reported[0].ids).toHaveLength(1);
    const { msg } = await arrivedOnce(collector, 'Signed Up With Email');
    expect(msg.properties).toEqual({ email: 'jane@redacted' });
    await neverArrived(page, collector, 'Signed Up');
    expect(JSON.stringify(await collector.messages())).not.toContain('555-0100');
    expect(errors).toEqual([]);
  });

  for (const [label, body] of [
    ['returns and never calls next', 'sync'],
    ['returns a promise that never settles', 'pending'],
  ] as const) {
    test(`a middleware that ${label}: dropped after middlewareTimeout, reported as middleware_error, nothing sent`, async ({ page, site, collector }) => {
      await openLab(page, site, { ...QUICK, middlewareTimeout: 200 });
      const r = await page.evaluate(async (body) => {
        const a = (window as any).analytics;
        const reported: string[] = [];
        a.on('error', (e: any) => reported.push(e.code));
        a.addSourceMiddleware(body === 'sync' ? () => {} : () => new Promise(() => {}));
        const t0 = performance.now();
        const code = await a.track('Never Passed').then(
          () => 'resolved',
          (e: any) => e.code,
        );
        return { code, ms: performance.now() - t0, reported };
      }, body);
      expect(r.code).toBe('middleware_error');
      expect(r.reported).toEqual(['middleware_error']);
      expect(r.ms, 'ms until the call was refused').toBeGreaterThanOrEqual(190);
      expect(r.ms).toBeLessThan(1000);
      await neverArrived(page, collector, 'Never Passed');
    });
  }

  test("a middleware added on the stub after the snippet's page() still filters that page view", async ({ page, site, collector }) => {
    await page.goto(lab(site, QUICK, { setup: 'stubmw' }));
    const [pv] = await collector.waitFor(1, { type: 'page' }, 10_000);
    expect(pv, 'the page view arrived').toBeTruthy();
    expect(pv.properties.filteredBy).toBe('stub middleware');
    expect(pv.properties.search, 'the middleware removed it').toBeUndefined();
    await quiet(collector, 500);
    expect(await collector.messages({ type: 'page' })).toHaveLength(1);
  });

  test('a middleware that puts Dates in the message: sent as ISO strings, valid at the API', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      a.addSourceMiddleware(({ payload, next }: any) => {
        payload.obj.properties.when = new Date(Date.UTC(2024, 0, 2));
        payload.obj.context.seenAt = new Date(Date.UTC(2024, 0, 3));
        payload.obj.timestamp = new Date(Date.UTC(2024, 0, 1, 12));
        next(payload);
      });
      return (await a.track('With Dates')).event;
    });
    const { msg } = await arrivedOnce(collector, 'With Dates');
    expect(msg.properties.when).toBe('2024-01-02T00:00:00.000Z');
    expect(msg.context.seenAt).toBe('2024-01-03T00:00:00.000Z');
    expect(msg.timestamp).toBe('2024-01-01T12:00:00.000Z');
    expect(r.timestamp).toBe('2024-01-01T12:00:00.000Z');
    expect(await collector.violations()).toEqual([]);
  });

  test('a middleware that makes integrations invalid: the call is refused with invalid_payload (promise and "error" event), nothing sent, no violation', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const reported: string[] = [];
      a.on('error', (e: any) => reported.push(e.code));
      a.addSourceMiddleware(({ payload, next }: any) => {
        payload.obj.integrations = { Amplitude: 'yes', Mixpanel: true };
        next(payload);
      });
      const code = await a.track('Bad Integrations').then(
        () => 'resolved',
        (e: any) => e.code,
      );
      return { code, reported };
    });
    expect(r.code).toBe('invalid_payload');
    await neverArrived(page, collector, 'Bad Integrations');
    expect(await collector.violations()).toEqual([]);
    // CONTRACT section 2: bad input gives a clear error through the 'error' event too
    expect(r.reported, 'reported through the "error" event').toEqual(['invalid_payload']);
  });

  test('a middleware that sets properties to null: what is sent is valid at the API (no violation), or the call is refused with an error', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const reported: string[] = [];
      a.on('error', (e: any) => reported.push(e.code));
      a.addSourceMiddleware(({ payload, next }: any) => {
        payload.obj.properties = null; // strip everything
        next(payload);
      });
      const outcome = await a.track('Null Properties', { email: 'x@example.com' }).then(
        () => 'resolved',
        (e: any) => e.code,
      );
      await a.flush();
      return { outcome, reported };
    });
    await quiet(collector, 500);
    const violations = await collector.violations();
    const sent = await collector.messages({ event: 'Null Properties' });
    test.info().annotations.push({ type: 'outcome', description: `${r.outcome}; reported ${JSON.stringify(r.reported)}; ${sent.length} accepted; ${violations.length} violation(s)` });
    expect(violations.map((v) => v.violation?.reason ?? v.violation), 'the API refused nothing the library accepted').toEqual([]);
    if (r.outcome === 'resolved') {
      expect(sent).toHaveLength(1);
      expect(sent[0].properties === undefined || typeof sent[0].properties === 'object').toBe(true);
    } else expect(r.reported).toContain(r.outcome);
  });
});

// ---------------------------------------------------------------------------------------------------------------
test.describe('register (plugins)', () => {
  test('a before plugin changes the event, an enrichment plugin adds context, an after plugin sees the queued message', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const seen: any[] = [];
      const plugin = (name: string, type: string, track: (ctx: any) => any) => ({
        name,
        type,
        version: '1.0.0',
        isLoaded: () => true,
        load: () => Promise.resolve(),
        track,
      });
      const ctx = await a.register(
        plugin('Renamer', 'before', (ctx) => {
          ctx.updateEvent('event', 'Plan Chosen');
          ctx.updateEvent('properties.plan', ctx.event.properties.plan.toUpperCase());
          return ctx;
        }),
        plugin('App Info', 'enrichment', (ctx) => {
          ctx.updateEvent('context.app', { name: 'lab', build: 7 });
          return ctx;
        }),
        plugin('Watcher', 'after', (ctx) => {
          seen.push(ctx.event);
          return ctx;
        }),
      );
      const { event } = await a.track('plan chosen', { plan: 'pro' });
      await new Promise<void>((res) => {
        const t0 = Date.now();
        const check = () => (seen.length || Date.now() - t0 > 5000 ? res() : setTimeout(check, 10));
        check();
      });
      return { registered: !!ctx && typeof ctx === 'object', event, seen };
    });
    expect(r.registered, 'register resolves with a context').toBe(true);
    const { msg } = await arrivedOnce(collector, 'Plan Chosen');
    expect(msg.properties).toEqual({ plan: 'PRO' });
    expect(msg.context.app).toEqual({ name: 'lab', build: 7 });
    expect(r.event.messageId).toBe(msg.messageId);
    expect(r.seen, 'the after plugin saw the queued message once').toHaveLength(1);
    expect(r.seen[0]).toMatchObject({ messageId: msg.messageId, event: 'Plan Chosen', properties: { plan: 'PRO' }, context: { app: { name: 'lab', build: 7 } } });
    expect(await collector.messages({ event: 'plan chosen' })).toEqual([]);
  });

  test("a plugin whose load throws is reported as plugin_error and left out; the others work; no uncaught error", async ({ page, site, collector }) => {
    const errors = pageErrors(page);
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const reported: string[] = [];
      a.on('error', (e: any) => reported.push(e.code));
      const settled = await a
        .register(
          {
            name: 'Broken',
            type: 'enrichment',
            version: '1.0.0',
            isLoaded: () => false,
            load: () => {
              throw new Error('cannot load');
            },
            track: (ctx: any) => (ctx.updateEvent('context.broken', true), ctx),
          },
          {
            name: 'Async Broken',
            type: 'before',
            version: '1.0.0',
            isLoaded: () => false,
            load: () => Promise.reject(new Error('cannot load either')),
            track: (ctx: any) => ctx.cancel(),
          },
          {
            name: 'Works',
            type: 'enrichment',
            version: '1.0.0',
            isLoaded: () => true,
            load: () => Promise.resolve(),
            track: (ctx: any) => (ctx.updateEvent('context.works', true), ctx),
          },
        )
        .then(
          () => 'resolved',
          (e: any) => 'rejected ' + e,
        );
      await a.track('After Broken Plugin');
      return { settled, reported };
    });
    expect(r.settled).toBe('resolved');
    expect(r.reported).toEqual(['plugin_error', 'plugin_error']);
    const { msg } = await arrivedOnce(collector, 'After Broken Plugin');
    expect(msg.context.works).toBe(true);
    expect(msg.context.broken).toBeUndefined();
    expect(errors).toEqual([]);
  });

  test('ctx.cancel() in a before plugin: not sent, the promise rejects with "dropped", no error event', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const r = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const reported: string[] = [];
      a.on('error', (e: any) => reported.push(e.code));
      await a.register({
        name: 'Bot Filter',
        type: 'before',
        version: '1.0.0',
        isLoaded: () => true,
        load: () => Promise.resolve(),
        track: (ctx: any) => (ctx.event.properties.bot ? ctx.cancel() : ctx),
      });
      const code = await a.track('From Bot', { bot: true }).then(
        () => 'resolved',
        (e: any) => e.code,
      );
      await a.track('From Human', { bot: false });
      return { code, reported };
    });
    expect(r.code).toBe('dropped');
    expect(r.reported).toEqual([]);
    await arrivedOnce(collector, 'From Human');
    await neverArrived(page, collector, 'From Bot');
  });

  test('AnalyticsBrowser.load({ writeKey, plugins }) (npm entry): the plugins see the first calls, made before ready', async ({ page, site, collector }) => {
    const errors = pageErrors(page);
    await page.goto(site.page('/dropin-npm.html'));
    await ready(page);
    const early: string[] = await page.evaluate(() => (window as any).__early);
    const [pv] = await collector.waitFor(1, { type: 'page' }, 10_000);
    const { msg } = await arrivedOnce(collector, 'npm: Opened');
    expect(early).toEqual([pv.messageId, msg.messageId]);
    expect(pv.context.build).toEqual({ sha: 'abc123' });
    expect(msg.context.build).toEqual({ sha: 'abc123' });
    const seen = await page.evaluate(() => (window as any).__seen);
    expect(seen.loaded).toBe(1);
    expect(seen.after.sort()).toEqual([`page ${pv.messageId}`, `track ${msg.messageId}`].sort());
    expect(errors).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
test.describe('group() and pageview()', () => {
  test("group() with no arguments: the group persists across a reload (id and traits, merged for the same group), and reset() forgets it", async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const first = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const before = { id: a.group().id(), traits: a.group().traits() };
      await a.group('g1', { plan: 'pro' });
      return { before, after: { id: a.group().id(), traits: a.group().traits() } };
    });
    expect(first.before).toEqual({ id: null, traits: {} });
    expect(first.after).toEqual({ id: 'g1', traits: { plan: 'pro' } });
    await page.reload();
    await ready(page);
    const reloaded = await page.evaluate(async () => {
      const a = (window as any).analytics;
      const read = { id: a.group().id(), traits: a.group().traits() };
      await a.group('g1', { seats: 3 });
      return { read, merged: { id: a.group().id(), traits: a.group().traits() } };
    });
    expect(reloaded.read).toEqual({ id: 'g1', traits: { plan: 'pro' } });
    expect(reloaded.merged).toEqual({ id: 'g1', traits: { plan: 'pro', seats: 3 } });
    const groups = await collector.waitFor(2, { type: 'group' }, 10_000);
    expect(groups.map((g) => g.groupId)).toEqual(['g1', 'g1']);
    await page.evaluate(() => (window as any).analytics.reset());
    expect(await page.evaluate(() => ({ id: (window as any).analytics.group().id(), traits: (window as any).analytics.group().traits() }))).toEqual({ id: null, traits: {} });
    await page.reload();
    await ready(page);
    expect(await page.evaluate(() => ({ id: (window as any).analytics.group().id(), traits: (window as any).analytics.group().traits() }))).toEqual({ id: null, traits: {} });
  });

  test('a second group call for the same group sends the merged traits, as analytics.js does (and as identify does for the user)', async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    await page.evaluate(async () => {
      const a = (window as any).analytics;
      await a.group('g1', { plan: 'pro' });
      await a.group('g1', { seats: 3 });
      await a.identify('u1', { plan: 'pro' });
      await a.identify('u1', { seats: 3 });
    });
    const groups = await collector.waitFor(2, { type: 'group' }, 10_000);
    const identifies = await collector.waitFor(2, { type: 'identify' }, 10_000);
    expect(identifies.map((m) => m.traits), 'identify (for comparison)').toEqual([{ plan: 'pro' }, { plan: 'pro', seats: 3 }]);
    expect(groups.map((m) => m.traits)).toEqual([{ plan: 'pro' }, { plan: 'pro', seats: 3 }]);
  });

  test("pageview('/some/path') sends a page whose properties.path is '/some/path'", async ({ page, site, collector }) => {
    await openLab(page, site, QUICK);
    const id = await page.evaluate(async () => (await (window as any).analytics.pageview('/some/path')).event.messageId);
    await collector.waitFor(1, { messageId: id }, 10_000);
    const [msg] = await collector.messages({ messageId: id });
    expect(msg.type).toBe('page');
    expect(msg.properties.path).toBe('/some/path');
    expect(msg.properties.url).toContain('/dropin-lab.html');
    expect(await collector.violations()).toEqual([]);
  });
});
