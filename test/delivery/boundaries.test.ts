import { describe, expect, it, vi } from 'vitest';
import { createTransport, KEEPALIVE_LIMIT, TIMEOUT_MS } from '../../src/delivery/transport';
import { browserPlatform, type Platform } from '../../src/delivery/platform';
import { planBatches } from '../../src/delivery/batch';

// Boundaries pinned exactly (a mutant that moves one by a byte or a millisecond fails here).

function platformWith(fetch: (url: string, init: RequestInit) => Promise<unknown>): Platform {
  return { ...browserPlatform(), _fetch: fetch as unknown as typeof globalThis.fetch };
}
const ok = () => ({ status: 200, type: 'cors', body: null, headers: { get: () => null } });

describe('the keepalive budget (transport._fits)', () => {
  it('is 60,000 bytes: a body of exactly what is left fits, one byte more does not', () => {
    const t = createTransport(platformWith(async () => ok()));
    expect(KEEPALIVE_LIMIT).toBe(60000);
    expect(t._fits(60000)).toBe(true);
    expect(t._fits(60001)).toBe(false);
  });

  it('counts keepalive bodies while in flight and frees them once answered; a body without keepalive counts nothing', async () => {
    let answer!: (v: unknown) => void;
    const t = createTransport(platformWith(() => new Promise((r) => (answer = r))));
    const kept = t._post('https://api.test/v1/batch', 'wk', '{}', 25000, true);
    expect(t._fits(35000)).toBe(true);
    expect(t._fits(35001)).toBe(false);
    answer(ok());
    await kept;
    expect(t._fits(60000)).toBe(true);
    const plain = t._post('https://api.test/v1/batch', 'wk', '{}', 25000, false);
    expect(t._fits(60000)).toBe(true);
    answer(ok());
    await plain;
  });

  it('frees the budget when the request fails too', async () => {
    const t = createTransport(platformWith(async () => {
      throw new TypeError('Failed to fetch');
    }));
    expect(await t._post('https://api.test/v1/batch', 'wk', '{}', 60000, true)).toEqual({ _status: 0, _retryAfter: null });
    expect(t._fits(60000)).toBe(true);
  });
});

describe('the request time-out', () => {
  it('aborts a request unanswered after exactly TIMEOUT_MS (15 s), on the platform clock', async () => {
    const timers: { ms: number; fn: () => void }[] = [];
    let signal!: AbortSignal;
    const p: Platform = {
      ...platformWith((_u, init) => new Promise((_r, reject) => ((signal = init.signal!), signal.addEventListener('abort', () => reject(new DOMException('', 'AbortError')))))),
      _setTimeout: (fn, ms) => (timers.push({ ms: ms!, fn }), timers.length as unknown as ReturnType<typeof setTimeout>),
      _clearTimeout: vi.fn(),
    };
    const t = createTransport(p);
    const pending = t._post('https://api.test/v1/batch', 'wk', '{}', 2, false);
    expect(TIMEOUT_MS).toBe(15000);
    expect(timers.map((x) => x.ms)).toEqual([15000]);
    expect(signal.aborted).toBe(false);
    timers[0].fn();
    expect(await pending).toEqual({ _status: 0, _retryAfter: null });
    expect(p._clearTimeout).toHaveBeenCalledWith(1);
  });
});

describe('planBatches at its limit', () => {
  const items = (...bytes: number[]) => bytes.map((b) => ({ bytes: b }));
  it('keeps a group whose body is exactly the limit, and splits at one byte more', () => {
    // overhead 10 + 45 + 1 (comma) + 44 = 100
    expect(planBatches(items(45, 44), 100, 10)).toHaveLength(1);
    expect(planBatches(items(45, 45), 100, 10)).toEqual([items(45), items(45)]);
  });
  it('counts one comma between each two items, none before the first', () => {
    // 10 + 30 + 1 + 30 + 1 + 28 = 100
    expect(planBatches(items(30, 30, 28), 100, 10)).toHaveLength(1);
    expect(planBatches(items(30, 30, 29), 100, 10)).toHaveLength(2);
    // a new group starts without a comma: 10 + 90 = 100
    expect(planBatches(items(50, 90), 100, 10)).toEqual([items(50), items(90)]);
  });
});
