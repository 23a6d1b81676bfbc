import type { Rng } from './rng';
import type { Loop, Agent } from './loop';

// The network and the API: requests leave a page, reach the API after a latency (unless the device is offline or
// the page died first), the API answers from the run's current phase, and the answer comes back after another
// latency. Every request is logged for the invariants (check.ts).

/** The API's behaviour for a while (the driver changes it; the run ends in 'ok'). */
export type Phase = 'ok' | 'err5xx' | 'r429' | 'r408' | 'redirect' | 'neterr' | 'blackhole' | 'slow' | 'lostAnswer' | 'r413';

/** One request as the network saw it. */
export interface Req {
  n: number;
  page: Page;
  /** fetch (the page's own request), keepalive (fetch with keepalive), beacon, later (fetchLater activated). */
  via: 'fetch' | 'keepalive' | 'beacon' | 'later';
  at: number;
  /** A deferred request: when its page handed it to the browser. */
  since?: number;
  url: string;
  writeKey: string;
  ids: string[];
  bytes: number;
  /** Reached the API and was accepted (2xx). */
  delivered?: boolean;
  /** The answer the API gave (status; 0 for none), and its Retry-After. */
  status?: number;
  retryAfter?: string | null;
  /** Its sender cannot know whether it arrived (its page died with it in flight; an answer lost or never sent). */
  unknowable?: boolean;
  /** Finished (answered, failed or abandoned): its keepalive bytes are free again. */
  done?: boolean;
  /** Handed to the browser (beacon, fetchLater) and lost by it: the page was told it was accepted. */
  lost?: boolean;
  /** A keepalive request its page had not heard the answer of as it went away (see `handOver`). */
  handed?: boolean;
  /** Its page ran the task that gave it the answer (a frozen page's waits). */
  heard?: boolean;
}

/** What the network needs of a page. */
export interface Page extends Agent {
  n: number;
  inflight: Set<Req>;
  /** Bytes of keepalive requests in flight and of deferred requests pending (one 64 KiB budget, see `budget`). */
  keepalive: number;
}

export const KEEPALIVE_QUOTA = 65536;

export function createNet(loop: Loop, rng: Rng) {
  const log: Req[] = [];
  const state = { phase: 'ok' as Phase, online: true, retryAfter: '5' };
  /** Messages the API refuses (a 400 for any batch that holds one: a message the API finds invalid). */
  const poison = new Set<string>();
  const delivered = new Map<string, number>();
  let n = 0;
  const hooks = { onSend: (_r: Req) => {} };
  const latency = () => (state.phase == 'slow' ? rng.int(2000, 20000) : rng.int(2, 300));

  const parse = (body: string, auth?: string) => {
    const json = JSON.parse(body);
    const writeKey = json.writeKey ?? (auth ? Buffer.from(auth.slice(6), 'base64').toString().slice(0, -1) : '');
    return { ids: (json.batch as { messageId: string }[]).map((m) => m.messageId), writeKey };
  };

  // The API's answer at arrival (and its effect: a 2xx delivers).
  const answer = (r: Req): { status: number; redirect?: boolean; retryAfter?: string | null; lose?: boolean; never?: boolean } => {
    const p = state.phase;
    const accept = () => {
      if (r.ids.some((id) => poison.has(id))) return { status: 400 };
      r.delivered = true;
      for (const id of r.ids) delivered.set(id, (delivered.get(id) || 0) + 1);
      return { status: 200 };
    };
    if (p == 'ok' || p == 'slow') return accept();
    if (p == 'err5xx') return { status: rng.pick([500, 502, 503, 504]) };
    if (p == 'r429') return { status: 429, retryAfter: state.retryAfter };
    if (p == 'r408') return { status: 408 };
    if (p == 'r413') return r.bytes > 20000 ? { status: 413 } : accept();
    // (a gateway in front of the API redirecting to its login page: nothing reaches the API)
    if (p == 'redirect') return { status: rng.pick([301, 302, 307, 308]), redirect: true };
    if (p == 'neterr') return { status: 0 };
    // The API processed it, and its answer was lost on the way (a dropped connection): the page sees an error.
    if (p == 'lostAnswer') return (accept().status == 200 ? (r.unknowable = true) : 0), { status: 0, lose: true };
    // No answer ever: the API may or may not have processed it.
    if (rng.chance(0.5) && accept().status == 200) r.unknowable = true;
    return { status: 0, never: true };
  };

  /**
   * Sends a request. `reply` gets the answer (a status, 0 for a network error, or null for none ever), in the
   * page's context; a browser-owned request (beacon, later, and keepalive once its page is gone) needs none.
   */
  const send = (r: Omit<Req, 'n' | 'ids' | 'writeKey'> & { body: string; auth?: string }, reply?: (s: { status: number; redirect?: boolean; retryAfter?: string | null } | null) => void): Req => {
    const { body, auth, ...rest } = r;
    const req: Req = { ...rest, n: ++n, ...parse(body, auth) };
    log.push(req);
    hooks.onSend(req);
    const page = req.page;
    const owned = req.via != 'fetch';
    if (owned) page.keepalive += req.bytes;
    page.inflight.add(req);
    const finish = () => {
      if (req.done) return;
      req.done = true;
      page.inflight.delete(req);
      if (owned) page.keepalive -= req.bytes;
    };
    const fail = () => {
      if (req.via == 'beacon' || req.via == 'later' || req.handed) req.lost = true;
    };
    // Offline: the request fails at once (a network error; a beacon's or deferred request's is lost by the browser).
    if (!state.online) {
      loop.at(rng.int(1, 30), () => (finish(), fail(), reply?.({ status: 0 })), page);
      return req;
    }
    loop.at(latency(), () => {
      // A page's own request dies with it (https://fetch.spec.whatwg.org/#concept-fetch-group-terminate); a keepalive
      // one, a beacon or a deferred request is the browser's and goes on. The network may have gone meanwhile.
      if ((req.via == 'fetch' && page.dead) || !state.online || req.done) return finish(), fail(), reply?.({ status: 0 });
      const a = answer(req);
      req.status = a.status;
      req.retryAfter = a.retryAfter;
      if (a.status < 200 || a.status > 299) fail();
      if (a.never) return; // (the page's time-out aborts it, see `abort`)
      loop.at(latency(), () => {
        finish();
        reply?.(a.lose ? { status: 0 } : a);
      }, null);
    }, null);
    return req;
  };

  return {
    set onSend(fn: (r: Req) => void) {
      hooks.onSend = fn;
    },
    log,
    state,
    poison,
    delivered,
    send,
    /**
     * The page goes away (or into the back/forward cache, or dies): its keepalive requests not answered to it yet are
     * the browser's now; its exit counted them as handed over (the next load deletes what they carry), so one that
     * fails, or failed unheard, lost its messages by the contract's rule (a browser-confirmed hand-off).
     */
    handOver(page: Page) {
      for (const r of log)
        if (r.page == page && r.via == 'keepalive' && !r.heard && !r.handed) {
          r.handed = true;
          // (it failed already, unheard: a non-2xx answer, or a network error)
          if ((r.status != null && !r.delivered) || (r.done && !r.delivered)) r.lost = true;
        }
    },
    /** The page gave up on a request (its AbortSignal): it is done, and what it never heard is unknowable. */
    abort(req: Req) {
      if (req.done) return;
      req.done = true;
      req.page.inflight.delete(req);
      if (req.via != 'fetch') req.page.keepalive -= req.bytes;
    },
  };
}
export type Net = ReturnType<typeof createNet>;
