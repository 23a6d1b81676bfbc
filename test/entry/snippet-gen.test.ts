import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
// The built module (run `npx rollup -c` first): it inlines the minified stub.
// @ts-ignore -- the built module (typed by dist/snippet-gen.d.ts, which tsc -p tsconfig.json does not see)
import { snippet, BUNDLE_INTEGRITY } from '../../dist/snippet-gen.mjs';

const STUB = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../dist/snippet.min.js'), 'utf8').trim();
const DEFAULT_CDN = 'https://cdn.svc.example/analytics.js/v1/analytics.min.js';

type Recorded = [string, unknown[], [string, string, string], number];
const w = window as any;

let scripts: HTMLScriptElement[];
beforeEach(() => {
  delete w.analytics;
  scripts = [];
  // Record the bundle's <script> instead of letting happy-dom try to load it.
  const append = document.head.appendChild;
  vi.spyOn(document.head, 'appendChild').mockImplementation(function (this: HTMLHeadElement, node: Node) {
    if (node.nodeName != 'SCRIPT') return append.call(this, node);
    scripts.push(node as HTMLScriptElement);
    return node;
  } as any);
});
afterEach(() => {
  delete w.analytics;
  vi.restoreAllMocks();
});

// Runs the text as an inline <script> would (in tests only).
const run = (text: string) => new Function(text)();
const calls = (): Recorded[] => Array.from(w.analytics as Recorded[]);

describe('snippet', () => {
  it('contains the loader stub, before the load call', () => {
    expect(STUB.length).toBeGreaterThan(0);
    const out = snippet({ writeKey: 'key' });
    expect(out).toContain(STUB);
    expect(out.indexOf(STUB)).toBeLessThan(out.indexOf('analytics.load('));
  });

  it('calls analytics.load with the write key and no options when none are given', () => {
    const out = snippet({ writeKey: 'key' });
    expect(out).toContain('analytics.load("key");');
  });

  it('passes cdnUrl, apiHost and region to load as JSON', () => {
    const out = snippet({ writeKey: 'key', cdnUrl: 'https://cdn.example/a.js', apiHost: 'api.example.com', region: 'eu' });
    const m = /analytics\.load\("key",(\{.*?\})\);/.exec(out);
    expect(m).not.toBeNull();
    expect(JSON.parse(m![1])).toEqual({ cdnUrl: 'https://cdn.example/a.js', apiHost: 'api.example.com', region: 'eu' });
  });

  it('calls analytics.page() by default', () => {
    expect(snippet({ writeKey: 'key' })).toContain('analytics.page()');
  });

  it('does not call analytics.page() with page: false', () => {
    expect(snippet({ writeKey: 'key', page: false })).not.toContain('analytics.page()');
  });

  it('cannot close the surrounding script tag, whatever the values', () => {
    const evil = '</script><script>alert(1)</script><!--';
    const out = snippet({ writeKey: evil, cdnUrl: 'https://x/</SCRIPT>', apiHost: '<!--</script >', integrations: { '</script>': true } });
    expect(out).not.toMatch(/<\/script/i);
    expect(out).not.toContain('<!--');
    expect(out).not.toContain('-->');
    run(out);
    const load = calls().find((c) => c[0] == 'load')!;
    expect(load[1]).toEqual([evil, { cdnUrl: 'https://x/</SCRIPT>', apiHost: '<!--</script >', integrations: { '</script>': true } }]);
  });

  it('escapes U+2028 and U+2029 (line terminators to older engines), and the values survive', () => {
    const out = snippet({ writeKey: 'k\u2028ey\u2029', apiHost: 'a\u2028b' });
    expect(out).not.toMatch(/[\u2028\u2029]/);
    expect(out).toContain('\\u2028');
    run(out);
    expect(calls().find((c) => c[0] == 'load')![1]).toEqual(['k\u2028ey\u2029', { apiHost: 'a\u2028b' }]);
  });

  it('passes every load option through, as given (CONTRACT section 3)', () => {
    const options = {
      apiHost: '/ingest',
      region: 'eu' as const,
      cdnUrl: '/s/a.js',
      flushAt: 5,
      flushInterval: 250,
      trackPageViews: true,
      integrations: { Amplitude: false },
      storage: 'localStorage' as const,
      cookie: { domain: 'example.com', maxage: 30 },
      queue: { maxCount: 100, maxBytes: 100000, maxAgeMs: 60000 },
      highEntropyHints: true,
      debug: false,
      middlewareTimeout: 500,
      consent: { categories: ['analytics'] },
      respectGPC: true,
    };
    run(snippet({ writeKey: 'key', ...options }));
    expect(calls().find((c) => c[0] == 'load')![1]).toEqual(['key', options]);
  });

  it('leaves out options that are undefined, and its own (writeKey, page, integrity)', () => {
    const out = snippet({ writeKey: 'key', apiHost: undefined, page: false, integrity: false });
    expect(out).toContain('analytics.load("key");');
  });

  it('throws a TypeError at generation time without a write key, instead of load("undefined")', () => {
    for (const bad of [{}, { writeKey: '' }, { writeKey: '  ' }, { writeKey: 42 }, { writeKey: null }]) {
      expect(() => snippet(bad as any), JSON.stringify(bad)).toThrow(TypeError);
      expect(() => snippet(bad as any)).toThrow(/writeKey/);
    }
    expect(() => (snippet as any)()).toThrow(TypeError);
    expect(() => snippet('key' as any)).toThrow(TypeError);
  });

  it('throws a TypeError for an option that cannot be written into the page', () => {
    expect(() => snippet({ writeKey: 'k', integrations: { a: 1n } as any })).toThrow(/integrations/);
    expect(() => snippet({ writeKey: 'k', apiHost: (() => 'x') as any })).toThrow(/apiHost/);
    const cyclic: any = {};
    cyclic.self = cyclic;
    expect(() => snippet({ writeKey: 'k', cookie: cyclic })).toThrow(TypeError);
    expect(() => snippet({ writeKey: 'k', cdnUrl: '' })).toThrow(/cdnUrl/);
  });

  describe('Subresource Integrity', () => {
    const CDN = 'https://cdn.example/analytics.js/0.1.0/analytics.min.js';

    it("BUNDLE_INTEGRITY is the sha384 of this build's dist/analytics.min.js, as in dist/sri.json and dist/analytics.min.js.sri", () => {
      const bundle = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../dist/analytics.min.js'));
      const expected = 'sha384-' + createHash('sha384').update(bundle).digest('base64');
      expect(BUNDLE_INTEGRITY).toBe(expected);
      const sri = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../dist/sri.json'), 'utf8'));
      expect(sri['analytics.min.js']).toBe(expected);
      expect(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../dist/analytics.min.js.sri'), 'utf8').trim()).toBe(expected);
      const debug = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../dist/analytics.debug.min.js'));
      expect(sri['analytics.debug.min.js']).toBe('sha256-' + createHash('sha256').update(debug).digest('base64'));
    });

    it('integrity: true gives the bundle script integrity and crossorigin="anonymous" (set before it is inserted)', () => {
      const seen: [string, string][] = [];
      (document.head.appendChild as any).mockImplementation(function (node: HTMLScriptElement) {
        seen.push([node.integrity, node.crossOrigin!]);
        scripts.push(node);
        return node;
      });
      const out = snippet({ writeKey: 'key', cdnUrl: CDN, integrity: true });
      expect(out).toContain(BUNDLE_INTEGRITY);
      run(out);
      expect(scripts).toHaveLength(1);
      expect(scripts[0].src).toBe(CDN);
      expect(seen).toEqual([[BUNDLE_INTEGRITY, 'anonymous']]);
      expect(scripts[0].getAttribute('integrity')).toBe(BUNDLE_INTEGRITY);
      expect(scripts[0].getAttribute('crossorigin')).toBe('anonymous');
      // The recorded load is the same as without integrity, and document.createElement is the page's own again.
      expect(calls().find((c) => c[0] == 'load')![1]).toEqual(['key', { cdnUrl: CDN }]);
      expect(Object.prototype.hasOwnProperty.call(document, 'createElement')).toBe(false);
      expect(document.createElement('div').integrity).toBeUndefined();
      expect(calls().filter((c) => c[0] == 'page')).toHaveLength(1);
    });

    it('integrity: a hash of your own', () => {
      const hash = 'sha512-' + 'A'.repeat(86) + '==';
      run(snippet({ writeKey: 'key', cdnUrl: CDN, integrity: hash }));
      expect(scripts[0].integrity).toBe(hash);
      expect(scripts[0].crossOrigin).toBe('anonymous');
    });

    it('no integrity unless asked', () => {
      const out = snippet({ writeKey: 'key', cdnUrl: CDN });
      expect(out).not.toContain('integrity');
      run(out);
      expect(scripts[0].getAttribute('integrity')).toBeNull();
      expect(scripts[0].getAttribute('crossorigin')).toBeNull();
    });

    it('refuses integrity without cdnUrl (the default URL moves with releases) or with a value that is not a hash', () => {
      expect(() => snippet({ writeKey: 'key', integrity: true })).toThrow(/cdnUrl/);
      expect(() => snippet({ writeKey: 'key', cdnUrl: CDN, integrity: 'md5-abc' })).toThrow(TypeError);
      expect(() => snippet({ writeKey: 'key', cdnUrl: CDN, integrity: '"><script>' })).toThrow(TypeError);
      expect(() => snippet({ writeKey: 'key', cdnUrl: CDN, integrity: 1 as any })).toThrow(TypeError);
    });

    it('keeps a createElement the page had put on document itself', () => {
      const own = vi.fn((tag: string) => Document.prototype.createElement.call(document, tag));
      (document as any).createElement = own;
      try {
        run(snippet({ writeKey: 'key', cdnUrl: CDN, integrity: true }));
        expect(document.createElement).toBe(own);
        expect(own).toHaveBeenCalledWith('script');
        expect(scripts[0].integrity).toBe(BUNDLE_INTEGRITY);
      } finally {
        delete (document as any).createElement;
      }
    });
  });

  describe('evaluated in a page', () => {
    it('defines window.analytics, records load and inserts the bundle script', () => {
      run(snippet({ writeKey: 'key', apiHost: 'api.example.com' }));
      expect(Array.isArray(w.analytics)).toBe(true);
      const load = calls().find((c) => c[0] == 'load')!;
      expect(load[1]).toEqual(['key', { apiHost: 'api.example.com' }]);
      expect(scripts).toHaveLength(1);
      expect(scripts[0].tagName).toBe('SCRIPT');
      expect(scripts[0].src).toBe(DEFAULT_CDN);
      // (async: a script inserted by script is async in browsers, not in happy-dom; e2e/core.spec.ts checks it)
    });

    it('loads the bundle from cdnUrl when given', () => {
      run(snippet({ writeKey: 'key', cdnUrl: 'https://cdn.example/custom.js' }));
      expect(scripts.map((s) => s.src)).toEqual(['https://cdn.example/custom.js']);
    });

    it('records the initial page() call unless page is false', () => {
      run(snippet({ writeKey: 'key' }));
      expect(calls().filter((c) => c[0] == 'page')).toHaveLength(1);
      delete w.analytics;
      run(snippet({ writeKey: 'key', page: false }));
      expect(calls().filter((c) => c[0] == 'page')).toHaveLength(0);
    });

    it('records each call as [method, args, [url, title, referrer], time], with the page at call time', () => {
      run(snippet({ writeKey: 'key', page: false }));
      history.pushState({}, '', '/shop/item?id=7');
      document.title = 'Item 7';
      const before = Date.now();
      w.analytics.track('Clicked', { a: 1 });
      const after = Date.now();
      history.pushState({}, '', '/cart');
      document.title = 'Cart';
      w.analytics.identify('u1', { plan: 'pro' });

      const [track, identify] = calls().filter((c) => c[0] != 'load');
      expect(track[0]).toBe('track');
      expect(track[1]).toEqual(['Clicked', { a: 1 }]);
      expect(track[2]).toEqual([new URL('/shop/item?id=7', location.href).href, 'Item 7', document.referrer]);
      expect(track[3]).toBeGreaterThanOrEqual(before);
      expect(track[3]).toBeLessThanOrEqual(after);
      expect(identify[0]).toBe('identify');
      expect(identify[1]).toEqual(['u1', { plan: 'pro' }]);
      expect(identify[2]).toEqual([new URL('/cart', location.href).href, 'Cart', document.referrer]);
    });

    it('has a recording stub for every call of the API', () => {
      run(snippet({ writeKey: 'key', page: false }));
      for (const m of ['identify', 'track', 'page', 'screen', 'group', 'alias', 'reset', 'setAnonymousId', 'ready', 'flush', 'on', 'off', 'debug', 'user']) {
        expect(typeof w.analytics[m], m).toBe('function');
        w.analytics[m]('arg-' + m);
        expect(calls().at(-1)![0]).toBe(m);
        expect(calls().at(-1)![1]).toEqual(['arg-' + m]);
      }
    });

    it("records ecommerce helpers as 'ecommerce.<helper>'", () => {
      run(snippet({ writeKey: 'key', page: false }));
      w.analytics.ecommerce.orderCompleted({});
      w.analytics.ecommerce.productAddedToWishlist({ product_id: 'p1' });
      const recorded = calls().filter((c) => c[0] != 'load');
      expect(recorded.map((c) => c[0])).toEqual(['ecommerce.orderCompleted', 'ecommerce.productAddedToWishlist']);
      expect(recorded[0][1]).toEqual([{}]);
      expect(recorded[1][1]).toEqual([{ product_id: 'p1' }]);
      expect(recorded[0][2][0]).toBe(location.href);
    });

    it('keeps the stub and the calls of the first run when evaluated twice', () => {
      const text = snippet({ writeKey: 'key' });
      run(text);
      const stub = w.analytics;
      stub.track('First');
      expect(() => run(text)).not.toThrow();
      expect(w.analytics).toBe(stub);
      expect(calls().filter((c) => c[0] == 'track').map((c) => c[1])).toEqual([['First']]);
      expect(typeof w.analytics.track).toBe('function');
    });

    it('loads the bundle and records the initial page view once when evaluated twice', () => {
      const text = snippet({ writeKey: 'key' });
      run(text);
      run(text);
      expect(scripts).toHaveLength(1);
      expect(calls().filter((c) => c[0] == 'load')).toHaveLength(1);
      expect(calls().filter((c) => c[0] == 'page')).toHaveLength(1);
    });

    it('runs over an element named analytics whose children are named invoked and VERSION (security-3 L2), and not over the library', () => {
      // (what a browser gives for <form id="analytics"><input name="invoked">...: happy-dom has no named access on forms)
      const form = document.createElement('form');
      for (const n of ['invoked', 'VERSION', 'load']) (form as any)[n] = form.appendChild(Object.assign(document.createElement('input'), { name: n, value: '1' }));
      w.analytics = form;
      expect(() => run(snippet({ writeKey: 'key' }))).not.toThrow();
      expect(Array.isArray(w.analytics)).toBe(true);
      expect(scripts).toHaveLength(1);
      expect(calls().map((c) => c[0])).toEqual(['load', 'page']);
      // the library loaded already: left alone
      const lib = { VERSION: '1.0.0', initialized: true, load: () => lib.loaded++, page: () => lib.paged++, loaded: 0, paged: 0 };
      w.analytics = lib;
      run(snippet({ writeKey: 'key' }));
      expect(w.analytics).toBe(lib);
      expect([lib.loaded, lib.paged]).toEqual([0, 0]);
    });

    it('loads a bundle that is on the page without a stub and not loaded yet (its own <script> tag): its own load and page', () => {
      const lib = { VERSION: '1.0.0', initialized: false, load: (..._a: unknown[]) => void lib.loads.push(_a), page: () => lib.paged++, loads: [] as unknown[], paged: 0 };
      w.analytics = lib;
      run(snippet({ writeKey: 'key' }));
      expect(w.analytics).toBe(lib);
      expect(lib.loads).toHaveLength(1);
      expect(lib.loads[0]).toEqual(['key']);
      expect(lib.paged).toBe(1);
      expect(scripts).toHaveLength(0);
    });
  });
});
