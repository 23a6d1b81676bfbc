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

/**
 * What the scheduler learnt of the API's answers in this page: what tells a bad message from a failing endpoint (the
 * answers so far, the number of the last 2xx, and that of the first 400, 413 or 422 each record got), and whether a
 * redirect was reported yet.
 */
export function createAnswers() {
  let answers = 0;
  let lastOk = 0;
  let redirected = false;
  const refused = new Map<string, number>();
  return {
    /** Counts an answer: its number. */
    _next: () => ++answers,
    /** Answer `n` was a 2xx for these ids. */
    _ok(ids: string[], n: number) {
      lastOk = n;
      ids.forEach((id) => refused.delete(id));
    },
    /** Answer `n` refused these ids (400, 413, 422): the first refusal of each is kept. */
    _refused(ids: string[], n: number) {
      for (const id of ids) refused.get(id) || refused.set(id, n);
    },
    /**
     * Whether `id`, refused alone, is a bad message: only if the API accepted a request sent since it was first
     * refused (until then the endpoint may be what fails). It is forgotten then.
     */
    _bad(id: string): boolean {
      if (lastOk < refused.get(id)!) return false;
      refused.delete(id);
      return true;
    },
    /** True the first time only: a redirect is reported once a page. */
    _firstRedirect: () => !redirected && (redirected = true),
  };
}
