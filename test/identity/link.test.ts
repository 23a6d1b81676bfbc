import { afterEach, describe, expect, it, vi } from 'vitest';
import { linked, startLink, useAdoption } from '../../src/identity/link';
import { adoptFrom, adoptLink, cameFrom, linkedId, LINK_TTL, sign } from '../../src/identity/adopt-link';
import { linkValue } from '../../src/sources/decorate';
import { createIdentity } from '../../src/identity/identity';

const ANON = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
const OTHER = '6f9619ff-8b86-4011-b42d-00c04fc964ff';
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
    expect(linkedId(linkValue(ANON, now), now + 1000)).toBe(ANON);
    expect(linkedId(linkValue(ANON.toUpperCase(), now), now + LINK_TTL - 1)).toBe(ANON.toUpperCase());
  });
  it('refuses an expired value, one from the future, a changed id and garbage', () => {
    expect(linkedId(linkValue(ANON, now), now + LINK_TTL)).toBeUndefined();
    expect(linkedId(linkValue(ANON, now + LINK_TTL + 1), now)).toBeUndefined();
    expect(linkedId(linkValue(ANON, now).replace(ANON, OTHER), now)).toBeUndefined();
    for (const v of ['', 'x', 'a.b', '..id']) expect(linkedId(v, now)).toBeUndefined();
  });
  it("refuses an id of another shape than the library's (a UUID), however well signed: any string, a 40 KB one", () => {
    for (const id of ['fixated-1', 'a.b.c', ANON + 'x', ' ' + ANON, ANON.replace(/-/g, ''), 'x'.repeat(40_000), `${ANON}\n${ANON}`])
      expect(linkedId(linkValue(id, now), now)).toBeUndefined();
  });
  it('refuses a value made by another browser (user agent)', () => {
    const v = linkValue(ANON, now);
    vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue('Other/1.0');
    expect(linkedId(v, now)).toBeUndefined();
  });
});

describe('adoptLink', () => {
  const url = (v: string) => `https://checkout.test/pay?step=2&svc_link=${encodeURIComponent(v)}&x=1#/cart`;
  it('returns the id of a valid parameter, and nothing for an expired one or none', () => {
    setUrl(url(linkValue(ANON, Date.now())));
    expect(adoptLink()).toBe(ANON);
    setUrl(url(linkValue(ANON, Date.now() - LINK_TTL - 1)));
    expect(adoptLink()).toBeUndefined();
    setUrl('https://checkout.test/pay?a=1');
    expect(adoptLink()).toBeUndefined();
  });
});

describe('startLink takes the parameter off the address bar', () => {
  const url = (v: string) => `https://checkout.test/pay?step=2&svc_link=${encodeURIComponent(v)}&x=1#/cart`;
  const start = (report = () => {}) => startLink(['shop.test'], createIdentity({ persist: false }), () => true, report, () => {});
  it('keeping the history state, adopted or not (expired)', () => {
    vi.spyOn(document, 'referrer', 'get').mockReturnValue('https://shop.test/');
    for (const t of [Date.now(), Date.now() - LINK_TTL - 1]) {
      setUrl(url(linkValue(ANON, t)));
      history.replaceState({ router: 1 }, '');
      start();
      expect(location.href).toBe('https://checkout.test/pay?step=2&x=1#/cart');
      expect(history.state).toEqual({ router: 1 });
    }
  });
  it('without the adoption too (the chunk that has it could not load), every form of it (encoded, in a fragment)', () => {
    useAdoption(undefined as any);
    setUrl('https://checkout.test/pay?svc%5Flink=1.2.x&x=1#/cart?svc_link=1.2.x&y=2');
    start();
    expect(location.href).toBe('https://checkout.test/pay?x=1#/cart?y=2');
    useAdoption(adoptFrom);
  });
  it('and touches no history without the parameter', () => {
    setUrl('https://checkout.test/pay?a=1#b=2');
    const spy = vi.spyOn(history, 'replaceState');
    start();
    expect(spy).not.toHaveBeenCalled();
  });
  it('reports a replaceState that throws, and still adopts', () => {
    setUrl(url(linkValue(ANON, Date.now())));
    vi.spyOn(document, 'referrer', 'get').mockReturnValue('https://shop.test/');
    vi.spyOn(history, 'replaceState').mockImplementation(() => {
      throw new Error('nope');
    });
    const report = vi.fn();
    const identity = createIdentity({ persist: false });
    startLink(['shop.test'], identity, () => true, report, () => {});
    expect(identity._anonymousId()).toBe(ANON);
    expect(report).toHaveBeenCalledWith(expect.objectContaining({ code: 'callback_error', message: 'linkDomains: nope' }));
  });
});

// startLink adopts through what the entry gives it (`useAdoption`: the npm entries at once, the CDN bundle from its
// lazy chunk): given here as the npm entries give it.
useAdoption(adoptFrom);

describe('linked: whether a page waits for the adoption before load', () => {
  it('only with linkDomains (own property) and the parameter in the URL', () => {
    setUrl('https://checkout.test/?a=1&svc_link=x');
    expect(linked({ linkDomains: ['shop.test'] })).toBe(true);
    expect(linked({})).toBe(false);
    expect(linked(undefined)).toBe(false);
    expect(linked(Object.create({ linkDomains: ['shop.test'] }))).toBe(false);
    setUrl('https://checkout.test/?a=1&xsvc_link=x#svc_link=y');
    expect(linked({ linkDomains: ['shop.test'] })).toBe(false);
  });
});

describe('startLink', () => {
  it('sets the adopted id before anything else, and decorates with the id only while open', () => {
    setUrl(`https://checkout.test/?svc_link=${linkValue(ANON, Date.now())}`);
    vi.spyOn(document, 'referrer', 'get').mockReturnValue('https://shop.test/');
    const identity = createIdentity({ persist: false });
    let open = false;
    const decorate = vi.fn();
    const tools = vi.fn((use: (t: { decorate: typeof decorate; sync: () => void }) => void) => use({ decorate, sync: () => {} }));
    const start = startLink(['shop.test'], identity, () => open, () => {}, tools);
    expect(identity._anonymousId()).toBe(ANON);
    // the tools (a chunk of the CDN bundle) are asked for only once storing is allowed: not before consent
    expect(tools).not.toHaveBeenCalled();
    start();
    start();
    expect(tools).toHaveBeenCalledTimes(1);
    const [domains, id] = decorate.mock.calls[0];
    expect(domains).toEqual(['shop.test']);
    expect(id()).toBe(false);
    open = true;
    expect(id()).toBe(ANON);
  });
});

describe('startLink refuses a forged link (security-5 N1)', () => {
  const arrive = (referrer: string) => {
    setUrl(`https://checkout.test/?a=1&svc_link=${linkValue(ANON, Date.now())}&svc_link=${linkValue(OTHER, Date.now())}`);
    vi.spyOn(document, 'referrer', 'get').mockReturnValue(referrer);
  };
  it('without a referrer (rel=noreferrer): the parameter, every occurrence, still leaves the address bar', () => {
    arrive('');
    const identity = createIdentity({ persist: false });
    startLink(['shop.test'], identity, () => true, () => {}, () => {});
    expect(identity._anonymousId()).not.toBe(ANON);
    expect(location.href).toBe('https://checkout.test/?a=1');
  });
  it('over a visitor this browser knows by a user id', () => {
    const known = createIdentity({ persist: true });
    known._identify('user-42', {});
    const before = known._anonymousId();
    arrive('https://shop.test/');
    const identity = createIdentity({ persist: true });
    startLink(['shop.test'], identity, () => true, () => {}, () => {});
    expect({ anonymousId: identity._anonymousId(), userId: identity._userId() }).toEqual({ anonymousId: before, userId: 'user-42' });
    // Reset (signed out): the same link is adopted.
    identity._reset();
    arrive('https://shop.test/');
    const anonymous = createIdentity({ persist: true });
    startLink(['shop.test'], anonymous, () => true, () => {}, () => {});
    expect(anonymous._anonymousId()).toBe(ANON);
    anonymous._reset();
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
  it('is false where the referrer was withheld (rel=noreferrer): nothing tells where the link was, so nothing is adopted', () => {
    referrer('');
    expect(cameFrom(['shop.test'])).toBe(false);
  });
  it('keeps startLink from adopting the id of a link from an unlisted domain (the parameter still leaves the address bar)', () => {
    setUrl(`https://checkout.test/?a=1&svc_link=${linkValue(ANON, Date.now())}`);
    referrer('https://evil.test/');
    const identity = createIdentity({ persist: false });
    startLink(['shop.test'], identity, () => true, () => {}, () => {});
    expect(identity._anonymousId()).not.toBe(ANON);
    expect(location.href).toBe('https://checkout.test/?a=1');
  });
});
