// The core promises of CONTRACT sections 1-4 through the real snippet and bundle: replay of stub calls, the wire
// shape of every call type, analytics.js argument shuffling, promises/callbacks/events, double loading, loading
// without the stub, and where requests go.
import { readFileSync } from 'node:fs';
import { test, expect, ready, open, quiet, sleep } from './fixtures';
import type { Page, Request } from '@playwright/test';

// A failing library should fail fast, not hang: every test here normally takes a few seconds.
test.describe.configure({ timeout: 20_000 });

const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Records every request to the collector's ingestion endpoints with its full headers and JSON body. */
function captureBatches(page: Page) {
  const seen: Promise<{ url: string; method: string; headers: Record<string, string>; body: any }>[] = [];
  page.on('request', (r: Request) => {
    if (!/\/v1\/[a-z]+$/.test(new URL(r.url()).pathname)) return;
    seen.push(
      r.allHeaders().then((headers) => {
        let body: any = null;
        try {
          body = JSON.parse(r.postData() || 'null');
        } catch {
          body = r.postData();
        }
        return { url: r.url(), method: r.method(), headers, body };
      }),
    );
  });
  return () => Promise.all(seen);
}

test('calls made to the stub before load are replayed in order with their call-time timestamp and page', async ({ page, site, collector }) => {
  const referrer = 'http://referrer.example/from-here';
  await page.goto(site.page('/basic.html', { noload: '1', q: 'first' }), { referer: referrer });
  const first = await page.evaluate(() => ({ href: location.href, search: location.search, title: document.title, referrer: document.referrer }));
  expect(first.referrer).toBe(referrer);

  // Spaced out (sleep), so that each call's time and page are told apart, and the load comes well after the calls.
  const stubFrom = Date.now();
  const times: number[] = await page.evaluate(() => {
    const a = (window as any).analytics;
    const t: number[] = [];
    t.push(Date.now());
    a.track('Stub One', { n: 1 });
    t.push(Date.now());
    document.title = 'Second title';
    history.pushState({}, '', '/basic.html?step=2');
    return t;
  });
  await sleep(400);
  times.push(
    ...(await page.evaluate(() => {
      const a = (window as any).analytics;
      const t: number[] = [];
      t.push(Date.now());
      a.page('Stub Page');
      t.push(Date.now());
      document.title = 'Third title';
      history.pushState({}, '', '/elsewhere/deep?step=3');
      return t;
    })),
  );
  await sleep(400);
  times.push(
    ...(await page.evaluate(() => {
      const a = (window as any).analytics;
      const t: number[] = [];
      t.push(Date.now());
      a.identify('stub-user', { plan: 'x' });
      t.push(Date.now());
      document.title = 'Title at load';
      history.pushState({}, '', '/at-load?step=load');
      return t;
    })),
  );
  await sleep(1000);
  // nothing in flight, and nothing arrived for 1.5 s since the first call (the spacing above, usually)
  await quiet(collector, 1500, 15_000, stubFrom);
  expect(await collector.messages()).toHaveLength(0); // a stub sends nothing

  const loadAt = await page.evaluate((api) => {
    const t = Date.now();
    (window as any).analytics.load('dev-write-key', { apiHost: api, cdnUrl: '/dist/analytics.min.js', flushInterval: 100 });
    return t;
  }, collector.url);
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('After Load'));

  const all = await collector.waitFor(4);
  expect(all.map((m) => m.event || m.name || m.userId)).toEqual(['Stub One', 'Stub Page', 'stub-user', 'After Load']);
  const [one, pg, ident, after] = all;
  expect(one.type).toBe('track');
  expect(pg.type).toBe('page');
  expect(ident.type).toBe('identify');
  // message ids follow call order too
  expect([...all.map((m) => m.messageId)].sort()).toEqual(all.map((m) => m.messageId));

  const within = (m: any, from: number, to: number) => {
    const ts = Date.parse(m.timestamp);
    expect(ts, `${m.type} timestamp ${m.timestamp}`).toBeGreaterThanOrEqual(from);
    expect(ts, `${m.type} timestamp ${m.timestamp}`).toBeLessThanOrEqual(to);
    expect(ts).toBeLessThan(loadAt - 900); // the call time, not the (much later) load time
  };
  within(one, times[0], times[1]);
  within(pg, times[2], times[3]);
  within(ident, times[4], times[5]);

  const origin = new URL(site.url).origin;
  expect(one.context.page).toEqual({ path: '/basic.html', referrer, search: first.search, title: 'Basic page', url: first.href });
  expect(pg.context.page).toMatchObject({ path: '/basic.html', referrer, search: '?step=2', title: 'Second title', url: origin + '/basic.html?step=2' });
  expect(pg.properties).toMatchObject({ path: '/basic.html', referrer, search: '?step=2', title: 'Second title', url: origin + '/basic.html?step=2' });
  expect(pg.name).toBe('Stub Page');
  expect(ident.context.page).toEqual({ path: '/elsewhere/deep', referrer, search: '?step=3', title: 'Third title', url: origin + '/elsewhere/deep?step=3' });
  expect(ident.userId).toBe('stub-user');
  expect(ident.traits).toMatchObject({ plan: 'x' });
  // the replayed identify applies to later calls; a live call sees the page as it is now
  expect(after.userId).toBe('stub-user');
  expect(after.context.page).toMatchObject({ path: '/at-load', search: '?step=load', title: 'Title at load' });
  expect(Date.parse(after.timestamp)).toBeGreaterThanOrEqual(loadAt);
});

test('every call type has the promised wire shape, and requests are authenticated JSON batches', async ({ page, site, collector }) => {
  const batches = captureBatches(page);
  const integrations = { Amplitude: false, Custom: true };
  const url = site.page('/basic.html', {
    opts: JSON.stringify({ flushInterval: 100, integrations }),
    utm_campaign: 'spring',
    utm_source: 'news',
    utm_medium: 'email',
    utm_foo: 'bar',
  });
  const testStart = Date.now();
  await open(page, url);
  const env = await page.evaluate(() => ({
    href: location.href,
    search: location.search,
    userAgent: navigator.userAgent,
    locale: navigator.language,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    screen: { width: screen.width, height: screen.height, density: devicePixelRatio },
  }));

  const calls: Record<string, { before: number; after: number; id: string }> = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const out: Record<string, { before: number; after: number; id: string }> = {};
    const stamp = async (k: string, f: () => Promise<any>) => {
      const before = Date.now();
      const r = await f();
      out[k] = { before, after: Date.now(), id: r.event.messageId };
    };
    await stamp('alias0', () => a.alias('early-alias'));
    await stamp('identify', () => a.identify('user-1', { email: 'u1@example.com', name: 'U One' }));
    await stamp('track', () => a.track('Clicked', { a: 1, nested: { b: [1, 2] } }));
    await stamp('page', () => a.page('Docs', 'Intro', { extra: 'yes' }));
    await stamp('screen', () => a.screen('Home', { s: 1 }));
    await stamp('group', () => a.group('g-1', { plan: 'pro' }, { objectTypeId: '2' }));
    await stamp('alias', () => a.alias('user-2'));
    await a.flush();
    return out;
  });
  const msgs = await collector.waitFor(7);
  expect(msgs).toHaveLength(7);
  const byId = new Map(msgs.map((m) => [m.messageId, m]));
  const get = (k: string) => {
    const m = byId.get(calls[k].id);
    expect(m, `message of ${k}`).toBeTruthy();
    return m;
  };
  const anonymousId = get('track').anonymousId;
  expect(anonymousId).toMatch(UUID_V4);
  expect(new Set(msgs.map((m) => m.messageId)).size).toBe(7);

  for (const [k, c] of Object.entries(calls)) {
    const m = get(k);
    expect(m.messageId).toMatch(ULID);
    expect(m.timestamp).toMatch(ISO);
    expect(Date.parse(m.timestamp)).toBeGreaterThanOrEqual(c.before);
    expect(Date.parse(m.timestamp)).toBeLessThanOrEqual(c.after);
    expect(m.anonymousId).toBe(anonymousId);
    expect(m.integrations).toEqual(integrations);
    expect(m.context.library).toEqual({ name: 'svc-analytics', version: VERSION });
    expect(m.context.page).toEqual({ path: '/basic.html', referrer: '', search: env.search, title: 'Basic page', url: env.href });
    expect(m.context.userAgent).toBe(env.userAgent);
    expect(m.context.locale).toBe(env.locale);
    expect(m.context.timezone).toBe(env.timezone);
    expect(m.context.channel).toBe('browser');
    expect(m.context.screen).toEqual(env.screen);
    expect(m.context.campaign).toEqual({ name: 'spring', source: 'news', medium: 'email', foo: 'bar' });
  }

  const alias0 = get('alias0');
  expect(alias0).toMatchObject({ type: 'alias', userId: 'early-alias', previousId: anonymousId });
  const ident = get('identify');
  expect(ident).toMatchObject({ type: 'identify', userId: 'user-1', traits: { email: 'u1@example.com', name: 'U One' } });
  const track = get('track');
  expect(track).toMatchObject({ type: 'track', event: 'Clicked', userId: 'user-1' });
  expect(track.properties).toEqual({ a: 1, nested: { b: [1, 2] } });
  const pg = get('page');
  expect(pg).toMatchObject({ type: 'page', name: 'Intro', category: 'Docs', userId: 'user-1' });
  expect(pg.properties).toMatchObject({ extra: 'yes', path: '/basic.html', referrer: '', search: env.search, title: 'Basic page', url: env.href });
  const scr = get('screen');
  expect(scr).toMatchObject({ type: 'screen', name: 'Home', userId: 'user-1' });
  expect(scr.properties).toMatchObject({ s: 1 });
  const grp = get('group');
  expect(grp).toMatchObject({ type: 'group', groupId: 'g-1', objectTypeId: '2', userId: 'user-1', traits: { plan: 'pro' } });
  const alias = get('alias');
  expect(alias).toMatchObject({ type: 'alias', userId: 'user-2', previousId: 'user-1' });

  // The requests: POST /v1/batch, JSON, Basic auth with the write key, a sentAt.
  const reqs = await collector.requests();
  expect(reqs.length).toBeGreaterThan(0);
  for (const r of reqs) {
    expect(r).toMatchObject({ method: 'POST', path: '/v1/batch', status: 200, auth: 'basic', overLimit: false });
    expect(r.contentType).toMatch(/^application\/json\b/);
  }
  const seen = await batches();
  expect(seen.length).toBe(reqs.length);
  for (const b of seen) {
    expect(b.url).toBe(collector.url + '/v1/batch');
    expect(b.method).toBe('POST');
    expect(b.headers['content-type']).toMatch(/^application\/json\b/);
    expect(b.headers['authorization']).toBe('Basic ' + Buffer.from('dev-write-key:').toString('base64'));
    expect(Array.isArray(b.body.batch)).toBe(true);
    expect(b.body.sentAt).toMatch(ISO);
    expect(Date.parse(b.body.sentAt)).toBeGreaterThanOrEqual(testStart);
    expect(Date.parse(b.body.sentAt)).toBeLessThanOrEqual(Date.now());
  }
});

test('per-call options: timestamp, integrations, deep-merged context and anonymousId', async ({ page, site, collector }) => {
  const url = site.page('/basic.html', {
    opts: JSON.stringify({ flushInterval: 100, integrations: { Amplitude: false, Keep: true } }),
    utm_campaign: 'spring',
    utm_source: 'news',
  });
  await open(page, url);
  const ids = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const r1 = await a.track('With Options', { p: 1 }, {
      timestamp: '2021-02-03T04:05:06.007Z',
      integrations: { Amplitude: true, Other: false },
      context: { page: { title: 'Overridden' }, ip: '10.0.0.1', campaign: { name: 'override' }, library: { extra: 'x' } },
      anonymousId: 'anon-override',
    });
    const r2 = await a.page('Dated', {}, { timestamp: new Date(Date.UTC(2022, 0, 1, 12, 0, 0)) });
    const r3 = await a.track('Plain');
    return [r1.event.messageId, r2.event.messageId, r3.event.messageId];
  });
  const msgs = await collector.waitFor(3);
  const [m1, m2, m3] = ids.map((id) => msgs.find((m) => m.messageId === id));
  expect(Date.parse(m1.timestamp)).toBe(Date.parse('2021-02-03T04:05:06.007Z'));
  expect(m1.timestamp).toMatch(ISO);
  expect(m1.integrations).toEqual({ Amplitude: true, Keep: true, Other: false });
  expect(m1.anonymousId).toBe('anon-override');
  expect(m1.context.ip).toBe('10.0.0.1');
  expect(m1.context.page.title).toBe('Overridden');
  expect(m1.context.page.path).toBe('/basic.html'); // deep merge keeps what the caller did not set
  expect(m1.context.campaign).toEqual({ name: 'override', source: 'news' });
  expect(m1.context.library).toEqual({ name: 'svc-analytics', version: VERSION, extra: 'x' });
  expect(m1.context.channel).toBe('browser');
  expect(m1.properties).toEqual({ p: 1 });

  expect(Date.parse(m2.timestamp)).toBe(Date.UTC(2022, 0, 1, 12, 0, 0));
  expect(m2.timestamp).toMatch(ISO);
  expect(m2.integrations).toEqual({ Amplitude: false, Keep: true });

  // the override was for that call only
  const anon = await page.evaluate(() => (window as any).analytics.user().anonymousId());
  expect(m3.anonymousId).toBe(anon);
  expect(m3.anonymousId).not.toBe('anon-override');
  expect(m3.context.page.title).toBe('Basic page');
  expect(m3.integrations).toEqual({ Amplitude: false, Keep: true });
});

test('analytics.js argument shuffling works through the real bundle', async ({ page, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const id = async (p: Promise<any>) => (await p).event.messageId;
    let cbArg: any = 'not called';
    const cbDone = new Promise<void>((res) => {
      a.track('With Callback', { k: 'v' }, (x: any) => {
        cbArg = x && x.event ? x.event.messageId : x;
        res();
      });
    });
    const ids = {
      pageName: await id(a.page('Docs')),
      pageProps: await id(a.page({ title: 'x' })),
      pageFull: await id(a.page('Cat', 'Name', { a: 1 })),
      identifyTraits: await id(a.identify({ email: 'only@traits.example' })),
    };
    await Promise.race([cbDone, new Promise((res) => setTimeout(res, 5000))]);
    return { ids, cbArg };
  });
  expect(r.cbArg).toMatch(ULID); // the callback was called with the queued message
  const msgs = await collector.waitFor(5);
  const by = (id: string) => msgs.find((m) => m.messageId === id);

  const pageName = by(r.ids.pageName);
  expect(pageName.name).toBe('Docs');
  expect(pageName.category).toBeUndefined();

  const pageProps = by(r.ids.pageProps);
  expect(pageProps.name).toBeUndefined();
  expect(pageProps.properties.title).toBe('x');
  expect(pageProps.properties.path).toBe('/basic.html');

  const pageFull = by(r.ids.pageFull);
  expect(pageFull).toMatchObject({ category: 'Cat', name: 'Name' });
  expect(pageFull.properties).toMatchObject({ a: 1, path: '/basic.html', title: 'Basic page' });

  const cb = by(r.cbArg);
  expect(cb).toMatchObject({ type: 'track', event: 'With Callback', properties: { k: 'v' } });

  const ident = by(r.ids.identifyTraits);
  expect(ident.type).toBe('identify');
  expect(ident.traits).toEqual({ email: 'only@traits.example' });
  expect(ident.userId).toBeUndefined();
});

test('a call resolves with { event: message }, calls its callback, and on/off handlers fire and stop', async ({ page, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100 }) }));
  const r = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const heard: any[][] = [];
    const handler = (...args: any[]) => heard.push(args.slice(0, 2));
    a.on('track', handler);
    let cbResult: any;
    const result = await a.track('Promised', { n: 1 }, {}, (x: any) => (cbResult = x));
    const heardAfterFirst = heard.length;
    a.off('track', handler);
    await a.track('After Off', { n: 2 });
    await a.flush();
    return {
      event: result.event,
      keys: Object.keys(result),
      cbSame: cbResult && cbResult.event && cbResult.event.messageId === result.event.messageId,
      heardAfterFirst,
      heard,
    };
  });
  expect(r.keys).toContain('event');
  expect(r.event).toMatchObject({ type: 'track', event: 'Promised', properties: { n: 1 } });
  expect(r.event.messageId).toMatch(ULID);
  expect(r.cbSame).toBe(true);
  expect(r.heardAfterFirst).toBe(1);
  expect(r.heard).toEqual([['Promised', { n: 1 }]]);
  const [m] = await collector.waitFor(1, { event: 'Promised' });
  // the resolved message is the one that went on the wire
  expect(m.messageId).toBe(r.event.messageId);
  expect(m.timestamp).toBe(r.event.timestamp);
  expect(m.properties).toEqual(r.event.properties);
  expect(await collector.waitFor(1, { event: 'After Off' }), 'the event after off() was still sent').toHaveLength(1);
});

test('loading twice is harmless: snippet pasted twice, load called twice, bundle added twice', async ({ page, site, collector }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(site.page('/core-twice.html'));
  await ready(page);
  // the bundle's script added once more, and load() called once more
  await page.evaluate(
    (api) =>
      new Promise<void>((res, rej) => {
        const s = document.createElement('script');
        s.src = '/dist/analytics.min.js';
        s.onload = () => res();
        s.onerror = () => rej(new Error('bundle did not load'));
        document.head.appendChild(s);
        (window as any).analytics.load('dev-write-key', { apiHost: api, flushInterval: 100 });
      }),
    collector.url,
  );
  await ready(page);
  await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.track('Late One');
    await a.track('Late Two');
    await a.flush();
  });
  await collector.waitFor(5);
  await quiet(collector); // time for any duplicate flush to show up
  const msgs = await collector.messages();
  const names = msgs.map((m) => (m.type === 'track' ? m.event : m.type)).sort();
  expect(names).toEqual(['Early One', 'Early Two', 'Late One', 'Late Two', 'page']);
  expect(new Set(msgs.map((m) => m.messageId)).size).toBe(msgs.length);
  // one library instance: every message carries the same anonymous id
  expect(new Set(msgs.map((m) => m.anonymousId)).size).toBe(1);
  expect(errors).toEqual([]);
});

test('the bundle works without the stub: script tag, then analytics.load', async ({ page, site, collector }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(site.page('/core-nostub.html'));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.track('After Ready', { x: 1 }));
  const msgs = await collector.waitFor(3);
  expect(msgs.map((m) => m.event).sort()).toEqual(['After Ready', 'Before Load', 'Right After Load']);
  for (const m of msgs) {
    expect(m.context.library.name).toBe('svc-analytics');
    expect(m.anonymousId).toMatch(UUID_V4);
  }
  const reqs = await collector.requests();
  for (const r of reqs) expect(r).toMatchObject({ path: '/v1/batch', status: 200, auth: 'basic' });
  expect(errors).toEqual([]);
});

test('an apiHost without a scheme means https', async ({ page, site, collector }) => {
  const host = new URL(collector.url).host; // 127.0.0.1:port, no scheme
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const sent = page.waitForRequest((r) => r.url().includes('/v1/'), { timeout: 10000 });
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ apiHost: host, flushInterval: 100 }) }));
  await page.evaluate(() => {
    (window as any).analytics.track('Over TLS');
  });
  const req = await sent;
  expect(req.url()).toBe(`https://${host}/v1/batch`);
  expect(requests.filter((u) => u.startsWith(`http://${host}`))).toEqual([]);
});

test('a trailing /v1 in apiHost is not doubled', async ({ page, site, collector }) => {
  await open(page, site.page('/basic.html', { opts: JSON.stringify({ apiHost: collector.url + '/v1', flushInterval: 100 }) }));
  await page.evaluate(() => (window as any).analytics.track('Single V1'));
  const [m] = await collector.waitFor(1, { event: 'Single V1' }, 10000);
  expect(m).toBeTruthy();
  const reqs = await collector.requests();
  expect(reqs.map((r) => r.path)).toContain('/v1/batch');
  expect(reqs.filter((r) => r.path.includes('/v1/v1'))).toEqual([]);
});

test('the snippet inserts the bundle as an async script (a script inserted by script is async in the browser)', async ({ page, site }) => {
  await page.goto(site.page('/basic.html'));
  await page.waitForFunction(() => (window as any).analytics?.VERSION);
  const scripts = await page.evaluate(() => [...document.querySelectorAll('script[src]')].map((s) => ({ src: (s as HTMLScriptElement).src, async: (s as HTMLScriptElement).async })));
  const bundle = scripts.filter((s) => /analytics\.min\.js/.test(s.src));
  expect(bundle).toHaveLength(1);
  expect(bundle[0].async).toBe(true);
});
