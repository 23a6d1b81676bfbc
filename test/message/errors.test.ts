import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEpisodes, refused } from '../../src/message/errors';
import type { AnalyticsError } from '../../src/message/errors';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

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
