import { analyticsError, describe, type AnalyticsError } from '../message/errors';
import { unlink } from '../message/context';
import type { Identity } from './identity';
import type { adoptFrom } from './adopt-link';
import { ownOptions } from '../message/boundary';
import type { LoadOptions } from '../types';

/**
 * The cross-domain link (`linkDomains`, CONTRACT section 3): a link or form from this page to one of the site's other
 * domains carries the anonymous id in the `svc_link` URL parameter (src/sources/decorate.ts); a page there adopts it
 * before the first message is built (src/identity/adopt-link.ts: in the lazy chunk of the CDN bundle, which a page
 * whose URL carries the parameter waits for before `load` runs; see src/entry/browser.ts). The parameter is
 * `{time}.{hash}.{id}`: the time (ms, base 36) makes it valid for 2 minutes, and the hash of the browser's user agent
 * and language (with the time and id) for this browser only, as analytics linkers do (Google's `_gl`). It is no
 * secret: it keeps a copied, shared or bookmarked link from merging another visitor into this one. Any page on the web
 * can forge it (security-5 N1), so adoption is narrow (`adoptFrom`): the referrer's host is listed (no referrer, no
 * adoption), the id has the shape `uuid()` makes (`LINKABLE`: 36 characters), and no user id is known here.
 */

/** What the link and server-cookie code that is not in the bundle offers (a chunk, src/entry/debug-browser.ts). */
export interface LinkTools {
  /** The adoption of a link's id (src/identity/adopt-link.ts). */
  adopt: typeof adoptFrom;
  decorate(domains: unknown, id: () => string | false | undefined, report: (e: AnalyticsError) => void): void;
  sync(batch: string, domain: string | undefined, report: (e: AnalyticsError) => void, open: () => boolean): void;
}

/** Runs a function with the tools once they are here (a chunk that fails is reported there). */
export type WithTools = (use: (t: LinkTools) => void) => void;

// The adoption, once the entry gave it (`useAdoption`): without it (a chunk that could not load) the page keeps its id.
let adoption: typeof adoptFrom | undefined;
/** Gives `startLink` the adoption of a link's id (src/identity/adopt-link.ts `adoptFrom`). */
export const useAdoption = (adopt: typeof adoptFrom) => void (adoption = adopt);

/** Whether a page loaded with `options` adopts a link's id: it lists `linkDomains`, and its URL carries the parameter. */
export const linked = (options: unknown) => !!ownOptions(options as LoadOptions).linkDomains && new URLSearchParams(location.search).has('svc_link');

/**
 * `linkDomains` at load: adopts the id of a link that brought this page, and returns what starts decorating links to
 * `domains` with the anonymous id (once the tools arrive: a chunk of the CDN bundle), to be called once storing is
 * allowed (at load, or at the grant: before consent, not even the chunk is asked for); links carry it while `open()`
 * says identity may leave the page.
 */
export function startLink(domains: unknown, identity: Identity, open: () => boolean, report: (e: AnalyticsError) => void, tools: WithTools) {
  const id = adoption?.(domains);
  // (never over a visitor this browser knows by a user id: a forged link would put them in another's profile)
  if (id && !identity._userId()) identity._setAnonymousId(id);
  // Every occurrence of the parameter leaves the address bar (history state kept), adopted or not, the adoption's chunk
  // here or not; a `replaceState` that throws (a router's wrapper) is reported.
  const url = unlink(location.href);
  try {
    if (url != location.href) history.replaceState(history.state, '', url);
  } catch (e) {
    report(analyticsError('callback_error', `linkDomains: ${describe(e)}`));
  }
  let started = false;
  return () => started || ((started = true), tools((t) => t.decorate(domains, () => open() && identity._anonymousId(), report)));
}
