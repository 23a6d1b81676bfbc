import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAnalytics } from '../../src/api/analytics';
import { createTransforms, type TransformsFactory } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';

// The middleware stage with the plugin runner at hand (the bundle loads it from its lazy chunk).
const eagerTransforms: TransformsFactory = (settings, report) => createTransforms(settings, report, () => Promise.resolve(pluginRunner));
import { addHelpers } from '../../src/helpers/add-helpers';
import { LIBRARY } from '../../src/message/context';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';
import type { CallResult, LoadOptions } from '../../src/types';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const START_URL = location.href;
// No timer-driven sends unless a test asks for them.
const QUIET: LoadOptions = { flushAt: 1000, flushInterval: 3600000 };

let fetchMock: ReturnType<typeof vi.fn>;

function clearCookies() {
  for (const part of document.cookie.split(/;\s*/)) {
    const name = part.split('=')[0];
    if (name) document.cookie = `${name}=; path=/; max-age=-1`;
  }
}

function start(options: LoadOptions = {}) {
  // with the helper namespaces, as the bundle has them
  const { api, replay, helperDeps } = createAnalytics({ transforms: eagerTransforms });
  addHelpers(api, helperDeps);
  api.load('wk_test', { ...QUIET, ...options });
  return { api, replay };
}

const sentMessages = (): Message[] =>
  fetchMock.mock.calls.flatMap((c) => JSON.parse(String((c[1] as RequestInit).body)).batch as Message[]);

beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  clearCookies();
  localStorage.clear();
  fetchMock = vi.fn(async () => ({ status: 200, headers: { get: () => null } }));
  vi.stubGlobal('fetch', fetchMock);
  document.title = 'Home';
});
afterEach(() => {
  // Stays stubbed (with a quiet mock) so a late timer of an earlier instance never reaches the network.
  vi.stubGlobal('fetch', vi.fn(async () => ({ status: 200, headers: { get: () => null } })));
  history.replaceState({}, '', START_URL);
  delete (document as any).referrer;
});
afterAll(() => {
  vi.unstubAllGlobals();
});

describe('createAnalytics', () => {
  describe('calls before load', () => {
    it('wait for load and then resolve with the queued message', async () => {
      const { api } = createAnalytics({ transforms: eagerTransforms });
      let settled = false;
      const p = api.track('Early', { a: 1 }).then((r) => ((settled = true), r));
      await new Promise((r) => setTimeout(r, 20));
      expect(settled).toBe(false);
      api.load('wk_test', QUIET);
      const r = await p;
      expect(r.event.type).toBe('track');
      expect(r.event.event).toBe('Early');
      expect(r.event.properties).toEqual({ a: 1 });
    });

    it('keep their order, so a track after identify carries the user id', async () => {
      const { api } = createAnalytics({ transforms: eagerTransforms });
      const id = api.identify('u-early', { plan: 'pro' });
      const tr = api.track('After');
      api.load('wk_test', QUIET);
      const [i, t] = await Promise.all([id, tr]);
      expect(t.event.userId).toBe('u-early');
      expect(i.event.messageId < t.event.messageId).toBe(true);
    });

    it("an argument that throws when read (a getter, a Proxy's trap) is reported, not thrown, and the calls after it still run", async () => {
      const { api } = createAnalytics({ transforms: eagerTransforms });
      const codes: string[] = [];
      api.on('error', (e: AnalyticsError) => codes.push(e.code));
      const throwing = { toString: () => { throw new Error('read'); } };
      const a = api.track('Before Bad');
      api.consent({ get analytics(): boolean { throw new Error('getter'); } });
      api.setAnonymousId(throwing as unknown as string);
      const b = api.track('After Bad');
      expect(() => api.load('wk_test', QUIET)).not.toThrow();
      const [ra, rb] = await Promise.all([a, b]);
      expect([ra.event.event, rb.event.event]).toEqual(['Before Bad', 'After Bad']);
      // once loaded too
      expect(() => api.consent(new Proxy({}, { ownKeys: () => { throw new Error('trap'); }, get: () => { throw new Error('trap'); } }))).not.toThrow();
      expect(codes).toEqual(['invalid_payload', 'invalid_arguments', 'invalid_payload']);
    });

    it('keep the time they were made', async () => {
      const { api } = createAnalytics({ transforms: eagerTransforms });
      const before = Date.now();
      const p = api.track('Early');
      await new Promise((r) => setTimeout(r, 30));
      api.load('wk_test', QUIET);
      const r = await p;
      expect(Date.parse(r.event.timestamp)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(r.event.timestamp)).toBeLessThan(before + 25);
    });
  });

  describe('message', () => {
    it('has type, ULID messageId, ISO timestamp, anonymousId, integrations and the automatic context', async () => {
      const { api } = start({ integrations: { Amplitude: false } });
      const before = Date.now();
      const { event } = await api.track('Clicked', { a: 1 }, { integrations: { Mixpanel: true } });
      expect(event.type).toBe('track');
      expect(event.messageId).toMatch(ULID);
      expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
      expect(Date.parse(event.timestamp)).toBeGreaterThanOrEqual(before);
      expect(event.anonymousId).toBe(api.user().anonymousId());
      expect(event.anonymousId).not.toBe('');
      expect(event).not.toHaveProperty('userId');
      expect(event.integrations).toEqual({ Amplitude: false, Mixpanel: true });
      const ctx = event.context;
      expect(ctx.library).toEqual({ name: 'svc-analytics', version: LIBRARY.version });
      expect(ctx.channel).toBe('browser');
      expect(ctx.userAgent).toBe(navigator.userAgent);
      expect(ctx.locale).toBe(navigator.language);
      expect(ctx.page).toMatchObject({ url: location.href, path: location.pathname, title: 'Home' });
      expect(ctx.screen).toEqual({ width: expect.any(Number), height: expect.any(Number), density: expect.any(Number) });
    });

    it('gives each message a different id', async () => {
      const { api } = start();
      const results = await Promise.all([api.track('a'), api.track('b'), api.track('c')]);
      expect(new Set(results.map((r) => r.event.messageId)).size).toBe(3);
    });

    it('takes context.campaign from the utm_ parameters of the page', async () => {
      history.replaceState({}, '', '/landing?utm_campaign=spring&utm_source=news');
      const { api } = start();
      const { event } = await api.track('x');
      expect(event.context.campaign).toEqual({ name: 'spring', source: 'news' });
    });
  });

  describe('identify', () => {
    it('persists the user id that later calls carry', async () => {
      const { api } = start();
      const id = await api.identify('u1', { plan: 'pro' });
      expect(id.event.type).toBe('identify');
      expect(id.event.userId).toBe('u1');
      expect(id.event.traits).toEqual({ plan: 'pro' });
      expect((await api.track('x')).event.userId).toBe('u1');
      expect(api.user().id()).toBe('u1');
      expect(api.user().traits()).toEqual({ plan: 'pro' });

      const next = start().api;
      const t = await next.track('y');
      expect(t.event.userId).toBe('u1');
      expect(t.event.anonymousId).toBe(id.event.anonymousId);
    });

    it('persists the sanitised traits, so a cycle or a function in them never breaks storage', async () => {
      const { api } = start();
      const traits: any = { name: 'Ada', fn() {}, when: new Date(0) };
      traits.self = traits;
      const sent = (await api.identify('u1', traits)).event.traits!;
      expect(sent.fn).toBeUndefined();
      expect(sent.when).toBe('1970-01-01T00:00:00.000Z');
      expect(JSON.stringify(sent)).toContain('"[Circular]"');
      // what persists, in memory, in localStorage and for the next page, is exactly what was sent
      expect(api.user().traits()).toEqual(sent);
      expect(JSON.parse(localStorage.getItem('svc_user_traits')!)).toEqual(sent);
      expect(start().api.user().traits()).toEqual(sent);
    });

    it('merges traits for the same user', async () => {
      const { api } = start();
      await api.identify('u1', { a: 1 });
      const { event } = await api.identify({ b: 2 });
      expect(event.userId).toBe('u1');
      expect(event.traits).toEqual({ a: 1, b: 2 });
    });
  });

  describe('page', () => {
    it('sends properties that include url, path, search, title and referrer', async () => {
      history.replaceState({}, '', '/docs/intro?q=1');
      document.title = 'Intro';
      Object.defineProperty(document, 'referrer', { value: 'https://ref.example/x', configurable: true });
      const { api } = start();
      const { event } = await api.page('Docs', 'Intro page', { extra: 1 });
      expect(event.type).toBe('page');
      expect(event.name).toBe('Intro page');
      expect(event.category).toBe('Docs');
      expect(event.properties).toMatchObject({
        url: location.href,
        path: '/docs/intro',
        search: '?q=1',
        title: 'Intro',
        referrer: 'https://ref.example/x',
        extra: 1,
      });
      expect(event.context.page).toEqual({
        url: location.href,
        path: '/docs/intro',
        search: '?q=1',
        title: 'Intro',
        referrer: 'https://ref.example/x',
      });
    });

    it("lets the caller's properties win, in properties and context.page", async () => {
      const { api } = start();
      const { event } = await api.page({ title: 'Custom', url: 'https://x.example/a' });
      expect(event.properties!.title).toBe('Custom');
      expect(event.context.page.title).toBe('Custom');
      expect(event.context.page.url).toBe('https://x.example/a');
    });
  });

  describe('options', () => {
    it("sends to the EU host with region 'eu', and to apiHost (region ignored) when both are given", async () => {
      const eu = start({ region: 'eu' }).api;
      await eu.track('x');
      await eu.flush();
      expect(fetchMock.mock.calls.map((c) => c[0])).toEqual(['https://cdp-eu.svc.example/v1/batch']);
      fetchMock.mockClear();
      const own = start({ region: 'eu', apiHost: 'collector.test/v1/' }).api;
      await own.track('y');
      await own.flush();
      expect(fetchMock.mock.calls.map((c) => c[0])).toEqual(['https://collector.test/v1/batch']);
    });

    it('deep-merges options.context over the automatic context, the caller winning', async () => {
      const { api } = start();
      const { event } = await api.track('x', {}, { context: { page: { title: 'T' }, ip: '1.2.3.4', library: { name: 'wrapper' } } });
      expect(event.context.page.title).toBe('T');
      expect(event.context.page.url).toBe(location.href);
      expect(event.context.ip).toBe('1.2.3.4');
      expect(event.context.library).toEqual({ name: 'wrapper', version: LIBRARY.version });
      expect(event.context.channel).toBe('browser');
    });

    it('uses options.timestamp, as a Date or an ISO string', async () => {
      const { api } = start();
      const a = await api.track('x', {}, { timestamp: new Date('2024-02-03T04:05:06.007Z') });
      expect(a.event.timestamp).toBe('2024-02-03T04:05:06.007Z');
      const b = await api.track('x', {}, { timestamp: '2024-02-03T04:05:06.007Z' });
      expect(b.event.timestamp).toBe('2024-02-03T04:05:06.007Z');
    });

    it('refuses an invalid timestamp', async () => {
      const { api } = start({ flushAt: 1 });
      const err = (await api.track('x', {}, { timestamp: 'not a date' }).catch((e) => e)) as AnalyticsError;
      expect(err).toBeInstanceOf(Error);
      expect(err.code).toBe('invalid_arguments');
      await api.flush();
      expect(sentMessages()).toEqual([]);
    });

    it('uses options.anonymousId for this call only', async () => {
      const { api } = start();
      const a = await api.track('x', {}, { anonymousId: 'other' });
      expect(a.event.anonymousId).toBe('other');
      expect((await api.track('y')).event.anonymousId).toBe(api.user().anonymousId());
    });
  });

  it('setAnonymousId refuses an id too long to leave a message room (it would be on every message), and one that is no string or number; later calls go on with the id before', async () => {
    const { api } = start();
    const codes: string[] = [];
    api.on('error', (e: AnalyticsError) => codes.push(e.code));
    const id = api.user().anonymousId();
    api.setAnonymousId('z'.repeat(40000));
    api.setAnonymousId({ id: 'x' } as unknown as string);
    expect(codes).toEqual(['invalid_arguments', 'invalid_arguments']);
    expect((await api.track('Still Sent')).event.anonymousId).toBe(id);
    api.setAnonymousId('a'.repeat(8000));
    api.setAnonymousId(42 as unknown as string);
    expect(api.user().anonymousId()).toBe('42');
    expect(codes).toHaveLength(2);
  });

  describe('group and alias', () => {
    it('puts options.objectTypeId on a group message', async () => {
      const { api } = start();
      const { event } = await api.group('g1', { name: 'Acme' }, { objectTypeId: '2' });
      expect(event).toMatchObject({ type: 'group', groupId: 'g1', traits: { name: 'Acme' }, objectTypeId: '2' });
    });

    it('defaults alias previousId to the user id, or the anonymous id', async () => {
      const { api } = start();
      const anon = await api.alias('new-1');
      expect(anon.event.userId).toBe('new-1');
      expect(anon.event.previousId).toBe(api.user().anonymousId());
      await api.identify('u1');
      const known = await api.alias('new-2');
      expect(known.event.previousId).toBe('u1');
    });
  });

  describe('errors', () => {
    it("reports refusals through on('error'), the callback and the promise", async () => {
      const { api } = start();
      const onError = vi.fn();
      api.on('error', onError);
      const callback = vi.fn();
      const err = (await api.track('', {}, {}, callback).catch((e) => e)) as AnalyticsError;
      expect(err.code).toBe('invalid_arguments');
      expect(onError).toHaveBeenCalledWith(err);
      expect(callback).toHaveBeenCalledWith(err);
    });

    it('refuses a message over 32 KB with message_too_large', async () => {
      const { api } = start();
      const onError = vi.fn();
      api.on('error', onError);
      const err = (await api.track('x', { pad: 'x'.repeat(40000) }).catch((e) => e)) as AnalyticsError;
      expect(err.code).toBe('message_too_large');
      expect(onError.mock.calls[0][0].code).toBe('message_too_large');
    });

    it('stops reporting to a handler after off', async () => {
      const { api } = start();
      const onError = vi.fn();
      api.on('error', onError);
      api.off('error', onError);
      await api.track('').catch(() => {});
      expect(onError).not.toHaveBeenCalled();
    });

    it('never throws from a call', () => {
      const { api } = start();
      expect(() => {
        (api.track as any)(undefined).catch(() => {});
        (api.page as any)(5, 6, 7).catch(() => {});
        (api.group as any)({}).catch(() => {});
      }).not.toThrow();
    });
  });

  describe('callback', () => {
    it('receives {event} with the queued message', async () => {
      const { api } = start();
      const callback = vi.fn();
      const r = await api.track('Signed Up', { plan: 'pro' }, callback);
      expect(callback).toHaveBeenCalledTimes(1);
      const arg = callback.mock.calls[0][0] as CallResult;
      expect(arg).toEqual({ event: r.event });
      expect(arg.event.event).toBe('Signed Up');
      expect(arg.event.properties).toEqual({ plan: 'pro' });
    });

    it("that throws does not fail the call, never reaches the page, and is reported as an 'error' (callback_error)", async () => {
      const { api } = start();
      const onTrack = vi.fn();
      const errors: any[] = [];
      api.on('track', onTrack);
      api.on('error', (e: any) => errors.push(e.code));
      const p = api.track('x', {}, () => {
        throw new Error('page bug');
      });
      await expect(p).resolves.toMatchObject({ event: { event: 'x' } });
      expect(onTrack).toHaveBeenCalled();
      expect(errors).toEqual(['callback_error']);
      await api.flush();
      expect(sentMessages().map((m) => m.event)).toEqual(['x']);
    });

    it('is called with the error when the arguments are refused', async () => {
      const { api } = start();
      const callback = vi.fn();
      const err = await (api.track as any)({ not: 'a name' }, callback).catch((e: unknown) => e);
      expect((err as AnalyticsError).code).toBe('invalid_arguments');
      expect(callback).toHaveBeenCalledWith(err);
    });

    it('is called with the error when the message is refused after reading the arguments', async () => {
      const { api } = start();
      const callback = vi.fn();
      const err = await api.track('x', {}, { timestamp: 'nope' }, callback).catch((e: unknown) => e);
      expect((err as AnalyticsError).code).toBe('invalid_arguments');
      expect(callback).toHaveBeenCalledWith(err);
    });
  });

  describe('the event the page gets', () => {
    it('is a copy: changing it (or what an on() handler gets) changes neither what is sent nor later messages', async () => {
      const { api } = start();
      api.on('track', (_e: unknown, _p: unknown, result: CallResult) => {
        result.event.context.screen.width = -1;
      });
      const first = await api.track('First', { a: 1 });
      first.event.properties!.a = 2;
      first.event.context.page.title = 'x'.repeat(40000);
      (first.event.context as any).library.name = 'changed';
      const second = await api.track('Second');
      expect(second.event.context.page.title).toBe('Home');
      expect(second.event.context.library).toEqual(LIBRARY);
      expect(LIBRARY.name).toBe('svc-analytics');
      await api.flush();
      const [a, b] = sentMessages();
      expect(a.properties).toEqual({ a: 1 });
      expect(a.context.page.title).toBe('Home');
      expect(a.context.screen.width).not.toBe(-1);
      expect(b.context.library.name).toBe('svc-analytics');
      expect(JSON.stringify(sentMessages()).length).toBeLessThan(10000);
    });
  });

  describe('load', () => {
    it('keeps the recorded calls of a load that failed for the next load', async () => {
      const { load } = createAnalytics({ transforms: eagerTransforms });
      const recorded = vi.fn();
      load('', {}, recorded); // no write key: refused
      expect(recorded).not.toHaveBeenCalled();
      load('wk_test', QUIET);
      expect(recorded).toHaveBeenCalledTimes(1);
      load('wk_again', QUIET);
      expect(recorded).toHaveBeenCalledTimes(1);
    });
  });

  describe('replay', () => {
    it('uses the recorded page and time', async () => {
      const { api, replay } = start();
      const seen = vi.fn();
      api.on('track', seen);
      const time = Date.parse('2025-06-01T12:00:00.000Z');
      replay('ecommerce.productViewed', [{ product_id: 'p1', price: 9.5 }], ['https://shop.example/p/1?ref=a', 'Product 1', 'https://google.example/'], time);
      await vi.waitFor(() => expect(seen).toHaveBeenCalled());
      const { event } = seen.mock.calls[0].at(-1) as CallResult;
      expect(event.event).toBe('Product Viewed');
      expect(event.properties).toEqual({ product_id: 'p1', price: 9.5 });
      expect(event.timestamp).toBe('2025-06-01T12:00:00.000Z');
      expect(event.context.page).toEqual({
        url: 'https://shop.example/p/1?ref=a',
        path: '/p/1',
        search: '?ref=a',
        title: 'Product 1',
        referrer: 'https://google.example/',
      });
    });

    it('uses the recorded page for page() properties, also when replayed before load', async () => {
      const { api, replay } = createAnalytics({ transforms: eagerTransforms });
      const seen = vi.fn();
      api.on('page', seen);
      replay('page', [], ['https://shop.example/cart', 'Cart', ''], Date.parse('2025-06-01T12:00:00.000Z'));
      api.load('wk_test', QUIET);
      await vi.waitFor(() => expect(seen).toHaveBeenCalled());
      const { event } = seen.mock.calls[0].at(-1) as CallResult;
      expect(event.properties).toMatchObject({ url: 'https://shop.example/cart', path: '/cart', title: 'Cart' });
      expect(event.timestamp).toBe('2025-06-01T12:00:00.000Z');
    });

    it('does not leak the recorded page into later calls', async () => {
      const { api, replay } = start();
      replay('track', ['Old'], ['https://old.example/', 'Old', ''], Date.parse('2020-01-01T00:00:00Z'));
      const { event } = await api.track('Now');
      expect(event.context.page.url).toBe(location.href);
      expect(Date.parse(event.timestamp)).toBeGreaterThan(Date.parse('2024-01-01T00:00:00Z'));
    });
  });

  describe('reset', () => {
    it('forgets the user and starts a new anonymous id', async () => {
      const { api } = start();
      await api.identify('u1', { a: 1 });
      const before = api.user().anonymousId();
      api.reset();
      expect(api.user().id()).toBeNull();
      expect(api.user().traits()).toEqual({});
      expect(api.user().anonymousId()).not.toBe(before);
      const { event } = await api.track('x');
      expect(event).not.toHaveProperty('userId');
      expect(event.anonymousId).toBe(api.user().anonymousId());
    });
  });

  describe('flush', () => {
    it('POSTs the queued messages to {apiHost}/v1/batch', async () => {
      const { api } = start({ apiHost: 'api.example.com' });
      const a = await api.track('a');
      const b = await api.page();
      await api.flush();
      // (the first message of a quiet spell may have left on its own: one or two requests)
      expect(fetchMock.mock.calls.length).toBeGreaterThanOrEqual(1);
      for (const [url, init] of fetchMock.mock.calls as [string, RequestInit][]) {
        expect(url).toBe('https://api.example.com/v1/batch');
        expect(new Headers(init.headers).get('Authorization')).toBe('Basic ' + btoa('wk_test:'));
      }
      expect(sentMessages()).toEqual([a.event, b.event]);
    });
  });
});
