import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTransport, KEEPALIVE_LIMIT, TIMEOUT_MS } from '../../src/delivery/transport';

const URL_ = 'https://api.test/v1/batch';
const KEY = 'wk_test_1234567890';

// A fetch Response as far as the transport reads it.
const response = (status: number, retryAfter: string | null = null, body: unknown = null) => ({
  status,
  headers: { get: (n: string) => (n.toLowerCase() == 'retry-after' ? retryAfter : null) },
  body,
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('createTransport', () => {
  it('has a keepalive budget under the 64 KiB browsers allow', () => {
    expect(KEEPALIVE_LIMIT).toBe(60000);
    expect(KEEPALIVE_LIMIT).toBeLessThan(64 * 1024);
  });

  describe('post', () => {
    it('POSTs the body as JSON with Basic auth, without credentials, following no redirect, with the keepalive asked for', async () => {
      const fetch = vi.fn(async (..._a: unknown[]) => response(200));
      vi.stubGlobal('fetch', fetch);
      const t = createTransport();
      await t._post(URL_, KEY, '{"batch":[]}', 12, true);
      await t._post(URL_, KEY, '{"batch":[1]}', 13, false);
      const [url, init] = fetch.mock.calls[0] as [string, RequestInit];
      expect(url).toBe(URL_);
      expect(init.method).toBe('POST');
      expect(init.body).toBe('{"batch":[]}');
      expect(init.credentials).toBe('omit');
      expect(init.redirect).toBe('manual');
      expect(init.signal).toBeInstanceOf(AbortSignal);
      const headers = new Headers(init.headers as HeadersInit);
      expect(headers.get('Content-Type')).toBe('application/json');
      expect(headers.get('Authorization')).toBe('Basic ' + btoa(KEY + ':'));
      expect(fetch.mock.calls.map((c) => (c[1] as RequestInit).keepalive)).toEqual([true, false]);
    });

    it('answers with the status and Retry-After', async () => {
      vi.stubGlobal('fetch', async () => response(429, '30'));
      expect(await createTransport()._post(URL_, KEY, '{}', 2, true)).toEqual({ _status: 429, _retryAfter: '30' });
    });

    it('answers status 0 for a network error, never rejecting', async () => {
      vi.stubGlobal('fetch', async () => {
        throw new TypeError('Failed to fetch');
      });
      expect(await createTransport()._post(URL_, KEY, '{}', 2, true)).toEqual({ _status: 0, _retryAfter: null });
    });

    it('answers status 0 when fetch throws synchronously', async () => {
      vi.stubGlobal('fetch', () => {
        throw new TypeError('not allowed');
      });
      expect(await createTransport()._post(URL_, KEY, '{}', 2, false)).toEqual({ _status: 0, _retryAfter: null });
    });

    it('abandons a request that has no answer after TIMEOUT_MS with status 0', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let signal: AbortSignal | undefined;
      vi.stubGlobal('fetch', (_url: string, init: RequestInit) => {
        signal = init.signal!;
        return new Promise((_, reject) => signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
      });
      let answer: unknown;
      createTransport()
        ._post(URL_, KEY, '{}', 2, true)
        .then((a) => (answer = a));
      await vi.advanceTimersByTimeAsync(TIMEOUT_MS - 1);
      expect(signal!.aborted).toBe(false);
      expect(answer).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(signal!.aborted).toBe(true);
      await vi.waitFor(() => expect(answer).toEqual({ _status: 0, _retryAfter: null }));
    });

    it('reads the response body to its end (cancelling it shows the request as failed in the developer tools), and answers only once that is done', async () => {
      let finish!: () => void;
      const cancel = vi.fn(async () => {});
      const arrayBuffer = vi.fn(() => new Promise<ArrayBuffer>((r) => (finish = () => r(new ArrayBuffer(0)))));
      vi.stubGlobal('fetch', async () => ({ ...response(200, null, { cancel }), arrayBuffer }));
      let answer: unknown;
      createTransport()
        ._post(URL_, KEY, '{}', 2, true)
        .then((a) => (answer = a));
      await vi.waitFor(() => expect(arrayBuffer).toHaveBeenCalledTimes(1));
      await new Promise((r) => setTimeout(r));
      expect(answer).toBeUndefined();
      finish();
      await vi.waitFor(() => expect(answer).toEqual({ _status: 200, _retryAfter: null }));
      expect(cancel).not.toHaveBeenCalled();
    });

    it('answers with the status even when reading the body fails', async () => {
      const arrayBuffer = vi.fn(() => Promise.reject(new TypeError('network error')));
      vi.stubGlobal('fetch', async () => ({ ...response(204, null, {}), arrayBuffer }));
      expect(await createTransport()._post(URL_, KEY, '{}', 2, true)).toEqual({ _status: 204, _retryAfter: null });
    });

    it('uses the fetch there was when it was created, not one the page put in its place later', async () => {
      const original = vi.fn(async () => response(200));
      vi.stubGlobal('fetch', original);
      const t = createTransport();
      const replaced = vi.fn(async () => response(500));
      vi.stubGlobal('fetch', replaced);
      expect((await t._post(URL_, KEY, '{}', 2, true))._status).toBe(200);
      expect(original).toHaveBeenCalledTimes(1);
      expect(replaced).not.toHaveBeenCalled();
    });
  });

  describe('fits', () => {
    it('counts keepalive bytes in flight against the budget until their answer', async () => {
      let answer!: (v: unknown) => void;
      vi.stubGlobal('fetch', () => new Promise((r) => (answer = r)));
      const t = createTransport();
      expect(t._fits(KEEPALIVE_LIMIT)).toBe(true);
      expect(t._fits(KEEPALIVE_LIMIT + 1)).toBe(false);
      const done = t._post(URL_, KEY, '{}', 40000, true);
      expect(t._fits(20000)).toBe(true);
      expect(t._fits(20001)).toBe(false);
      answer(response(200));
      await done;
      expect(t._fits(KEEPALIVE_LIMIT)).toBe(true);
    });

    it('frees the budget of a keepalive request that failed', async () => {
      vi.stubGlobal('fetch', async () => {
        throw new TypeError('Failed to fetch');
      });
      const t = createTransport();
      await t._post(URL_, KEY, '{}', 50000, true);
      expect(t._fits(KEEPALIVE_LIMIT)).toBe(true);
    });

    it('does not count a request sent without keepalive', () => {
      vi.stubGlobal('fetch', () => new Promise(() => {}));
      const t = createTransport();
      t._post(URL_, KEY, '{}', 50000, false);
      expect(t._fits(KEEPALIVE_LIMIT)).toBe(true);
    });
  });

  describe('beacon', () => {
    it('hands the body to sendBeacon as a string, called on navigator, and says whether it was accepted', () => {
      const calls: { self: unknown; args: unknown[] }[] = [];
      vi.spyOn(navigator, 'sendBeacon').mockImplementation(function (this: unknown, ...args: unknown[]) {
        calls.push({ self: this, args });
        return calls.length == 1;
      } as any);
      const fetch = vi.fn();
      vi.stubGlobal('fetch', fetch);
      const t = createTransport();
      expect(t._beacon(URL_, '{"a":1}')).toBe(true);
      expect(t._beacon(URL_, '{"a":2}')).toBe(false);
      expect(calls.map((c) => c.args)).toEqual([
        [URL_, '{"a":1}'],
        [URL_, '{"a":2}'],
      ]);
      expect(calls[0].self).toBe(navigator);
      // a refusal is not retried with fetch: the caller keeps the records
      expect(fetch).not.toHaveBeenCalled();
    });

    it('falls back to a keepalive text/plain fetch when sendBeacon throws, and reports it as not accepted', () => {
      vi.spyOn(navigator, 'sendBeacon').mockImplementation(() => {
        throw new TypeError('Illegal invocation');
      });
      const fetch = vi.fn(async (..._a: unknown[]) => response(200));
      vi.stubGlobal('fetch', fetch);
      expect(createTransport()._beacon(URL_, '{"a":1}')).toBe(false);
      expect(fetch).toHaveBeenCalledTimes(1);
      const [url, init] = fetch.mock.calls[0] as [string, RequestInit];
      expect(url).toBe(URL_);
      expect(init).toMatchObject({ method: 'POST', body: '{"a":1}', keepalive: true, credentials: 'omit' });
      expect(new Headers(init.headers as HeadersInit).get('Content-Type')).toBe('text/plain');
    });

    it('falls back to fetch where there is no sendBeacon', () => {
      const saved = Object.getOwnPropertyDescriptor(navigator, 'sendBeacon');
      Object.defineProperty(navigator, 'sendBeacon', { value: undefined, configurable: true });
      try {
        const fetch = vi.fn(async () => response(200));
        vi.stubGlobal('fetch', fetch);
        expect(createTransport()._beacon(URL_, '{}')).toBe(false);
        expect(fetch).toHaveBeenCalledTimes(1);
      } finally {
        if (saved) Object.defineProperty(navigator, 'sendBeacon', saved);
        else delete (navigator as any).sendBeacon;
      }
      expect(typeof navigator.sendBeacon).toBe('function');
    });

    it('never throws, even when the fallback fetch throws or rejects', async () => {
      vi.spyOn(navigator, 'sendBeacon').mockImplementation(() => {
        throw new TypeError('quota');
      });
      vi.stubGlobal('fetch', () => {
        throw new TypeError('blocked');
      });
      expect(createTransport()._beacon(URL_, '{}')).toBe(false);
      const rejected = vi.fn(() => Promise.reject(new TypeError('Failed to fetch')));
      vi.stubGlobal('fetch', rejected);
      expect(createTransport()._beacon(URL_, '{}')).toBe(false);
      await Promise.resolve();
      expect(rejected).toHaveBeenCalledTimes(1);
    });

    it('uses the sendBeacon there was when it was created', () => {
      const original = vi.fn(() => true);
      const replaced = vi.fn(() => false);
      Object.defineProperty(navigator, 'sendBeacon', { value: original, configurable: true, writable: true });
      try {
        const t = createTransport();
        (navigator as any).sendBeacon = replaced;
        expect(t._beacon(URL_, '{}')).toBe(true);
        expect(original).toHaveBeenCalledTimes(1);
        expect(replaced).not.toHaveBeenCalled();
      } finally {
        delete (navigator as any).sendBeacon;
      }
      expect(typeof navigator.sendBeacon).toBe('function');
    });
  });

  describe('defer', () => {
    afterEach(() => delete (window as any).fetchLater);
    // The browser's own fetchLater reads as native code (a bound function does too).
    const native = <F extends (...a: any[]) => any>(f: F) => f.bind(null) as F;

    it('hands the body to fetchLater as a text POST without credentials and without activateAfter', () => {
      const result = { activated: false };
      const fetchLater = vi.fn((..._a: unknown[]) => result);
      (window as any).fetchLater = native(fetchLater);
      const t = createTransport();
      const d = t._defer!(URL_, '{"batch":[]}');
      const [url, init] = fetchLater.mock.calls[0] as [string, RequestInit & { activateAfter?: number }];
      expect(url).toBe(URL_);
      expect(init).toMatchObject({ method: 'POST', body: '{"batch":[]}', credentials: 'omit', redirect: 'manual' });
      expect(init.headers).toBeUndefined(); // a string body is text/plain: no preflight, as a beacon
      expect('activateAfter' in init).toBe(false); // sent only as the page goes away, never while it lives on
      expect(d._sent()).toBe(false);
      result.activated = true;
      expect(d._sent()).toBe(true);
      expect(init.signal!.aborted).toBe(false);
      d._abort();
      expect(init.signal!.aborted).toBe(true);
    });

    it('uses the fetchLater there was when it was made', () => {
      const original = vi.fn(() => ({ activated: false }));
      (window as any).fetchLater = native(original);
      const t = createTransport();
      (window as any).fetchLater = native(vi.fn());
      t._defer!(URL_, '{}');
      expect(original).toHaveBeenCalledTimes(1);
    });

    it('is missing where fetchLater is, or is not a function (an element named fetchLater)', () => {
      expect(createTransport()._defer).toBeUndefined();
      (window as any).fetchLater = document.createElement('img');
      expect(createTransport()._defer).toBeUndefined();
    });

    it('throws what fetchLater throws (the deferral catches it)', () => {
      (window as any).fetchLater = native(() => {
        throw new DOMException('quota', 'QuotaExceededError');
      });
      expect(() => createTransport()._defer!(URL_, '{}')).toThrow(/quota/);
    });

    it("is missing where the page put a fetchLater of its own (a no-op shim, a polyfill that sends at once would lose or repeat what it is given; found by review 10)", () => {
      for (const shim of [() => {}, (u: string, i: RequestInit) => (fetch(u, { ...i, keepalive: true }), { activated: true })]) {
        (window as any).fetchLater = shim;
        expect(createTransport()._defer).toBeUndefined();
      }
    });

    it('starts without deferred delivery, never throwing, where the page broke Function.prototype.toString', () => {
      (window as any).fetchLater = native(() => ({ activated: false }));
      vi.spyOn(Function.prototype, 'toString').mockImplementation(() => {
        throw new Error('patched');
      });
      expect(createTransport()._defer).toBeUndefined();
    });

    it('says a deferred request was sent only when the browser says so (true), never for another answer', () => {
      for (const result of [undefined, {}, { activated: 1 }]) {
        (window as any).fetchLater = native(() => result);
        expect(createTransport()._defer!(URL_, '{}')._sent()).toBe(false);
      }
    });
  });
});
