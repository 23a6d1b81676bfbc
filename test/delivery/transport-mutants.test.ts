// More of the transport's contract (found missing by mutation testing, `npm run mutate`).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTransport, KEEPALIVE_LIMIT } from '../../src/delivery/transport';

const URL_ = 'https://api.test/v1/batch';
const KEY = 'wk_test_1234567890';
const response = (status: number) => ({ status, headers: { get: () => null }, body: null });

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('createTransport', () => {
  it('a request without keepalive that ends frees none of the keepalive budget others hold', async () => {
    const answers: ((v: unknown) => void)[] = [];
    vi.stubGlobal('fetch', () => new Promise((r) => answers.push(r)));
    const t = createTransport();
    const kept = t._post(URL_, KEY, '{}', 50000, true);
    const plain = t._post(URL_, KEY, '{}', 30000, false);
    answers[1](response(200));
    await plain;
    expect(t._fits(KEEPALIVE_LIMIT - 50000)).toBe(true);
    expect(t._fits(KEEPALIVE_LIMIT - 50000 + 1)).toBe(false);
    answers[0](response(200));
    await kept;
    expect(t._fits(KEEPALIVE_LIMIT)).toBe(true);
  });

  it("the beacon's fallback fetch follows no redirect (events go to apiHost only)", () => {
    vi.spyOn(navigator, 'sendBeacon').mockImplementation(() => {
      throw new TypeError('Illegal invocation');
    });
    const fetch = vi.fn(async (..._a: unknown[]) => response(200));
    vi.stubGlobal('fetch', fetch);
    createTransport()._beacon(URL_, '{"a":1}');
    expect((fetch.mock.calls[0] as [string, RequestInit])[1].redirect).toBe('manual');
  });
});
