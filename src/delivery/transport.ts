/** The answer to one request: its HTTP status (0 for a network error or time-out) and `Retry-After`. */
export interface Answer {
  _status: number;
  _retryAfter: string | null;
  /** The API answered with a redirect, which is not followed (see `_post`). */
  _redirected?: boolean;
}

/** A request that has had no answer after this long is abandoned and retried. */
export const TIMEOUT_MS = 15000;
/**
 * Chromium lets at most 64 KiB of keepalive bodies be in flight at once in a page and refuses more with a TypeError
 * (https://fetch.spec.whatwg.org/#http-network-or-cache-fetch, step "inflight keepalive bytes"); we stay under it.
 */
export const KEEPALIVE_LIMIT = 60000;

/** A request handed to the browser with `fetchLater` (see `Transport._defer`). */
export interface Deferred {
  /** Takes it back (if the browser has not sent it yet). */
  _abort(): void;
  /** Whether the browser has sent it (`FetchLaterResult.activated`). */
  _sent(): boolean;
}

/**
 * The only caller of `fetch`, `sendBeacon` and `fetchLater`. They are taken when the library loads, so a page that
 * later wraps, replaces or breaks them (a polyfill, a monkey-patch) cannot lose or change our requests.
 */
export function createTransport() {
  const fetchRef = fetch;
  const nav = navigator;
  const sendBeacon = nav.sendBeacon;
  // Deferred fetching (https://fetch.spec.whatwg.org/#deferred-fetch): Chromium 135 and later, in secure contexts.
  // (a real function: where it is missing, an element named fetchLater could stand in for it)
  // Only the browser's own: a page's stand-in (a no-op shim, a polyfill that sends at once) would lose or repeat
  // what it is given.
  const later = (globalThis as any).fetchLater;
  let fetchLater: ((url: string, init: RequestInit) => { activated: boolean }) | undefined;
  try {
    if (typeof later == 'function' && /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(later))) fetchLater = later;
  } catch {
    // a page that broke Function.prototype.toString: no deferred delivery
  }
  // Keepalive bytes this page has in flight: a request that would pass the browser's budget goes without keepalive.
  let keepaliveBytes = 0;

  return {
    /** Whether a body of `bytes` fits what is left of the page's keepalive budget now. */
    _fits: (bytes: number) => keepaliveBytes + bytes <= KEEPALIVE_LIMIT,

    /**
     * POSTs a JSON body with Basic auth; with `keepalive` (see `fits`), a request in flight when the page goes away
     * still completes, and need not be sent again.
     */
    async _post(url: string, writeKey: string, body: string, bytes: number, keepalive: boolean): Promise<Answer> {
      if (keepalive) keepaliveBytes += bytes;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
      try {
        const response = await fetchRef(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + btoa(writeKey + ':') },
          body,
          keepalive,
          credentials: 'omit',
          // A redirect is not followed (CONTRACT section 6: events go to apiHost only; a 307 would take the body
          // elsewhere, and a 302 to a login page would answer 200 to a GET): it answers status 0, retried.
          redirect: 'manual',
          signal: controller.signal,
        });
        // The answer is short: it is read to its end. A keepalive request counts against the page's 64 KiB budget
        // until its response body is done (the fetch group's in-flight records,
        // https://fetch.spec.whatwg.org/#http-network-or-cache-fetch): an unread body would hold the budget and, after
        // 64 KB, every keepalive request would fail (Chromium: e2e/delivery.spec.ts, "1,000 events of ~2 KB each
        // arrive exactly once, ..."). Cancelling the body frees it too, but Chromium then shows each request as failed
        // in the developer tools (net::ERR_ABORTED; `canceled` in the DevTools protocol's Network.loadingFailed,
        // e2e/devtools-network.spec.ts), although the API received and answered it.
        if (response.body) await response.arrayBuffer().catch(() => {});
        return { _status: response.status, _retryAfter: response.headers.get('Retry-After'), ...(response.type == 'opaqueredirect' && { _redirected: true }) };
      } catch {
        return { _status: 0, _retryAfter: null };
      } finally {
        clearTimeout(timer);
        if (keepalive) keepaliveBytes -= bytes;
      }
    },

    /**
     * Hands a body to the browser as the page goes away: `sendBeacon` as text/plain (no preflight, no headers; the
     * write key is in the body), else `fetch` with keepalive. True only when the browser said it accepted it.
     */
    _beacon(url: string, body: string): boolean {
      try {
        return sendBeacon.call(nav, url, body);
      } catch {
        // missing, or throwing (a URL it cannot use, https://w3c.github.io/beacon/#sendbeacon-method; a blocked API):
        // try keepalive fetch, whose acceptance cannot be known now
      }
      try {
        fetchRef(url, { method: 'POST', body, keepalive: true, credentials: 'omit', redirect: 'manual', headers: { 'Content-Type': 'text/plain' } }).catch(() => {});
      } catch {
        // not accepted either
      }
      return false;
    },

    /**
     * Hands a body to the browser to send as the page goes away for any reason, a crash included, or when it enters
     * the back/forward cache (`fetchLater` without `activateAfter`, so never while the page lives on): text/plain, the
     * write key in the body, as a beacon. Missing where `fetchLater` is; throws what `fetchLater` throws
     * (QuotaExceededError over the origin's 64 KiB, https://fetch.spec.whatwg.org/#available-deferred-fetch-quota).
     */
    _defer:
      fetchLater &&
      ((url: string, body: string): Deferred => {
        const controller = new AbortController();
        const result = fetchLater(url, { method: 'POST', body, credentials: 'omit', redirect: 'manual', signal: controller.signal });
        return { _abort: () => controller.abort(), _sent: () => result?.activated === true };
      }),
  };
}

/** The transport's interface. */
export type Transport = ReturnType<typeof createTransport>;
