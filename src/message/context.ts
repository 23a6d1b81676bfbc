import type { JSONObject, JSONValue, MessageContext, PageContext } from './types';
import { ownKeys, setOwn } from './validate';
import { hasDocument } from '../offline/scope';

type JSONRecord = { [key: string]: JSONValue };

/** The library's name and version, stamped on every message as `context.library`. */
export const LIBRARY = { name: 'svc-analytics', version: '__VERSION__' };

/** Facts about the browser read once at load (see `readEnvironment`); plain data, never changed afterwards. */
export interface Environment {
  userAgent: string;
  locale: string;
  timezone?: string;
  /** (none in a worker) */
  screen?: { width: number; height: number; density: number };
  userAgentData?: { brands: { brand: string; version: string }[]; mobile: boolean; platform: string };
  os?: { name: string; version?: string };
  device?: { type: string };
}

/** High-entropy client hints, when asked for and received (see `highEntropyHints`). */
export interface Hints {
  model?: string;
  platformVersion?: string;
}

/** What the automatic context of a message is made of. */
export interface ContextParts {
  env: Environment;
  page: PageContext;
  /** The connection type at call time (`wifi`, `cellular`, ...), where the browser tells it. */
  connectionType?: string;
  hints?: Hints;
}

/**
 * A URL as it goes on the wire (CONTRACT section 4): its query string stays, and its fragment stays only when it
 * carries no parameters. A fragment with a `=` or `&` before any `?` of its own (`#access_token=...&state=...`, an
 * OAuth or magic-link callback: browsers never send fragments to servers) is dropped with its `#`; any other keeps
 * its part before such a `?`: a route (`#/cart/42`, `#!/cart`; `#/cart?step=2` keeps `#/cart`) or a plain anchor
 * (`#section`). Pure.
 */
export const wireUrl = (url: string): string => unlink(url).replace(/#[^?]*[=&][^]*|(#[^?]*)[^]*/, '$1');

/** A URL without the cross-domain link's parameter (src/identity/link.ts: it never goes on the wire), all else as it was. Pure. */
export const unlink = (url: string): string => url.replace(/([?&])svc_link=[^&#]*(&?)/, (_, sep, next) => next && sep);

/** Page context from a URL, title and referrer (what the snippet records at call time); URLs as `wireUrl` gives them. */
export function pageContext(url: string, title: string, referrer: string): PageContext {
  let path = '/';
  let search = '';
  try {
    const u = new URL(wireUrl(url));
    path = u.pathname;
    search = u.search;
  } catch {
    // a relative or odd URL: keep the defaults rather than fail the call
  }
  return { path, referrer: wireUrl(String(referrer)), search, title: String(title), url: wireUrl(String(url)) };
}

/** `context.campaign` from the `utm_*` parameters of a query string (`utm_campaign` is `name`); undefined when there are none. */
export function campaign(search: string): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  new URLSearchParams(search).forEach((value, key) => {
    if (key.slice(0, 4) != 'utm_' || key.length < 5) return;
    const k = key.slice(4);
    (out = out || {})[k == 'campaign' ? 'name' : k] = value;
  });
  return out;
}

/** OS name and version from client hints' platform or, failing that, the user agent (kept small on purpose). */
export function osFromUserAgent(ua: string, platform?: string): { name: string; version?: string } | undefined {
  const m =
    /(Android) ([\d.]+)/.exec(ua) ||
    /(iPhone|iPad|iPod).*? OS ([\d_]+)/.exec(ua) ||
    /(Windows) NT ([\d.]+)/.exec(ua) ||
    /(Mac) OS X ([\d_.]+)/.exec(ua) ||
    /(CrOS)/.exec(ua) ||
    /(Linux)/.exec(ua);
  const names: Record<string, string> = { iPhone: 'iOS', iPad: 'iOS', iPod: 'iOS', Mac: 'macOS', CrOS: 'Chrome OS' };
  const name = platform || (m && (names[m[1]] || m[1]));
  if (!name) return undefined;
  // The version from the UA is only trusted when it describes the same platform.
  const version = m && m[2] && (!platform || names[m[1]] == platform || m[1] == platform) ? m[2].replace(/_/g, '.') : undefined;
  return version ? { name, version } : { name };
}

/** `mobile`, `tablet` or `desktop`, from the client hints' `mobile` flag or the user agent. */
export function deviceType(ua: string, mobileHint?: boolean): string {
  if (/iPad|Tablet/.test(ua) || (/Android/.test(ua) && !/Mobile/.test(ua))) return 'tablet';
  return mobileHint || /Mobi|iPhone|iPod/.test(ua) ? 'mobile' : 'desktop';
}

/** The automatic context of one message: environment facts, the page at call time and its campaign; pure. */
export function buildContext({ env, page, connectionType, hints }: ContextParts): MessageContext {
  const ctx = {
    library: LIBRARY,
    page,
    userAgent: env.userAgent,
    locale: env.locale,
    channel: 'browser',
    screen: env.screen,
  } as MessageContext;
  // A worker has no page (see api/page-context.ts `readPage`) and no screen.
  if (!hasDocument()) delete (ctx as Partial<MessageContext>).page, delete (ctx as Partial<MessageContext>).screen;
  if (env.timezone) ctx.timezone = env.timezone;
  if (env.userAgentData) ctx.userAgentData = env.userAgentData;
  if (env.os) ctx.os = env.os;
  if (env.device) ctx.device = env.device;
  if (hints) {
    if (hints.model) ctx.device = { ...ctx.device!, model: hints.model };
    if (hints.platformVersion && env.os) ctx.os = { ...env.os, version: hints.platformVersion };
  }
  if (connectionType) ctx.network = { cellular: connectionType == 'cellular', wifi: connectionType == 'wifi' };
  const utm = campaign(page.search);
  if (utm) ctx.campaign = utm;
  return ctx;
}

/** Freezes plain data deeply (objects and arrays): parts shared by many messages can then never be changed. */
export function freeze<T>(value: T): T {
  if (value && typeof value == 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const k of ownKeys(value)) freeze(value[k]);
  }
  return value;
}

/**
 * Deep-merges `source` over `target` into a new object (objects merge, anything else replaces);
 * `__proto__` keys are kept as plain data, never as a prototype.
 */
export function merge<T extends JSONRecord>(target: T, source?: JSONObject | null): T {
  if (!source) return target;
  const out = { ...target };
  for (const k of ownKeys(source)) {
    const v = source[k];
    const t: JSONValue = out[k];
    setOwn(out, k, v && typeof v == 'object' && !Array.isArray(v) && t && typeof t == 'object' && !Array.isArray(t) ? merge(t, v) : v);
  }
  return out;
}
