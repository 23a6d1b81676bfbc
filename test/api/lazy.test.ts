import { describe, expect, it, vi } from 'vitest';
import { lazy } from '../../src/api/lazy';

// src/api/lazy.ts: an edge loaded on first use (trackLink/trackForm's sources chunk in the CDN bundle).

const deferred = <T>() => {
  let resolve!: (t: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

describe('lazy', () => {
  it('loads once, on first use, and runs what waited in call order once it is here', async () => {
    const d = deferred<{ n: string }>();
    const load = vi.fn(() => d.promise);
    const use = lazy(load, vi.fn());
    const ran: string[] = [];
    expect(load).not.toHaveBeenCalled();
    use((t) => ran.push('a' + t.n));
    use((t) => ran.push('b' + t.n));
    expect(load).toHaveBeenCalledTimes(1);
    expect(ran).toEqual([]);
    d.resolve({ n: '1' });
    await d.promise;
    await Promise.resolve();
    expect(ran).toEqual(['a1', 'b1']);
    use((t) => ran.push('c' + t.n));
    expect(ran).toEqual(['a1', 'b1', 'c1']);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('runs at once with what a loader gives at once (the npm entries)', () => {
    const use = lazy(() => ({ n: 'now' }), vi.fn());
    const ran: string[] = [];
    use((t) => ran.push(t.n));
    expect(ran).toEqual(['now']);
  });

  it('reports a load that fails, keeps what waits, and loads again on the next use', async () => {
    const report = vi.fn();
    let attempt = 0;
    const load = vi.fn(() => (++attempt == 1 ? Promise.reject(new Error('404')) : Promise.resolve({ n: 'ok' })));
    const use = lazy(load, report);
    const ran: string[] = [];
    use((t) => ran.push('first ' + t.n));
    await vi.waitFor(() => expect(report).toHaveBeenCalledWith(new Error('404')));
    expect(ran).toEqual([]);
    use((t) => ran.push('second ' + t.n));
    await vi.waitFor(() => expect(ran).toEqual(['first ok', 'second ok']));
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('reports what a loader or a function throws, never throws it', () => {
    const report = vi.fn();
    const broken = lazy(() => {
      throw new Error('no loader');
    }, report);
    expect(() => broken(() => {})).not.toThrow();
    const use = lazy(() => ({}), report);
    expect(() =>
      use(() => {
        throw new Error('bad elements');
      }),
    ).not.toThrow();
    // (a loader that failed: the edge is not here; a function that threw: the edge is, its use failed)
    expect(report.mock.calls.map((c) => [(c[0] as Error).message, c[1]])).toEqual([
      ['no loader', undefined],
      ['bad elements', 1],
    ]);
  });

  it('_settled: at once with nothing loading, once the load is over, and after ms at most (a request never answered)', async () => {
    vi.useFakeTimers();
    try {
      const d = deferred<object>();
      const use = lazy(() => d.promise, vi.fn());
      expect(use._settled(3000)).toBeUndefined();
      use(() => {});
      let settled = false;
      void Promise.resolve(use._settled(3000)).then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(2999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(settled).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
