import type { JSONObject, JSONValue, MessageContext, PageContext } from './types';
import { ownKeys, setOwn } from './validate';
import { isObject } from './boundary';
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
}

/** What the automatic context of a message is made of. */
export interface ContextParts {
  env: Environment;
  page: PageContext;
}

/**
 * A URL as it goes on the wire (CONTRACT section 4): its query string stays, and its fragment stays only when it
 * carries no parameters. A fragment with a `=` or `&` before any `?` of its own (`#access_token=...&state=...`, an
 * OAuth or magic-link callback: browsers never send fragments to servers) is dropped with its `#`; any other keeps
 * its part before such a `?`: a route (`#/cart/42`, `#!/cart`; `#/cart?step=2` keeps `#/cart`) or a plain anchor
 * (`#section`). Pure.
 */
export const wireUrl = (url: string): string => unlink(url).replace(/#[^?]*[=&][^]*|(#[^?]*)[^]*/, '$1');

/**
 * A URL without the cross-domain link's parameter (src/identity/link.ts: it never goes on the wire), every occurrence:
 * as the browser reads a name (`svc%5Flink` is `svc_link`), in the query and in a fragment's parameters (`#/pay?...`,
 * `#a=1&...`); all else as it was. A part left empty goes with its `?` (or its `#`, at the end). Pure.
 */
export const unlink = (url: string): string =>
  url.replace(/([?#])([^?#]*)/g, (part, mark: string, all: string, at: number) => {
    const kept = all.split('&').filter((p) => !new URLSearchParams(p).has('svc_link')).join('&');
    return kept == all ? part : kept || (mark == '#' && url[at + part.length]) ? mark + kept : '';
  });

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

/** The automatic context of one message: environment facts, the page at call time and its campaign; pure. */
export function buildContext({ env, page }: ContextParts): MessageContext {
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
    setOwn(out, k, isObject(v) && isObject(t) ? merge(t as JSONRecord, v) : v);
  }
  return out;
}
