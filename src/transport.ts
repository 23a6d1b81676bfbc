/** The answer to one request: its HTTP status (0 for a network error or time-out) and `Retry-After`. */
export interface Answer {
  status: number;
  retryAfter: string | null;
}

/** A request that has had no answer after this long is abandoned and retried. */
export const TIMEOUT_MS = 15000;
/** Chromium lets at most 64 KiB of keepalive bodies be in flight at once; we stay under it. */
export const KEEPALIVE_LIMIT = 60000;

/**
 * POSTs a JSON body with Basic auth. Bodies small enough are sent with `keepalive`, so a request in flight when the
 * page goes away still completes (and need not be sent again).
 */
export async function post(url: string, writeKey: string, body: string, bytes: number): Promise<Answer> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), TIMEOUT_MS);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + btoa(writeKey + ':') },
      body,
      keepalive: bytes <= KEEPALIVE_LIMIT,
      credentials: 'omit',
      signal: ctrl.signal,
    });
    // Chromium counts a keepalive request against the page's 64 KiB budget until its response body is done:
    // an unread body would leak that budget and, after 64 KB in a page's life, every request would fail.
    res.body?.cancel().catch(() => {});
    return { status: res.status, retryAfter: res.headers.get('Retry-After') };
  } catch {
    return { status: 0, retryAfter: null };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Hands a body to the browser as the page goes away: `sendBeacon` as text/plain (no preflight, no headers; the
 * write key is in the body), else `fetch` with keepalive. True when the browser accepted it.
 */
export function beacon(url: string, body: string): boolean {
  try {
    return navigator.sendBeacon(url, body);
  } catch {
    // refused (quota) or unavailable (a TypeError): try keepalive fetch
  }
  try {
    fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain' } }).catch(() => {});
  } catch {
    // fall through: not accepted
  }
  return false;
}
