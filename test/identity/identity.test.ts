import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createIdentity, decode, domainCandidates, KEYS, readCookie, uuid } from '../../src/identity/identity';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const START_URL = location.href;

function clearCookies() {
  for (const part of document.cookie.split(/;\s*/)) {
    const name = part.split('=')[0];
    if (name) document.cookie = `${name}=; path=/; max-age=-1`;
  }
}
const cookie = (name: string) => readCookie(document.cookie, name);

beforeEach(() => {
  clearCookies();
  localStorage.clear();
});
afterEach(() => {
  vi.restoreAllMocks();
  clearCookies();
  localStorage.clear();
  if (location.href != START_URL) (window as any).happyDOM.setURL(START_URL);
});

describe('uuid', () => {
  it('returns a v4 UUID', () => {
    for (let i = 0; i < 20; i++) expect(uuid()).toMatch(UUID_V4);
  });

  it('returns a v4 UUID without crypto.randomUUID', () => {
    const original = crypto.randomUUID;
    (crypto as any).randomUUID = undefined;
    try {
      expect(crypto.randomUUID).toBeUndefined();
      for (let i = 0; i < 20; i++) expect(uuid()).toMatch(UUID_V4);
    } finally {
      (crypto as any).randomUUID = original;
    }
  });

  it('returns a different id each time', () => {
    const ids = new Set(Array.from({ length: 100 }, uuid));
    expect(ids.size).toBe(100);
  });

  it('returns a v4 UUID from getRandomValues where crypto.randomUUID throws (an http page, a privacy setting)', () => {
    vi.spyOn(crypto, 'randomUUID').mockImplementation(() => {
      throw new DOMException('blocked', 'SecurityError');
    });
    const getRandomValues = vi.spyOn(crypto, 'getRandomValues');
    const ids = Array.from({ length: 20 }, uuid);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(20);
    expect(getRandomValues).toHaveBeenCalled();
  });

  it('returns distinct v4 UUIDs where both randomUUID and getRandomValues throw', () => {
    const blocked = () => {
      throw new DOMException('blocked', 'SecurityError');
    };
    vi.spyOn(crypto, 'randomUUID').mockImplementation(blocked);
    vi.spyOn(crypto, 'getRandomValues').mockImplementation(blocked);
    const ids = Array.from({ length: 50 }, uuid);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(50);
  });
});

describe('decode', () => {
  it('returns a raw value as it is', () => {
    expect(decode('abc-123')).toBe('abc-123');
  });

  it('decodes a URI-encoded value', () => {
    expect(decode('a%20b%2Fc')).toBe('a b/c');
  });

  it('decodes a JSON-encoded value, raw or URI-encoded (the analytics.js form)', () => {
    expect(decode('"abc"')).toBe('abc');
    expect(decode('%22abc%22')).toBe('abc');
    expect(decode('{"plan":"pro"}')).toEqual({ plan: 'pro' });
    expect(decode(encodeURIComponent('{"plan":"pro"}'))).toEqual({ plan: 'pro' });
  });

  it('keeps a value that is not valid URI encoding', () => {
    expect(decode('100%')).toBe('100%');
  });

  it('reads JSON with the JSON.parse of load time, whatever the page put in its place', () => {
    const original = JSON.parse;
    let out: unknown;
    JSON.parse = () => {
      throw new Error('replaced by the page');
    };
    try {
      out = [decode('"abc"'), decode('%7B%22plan%22%3A%22pro%22%7D')];
    } finally {
      JSON.parse = original;
    }
    expect(out).toEqual(['abc', { plan: 'pro' }]);
  });

  it('is undefined for nothing', () => {
    expect(decode(null)).toBeUndefined();
    expect(decode(undefined)).toBeUndefined();
    expect(decode('')).toBeUndefined();
  });
});

describe('readCookie', () => {
  it('finds a cookie by name in a document.cookie string', () => {
    expect(readCookie('a=1; b=two; c=3', 'b')).toBe('two');
    expect(readCookie('a=1', 'a')).toBe('1');
  });

  it('keeps = inside the value', () => {
    expect(readCookie('t=a=b==; x=1', 't')).toBe('a=b==');
  });

  it('matches the whole name only', () => {
    expect(readCookie('xa=1; ax=2', 'a')).toBeUndefined();
  });

  it('is undefined when the cookie is absent', () => {
    expect(readCookie('', 'a')).toBeUndefined();
    expect(readCookie('b=1', 'a')).toBeUndefined();
  });
});

describe('domainCandidates', () => {
  it('lists parent domains widest first', () => {
    expect(domainCandidates('a.b.example.co.uk')).toEqual(['co.uk', 'example.co.uk', 'b.example.co.uk', 'a.b.example.co.uk']);
    expect(domainCandidates('www.example.com')).toEqual(['example.com', 'www.example.com']);
    expect(domainCandidates('example.com')).toEqual(['example.com']);
  });

  it('gives none for IP addresses and single labels such as localhost', () => {
    expect(domainCandidates('192.168.0.1')).toEqual([]);
    expect(domainCandidates('127.0.0.1')).toEqual([]);
    expect(domainCandidates('::1')).toEqual([]);
    expect(domainCandidates('[2001:db8::1]')).toEqual([]);
    expect(domainCandidates('localhost')).toEqual([]);
  });
});

describe('createIdentity', () => {
  it('starts a new anonymous id and persists it to a cookie and localStorage', () => {
    const id = createIdentity();
    expect(id._anonymousId()).toMatch(UUID_V4);
    expect(id._userId()).toBeNull();
    expect(id._traits()).toEqual({});
    expect(decode(cookie(KEYS.anonymousId))).toBe(id._anonymousId());
    expect(decode(localStorage.getItem(KEYS.anonymousId))).toBe(id._anonymousId());
  });

  it('reads the same anonymous id back in a second instance', () => {
    const first = createIdentity()._anonymousId();
    expect(createIdentity()._anonymousId()).toBe(first);
  });

  it('keeps the anonymous id from localStorage when the cookie was wiped', () => {
    const first = createIdentity()._anonymousId();
    clearCookies();
    expect(cookie(KEYS.anonymousId)).toBeUndefined();
    expect(createIdentity()._anonymousId()).toBe(first);
  });

  it('writes the surviving values back to the cookie when only localStorage kept them', () => {
    const a = createIdentity();
    a._identify('u1', {});
    clearCookies();
    createIdentity();
    expect(decode(cookie(KEYS.anonymousId))).toBe(a._anonymousId());
    expect(decode(cookie(KEYS.userId))).toBe('u1');
  });

  it('keeps the anonymous id from the cookie when localStorage was wiped', () => {
    const first = createIdentity()._anonymousId();
    localStorage.clear();
    expect(createIdentity()._anonymousId()).toBe(first);
  });

  it('persists the user id and traits for the next instance', () => {
    const a = createIdentity();
    a._identify('u1', { plan: 'pro' });
    const b = createIdentity();
    expect(b._userId()).toBe('u1');
    expect(b._traits()).toEqual({ plan: 'pro' });
    expect(b._anonymousId()).toBe(a._anonymousId());
  });

  it('reads back ids that look like numbers or JSON exactly as they were set', () => {
    const values = ['123456789012345678901', '1e3', '00042', '42', 'true', 'null', '"quoted"'];
    const readBack = values.map((value) => {
      clearCookies();
      localStorage.clear();
      const a = createIdentity();
      a._identify(value, {});
      a._setAnonymousId(value);
      const b = createIdentity();
      return { userId: b._userId(), anonymousId: b._anonymousId() };
    });
    expect(readBack).toEqual(values.map((v) => ({ userId: v, anonymousId: v })));
  });

  it("stores values as plain JSON, whatever the page did to JSON.stringify and Array.prototype.toJSON", () => {
    const a = createIdentity();
    const saved = JSON.stringify;
    JSON.stringify = () => 'page';
    (Array.prototype as any).toJSON = () => 'array';
    try {
      a._identify('u"1', { tags: ['a', 'b'], nested: { n: 1 } });
    } finally {
      JSON.stringify = saved;
      delete (Array.prototype as any).toJSON;
    }
    expect(JSON.parse(localStorage.getItem(KEYS.traits)!)).toEqual({ tags: ['a', 'b'], nested: { n: 1 } });
    expect(JSON.parse(localStorage.getItem(KEYS.userId)!)).toBe('u"1');
    const b = createIdentity();
    expect(b._userId()).toBe('u"1');
    expect(b._traits()).toEqual({ tags: ['a', 'b'], nested: { n: 1 } });
  });

  it('adopts analytics.js ids from cookies in their %22..%22 form on first load', () => {
    document.cookie = 'ajs_anonymous_id=%22anon-abc%22; path=/';
    document.cookie = 'ajs_user_id=%22user-1%22; path=/';
    const id = createIdentity();
    expect(id._anonymousId()).toBe('anon-abc');
    expect(id._userId()).toBe('user-1');
    // and keeps them under its own names
    clearCookies();
    expect(createIdentity()._anonymousId()).toBe('anon-abc');
  });

  it('adopts analytics.js ids and traits from localStorage in their JSON form on first load', () => {
    localStorage.setItem('ajs_anonymous_id', JSON.stringify('anon-ls'));
    localStorage.setItem('ajs_user_id', JSON.stringify('user-ls'));
    localStorage.setItem('ajs_user_traits', JSON.stringify({ plan: 'pro' }));
    const id = createIdentity();
    expect(id._anonymousId()).toBe('anon-ls');
    expect(id._userId()).toBe('user-ls');
    expect(id._traits()).toEqual({ plan: 'pro' });
  });

  it('adopts analytics.js ids on the first load only', () => {
    const mine = createIdentity()._anonymousId();
    document.cookie = 'ajs_anonymous_id=%22anon-later%22; path=/';
    document.cookie = 'ajs_user_id=%22user-later%22; path=/';
    localStorage.setItem('ajs_anonymous_id', JSON.stringify('anon-later'));
    const again = createIdentity();
    expect(again._anonymousId()).toBe(mine);
    expect(again._userId()).toBeNull();
  });

  it("forgets the analytics.js identity too (a withdrawal, an opt-out): the next load does not adopt what was erased", () => {
    document.cookie = 'ajs_anonymous_id=%22ajs-anon%22; path=/';
    document.cookie = 'ajs_user_id=%22jane%40example.com%22; path=/';
    localStorage.setItem('ajs_user_traits', JSON.stringify({ email: 'jane@example.com' }));
    const id = createIdentity();
    expect(id._userId()).toBe('jane@example.com');
    id._forget();
    expect(document.cookie.split(/;\s*/).filter((c) => c.startsWith('ajs_') && !c.endsWith('='))).toEqual([]);
    expect(Object.keys(localStorage).filter((k) => k.startsWith('ajs_'))).toEqual([]);
    const next = createIdentity();
    expect(next._userId()).toBeNull();
    expect(next._traits()).toEqual({});
    expect(next._anonymousId()).not.toBe('ajs-anon');
  });

  describe('identify', () => {
    it('keeps the current user id when none is given', () => {
      const id = createIdentity();
      id._identify('u1', { a: 1 });
      id._identify(undefined, { a: 2 });
      expect(id._userId()).toBe('u1');
      expect(id._traits()).toEqual({ a: 2 });
    });

    it('stores a new user and its traits', () => {
      const id = createIdentity();
      id._identify('u1', { a: 1 });
      id._identify('u2', { b: 2 });
      expect(id._userId()).toBe('u2');
      expect(id._traits()).toEqual({ b: 2 });
      expect(createIdentity()._traits()).toEqual({ b: 2 });
    });
  });

  describe('reset', () => {
    it('forgets the user and traits and starts a new anonymous id, in memory and in storage', () => {
      const id = createIdentity();
      id._identify('u1', { a: 1 });
      const before = id._anonymousId();
      id._reset();
      expect(id._userId()).toBeNull();
      expect(id._traits()).toEqual({});
      expect(id._anonymousId()).toMatch(UUID_V4);
      expect(id._anonymousId()).not.toBe(before);
      const next = createIdentity();
      expect(next._userId()).toBeNull();
      expect(next._traits()).toEqual({});
      expect(next._anonymousId()).toBe(id._anonymousId());
    });
  });

  describe('setAnonymousId', () => {
    it('replaces and persists the anonymous id', () => {
      createIdentity()._setAnonymousId('custom-1');
      expect(createIdentity()._anonymousId()).toBe('custom-1');
    });
  });

  describe('reload', () => {
    it('picks up what another tab stored', () => {
      const a = createIdentity();
      const b = createIdentity();
      b._identify('u9', { z: 1 });
      a._reload();
      expect(a._userId()).toBe('u9');
      expect(a._traits()).toEqual({ z: 1 });
    });
  });

  it("with storage 'memory' persists nothing", () => {
    const id = createIdentity({ storage: 'memory' });
    id._identify('u1', { a: 1 });
    id._setAnonymousId('mem-1');
    expect(id._anonymousId()).toBe('mem-1');
    expect(id._userId()).toBe('u1');
    expect(document.cookie).toBe('');
    expect(localStorage.length).toBe(0);
    expect(createIdentity({ storage: 'memory' })._userId()).toBeNull();
  });

  it("with storage 'localStorage' sets no cookie but persists", () => {
    const a = createIdentity({ storage: 'localStorage' });
    a._identify('u1', {});
    expect(document.cookie).toBe('');
    expect(decode(localStorage.getItem(KEYS.anonymousId))).toBe(a._anonymousId());
    const b = createIdentity({ storage: 'localStorage' });
    expect(b._anonymousId()).toBe(a._anonymousId());
    expect(b._userId()).toBe('u1');
  });

  it('writes the cookie on the widest domain that accepts one, so subdomains share it', () => {
    (window as any).happyDOM.setURL('http://www.shop.co.uk/');
    const set = vi.spyOn(document, 'cookie', 'set');
    const id = createIdentity();
    const writes = set.mock.calls.map((c) => String(c[0])).filter((s) => s.startsWith(KEYS.anonymousId + '='));
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) expect(w).toMatch(/; domain=shop\.co\.uk(;|$)/);
    expect(decode(readCookie(document.cookie, 'svc_probe'))).toBeUndefined();
    expect(decode(cookie(KEYS.anonymousId))).toBe(id._anonymousId());
  });

  it('writes a SameSite=Lax cookie that lasts the configured number of days', () => {
    const set = vi.spyOn(document, 'cookie', 'set');
    createIdentity({ cookie: { maxage: 2 } });
    const w = set.mock.calls.map((c) => String(c[0])).find((s) => s.startsWith(KEYS.anonymousId + '='))!;
    expect(w).toContain('max-age=172800');
    expect(w).toContain('SameSite=Lax');
    expect(w).toContain('path=/');
  });
});

describe('createIdentity where the browser blocks cookies', () => {
  it('works from localStorage and memory when document.cookie throws (a sandboxed frame)', () => {
    Object.defineProperty(document, 'cookie', {
      configurable: true,
      get() {
        throw new DOMException('blocked', 'SecurityError');
      },
      set() {
        throw new DOMException('blocked', 'SecurityError');
      },
    });
    try {
      const id = createIdentity();
      expect(id._anonymousId()).toMatch(/^[0-9a-f-]{36}$/);
      id._identify('u1', { a: 1 });
      expect(id._userId()).toBe('u1');
      expect(createIdentity()._anonymousId()).toBe(id._anonymousId()); // read back from localStorage
    } finally {
      delete (document as any).cookie; // the inherited accessor is back
    }
  });
});

describe('group', () => {
  it('persists the group id (cookie and localStorage) and traits (localStorage), merging traits of the same group', () => {
    const id = createIdentity();
    expect(id._groupId()).toBeNull();
    expect(id._groupTraits()).toEqual({});
    id._group('g1', { plan: 'pro' });
    id._group('g1', { seats: 3 });
    expect(cookie(KEYS.groupId)).toBe(encodeURIComponent('"g1"'));
    expect(cookie(KEYS.groupTraits)).toBeUndefined();
    const again = createIdentity();
    expect(again._groupId()).toBe('g1');
    expect(again._groupTraits()).toEqual({ plan: 'pro', seats: 3 });
    again._group('g2', { plan: 'free' });
    expect(createIdentity()._groupTraits()).toEqual({ plan: 'free' });
  });

  it('adopts the analytics.js group on first load, and reset() forgets it', () => {
    localStorage.setItem('ajs_group_id', '"acme"');
    localStorage.setItem('ajs_group_properties', '{"name":"Acme"}');
    const id = createIdentity();
    expect(id._groupId()).toBe('acme');
    expect(id._groupTraits()).toEqual({ name: 'Acme' });
    id._reset();
    expect(id._groupId()).toBeNull();
    const next = createIdentity();
    expect(next._groupId()).toBeNull();
    expect(next._groupTraits()).toEqual({});
  });
});
