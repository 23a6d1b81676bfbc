/** What to do with a batch after an answer: drop it as delivered, keep it for later, or isolate a bad message. */
export type Verdict = 'ok' | 'retry' | 'split';

/** First retry delay in ms; doubles with each attempt. */
export const BASE_DELAY = 1000;
/** Longest backoff delay in ms. */
export const MAX_DELAY = 60000;
/** Longest `Retry-After` honoured, in ms (a server asking for more gets retried after this). */
export const MAX_RETRY_AFTER = 3600000;

/**
 * Classifies an HTTP status (0 for a network error or timeout): 2xx delivered; 400, 413 and 422 blame a message in
 * the batch, which is isolated by splitting it. Any other answer is retried: network errors, 408, 429 and 5xx, and
 * the 4xx that say nothing about a message (401 and 403 refuse the write key; 404, 405, 410, ... the path, as a
 * first-party proxy or a gateway answers during a deploy): messages leave the queue only after a 2xx, so a key or
 * a route fixed or restored delivers them.
 */
export function classify(status: number): Verdict {
  if (status >= 200 && status < 300) return 'ok';
  return status == 400 || status == 413 || status == 422 ? 'split' : 'retry';
}

/** Exponential backoff with jitter: attempt 1 waits 0.5-1 s, doubling up to a 30-60 s cap. */
export function backoff(attempt: number, random: () => number = Math.random): number {
  return Math.min(MAX_DELAY, BASE_DELAY * 2 ** Math.max(0, attempt - 1)) * (0.5 + random() / 2);
}

/** A `Retry-After` header (seconds or an HTTP date) in ms from `now`; undefined when absent or unreadable. */
export function retryAfter(header: string | null | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  const ms = isNaN(s) ? Date.parse(header) - now : s * 1000;
  return isNaN(ms) ? undefined : Math.min(MAX_RETRY_AFTER, Math.max(0, ms));
}

/** The delay before the next attempt: the server's `Retry-After` when it gave one, else backoff. */
export function nextDelay(attempt: number, header: string | null | undefined, now: number, random?: () => number): number {
  const ra = retryAfter(header, now);
  return ra ?? backoff(attempt, random);
}
