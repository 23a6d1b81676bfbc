// @vitest-environment node
import { describe, expect, it, vi } from 'vitest';
import { createRequire } from 'node:module';

describe('dist/index.mjs (and dist/core.mjs) on a server', () => {
  it('touches no browser global when imported (window, document, navigator, storage, ...)', async () => {
    const names = ['window', 'document', 'navigator', 'location', 'localStorage', 'indexedDB', 'history', 'screen'];
    const touched: string[] = [];
    const saved = names.map((n) => [n, Object.getOwnPropertyDescriptor(globalThis, n)] as const);
    for (const n of names)
      Object.defineProperty(globalThis, n, {
        configurable: true,
        get: () => {
          touched.push(n);
          return undefined;
        },
      });
    try {
      // @ts-ignore -- the built module, imported afresh so its top level runs under the traps
      const mod = await import('../../dist/index.mjs?ssr-trap');
      expect(typeof mod.AnalyticsBrowser.load).toBe('function');
      // @ts-ignore -- svc-analytics/core, the same way
      const core = await import('../../dist/core.mjs?ssr-trap');
      expect(typeof core.AnalyticsBrowser.load).toBe('function');
    } finally {
      for (const [n, d] of saved) d ? Object.defineProperty(globalThis, n, d) : delete (globalThis as any)[n];
    }
    expect(touched).toEqual([]);
  });

  it('imports without throwing', async () => {
    // @ts-ignore -- the built module
    const mod = await import('../../dist/index.mjs');
    expect(typeof mod.AnalyticsBrowser.load).toBe('function');
  });

  describe('AnalyticsBrowser.load', () => {
    it('returns an API whose calls reject with not_loaded', async () => {
      // @ts-ignore -- the built module
      const { AnalyticsBrowser } = await import('../../dist/index.mjs');
      const api = AnalyticsBrowser.load({ writeKey: 'k' });
      await expect(api.track('Signed Up', { plan: 'pro' })).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.page()).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.identify('u1')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.group('g1')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.alias('u2')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.screen('Home')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.ecommerce.orderCompleted({ order_id: 'o1' })).rejects.toMatchObject({ code: 'not_loaded' });
    });

    it('svc-analytics/core: the same, without the helper namespaces', async () => {
      // @ts-ignore -- the built module
      const { AnalyticsBrowser } = await import('../../dist/core.mjs');
      const api = AnalyticsBrowser.load({ writeKey: 'k' });
      await expect(api.track('Signed Up')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.ready()).resolves.toBeUndefined();
      await expect(api.flush()).resolves.toBeUndefined();
      expect(api.ecommerce).toBeUndefined();
    });

    it('rejects with an Error, and passes it to the callback', async () => {
      // @ts-ignore -- the built module
      const { AnalyticsBrowser } = await import('../../dist/index.mjs');
      const api = AnalyticsBrowser.load({ writeKey: 'k' });
      const callback = vi.fn();
      const err = await api.track('x', {}, callback).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(callback).toHaveBeenCalledTimes(1);
      expect(callback.mock.calls[0][0]).toBe(err);
    });

    it('throws from no other call', async () => {
      // @ts-ignore -- the built module
      const { AnalyticsBrowser } = await import('../../dist/index.mjs');
      const api = AnalyticsBrowser.load({ writeKey: 'k' }, { trackPageViews: true, debug: false });
      expect(() => {
        api.reset();
        api.setAnonymousId('a1');
        api.on('error', () => {});
        api.off('error', () => {});
        api.debug(false);
        api.ready(() => {});
        api.flush();
        api.load('k');
      }).not.toThrow();
      expect(api.user().id()).toBeNull();
      expect(api.user().anonymousId()).toBe('');
      expect(api.user().traits()).toEqual({});
      expect(api.initialized).toBe(false);
    });
  });
});

describe('ready() and flush() on a server', () => {
  // Nothing ever loads on a server: they settle at once instead of waiting for a load that never comes.
  const settles = <T>(p: Promise<T>) => Promise.race([p.then(() => 'settled'), new Promise((r) => setTimeout(() => r('pending'), 500))]);

  it('ready() resolves and calls its callback; flush() resolves (ESM entry)', async () => {
    // @ts-ignore -- the built module
    const { AnalyticsBrowser } = await import('../../dist/index.mjs');
    const api = AnalyticsBrowser.load({ writeKey: 'k' });
    const callback = vi.fn();
    expect(await settles(api.ready(callback))).toBe('settled');
    expect(callback).toHaveBeenCalledTimes(1);
    expect(await settles(api.ready())).toBe('settled');
    expect(await settles(api.flush())).toBe('settled');
    await api.track('x').catch(() => {});
    expect(await settles(api.flush())).toBe('settled');
  });

  it('the same through require() (CommonJS entry)', async () => {
    const { AnalyticsBrowser } = createRequire(import.meta.url)('../../dist/index.cjs');
    const api = AnalyticsBrowser.load({ writeKey: 'k' });
    expect(await settles(api.ready())).toBe('settled');
    expect(await settles(api.flush())).toBe('settled');
    await expect(api.track('x')).rejects.toMatchObject({ code: 'not_loaded' });
  });

  it('a callback that throws is reported, not thrown', async () => {
    // @ts-ignore -- the built module
    const { AnalyticsBrowser } = await import('../../dist/index.mjs');
    const api = AnalyticsBrowser.load({ writeKey: 'k' });
    const errors: unknown[] = [];
    api.on('error', (e: unknown) => errors.push(e));
    await expect(api.ready(() => { throw new Error('boom'); })).resolves.toBeUndefined();
    await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0), { timeout: 2000, interval: 5 });
    expect(errors).toHaveLength(1);
  });
});
