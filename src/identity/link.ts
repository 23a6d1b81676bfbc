import type { AnalyticsError } from '../message/errors';
import type { Identity } from './identity';
import { analyticsError, describe } from '../message/errors';
import { unlink } from '../message/context';

/**
 * The cross-domain link (`linkDomains`, CONTRACT section 3): a link or form from this page to one of the site's other
 * domains carries the anonymous id in the `svc_link` URL parameter (src/sources/decorate.ts); a page there adopts it
 * (here, in the bundle: before the first message is built, without waiting for anything). The parameter is
 * `{time}.{hash}.{id}`: the time (ms, base 36) makes it valid for 2 minutes, and the hash of the browser's user agent
 * and language (with the time and id) for this browser only, as analytics linkers do (Google's `_gl`). It is no
 * secret: it keeps a copied, shared or bookmarked link from merging another visitor into this one. Any page on the web
 * can forge it (security-5 N1), so adoption is narrow (`startLink`): the referrer's host is listed (no referrer, no
 * adoption), the id has the shape `uuid()` makes (`LINKABLE`: 36 characters), and no user id is known here.
 */

/** The anonymous id's shape that a link carries and a page adopts: a UUID, as src/identity/identity.ts makes it. */
export const LINKABLE = /^[\da-f]{8}(-[\da-f]{4}){3}-[\da-f]{12}$/i;

/** How long a link's parameter is valid: 2 minutes. */
export const LINK_TTL = 120000;

/** A 32-bit rolling hash of this browser (user agent, language) and a token, in base 36: short and synchronous. */
export const sign = (time: string, id: string) => {
  let h = 0;
  for (const c of navigator.userAgent + navigator.language + time + id) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return (h >>> 0).toString(36);
};

/**
 * The id a parameter value carries, when this browser made it less than 2 minutes before `now` and it has the
 * library's shape (`LINKABLE`); else undefined.
 */
export function linkedId(value: string, now: number): string | undefined {
  const m = /^(\w+)\.(\w+)\.(.+)/.exec(value);
  return m && LINKABLE.test(m[3]) && sign(m[1], m[3]) == m[2] && Math.abs(now - parseInt(m[1], 36)) < LINK_TTL ? m[3] : undefined;
}

/**
 * On a page loaded through a link: takes the parameter off the address bar (`history.replaceState`, with the history
 * state kept) and returns the id it carries if it is valid (an expired one, or one of another browser, is dropped).
 * A `replaceState` that throws (a router's wrapper) is reported.
 */
export function adoptLink(report: (e: AnalyticsError) => void): string | undefined {
  const value = new URLSearchParams(location.search).get('svc_link');
  if (value == null) return;
  try {
    history.replaceState(history.state, '', unlink(location.href));
  } catch (e) {
    report(analyticsError('callback_error', `linkDomains: ${describe(e)}`));
  }
  return linkedId(value, Date.now());
}

/**
 * Whether this page was loaded from one of `domains` (a listed name covers its subdomains), as its referrer says: only
 * a link from one of them is adopted. A page whose referrer was withheld (`rel=noreferrer`, `Referrer-Policy:
 * no-referrer`) cannot tell, and does not adopt (decorated links keep their origin as referrer: decorate.ts).
 */
export function cameFrom(domains: unknown): boolean {
  const from = document.referrer;
  return !!from && (Array.isArray(domains) && domains.some((d) => ('.' + new URL(from).hostname).endsWith('.' + String(d).toLowerCase().replace(/^\./, ''))));
}

/** What the link and server-cookie code that is not in the bundle offers (a chunk, src/entry/debug-browser.ts). */
export interface LinkTools {
  decorate(domains: unknown, id: () => string | false | undefined, report: (e: AnalyticsError) => void): void;
  sync(batch: string, domain: string | undefined, report: (e: AnalyticsError) => void, open: () => boolean): void;
}

/** Runs a function with the tools once they are here (a chunk that fails is reported there). */
export type WithTools = (use: (t: LinkTools) => void) => void;

/**
 * `linkDomains` at load: adopts the id of a link that brought this page, and returns what starts decorating links to
 * `domains` with the anonymous id (once the tools arrive: a chunk of the CDN bundle), to be called once storing is
 * allowed (at load, or at the grant: before consent, not even the chunk is asked for); links carry it while `open()`
 * says identity may leave the page.
 */
export function startLink(domains: unknown, identity: Identity, open: () => boolean, report: (e: AnalyticsError) => void, tools: WithTools) {
  const id = adoptLink(report);
  // (never over a visitor this browser knows by a user id: a forged link would put them in another's profile)
  if (id && !identity._userId() && cameFrom(domains)) identity._setAnonymousId(id);
  let started = false;
  return () => started || ((started = true), tools((t) => t.decorate(domains, () => open() && identity._anonymousId(), report)));
}
