import { afterEach, describe, expect, it, vi } from 'vitest';
import { adoptLink, cameFrom, linkedId, LINK_TTL, sign, startLink } from '../../src/identity/link';
import { linkValue } from '../../src/identity/decorate';
import { createIdentity } from '../../src/identity/identity';

const START_URL = location.href;
const setUrl = (url: string) => (window as any).happyDOM.setURL(url);
afterEach(() => {
  vi.restoreAllMocks();
  setUrl(START_URL);
});

describe('sign', () => {
  it('depends on the user agent and the language', () => {
    const a = sign('t', 'id');
    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue('Other/1.0');
    expect(sign('t', 'id')).not.toBe(a);
    vi.restoreAllMocks();
    vi.spyOn(navigator, 'language', 'get').mockReturnValue('xx-XX');
    expect(sign('t', 'id')).not.toBe(a);
  });
});

describe('linkedId', () => {
  const now = 1_700_000_000_000;
  it('returns the id of a value this browser made less than 2 minutes ago', () => {
    expect(linkedId(linkValue('anon-1', now), now + 1000)).toBe('anon-1');
    expect(linkedId(linkValue('a.b.c', now), now + LINK_TTL - 1)).toBe('a.b.c');
  });
  it('refuses an expired value, one from the future, a changed id and garbage', () => {
    expect(linkedId(linkValue('anon-1', now), now + LINK_TTL)).toBeUndefined();
    expect(linkedId(linkValue('anon-1', now + LINK_TTL + 1), now)).toBeUndefined();
    expect(linkedId(linkValue('anon-1', now).replace('anon-1', 'anon-2'), now)).toBeUndefined();
    for (const v of ['', 'x', 'a.b', '..id']) expect(linkedId(v, now)).toBeUndefined();
  });
  it('refuses a value made by another browser (user agent)', () => {
    const v = linkValue('anon-1', now);
    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue('Other/1.0');
    expect(linkedId(v, now)).toBeUndefined();
  });
});

describe('adoptLink', () => {
  const url = (v: string) => `https://checkout.test/pay?step=2&svc_link=${encodeURIComponent(v)}&x=1#/cart`;
  it('returns the id and removes the parameter from the address bar, keeping the history state', () => {
    setUrl(url(linkValue('anon 1/é', Date.now())));
    history.replaceState({ router: 1 }, '');
    expect(adoptLink(() => {})).toBe('anon 1/é');
    expect(location.href).toBe('https://checkout.test/pay?step=2&x=1#/cart');
    expect(history.state).toEqual({ router: 1 });
  });
  it('drops an expired parameter, but still removes it', () => {
    setUrl(url(linkValue('anon-1', Date.now() - LINK_TTL - 1)));
    expect(adoptLink(() => {})).toBeUndefined();
    expect(location.href).toBe('https://checkout.test/pay?step=2&x=1#/cart');
  });
  it('does nothing without the parameter', () => {
    setUrl('https://checkout.test/pay?a=1');
    const spy = vi.spyOn(history, 'replaceState');
    expect(adoptLink(() => {})).toBeUndefined();
    expect(spy).not.toHaveBeenCalled();
  });
  it('reports a replaceState that throws, and still adopts', () => {
    setUrl(url(linkValue('anon-1', Date.now())));
    vi.spyOn(history, 'replaceState').mockImplementation(() => {
      throw new Error('nope');
    });
    const report = vi.fn();
    expect(adoptLink(report)).toBe('anon-1');
    expect(report).toHaveBeenCalledWith(expect.objectContaining({ code: 'callback_error', message: 'linkDomains: nope' }));
  });
});

describe('startLink', () => {
  it('sets the adopted id before anything else, and decorates with the id only while open', () => {
    setUrl(`https://checkout.test/?svc_link=${linkValue('adopted', Date.now())}`);
    const identity = createIdentity({ persist: false });
    let open = false;
    const decorate = vi.fn();
    const tools = vi.fn((use: (t: { decorate: typeof decorate; sync: () => void }) => void) => use({ decorate, sync: () => {} }));
    const start = startLink(['shop.test'], identity, () => open, () => {}, tools);
    expect(identity._anonymousId()).toBe('adopted');
    // the tools (a chunk of the CDN bundle) are asked for only once storing is allowed: not before consent
    expect(tools).not.toHaveBeenCalled();
    start();
    start();
    expect(tools).toHaveBeenCalledTimes(1);
    const [domains, id] = decorate.mock.calls[0];
    expect(domains).toEqual(['shop.test']);
    expect(id()).toBe(false);
    open = true;
    expect(id()).toBe('adopted');
  });
});

describe('cameFrom', () => {
  const referrer = (r: string) => vi.spyOn(document, 'referrer', 'get').mockReturnValue(r);
  it('is true for a referrer on a listed domain or one of its subdomains, case and a leading dot aside', () => {
    referrer('https://www.shop.test/cart?x=1');
    expect(cameFrom(['shop.test'])).toBe(true);
    expect(cameFrom(['.SHOP.test'])).toBe(true);
    referrer('https://shop.test/');
    expect(cameFrom(['blog.test', 'shop.test'])).toBe(true);
  });
  it('is false for a referrer elsewhere (a name that only ends alike included), and for a list that is not one', () => {
    referrer('https://evil.test/');
    expect(cameFrom(['shop.test'])).toBe(false);
    referrer('https://notshop.test/');
    expect(cameFrom(['shop.test'])).toBe(false);
    referrer('https://shop.test/');
    expect(cameFrom('shop.test')).toBe(false);
  });
  it('is true where the referrer was withheld: nothing tells where the link was', () => {
    referrer('');
    expect(cameFrom(['shop.test'])).toBe(true);
  });
  it('keeps startLink from adopting the id of a link from an unlisted domain (the parameter still leaves the address bar)', () => {
    setUrl(`https://checkout.test/?a=1&svc_link=${linkValue('adopted', Date.now())}`);
    referrer('https://evil.test/');
    const identity = createIdentity({ persist: false });
    startLink(['shop.test'], identity, () => true, () => {}, () => {});
    expect(identity._anonymousId()).not.toBe('adopted');
    expect(location.href).toBe('https://checkout.test/?a=1');
  });
});
