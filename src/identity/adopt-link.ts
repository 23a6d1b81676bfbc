// The adoption of a cross-domain link's id (`linkDomains`, src/identity/link.ts): in the lazy chunk of the CDN bundle
// (src/entry/debug-browser.ts), fetched before `load` only on a page whose URL carries the link parameter; in the npm
// entries, given at once (src/entry/npm.ts).

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
 * On a page loaded through a link: the id its parameter carries if it is valid (an expired one, or one of another
 * browser, is dropped). (`startLink` takes the parameter off the address bar, whether adopted or not.)
 */
export function adoptLink(): string | undefined {
  const value = new URLSearchParams(location.search).get('svc_link');
  return value == null ? undefined : linkedId(value, Date.now());
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

/**
 * The adoption itself (`startLink` runs it at load, before the first message is built): the id the link's parameter
 * carries when it is valid and the page came from one of `domains`.
 */
export function adoptFrom(domains: unknown): string | undefined {
  const id = adoptLink();
  return id && cameFrom(domains) ? id : undefined;
}
