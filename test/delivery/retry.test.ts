import { describe, expect, it } from 'vitest';
import { backoff, BASE_DELAY, classify, MAX_DELAY, MAX_RETRY_AFTER, nextDelay, retryAfter } from '../../src/delivery/retry';
import { createAnswers } from '../../src/delivery/retry';

describe('classify', () => {
  it('treats 2xx as delivered', () => {
    expect(classify(200)).toBe('ok');
    expect(classify(201)).toBe('ok');
    expect(classify(204)).toBe('ok');
  });

  it('retries network errors (0), 408, 429 and 5xx', () => {
    for (const s of [0, 408, 429, 500, 502, 503, 504]) expect(classify(s), String(s)).toBe('retry');
  });

  it('retries on 401 and 403 (the write key is refused, not a message)', () => {
    expect(classify(401)).toBe('retry');
    expect(classify(403)).toBe('retry');
  });

  it('splits on 400, 413 and 422, which blame one message', () => {
    for (const s of [400, 413, 422]) expect(classify(s), String(s)).toBe('split');
  });

  it('retries the other 4xx, which blame the path or the endpoint, not a message (a proxy route missing during a deploy)', () => {
    for (const s of [402, 404, 405, 409, 410, 411, 415, 418, 451]) expect(classify(s), String(s)).toBe('retry');
  });
});

describe('backoff', () => {
  it('waits between half and all of 1 s on the first attempt', () => {
    expect(BASE_DELAY).toBe(1000);
    expect(backoff(1, () => 0)).toBe(500);
    expect(backoff(1, () => 0.5)).toBe(750);
    expect(backoff(1, () => 0.999999)).toBeCloseTo(1000, 0);
  });

  it('doubles with each attempt', () => {
    const top = () => 0.999999;
    expect(backoff(2, () => 0)).toBe(1000);
    expect(backoff(3, () => 0)).toBe(2000);
    expect(backoff(4, () => 0)).toBe(4000);
    expect(backoff(3, top)).toBeCloseTo(4000, 0);
    for (let a = 1; a < 6; a++) expect(backoff(a + 1, () => 0.3)).toBeCloseTo(2 * backoff(a, () => 0.3), 6);
  });

  it('stays between half and the full delay with the default random source', () => {
    for (let a = 1; a <= 10; a++) {
      const full = Math.min(MAX_DELAY, 1000 * 2 ** (a - 1));
      for (let i = 0; i < 50; i++) {
        const d = backoff(a);
        expect(d).toBeGreaterThanOrEqual(full / 2);
        expect(d).toBeLessThanOrEqual(full);
      }
    }
  });

  it('is capped at 60 s (jittered down to 30 s at least)', () => {
    expect(MAX_DELAY).toBe(60000);
    for (const a of [7, 8, 20, 100, 5000]) {
      expect(backoff(a, () => 0.999999)).toBeLessThanOrEqual(60000);
      expect(backoff(a, () => 0)).toBe(30000);
    }
  });
});

describe('retryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads seconds', () => {
    expect(retryAfter('120', now)).toBe(120000);
    expect(retryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP date relative to now', () => {
    expect(retryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30000);
  });

  it('treats a date in the past as now', () => {
    expect(retryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });

  it('is undefined when absent or unreadable', () => {
    expect(retryAfter(null, now)).toBeUndefined();
    expect(retryAfter(undefined, now)).toBeUndefined();
    expect(retryAfter('', now)).toBeUndefined();
    expect(retryAfter('soon', now)).toBeUndefined();
    expect(retryAfter('abc', now)).toBeUndefined();
  });

  it('is capped at one hour', () => {
    expect(MAX_RETRY_AFTER).toBe(3600000);
    expect(retryAfter('86400', now)).toBe(3600000);
    expect(retryAfter('Fri, 01 Jan 2027 00:00:00 GMT', now)).toBe(3600000);
  });
});

describe('nextDelay', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it("prefers the server's Retry-After", () => {
    expect(nextDelay(1, '7', now, () => 0)).toBe(7000);
    expect(nextDelay(9, '0', now, () => 0)).toBe(0);
  });

  it('falls back to backoff without a readable Retry-After', () => {
    expect(nextDelay(3, null, now, () => 0)).toBe(backoff(3, () => 0));
    expect(nextDelay(3, 'garbage', now, () => 0)).toBe(2000);
  });
});

describe('createAnswers', () => {
  it('numbers the answers from 1', () => {
    const a = createAnswers();
    expect([a._next(), a._next(), a._next()]).toEqual([1, 2, 3]);
  });

  it('blames a message refused alone only once a 2xx came after its first refusal (never at the same answer)', () => {
    const a = createAnswers();
    a._refused(['x', 'y'], a._next()); // answer 1 refuses both
    expect(a._bad('x')).toBe(false); // nothing accepted since: the endpoint may be failing
    a._ok(['z'], a._next()); // answer 2: a 2xx
    a._refused(['x'], a._next()); // answer 3: x again; its first refusal (1) stays
    expect(a._bad('x')).toBe(true);
    // forgotten once blamed: refused again at answer 4, with the last 2xx at 2, it is not blamed
    a._refused(['x'], a._next());
    expect(a._bad('x')).toBe(false);
  });

  it('a 2xx at the very answer that first refused a message does not blame it', () => {
    const a = createAnswers();
    const n = a._next();
    a._refused(['x'], n);
    a._ok(['w'], n);
    expect(a._bad('x')).toBe(true); // lastOk (n) is not below the refusal (n)
    const b = createAnswers();
    b._ok(['w'], b._next());
    b._refused(['x'], b._next());
    expect(b._bad('x')).toBe(false); // the 2xx (1) came before the refusal (2)
  });

  it('a 2xx for a refused message forgets its refusal', () => {
    const a = createAnswers();
    a._refused(['x'], a._next());
    a._ok(['x'], a._next());
    a._refused(['x'], a._next()); // a new first refusal: 3, after the last 2xx (2)
    expect(a._bad('x')).toBe(false);
  });

  it('says the first redirect once', () => {
    const a = createAnswers();
    expect([a._firstRedirect(), a._firstRedirect(), a._firstRedirect()]).toEqual([true, false, false]);
  });
});
