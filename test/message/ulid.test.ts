import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeTime, monotonicUlid } from '../../src/message/ulid';

// Crockford's base32: no I, L, O or U.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const T = Date.UTC(2026, 0, 1);

// The time a ULID's first 10 characters encode.
const decodeTime = (id: string) => [...id.slice(0, 10)].reduce((t, c) => t * 32 + ALPHABET.indexOf(c), 0);
// The 80-bit number a ULID's last 16 characters encode.
const randomValue = (id: string) => [...id.slice(10)].reduce((n, c) => n * 32n + BigInt(ALPHABET.indexOf(c)), 0n);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('encodeTime', () => {
  it('encodes a time in ms as 10 base32 digits, most significant first', () => {
    expect(encodeTime(0)).toBe('0000000000');
    expect(encodeTime(31)).toBe('000000000Z');
    expect(encodeTime(32)).toBe('0000000010');
    // the example of the ULID spec (https://github.com/ulid/spec)
    expect(encodeTime(1469918176385)).toBe('01ARYZ6S41');
    expect(encodeTime(2 ** 48 - 1)).toBe('7ZZZZZZZZZ');
  });

  it('sorts as the times do', () => {
    const times = [0, 1, 31, 32, 1e9, 2 ** 40, T - 1, T, T + 1, 2 ** 48 - 1];
    const encoded = times.map(encodeTime);
    expect([...encoded].sort()).toEqual(encoded);
    expect(encoded.map(decodeTime)).toEqual(times);
  });
});

describe('monotonicUlid', () => {
  it('makes 26-character ULIDs in Crockford base32', () => {
    const next = monotonicUlid();
    for (let i = 0; i < 100; i++) expect(next(T + i * 997)).toMatch(ULID);
  });

  it('starts each id with the time it was given', () => {
    const next = monotonicUlid();
    for (const t of [T, T + 1, T + 86400000, 2 ** 47]) expect(decodeTime(next(t))).toBe(t);
  });

  it('makes distinct ids for distinct factories and times', () => {
    const ids = new Set<string>();
    for (let f = 0; f < 10; f++) {
      const next = monotonicUlid();
      for (let i = 0; i < 100; i++) ids.add(next(T + i));
    }
    expect(ids.size).toBe(1000);
  });

  it('makes 1,000 ids in one millisecond that are distinct, sorted in call order, and carry that time', () => {
    const next = monotonicUlid();
    const ids = Array.from({ length: 1000 }, () => next(T));
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(decodeTime(id)).toBe(T);
  });

  it('increments the random part by one within one millisecond', () => {
    const next = monotonicUlid();
    const a = next(T);
    const b = next(T);
    expect(randomValue(b)).toBe(randomValue(a) + 1n);
  });

  it('stays sorted when the clock goes back, keeping the later time and incrementing the random part', () => {
    const next = monotonicUlid();
    const times = [T, ...Array.from({ length: 100 }, (_, i) => T - 1 - ((i * 7919) % 5000))];
    const ids = times.map(next);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(decodeTime(id)).toBe(T);
    for (let i = 1; i < ids.length; i++) expect(randomValue(ids[i])).toBe(randomValue(ids[i - 1]) + 1n);
    const later = next(T + 1);
    expect(later > ids[ids.length - 1]).toBe(true);
    expect(decodeTime(later)).toBe(T + 1);
  });

  it('borrows the next millisecond when the random part is all Z within one millisecond (80 bits used up)', () => {
    // 0xFF & 31 = 31: every random digit is Z, so the next id of the same millisecond cannot increment it.
    const getRandomValues = vi.spyOn(crypto, 'getRandomValues').mockImplementation((a) => {
      (a as Uint8Array).fill(0xff);
      return a;
    });
    const next = monotonicUlid();
    const first = next(T);
    expect(first.slice(10)).toBe('Z'.repeat(16));
    expect(decodeTime(first)).toBe(T);
    const second = next(T);
    expect(getRandomValues).toHaveBeenCalledTimes(2);
    expect(second).toMatch(ULID);
    expect(second > first).toBe(true);
    expect(decodeTime(second)).toBe(T + 1);
    const third = next(T);
    expect(third > second).toBe(true);
    expect([first, second, third].sort()).toEqual([first, second, third]);
  });

  it('takes fresh randomness, not a continuation, when the time moves on', () => {
    const next = monotonicUlid();
    const randoms = [T, T + 1, T + 2, T + 3, T + 4].map((t) => next(t).slice(10));
    // consecutive increments would share all but the last digits
    expect(new Set(randoms.map((r) => r.slice(0, 12))).size).toBeGreaterThan(1);
  });

  it('still makes valid, distinct, sorted ids where crypto.getRandomValues throws', () => {
    const getRandomValues = vi.spyOn(crypto, 'getRandomValues').mockImplementation(() => {
      throw new DOMException('blocked', 'SecurityError');
    });
    const next = monotonicUlid();
    const ids = [...Array.from({ length: 50 }, () => next(T)), ...Array.from({ length: 50 }, (_, i) => next(T + 1 + i))];
    expect(getRandomValues).toHaveBeenCalled();
    for (const id of ids) expect(id).toMatch(ULID);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // Math.random still gives randomness: ids of different milliseconds do not share their random part
    expect(new Set(ids.slice(50).map((id) => id.slice(10))).size).toBe(50);
  });
});
