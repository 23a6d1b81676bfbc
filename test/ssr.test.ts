// @vitest-environment node
import { describe, expect, it, vi } from 'vitest';

describe('dist/index.mjs on a server', () => {
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
      const mod = await import('../dist/index.mjs?ssr-trap');
      expect(typeof mod.AnalyticsBrowser.load).toBe('function');
    } finally {
      for (const [n, d] of saved) d ? Object.defineProperty(globalThis, n, d) : delete (globalThis as any)[n];
    }
    expect(touched).toEqual([]);
  });

  it('imports without throwing', async () => {
    // @ts-ignore -- the built module
    const mod = await import('../dist/index.mjs');
    expect(typeof mod.AnalyticsBrowser.load).toBe('function');
  });

  describe('AnalyticsBrowser.load', () => {
    it('returns an API whose calls reject with not_loaded', async () => {
      // @ts-ignore -- the built module
      const { AnalyticsBrowser } = await import('../dist/index.mjs');
      const api = AnalyticsBrowser.load({ writeKey: 'k' });
      await expect(api.track('Signed Up', { plan: 'pro' })).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.page()).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.identify('u1')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.group('g1')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.alias('u2')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.screen('Home')).rejects.toMatchObject({ code: 'not_loaded' });
      await expect(api.ecommerce.orderCompleted({ order_id: 'o1' })).rejects.toMatchObject({ code: 'not_loaded' });
    });

    it('rejects with an Error, and passes it to the callback', async () => {
      // @ts-ignore -- the built module
      const { AnalyticsBrowser } = await import('../dist/index.mjs');
      const api = AnalyticsBrowser.load({ writeKey: 'k' });
      const callback = vi.fn();
      const err = await api.track('x', {}, callback).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(callback).toHaveBeenCalledTimes(1);
      expect(callback.mock.calls[0][0]).toBe(err);
    });

    it('throws from no other call', async () => {
      // @ts-ignore -- the built module
      const { AnalyticsBrowser } = await import('../dist/index.mjs');
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
