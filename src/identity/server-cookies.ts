import type { AnalyticsError } from '../message/errors';
import type { IdentityOptions } from './identity';
import type { WithTools } from './link';
import { analyticsError } from '../message/errors';
import { KEYS, readCookie } from './identity';

/**
 * `serverCookies` (CONTRACT section 3): the site's own server sets the identity cookies (`POST {apiHost}/v1/cookies`),
 * so that browsers that cap cookies written by scripts (Safari: 7 days) keep the visitor. The body of the last request
 * a 2xx answered lives in localStorage under this key; the last request's time and body under `{key}_asked`.
 */
export const SYNC_KEY = 'svc_server_cookies';
/** At most one request a day while the cookies are unchanged. */
export const SYNC_EVERY = 864e5;

const record = (): { t?: number; b?: string } => {
  try {
    return JSON.parse(localStorage.getItem(SYNC_KEY + '_asked')!) || {};
  } catch {
    return {};
  }
};

/**
 * Whether the server's cookie `name` holds `value` now (set by it, unchanged since): the script then leaves it be.
 * (Where localStorage throws, a cookie that holds the value is left be too.)
 */
export const serverHolds = (name: string, value: string) =>
  readCookie(document.cookie, name) == value && (localStorage.getItem(SYNC_KEY) || '').includes(`"${name}":"${value}"`);

/**
 * The identity store's `server` option for `serverCookies`, given the batch URL of the page's own `apiHost`: the sync
 * runs in the tools' chunk (which checks that it is a first-party path), while `open()` (not before consent).
 */
export function serverCookies(batch: string, open: () => boolean, report: (e: AnalyticsError) => void, tools: WithTools): IdentityOptions['server'] {
  return {
    _holds: serverHolds,
    _changed: (domain) => open() && tools((t) => t.sync(batch, domain, report, open)),
    // What was asked holds the ids: it goes with them (consent withdrawn, opt-out).
    _forget: () => [SYNC_KEY, SYNC_KEY + '_asked'].forEach((k) => localStorage.removeItem(k)),
  };
}

// The identity cookies the server sets: the ids (traits live in localStorage only).
const NAMES = [KEYS.anonymousId, KEYS.userId, KEYS.groupId];
let timer: ReturnType<typeof setTimeout> | undefined;
let warned = false;

/**
 * Asks the server to set the identity cookies the page holds, when they changed since the last request or a day
 * passed: once, after the current task (a load writes several). A request that fails is not repeated before either;
 * meanwhile the script keeps writing the cookies itself. Reports a refusal, and (once) a `batch` URL that is not a
 * path of this site. Nothing while storing is not allowed (`open`).
 */
export function syncCookies(batch: string, domain: string | undefined, report: (e: AnalyticsError) => void, open: () => boolean) {
  if (batch[0] != '/') {
    if (!warned) report(analyticsError('invalid_arguments', 'serverCookies: apiHost must be a path of this site'));
    warned = true;
    return;
  }
  const url = location.origin + batch.replace(/batch$/, 'cookies');
  clearTimeout(timer);
  timer = setTimeout(() => {
    // (nothing is asked once the visitor opted out or consent was withdrawn meanwhile)
    if (!open()) return;
    try {
      const cookies: Record<string, string> = {};
      for (const n of NAMES) {
        const v = readCookie(document.cookie, n);
        if (v) cookies[n] = v;
      }
      const body = JSON.stringify(domain ? { cookies, domain } : { cookies });
      const r = record();
      const now = Date.now();
      if (r.b == body && now - r.t! < SYNC_EVERY) return;
      localStorage.setItem(SYNC_KEY + '_asked', JSON.stringify({ t: now, b: body }));
      fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, credentials: 'same-origin', keepalive: true })
        .then((res) => {
          if (!res.ok) return report(analyticsError('delivery_rejected', `serverCookies: ${url} answered ${res.status}`));
          // What the server set: all it was asked, unless it names fewer (`X-Svc-Cookies`: the recipes set the user and
          // group ids only when told to); the page's script keeps writing the others.
          const set = res.headers.get('x-svc-cookies')?.split(' ');
          for (const n in cookies) if (set && !set.includes(n)) delete cookies[n];
          localStorage.setItem(SYNC_KEY, JSON.stringify(domain ? { cookies, domain } : { cookies }));
        })
        .catch(() => {}); // offline: asked again tomorrow, or at the next change
    } catch {
      // no localStorage: no sync (the script's cookies stay)
    }
  });
}
