import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serverCookies, serverHolds, syncCookies, SYNC_EVERY, SYNC_KEY } from '../../src/identity/server-cookies';
import { createIdentity, KEYS } from '../../src/identity/identity';

function clearCookies() {
  for (const part of document.cookie.split(/;\s*/)) {
    const name = part.split('=')[0];
    if (name) document.cookie = `${name}=; path=/; max-age=-1`;
  }
}
const flushTimers = () => new Promise((r) => setTimeout(r, 0)).then(() => new Promise((r) => setTimeout(r, 0)));

beforeEach(() => {
  clearCookies();
  localStorage.clear();
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  clearCookies();
  localStorage.clear();
});

describe('serverHolds', () => {
  it('is true only while the cookie holds the value a 2xx answer set', () => {
    document.cookie = 'svc_anonymous_id=%22a%22; path=/';
    expect(serverHolds('svc_anonymous_id', '%22a%22')).toBe(false);
    localStorage.setItem(SYNC_KEY, '{"cookies":{"svc_anonymous_id":"%22a%22"}}');
    expect(serverHolds('svc_anonymous_id', '%22a%22')).toBe(true);
    expect(serverHolds('svc_anonymous_id', '%22b%22')).toBe(false);
    clearCookies(); // wiped by the visitor: the script writes it again
    expect(serverHolds('svc_anonymous_id', '%22a%22')).toBe(false);
  });
});

describe('serverCookies', () => {
  it('syncs on a change, and only while open (not before consent)', () => {
    let open = false;
    const sync = vi.fn();
    const server = serverCookies('/ingest/v1/batch', () => open, () => {}, (use) => use({ decorate: () => {}, sync }))!;
    server._changed('example.com');
    expect(sync).not.toHaveBeenCalled();
    open = true;
    server._changed('example.com');
    expect(sync).toHaveBeenCalledWith('/ingest/v1/batch', 'example.com', expect.any(Function), expect.any(Function));
  });
});

describe('createIdentity with server cookies: forget', () => {
  it("removes what the sync remembered (it holds the ids) with the identity", () => {
    const server = serverCookies('/ingest/v1/batch', () => false, () => {}, () => {})!;
    const identity = createIdentity({ server });
    localStorage.setItem(SYNC_KEY, '{"cookies":{}}');
    localStorage.setItem(SYNC_KEY + '_asked', '{}');
    identity._forget();
    expect([localStorage.getItem(SYNC_KEY), localStorage.getItem(SYNC_KEY + '_asked')]).toEqual([null, null]);
  });
});

describe('syncCookies', () => {
  it('needs a first-party apiHost path (reported once, nothing sent)', async () => {
    const fetch = vi.fn();
    vi.stubGlobal('fetch', fetch);
    const report = vi.fn();
    syncCookies('https://cdp.svc.example/v1/batch', undefined, report, () => true);
    syncCookies('https://cdp.svc.example/v1/batch', undefined, report, () => true);
    await flushTimers();
    expect(report).toHaveBeenCalledTimes(1);
    expect(report).toHaveBeenCalledWith(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(fetch).not.toHaveBeenCalled();
  });
  const answer = (status: number) => vi.fn(async () => new Response(null, { status }));
  it("posts the identity cookies once, then again on a change or after a day; a 2xx answer is remembered", async () => {
    const fetch = answer(204);
    vi.stubGlobal('fetch', fetch);
    document.cookie = 'svc_anonymous_id=%22a%22; path=/';
    document.cookie = 'svc_user_traits=x; path=/'; // not an id
    syncCookies('/ingest/v1/batch', 'example.com', () => {}, () => true);
    syncCookies('/ingest/v1/batch', 'example.com', () => {}, () => true); // a load writes several: one request
    await flushTimers();
    expect(fetch).toHaveBeenCalledTimes(1);
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe(location.origin + '/ingest/v1/cookies');
    expect(init).toMatchObject({ method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' } });
    expect(JSON.parse(init.body as string)).toEqual({ cookies: { svc_anonymous_id: '%22a%22' }, domain: 'example.com' });
    expect(serverHolds('svc_anonymous_id', '%22a%22')).toBe(true);

    syncCookies('/ingest/v1/batch', 'example.com', () => {}, () => true);
    await flushTimers();
    expect(fetch).toHaveBeenCalledTimes(1);
    document.cookie = 'svc_user_id=%22u%22; path=/';
    syncCookies('/ingest/v1/batch', 'example.com', () => {}, () => true);
    await flushTimers();
    expect(fetch).toHaveBeenCalledTimes(2);
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + SYNC_EVERY + 1);
    syncCookies('/ingest/v1/batch', 'example.com', () => {}, () => true);
    await flushTimers();
    expect(fetch).toHaveBeenCalledTimes(3);
  });
  it('remembers only the cookies a server names in X-Svc-Cookies (the recipes set the user id only when told to): the script keeps writing the others', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response(null, { status: 204, headers: { 'X-Svc-Cookies': 'svc_anonymous_id' } })));
    document.cookie = 'svc_anonymous_id=%22a2%22; path=/';
    document.cookie = 'svc_user_id=%22u2%22; path=/';
    syncCookies('/ingest/v1/batch', undefined, () => {}, () => true);
    await flushTimers();
    expect(serverHolds('svc_anonymous_id', '%22a2%22')).toBe(true);
    expect(serverHolds('svc_user_id', '%22u2%22')).toBe(false);
    document.cookie = 'svc_user_id=; path=/; max-age=0';
  });
  it('reports a refusal, remembers nothing the server did not set, and does not ask again the same day', async () => {
    const fetch = answer(400);
    vi.stubGlobal('fetch', fetch);
    const report = vi.fn();
    document.cookie = 'svc_anonymous_id=%22a%22; path=/';
    syncCookies('/ingest/v1/batch', undefined, report, () => true);
    await flushTimers();
    expect(JSON.parse((fetch.mock.calls[0] as unknown as [string, RequestInit])[1].body as string)).toEqual({ cookies: { svc_anonymous_id: '%22a%22' } });
    expect(report).toHaveBeenCalledWith(expect.objectContaining({ code: 'delivery_rejected' }));
    expect(serverHolds('svc_anonymous_id', '%22a%22')).toBe(false);
    syncCookies('/ingest/v1/batch', undefined, report, () => true);
    await flushTimers();
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});

describe('createIdentity with server cookies', () => {
  it('does not write a cookie the server holds again, and tells each write once writing is allowed', () => {
    const changed = vi.fn();
    const identity = createIdentity({ persist: false, server: { _holds: serverHolds, _changed: changed, _forget: () => {} } });
    expect(changed).not.toHaveBeenCalled(); // consent pending: nothing written, nothing asked
    identity._persist();
    expect(changed).toHaveBeenCalled();
    const value = encodeURIComponent(JSON.stringify(identity._anonymousId()));
    localStorage.setItem(SYNC_KEY, JSON.stringify({ cookies: { [KEYS.anonymousId]: value } }));
    const set = vi.spyOn(document, 'cookie', 'set');
    identity._setAnonymousId(identity._anonymousId());
    expect(set.mock.calls.filter(([c]) => c.startsWith(KEYS.anonymousId + '='))).toEqual([]);
    identity._setAnonymousId('new-id');
    expect(set.mock.calls.filter(([c]) => c.startsWith(KEYS.anonymousId + '=')).length).toBe(1);
  });
});
