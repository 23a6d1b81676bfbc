import { afterEach, describe, expect, it } from 'vitest';
import { buildContext, campaign, freeze, LIBRARY, merge, pageContext, unlink, wireUrl, type Environment } from '../../src/message/context';

const UA = {
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  androidTablet: 'Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  windows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  mac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  cros: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  linux: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
};

const PAGE = pageContext('https://shop.example/docs/a?utm_campaign=spring&utm_source=news&x=1', 'Docs', 'https://ref.example/');

function env(extra: Partial<Environment> = {}): Environment {
  return {
    userAgent: UA.windows,
    locale: 'en-GB',
    timezone: 'Europe/Paris',
    screen: { width: 1920, height: 1080, density: 2 },
    ...extra,
  };
}

describe('pageContext', () => {
  it('splits a URL into path and search and keeps title, referrer and url', () => {
    expect(pageContext('https://a.example/docs/x?q=1#h', 'T', 'https://r.example/')).toEqual({
      path: '/docs/x',
      referrer: 'https://r.example/',
      search: '?q=1',
      title: 'T',
      url: 'https://a.example/docs/x?q=1#h',
    });
  });

  it('gives an empty search when the URL has none', () => {
    expect(pageContext('https://a.example/', '', '')).toMatchObject({ path: '/', search: '' });
  });

  it('does not throw on a URL it cannot parse', () => {
    expect(pageContext('not a url', 'T', '')).toEqual({ path: '/', referrer: '', search: '', title: 'T', url: 'not a url' });
  });
});

describe('wireUrl', () => {
  it('drops a fragment that carries parameters, keeping the query string', () => {
    expect(wireUrl('https://a.example/cb?code=1#access_token=XYZ&state=s')).toBe('https://a.example/cb?code=1');
    expect(wireUrl('https://a.example/#access_token=XYZ')).toBe('https://a.example/');
    expect(wireUrl('https://a.example/#a&b')).toBe('https://a.example/');
    // a route that carries them in its own path is dropped whole (`#/access_token=...`, hash routers' OAuth callbacks)
    expect(wireUrl('https://a.example/app#/access_token=XYZ&state=s')).toBe('https://a.example/app');
    expect(wireUrl('https://a.example/app#!/id_token=XYZ')).toBe('https://a.example/app');
  });

  it('keeps a route fragment, without the parameters after its own ?', () => {
    expect(wireUrl('https://a.example/app?x=1#/cart/42')).toBe('https://a.example/app?x=1#/cart/42');
    expect(wireUrl('https://a.example/app#!/cart')).toBe('https://a.example/app#!/cart');
    expect(wireUrl('https://a.example/app#/cart?step=2&token=XYZ')).toBe('https://a.example/app#/cart');
    expect(wireUrl('https://a.example/app#/search?q')).toBe('https://a.example/app#/search');
  });

  it('keeps a plain anchor and a URL without a fragment as they are', () => {
    expect(wireUrl('https://a.example/docs#section-2')).toBe('https://a.example/docs#section-2');
    expect(wireUrl('https://a.example/docs?a=1&b=2')).toBe('https://a.example/docs?a=1&b=2');
    expect(wireUrl('')).toBe('');
  });
});

describe('pageContext (URLs on the wire)', () => {
  it('drops a fragment that carries parameters from url and referrer, and leaves path and search alone', () => {
    expect(pageContext('https://a.example/reset?token=T#access_token=XYZ&state=s', 'T', 'https://a.example/cb#id_token=XYZ')).toEqual({
      path: '/reset',
      referrer: 'https://a.example/cb',
      search: '?token=T',
      title: 'T',
      url: 'https://a.example/reset?token=T',
    });
    expect(pageContext('https://a.example/app#/cart/42', 'T', 'https://a.example/app#!/home')).toMatchObject({
      url: 'https://a.example/app#/cart/42',
      referrer: 'https://a.example/app#!/home',
      path: '/app',
    });
  });
});

describe('unlink', () => {
  it("removes the cross-domain link's parameter wherever it is, and nothing else", () => {
    expect(unlink('https://a.test/?svc_link=1.2.x')).toBe('https://a.test/');
    expect(unlink('https://a.test/?svc_link=1.2.x&b=2#f')).toBe('https://a.test/?b=2#f');
    expect(unlink('https://a.test/?a=1&svc_link=1.2.x&b=2')).toBe('https://a.test/?a=1&b=2');
    expect(unlink('https://a.test/?a=1&svc_link=1.2.x#/r')).toBe('https://a.test/?a=1#/r');
    expect(unlink('https://a.test/?xsvc_link=1')).toBe('https://a.test/?xsvc_link=1');
    expect(unlink('https://a.test/p?')).toBe('https://a.test/p?');
  });
  it('removes every occurrence (security-5 N2), an empty one too', () => {
    expect(unlink('https://a.test/?svc_link=a&svc_link=b')).toBe('https://a.test/');
    expect(unlink('https://a.test/a&b/?svc_link=a&x=1&svc_link&svc_link=b&y=2#f')).toBe('https://a.test/a&b/?x=1&y=2#f');
    expect(wireUrl('https://a.test/?svc_link=a&svc_link=b&c=1')).toBe('https://a.test/?c=1');
  });
  it('removes it as the browser reads its name (percent-encoded), and from a fragment\'s parameters', () => {
    expect(unlink('https://a.test/?svc%5Flink=a&x=1&svc%5flink=b')).toBe('https://a.test/?x=1');
    expect(unlink('https://a.test/?%73vc_link=a#f')).toBe('https://a.test/#f');
    expect(unlink('https://a.test/?x=1#/pay?svc_link=a&step=2')).toBe('https://a.test/?x=1#/pay?step=2');
    expect(unlink('https://a.test/?x=1#/pay?svc_link=a')).toBe('https://a.test/?x=1#/pay');
    expect(unlink('https://a.test/?x=1#svc_link=a&b=1')).toBe('https://a.test/?x=1#b=1');
    expect(unlink('https://a.test/?x=1#svc_link=a')).toBe('https://a.test/?x=1');
    // (a fragment emptied before a part of its own keeps its #: that part stays in the fragment)
    expect(unlink('https://a.test/#svc_link=a?b=1')).toBe('https://a.test/#?b=1');
    expect(unlink('https://a.test/?svc+link=a&svc_linkx=1&x=%ZZ')).toBe('https://a.test/?svc+link=a&svc_linkx=1&x=%ZZ');
  });
  it('keeps it off the page context: url, search and referrer', () => {
    const page = pageContext('https://a.test/p?utm_source=x&svc_link=1.2.x', 't', 'https://b.test/?svc_link=1.2.y');
    expect(page).toMatchObject({ url: 'https://a.test/p?utm_source=x', search: '?utm_source=x', referrer: 'https://b.test/' });
  });
});

describe('campaign', () => {
  it('maps utm_campaign to name and keeps other utm_ keys without the prefix', () => {
    expect(campaign('?utm_campaign=spring&utm_source=news&utm_medium=email&utm_term=shoes&utm_content=a')).toEqual({
      name: 'spring',
      source: 'news',
      medium: 'email',
      term: 'shoes',
      content: 'a',
    });
  });

  it('ignores parameters that are not utm_', () => {
    expect(campaign('?q=1&utm_source=x&ref=2')).toEqual({ source: 'x' });
  });

  it('decodes parameter values', () => {
    expect(campaign('?utm_campaign=summer%20sale')).toEqual({ name: 'summer sale' });
  });

  it('is undefined when there are no utm_ parameters', () => {
    expect(campaign('')).toBeUndefined();
    expect(campaign('?q=1&utm=2')).toBeUndefined();
  });
});

describe('buildContext', () => {
  it('fills library, page, userAgent, locale, timezone, channel and screen', () => {
    const ctx = buildContext({ env: env(), page: PAGE });
    expect(ctx.library).toEqual({ name: 'svc-analytics', version: LIBRARY.version });
    expect(typeof ctx.library.version).toBe('string');
    expect(ctx.library.version).not.toBe('');
    expect(ctx.page).toEqual(PAGE);
    expect(ctx.userAgent).toBe(UA.windows);
    expect(ctx.locale).toBe('en-GB');
    expect(ctx.timezone).toBe('Europe/Paris');
    expect(ctx.channel).toBe('browser');
    expect(ctx.screen).toEqual({ width: 1920, height: 1080, density: 2 });
  });

  it('adds campaign from the page URL utm_ parameters', () => {
    expect(buildContext({ env: env(), page: PAGE }).campaign).toEqual({ name: 'spring', source: 'news' });
  });

  it('leaves campaign out when the page has no utm_ parameters', () => {
    const ctx = buildContext({ env: env(), page: pageContext('https://a.example/?q=1', '', '') });
    expect(ctx).not.toHaveProperty('campaign');
  });

  it('carries what CONTRACT section 4 lists and nothing the contract never asked for (no os, device, userAgentData, network)', () => {
    const ctx = buildContext({ env: env(), page: PAGE });
    expect(Object.keys(ctx).sort()).toEqual(['campaign', 'channel', 'library', 'locale', 'page', 'screen', 'timezone', 'userAgent']);
  });

  it('is pure: the same parts give equal contexts, and the environment is not changed', () => {
    const e = env();
    const before = JSON.stringify(e);
    const parts = { env: e, page: PAGE };
    expect(buildContext(parts)).toEqual(buildContext(parts));
    expect(buildContext({ env: e, page: pageContext('https://a.example/?utm_source=x', '', '') }).campaign).toEqual({ source: 'x' });
    expect(buildContext(parts).campaign).toEqual({ name: 'spring', source: 'news' });
    expect(JSON.stringify(e)).toBe(before);
  });

  it('leaves optional facts out when the environment has none', () => {
    const ctx = buildContext({ env: { userAgent: '', locale: '', screen: { width: 0, height: 0, density: 1 } }, page: PAGE });
    expect(ctx).not.toHaveProperty('timezone');
    expect(ctx).not.toHaveProperty('userAgentData');
    expect(ctx).not.toHaveProperty('os');
  });
});

describe('freeze', () => {
  it('freezes plain data deeply, arrays included, and returns it', () => {
    const data = { a: { b: [1, { c: 2 }] }, d: 'x' };
    expect(freeze(data)).toBe(data);
    expect(Object.isFrozen(data) && Object.isFrozen(data.a) && Object.isFrozen(data.a.b) && Object.isFrozen(data.a.b[1])).toBe(true);
    expect(() => {
      'use strict';
      (data.a.b[1] as any).c = 3;
    }).toThrow(TypeError);
  });

  it('leaves a merge over frozen data free to change', () => {
    const out: any = merge(freeze({ page: { title: 't' }, library: { name: 'n' } }), { page: { title: 'mine' } });
    out.page.title = 'again';
    out.extra = 1;
    expect(out.page.title).toBe('again');
  });
});

describe('merge', () => {
  afterEach(() => {
    delete (Object.prototype as any).polluted;
  });

  it('deep-merges objects with the source winning', () => {
    const target = { page: { url: 'u', title: 't' }, library: { name: 'x', version: '1' }, locale: 'en' };
    const out = merge(target, { page: { title: 'mine' }, locale: 'fr', extra: { a: 1 } });
    expect(out).toEqual({
      page: { url: 'u', title: 'mine' },
      library: { name: 'x', version: '1' },
      locale: 'fr',
      extra: { a: 1 },
    });
  });

  it('does not modify its inputs', () => {
    const target = { page: { url: 'u', title: 't' } };
    const source = { page: { title: 'mine' } };
    merge(target, source);
    expect(target).toEqual({ page: { url: 'u', title: 't' } });
    expect(source).toEqual({ page: { title: 'mine' } });
  });

  it('replaces arrays instead of merging them', () => {
    expect(merge({ a: [1, 2, 3] }, { a: [9] })).toEqual({ a: [9] });
    expect(merge({ a: { b: 1 } }, { a: [9] })).toEqual({ a: [9] });
    expect(merge({ a: [1] }, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
  });

  it('replaces non-objects, null included', () => {
    expect(merge({ a: { b: 1 }, c: 1 }, { a: null, c: 'x' })).toEqual({ a: null, c: 'x' });
    expect(merge({ a: 1 }, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
  });

  it('returns the target unchanged when there is no source', () => {
    expect(merge({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(merge({ a: 1 }, null)).toEqual({ a: 1 });
  });

  it('keeps a __proto__ key as plain data and never pollutes Object.prototype', () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "nested": {"__proto__": {"polluted": true}}}');
    const out: any = merge({ nested: { a: 1 } }, source);
    expect(({} as any).polluted).toBeUndefined();
    expect((Object.prototype as any).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(out.nested)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')!.value).toEqual({ polluted: true });
    expect(out.nested.a).toBe(1);
    expect(out.polluted).toBeUndefined();
  });

  it('does not pollute through a constructor.prototype path', () => {
    const source = JSON.parse('{"constructor": {"prototype": {"polluted": true}}}');
    merge({}, source);
    expect(({} as any).polluted).toBeUndefined();
  });
});
