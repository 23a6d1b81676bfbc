import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { analyticsError, createEpisodes, refused } from '../../src/message/errors';
import type { AnalyticsError } from '../../src/message/errors';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('analyticsError', () => {
  it("is made, not thrown, on a page that froze Error.prototype (assigning its read-only `name` throws in strict code)", () => {
    let e: AnalyticsError | undefined;
    // (Error.prototype's `name` made read-only, as Object.freeze(Error.prototype) does, then put back)
    const saved = Object.getOwnPropertyDescriptor(Error.prototype, 'name')!;
    Object.defineProperty(Error.prototype, 'name', { ...saved, writable: false });
    try {
      e = analyticsError('invalid_arguments', 'bad', ['m1']);
    } finally {
      Object.defineProperty(Error.prototype, 'name', saved);
    }
    expect(e).toBeInstanceOf(Error);
    expect({ code: e!.code, message: e!.message, ids: e!.messageIds }).toEqual({ code: 'invalid_arguments', message: 'bad', ids: ['m1'] });
    expect(analyticsError('dropped', 'x').name).toBe('AnalyticsError');
  });
});

describe('createEpisodes', () => {
  it('reports a burst once, after its task, with every id', async () => {
    const report = vi.fn<(e: AnalyticsError) => void>();
    const full = createEpisodes('queue_full', (n) => `${n} refused`, report);
    for (let i = 0; i < 3; i++) full.add(['id' + i]);
    expect(report).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(0);
    expect(report).toHaveBeenCalledTimes(1);
    expect(report.mock.calls[0][0]).toMatchObject({ code: 'queue_full', message: '3 refused', messageIds: ['id0', 'id1', 'id2'] });
  });

  it('starts a new episode in a later task', async () => {
    const report = vi.fn<(e: AnalyticsError) => void>();
    const full = createEpisodes('queue_full', (n) => `${n}`, report);
    full.add(['a']);
    full.add(['b']);
    await vi.advanceTimersByTimeAsync(0);
    full.add(['c']);
    await vi.advanceTimersByTimeAsync(0);
    expect(report.mock.calls.map((c) => c[0].messageIds)).toEqual([['a', 'b'], ['c']]);
  });
});

describe('refused', () => {
  it('rejects without an unhandled rejection when ignored', async () => {
    const e = new Error('x');
    await expect(refused(e)).rejects.toBe(e);
  });
});
