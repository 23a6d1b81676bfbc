import stub from 'virtual:snippet';
import type { LoadOptions } from '../types';

/** The SRI hash of this version's `dist/analytics.min.js` (sha384), set by the build. */
declare const __BUNDLE_SRI__: string;

/** Options of `snippet()`: the write key, every load option (passed to `analytics.load`), and the generator's own. */
export interface SnippetOptions extends LoadOptions {
  /** The source's write key (not an App API key). Required. */
  writeKey: string;
  /** Where the bundle is loaded from. @default the CDN URL */
  cdnUrl?: string;
  /** Call `analytics.page()` after load. @default true */
  page?: boolean;
  /**
   * Subresource Integrity for the bundle's `<script>`: `true` for the hash of this package version's
   * `dist/analytics.min.js` (`BUNDLE_INTEGRITY`), or your own (`'sha384-…'`). The script then gets `integrity` and
   * `crossorigin="anonymous"`, so `cdnUrl` must name that exact file, served with CORS. Needs `cdnUrl`.
   */
  integrity?: boolean | string;
}

/** The Subresource Integrity hash (sha384) of this version's `dist/analytics.min.js` (also in `dist/sri.json`). */
export const BUNDLE_INTEGRITY: string = __BUNDLE_SRI__;

/** Options that are the generator's own, not passed to `load`. */
const OWN = ['writeKey', 'page', 'integrity'];
const SRI = /^(sha256|sha384|sha512)-[A-Za-z0-9+/]+={0,2}(\s+(sha256|sha384|sha512)-[A-Za-z0-9+/]+={0,2})*$/;

/**
 * A value as JavaScript source that is safe inside an inline `<script>`: JSON (valid JS), with `<` and `>` escaped
 * (no `</script`, `<!--` or `-->` can appear) and U+2028/U+2029 escaped (line terminators in older engines).
 */
const js = (v: unknown) =>
  JSON.stringify(v).replace(/[<>\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));

/** A JSON copy of `value`, or a TypeError naming the option that cannot be one (functions, cycles, BigInt...). */
function jsonOption(name: string, value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new TypeError(`snippet(): option ${name} cannot be written into the page (${(e as Error).message})`);
  }
  if (text === undefined) throw new TypeError(`snippet(): option ${name} cannot be written into the page (a ${typeof value})`);
  return JSON.parse(text);
}

/**
 * The snippet text for a server-rendered page: the loader stub, then `analytics.load(writeKey, options)` and,
 * unless `page: false`, `analytics.page()`. Put it inside an inline `<script>` (with your CSP nonce). Every load
 * option is passed through. Runs on the server: a missing write key or an option that cannot be written into the
 * page throws a TypeError here, not in the visitor's browser.
 */
export function snippet(options: SnippetOptions): string {
  if (!options || typeof options != 'object') throw new TypeError('snippet(): expected an options object, as snippet({ writeKey })');
  const { writeKey, page = true, integrity } = options;
  if (typeof writeKey != 'string' || !writeKey.trim())
    throw new TypeError(`snippet(): writeKey must be a non-empty string (the source's write key), got ${writeKey === '' ? 'an empty string' : typeof writeKey}`);
  const o: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options)) if (!OWN.includes(name) && value !== undefined) o[name] = jsonOption(name, value);
  if (o.cdnUrl !== undefined && (typeof o.cdnUrl != 'string' || !o.cdnUrl)) throw new TypeError('snippet(): cdnUrl must be a non-empty string');

  let hash: string | undefined;
  if (integrity === true) hash = BUNDLE_INTEGRITY;
  else if (typeof integrity == 'string') {
    if (!SRI.test(integrity.trim())) throw new TypeError(`snippet(): integrity must be true or an SRI hash ('sha384-…'), got ${js(integrity)}`);
    hash = integrity.trim();
  } else if (integrity !== undefined && integrity !== false) throw new TypeError('snippet(): integrity must be true, false or an SRI hash string');
  // The default CDN URL serves the latest v1 bundle, whose bytes change with every release: a fixed hash would break.
  if (hash && !o.cdnUrl) throw new TypeError('snippet(): integrity needs cdnUrl, the URL of that exact bundle file (a versioned or self-hosted copy)');

  const args = `${js(writeKey)}${Object.keys(o).length ? ',' + js(o) : ''}`;
  // With integrity, the stub's `load` inserts the bundle's <script> with `integrity` and `crossorigin` set before it
  // is inserted (so before it is fetched): the stub has no room for it (its budget is 1,000 bytes), so the script
  // element it creates during that one synchronous `load` call gets them here.
  const load = hash
    ? `(function(d,c,h){d.createElement=function(t){var e=c.apply(d,arguments);if(/^script$/i.test(t)){e.integrity=${js(hash)};e.crossOrigin="anonymous"}return e};try{analytics.load(${args})}finally{h?d.createElement=c:delete d.createElement}})(document,document.createElement,Object.prototype.hasOwnProperty.call(document,"createElement"));`
    : `analytics.load(${args});`;
  // A second copy of the snippet on the page (or one after the library loaded) does nothing: no second load or page
  // view. A bundle already on the page but not loaded (its own <script> tag) is loaded by it: the stub leaves the
  // bundle's API in place, and `load` is the bundle's. An element named `analytics` (`<a id="analytics">` with a
  // child named `invoked` or `initialized`, a cross-origin `<iframe name="analytics">`) is neither: the stub
  // replaces it.
  return `if(!function(a){try{return a.invoked>0||a.initialized===true}catch(e){}}(window.analytics)){${stub}${load}${page ? 'analytics.page();' : ''}}`;
}
