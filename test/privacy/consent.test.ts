import { net, sent, start } from '../harness';
import { afterEach, describe, expect, it } from 'vitest';
import { categoriesOf, decide, preferencesOf } from '../../src/privacy/consent';

describe('decide', () => {
  const cats = ['analytics', 'ads'];
  it('is open without categories', () => expect(decide(undefined, undefined, 'open')).toBe('open'));
  it('is pending until every listed category is decided', () => {
    expect(decide(cats, undefined, 'pending')).toBe('pending');
    expect(decide(cats, { analytics: true }, 'pending')).toBe('pending');
    expect(decide(cats, { other: false }, 'pending')).toBe('pending');
  });
  it('opens when every listed category is granted', () => expect(decide(cats, { analytics: true, ads: true, x: false }, 'pending')).toBe('open'));
  it('denies on a refusal, but a withdrawal after a grant holds again', () => {
    expect(decide(cats, { analytics: true, ads: false }, 'pending')).toBe('denied');
    expect(decide(cats, { analytics: false }, 'open')).toBe('pending');
    expect(decide(cats, { analytics: false }, 'pending')).toBe('denied');
  });
  it('stays denied until a grant', () => {
    expect(decide(cats, { other: true }, 'denied')).toBe('denied');
    expect(decide(cats, { analytics: true, ads: true }, 'denied')).toBe('open');
  });
  it('reads only the decision\'s own properties, never Object.prototype (a page\'s pollution decides nothing)', () => {
    const proto = Object.prototype as any;
    try {
      proto.analytics = true;
      proto.ads = true;
      expect(decide(cats, {}, 'pending')).toBe('pending');
      expect(decide(cats, preferencesOf({}), 'pending')).toBe('pending');
      expect(decide(cats, preferencesOf({ C0004: true }), 'pending')).toBe('pending');
      expect(decide(cats, preferencesOf({ analytics: true }), 'pending')).toBe('pending');
      expect(decide(cats, preferencesOf({ analytics: true, ads: true }), 'pending')).toBe('open');
      proto.analytics = false;
      expect(decide(cats, preferencesOf({}), 'open')).toBe('pending');
      expect(decide(cats, preferencesOf({ other: true }), 'pending')).toBe('pending');
    } finally {
      delete proto.analytics;
      delete proto.ads;
    }
  });
  it('takes no category named like a member of Object.prototype as decided', () => {
    for (const c of ['constructor', 'toString', 'hasOwnProperty', '__proto__'])
      expect(decide([c], preferencesOf({}), 'pending'), c).toBe('pending');
    expect(decide(['constructor'], preferencesOf({ constructor: true }), 'pending')).toBe('open');
    // a __proto__ key is never a decision (nor carried)
    expect(decide(['__proto__'], preferencesOf(JSON.parse('{"__proto__": true}')), 'pending')).toBe('pending');
  });
  it('keeps own boolean preferences only, as own data', () => {
    const out = preferencesOf(Object.assign(Object.create({ inherited: true }), { own: true }));
    expect(out).toEqual({ own: true });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
  it('keeps boolean preferences only', () => {
    expect(preferencesOf({ a: true, b: 'yes', c: false })).toEqual({ a: true, c: false });
    expect(preferencesOf(null)).toBeUndefined();
    expect(preferencesOf([true])).toBeUndefined();
  });
});

const databases = async () => (await indexedDB.databases()).map((d) => d.name);
// Nothing stored anywhere by the library.
async function expectNothingStored() {
  // (a cookie deleted by max-age=0 may show with an empty value in happy-dom)
  expect(document.cookie.split(/;\s*/).filter((c) => c && !c.endsWith('='))).toEqual([]);
  expect(Object.keys(localStorage)).toEqual([]);
  expect(await databases()).toEqual([]);
}

afterEach(() => {
  delete (navigator as any).globalPrivacyControl;
});

describe('the consent load option', () => {
  it('reads a list given as a string or as the option itself as meant', () => {
    expect(categoriesOf({ categories: 'C0002' })).toEqual(['C0002']);
    expect(categoriesOf(['C0002', 'C0004'])).toEqual(['C0002', 'C0004']);
    expect(categoriesOf({ categories: ['a', 2] })).toEqual(['a', '2']);
    expect(categoriesOf({ categories: [] })).toEqual([]);
    for (const none of [undefined, null, false, 0, '']) expect(categoriesOf(none)).toBeUndefined();
  });

  it('fails closed on any other shape: nothing is stored or sent, whatever is decided, and the mistake is reported', async () => {
    for (const option of [{}, true, { categories: undefined }, { categories: { C0002: true } }, 'C0002']) {
      net.fetch.mockClear();
      const { api, errors } = start({ consent: option as never });
      await api.track('One');
      api.consent({ C0002: true, analytics: true });
      await api.track('Two');
      await api.flush();
      expect(net.fetch, JSON.stringify(option)).not.toHaveBeenCalled();
      await expectNothingStored();
      expect(errors.map((e) => e.code)).toEqual(['invalid_arguments']);
      expect(errors[0].message).toMatch(/consent needs \{ categories/);
    }
  });

  it('a list as a string gates on it, and its grant sends', async () => {
    const { api } = start({ consent: { categories: 'analytics' } as never });
    await api.track('Held');
    await api.flush();
    expect(net.fetch).not.toHaveBeenCalled();
    api.consent({ analytics: true });
    await api.flush();
    expect(sent().map((m) => m.event)).toEqual(['Held']);
  });
});

describe('consent-pending mode', () => {
  const CONSENT = { consent: { categories: ['analytics'] } };

  it('holds calls in memory, storing and sending nothing, then sends them in call order on a grant, with the decision', async () => {
    const { api } = start(CONSENT);
    const first = await api.track('One', { n: 1 });
    await api.identify('u1', { plan: 'pro' });
    await api.page();
    await api.flush();
    expect(net.fetch).not.toHaveBeenCalled();
    await expectNothingStored();
    const anonymousId = api.user().anonymousId();
    api.consent({ analytics: true, ads: false });
    await api.flush();
    const out = sent();
    expect(out.map((m) => m.type)).toEqual(['track', 'identify', 'page']);
    expect(out[0].messageId).toBe(first.event.messageId);
    expect(out[0].timestamp).toBe(first.event.timestamp);
    expect(new Set(out.map((m) => m.anonymousId))).toEqual(new Set([anonymousId]));
    for (const m of out) expect(m.context.consent).toEqual({ categoryPreferences: { analytics: true, ads: false } });
    // now it persists, with what the page did meanwhile
    expect(localStorage.getItem('svc_anonymous_id')).toBe(JSON.stringify(anonymousId));
    expect(localStorage.getItem('svc_user_id')).toBe('"u1"');
    expect(api.user().id()).toBe('u1');
    const { event } = await api.track('After');
    expect(event.context.consent).toEqual({ categoryPreferences: { analytics: true, ads: false } });
  });

  it('a denial discards the held calls and writes nothing; later calls are refused until a grant', async () => {
    const { api } = start(CONSENT);
    await api.track('Held');
    api.consent({ analytics: false });
    await expect(api.track('Later')).rejects.toMatchObject({ code: 'consent_denied' });
    await api.flush();
    expect(net.fetch).not.toHaveBeenCalled();
    await expectNothingStored();
    api.consent({ analytics: true });
    await api.track('Granted');
    await api.flush();
    expect(sent().map((m) => m.event)).toEqual(['Granted']);
  });

  it('a withdrawal removes the queue and the stored identity, and holds calls again', async () => {
    const { api } = start({ ...CONSENT, flushInterval: 3600000 });
    api.consent({ analytics: true });
    await api.identify('u1');
    await api.track('Queued');
    expect(localStorage.getItem('svc_user_id')).toBe('"u1"');
    net.fetch.mockClear();
    api.consent({ analytics: false });
    await api.ready();
    expect(localStorage.getItem('svc_user_id')).toBeNull();
    expect(localStorage.getItem('svc_anonymous_id')).toBeNull();
    await api.track('Held again');
    await api.flush();
    // what was queued was removed; the held call waits
    expect(sent().map((m) => m.event)).not.toContain('Held again');
    api.consent({ analytics: true });
    await api.flush();
    expect(sent().map((m) => m.event)).toContain('Held again');
    expect(sent().map((m) => m.event)).not.toContain('Queued');
  });
});

describe('opt-out', () => {
  it('optOut removes the queue and the stored identity, refuses later calls, and survives a reload; optIn reverses it', async () => {
    let { api } = start();
    await api.identify('u1');
    const before = api.user().anonymousId();
    api.optOut();
    await expect(api.track('X')).rejects.toMatchObject({ code: 'opted_out' });
    expect(localStorage.getItem('svc_anonymous_id')).toBeNull();
    expect(localStorage.getItem('svc_user_id')).toBeNull();
    expect(localStorage.getItem('svc_opt_out')).toBe('true');
    // a new page load
    ({ api } = start());
    await expect(api.track('Y')).rejects.toMatchObject({ code: 'opted_out' });
    api.optIn();
    const { event } = await api.track('Z');
    expect(event.anonymousId).not.toBe(before);
    expect(localStorage.getItem('svc_opt_out')).toBe('false');
    ({ api } = start());
    await expect(api.track('W')).resolves.toBeTruthy();
  });

  it('respectGPC treats navigator.globalPrivacyControl === true as an opt-out, storing nothing', async () => {
    (navigator as any).globalPrivacyControl = true;
    const { api } = start({ respectGPC: true });
    await expect(api.track('X')).rejects.toMatchObject({ code: 'opted_out' });
    await api.flush();
    expect(net.fetch).not.toHaveBeenCalled();
    await expectNothingStored();
    // without respectGPC the signal is not read
    const other = start();
    await expect(other.api.track('Y')).resolves.toBeTruthy();
  });
});
