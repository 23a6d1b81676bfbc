import type { LoadOptions } from '../types';
import { DEFAULT_BOUNDS, type QueueBounds } from '../delivery/queue';
import { DEFAULT_MIDDLEWARE_TIMEOUT } from '../extend/transforms';
import { ownOptions } from '../message/boundary';

/** The service's US host; the EU host has `-eu` on its first label. */
export const DEFAULT_API_HOST = 'cdp.svc.example';

/**
 * `flushAt` default: 20 messages. The first message of a quiet spell goes at once; what follows within a second
 * waits and leaves in one request, and 1,000 events cost about 50 requests at most (a tight loop of calls goes out
 * in as few as the 500 KB limit allows).
 */
export const DEFAULT_FLUSH_AT = 20;
/** `flushInterval` default: 1,000 ms, so events show up within a second; page exit is covered by sendBeacon. */
export const DEFAULT_FLUSH_INTERVAL = 1000;

/**
 * `{apiHost}/v1/batch` from the `apiHost` and `region` options (CONTRACT section 3); pure. A path (`/ingest`) stays a
 * path on the page's own origin: a first-party proxy.
 */
export function batchUrl(apiHost?: string, region?: string): string {
  let h = apiHost || (region == 'eu' ? DEFAULT_API_HOST.replace(/^[^.]+/, '$&-eu') : DEFAULT_API_HOST);
  if (/^\/\//.test(h)) h = 'https:' + h;
  else if (!/^(https?:\/)?\//i.test(h)) h = 'https://' + h;
  return h.replace(/\/+$/, '').replace(/\/v1$/i, '') + '/v1/batch';
}

// (written once, with the other primitives of the page boundary)
export { ownOptions };

/** Load options with every default filled in; pure. */
export function resolve(options: LoadOptions = {}) {
  const o = ownOptions(options);
  const num = (v: unknown, d: number, min: number) => (typeof v == 'number' && v >= min ? v : d);
  const q = ownOptions(o.queue);
  const integrations = Object.entries(o.integrations && typeof o.integrations == 'object' ? o.integrations : {});
  const bounds: QueueBounds = {
    maxCount: num(q.maxCount, DEFAULT_BOUNDS.maxCount, 1),
    maxBytes: num(q.maxBytes, DEFAULT_BOUNDS.maxBytes, 1),
    maxAgeMs: num(q.maxAgeMs, DEFAULT_BOUNDS.maxAgeMs, 1),
  };
  return {
    url: batchUrl(o.apiHost, o.region),
    flushAt: num(o.flushAt, DEFAULT_FLUSH_AT, 1),
    flushInterval: num(o.flushInterval, DEFAULT_FLUSH_INTERVAL, 0),
    middlewareTimeout: num(o.middlewareTimeout, DEFAULT_MIDDLEWARE_TIMEOUT, 1),
    // The API takes only booleans (spec 000 section 2.3): other values are left out, and named in `ignored`.
    integrations: Object.fromEntries(integrations.filter(([, v]) => typeof v == 'boolean')),
    ignored: integrations.filter(([, v]) => typeof v != 'boolean').map(([k]) => k),
    bounds,
  };
}
