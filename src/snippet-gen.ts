import stub from 'virtual:snippet';

/** Options of `snippet()`. */
export interface SnippetOptions {
  writeKey: string;
  /** Where the bundle is loaded from. @default the CDN URL */
  cdnUrl?: string;
  /** Passed to `load` (see LoadOptions.apiHost). */
  apiHost?: string;
  /** Passed to `load` (see LoadOptions.region). */
  region?: 'us' | 'eu';
  /** Call `analytics.page()` after load. @default true */
  page?: boolean;
}

/**
 * The snippet text for a server-rendered page: the loader stub, then `analytics.load(writeKey, options)` and,
 * unless `page: false`, `analytics.page()`. Put it inside an inline `<script>` (with your CSP nonce).
 */
export function snippet({ writeKey, cdnUrl, apiHost, region, page = true }: SnippetOptions): string {
  const o: Record<string, string> = {};
  if (cdnUrl) o.cdnUrl = cdnUrl;
  if (apiHost) o.apiHost = apiHost;
  if (region) o.region = region;
  // JSON is valid JS; escaping `<` keeps a value from closing the surrounding <script>.
  const js = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');
  // A second copy of the snippet on the page (or one after the bundle took over) does nothing: no second load or page view.
  return `if(!(window.analytics&&(window.analytics.invoked||window.analytics.VERSION))){${stub}analytics.load(${js(String(writeKey))}${Object.keys(o).length ? ',' + js(o) : ''});${page ? 'analytics.page();' : ''}}`;
}
