import { describe, expect, it } from 'vitest';
import { batchUrl, DEFAULT_API_HOST, DEFAULT_FLUSH_AT, DEFAULT_FLUSH_INTERVAL, resolve } from '../../src/api/config';
import { DEFAULT_BOUNDS } from '../../src/delivery/queue';

describe('batchUrl', () => {
  it('defaults to the US host over https', () => {
    expect(DEFAULT_API_HOST).toBe('cdp.svc.example');
    expect(batchUrl()).toBe('https://cdp.svc.example/v1/batch');
    expect(batchUrl(undefined, 'us')).toBe('https://cdp.svc.example/v1/batch');
  });

  it("uses the EU host (first label + '-eu') for region 'eu'", () => {
    expect(batchUrl(undefined, 'eu')).toBe('https://cdp-eu.svc.example/v1/batch');
  });

  it('adds https:// to an apiHost without a scheme', () => {
    expect(batchUrl('api.example.com')).toBe('https://api.example.com/v1/batch');
    expect(batchUrl('api.example.com:8443')).toBe('https://api.example.com:8443/v1/batch');
  });

  it('keeps a path on the page\'s own origin as a path (a first-party proxy), and reads //host as https', () => {
    expect(batchUrl('/ingest')).toBe('/ingest/v1/batch');
    expect(batchUrl('/ingest/')).toBe('/ingest/v1/batch');
    expect(batchUrl('/ingest/v1')).toBe('/ingest/v1/batch');
    expect(batchUrl('/a/b', 'eu')).toBe('/a/b/v1/batch');
    expect(batchUrl('//api.example.com')).toBe('https://api.example.com/v1/batch');
  });

  it('keeps a scheme that is given', () => {
    expect(batchUrl('http://localhost:8080')).toBe('http://localhost:8080/v1/batch');
    expect(batchUrl('https://api.example.com')).toBe('https://api.example.com/v1/batch');
  });

  it('does not double a trailing slash or /v1', () => {
    expect(batchUrl('https://api.example.com/')).toBe('https://api.example.com/v1/batch');
    expect(batchUrl('https://api.example.com/v1')).toBe('https://api.example.com/v1/batch');
    expect(batchUrl('https://api.example.com/v1/')).toBe('https://api.example.com/v1/batch');
    expect(batchUrl('api.example.com/v1')).toBe('https://api.example.com/v1/batch');
  });

  it('lets apiHost win over region', () => {
    expect(batchUrl('api.example.com', 'eu')).toBe('https://api.example.com/v1/batch');
  });

  it('keeps a path prefix', () => {
    expect(batchUrl('https://example.com/proxy/analytics')).toBe('https://example.com/proxy/analytics/v1/batch');
    expect(batchUrl('example.com/proxy/v1/')).toBe('https://example.com/proxy/v1/batch');
  });
});

describe('resolve', () => {
  it('fills every default', () => {
    expect(DEFAULT_FLUSH_AT).toBe(20);
    expect(DEFAULT_FLUSH_INTERVAL).toBe(1000);
    expect(resolve()).toEqual({
      url: 'https://cdp.svc.example/v1/batch',
      flushAt: 20,
      flushInterval: 1000,
      middlewareTimeout: 1000,
      integrations: {},
      ignored: [],
      bounds: { maxCount: 10000, maxBytes: 5000000, maxAgeMs: 604800000 },
    });
    expect(DEFAULT_BOUNDS).toEqual({ maxCount: 10000, maxBytes: 5000000, maxAgeMs: 604800000 });
  });

  it('keeps the values it is given', () => {
    const integrations = { Amplitude: false };
    expect(
      resolve({
        apiHost: 'api.example.com',
        flushAt: 5,
        flushInterval: 0,
        middlewareTimeout: 50,
        integrations,
        queue: { maxCount: 10, maxBytes: 1000, maxAgeMs: 60000 },
      }),
    ).toEqual({
      url: 'https://api.example.com/v1/batch',
      flushAt: 5,
      flushInterval: 0,
      middlewareTimeout: 50,
      integrations,
      ignored: [],
      bounds: { maxCount: 10, maxBytes: 1000, maxAgeMs: 60000 },
    });
  });

  it('leaves out integrations whose value is not a boolean (spec 000 section 2.3), naming them', () => {
    const r = resolve({ integrations: { A: true, B: { key: 1 }, C: 'yes', D: false } });
    expect(r.integrations).toEqual({ A: true, D: false });
    expect(r.ignored).toEqual(['B', 'C']);
  });

  it('uses the region for the url', () => {
    expect(resolve({ region: 'eu' }).url).toBe('https://cdp-eu.svc.example/v1/batch');
  });

  it('replaces unusable numbers with the defaults', () => {
    const r = resolve({ flushAt: 0, flushInterval: -1, queue: { maxCount: -5, maxBytes: 'x' as any, maxAgeMs: 0 } });
    expect(r.flushAt).toBe(20);
    expect(r.flushInterval).toBe(1000);
    expect(r.bounds).toEqual(DEFAULT_BOUNDS);
    expect(resolve({ flushAt: '3' as any }).flushAt).toBe(20);
  });
});
