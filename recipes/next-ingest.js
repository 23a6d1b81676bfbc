// svc-analytics first-party serving with Next.js (App Router route handlers), part 1 of 2: the Data Pipelines API
// under /ingest/, on your site's own origin, so ad-blockers that block the analytics hosts let it through.
// Save this file as app/ingest/[...path]/route.js (src/app/... if you use src/); part 2, next-bundle.js, serves the
// bundle. Load the snippet with  analytics.load('WRITE_KEY', { cdnUrl: '/s/a.js', apiHost: '/ingest' })
// (or AnalyticsBrowser.load({ writeKey }, { apiHost: '/ingest' }) with the npm package, which needs no bundle, nor
// part 2). Works with `next dev`, `next start` and on Vercel; tested with `next dev`: e2e/first-party.spec.ts.
//
// A route handler rather than a rewrite: a rewrite forwards every path, method and header of the API host, and passes
// the API's Set-Cookie on to your origin. This forwards the one request the library makes to the API, POST
// /ingest/v1/batch, answers POST /ingest/v1/cookies (serverCookies) itself, and answers 404 to other paths under
// /ingest/ and 405 to other methods. With `trailingSlash: true` in next.config, also set
// `skipTrailingSlashRedirect: true`: the library does not follow a redirect of /ingest/v1/batch (CONTRACT section 6:
// events go to apiHost only), and reports it as delivery_redirected.

// --- change these lines ----------------------------------------------------------------------------------------
/** The Data Pipelines API (EU accounts: https://cdp-eu.svc.example), no trailing slash. */
const API_HOST = 'https://cdp.svc.example';
/**
 * serverCookies: the identity cookies this server sets for 400 days. By default the anonymous id only. Add
 * 'svc_user_id' and 'svc_group_id' to set those too, knowing that a user id is often an e-mail address, then kept 400
 * days and sent to every subdomain of the cookie's domain; left out, the page's script keeps writing them itself.
 */
const SERVER_COOKIES = ['svc_anonymous_id'];
// --------------------------------------------------------------------------------------------------------------

export const dynamic = 'force-dynamic';

/** The request headers the API gets; no cookies (a beacon to your own origin carries your site's). */
const API_HEADERS = ['content-type', 'authorization', 'origin', 'user-agent', 'accept-language'];
/**
 * The answer headers that go back to the browser. Nothing else: the API's Set-Cookie, Clear-Site-Data,
 * Strict-Transport-Security, Alt-Svc or reporting headers would act on your whole origin.
 */
const ANSWER_HEADERS = ['content-type', 'cache-control', 'retry-after'];
/** The library sends at most 500,000 bytes in one request. */
const MAX_BODY = 1_000_000;
/** The Content-Types of the library's requests: JSON, and text/plain for page-exit beacons (the write key in the body). */
const BODY_TYPES = /^(application\/json|text\/plain)\s*(;|$)/i;

/** The API endpoints the library calls, by first-party path: batches go on to the API; cookies are answered here. */
const ENDPOINTS = { '/ingest/v1/batch': batch, '/ingest/v1/cookies': cookies };

/** @param {Request} request */
async function ingest(request) {
  const { pathname } = new URL(request.url);
  return Object.hasOwn(ENDPOINTS, pathname) ? ENDPOINTS[pathname](request) : new Response(null, { status: 404 });
}
export { ingest as GET, ingest as HEAD, ingest as POST, ingest as PUT, ingest as PATCH, ingest as DELETE, ingest as OPTIONS };

/** POST /ingest/v1/batch -> {API_HOST}/v1/batch: the body as it is, no query string, never cached. */
async function batch(request) {
  if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
  if (!BODY_TYPES.test(request.headers.get('content-type') || '')) return new Response(null, { status: 415 });
  if (Number(request.headers.get('content-length')) > MAX_BODY) return new Response(null, { status: 413 });
  const body = await request.arrayBuffer();
  if (body.byteLength > MAX_BODY) return new Response(null, { status: 413 });
  const headers = pick(request.headers, API_HEADERS);
  // The API records context.ip from the request: tell it the visitor's address, not this server's. Vercel replaces
  // any X-Forwarded-For a visitor sends with the address that connected. A self-hosted `next start` adds that address
  // only when the request has no X-Forwarded-For, so it must sit behind a proxy that sets or appends the header
  // (nginx: `proxy_set_header X-Forwarded-For $remote_addr;`): its last entry is then the address that proxy saw.
  const ip = request.headers.get('x-forwarded-for')?.split(',').pop().trim();
  if (ip) headers.set('x-forwarded-for', ip);
  const answer = await fetch(`${API_HOST}/v1/batch`, { method: 'POST', headers, body, redirect: 'manual', cache: 'no-store' });
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: pick(answer.headers, ANSWER_HEADERS) });
}

/** POST /ingest/v1/cookies: the identity cookies set by your site's server (see setCookies). */
async function cookies(request) {
  const refuse = (status, headers) => new Response(null, { status, headers });
  if (request.method !== 'POST') return refuse(405, { allow: 'POST' });
  if (!/^application\/json\s*(;|$)/i.test(request.headers.get('content-type') || '')) return refuse(415);
  if (Number(request.headers.get('content-length')) > COOKIE_BODY_MAX) return refuse(413);
  const text = await textAtMost(request, COOKIE_BODY_MAX);
  if (text === null) return refuse(413);
  const url = new URL(request.url);
  // Behind a proxy that ends TLS (Vercel), the request Next sees is http: the proxy says https.
  const secure = url.protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
  const lines = setCookies(text, url.hostname, secure);
  if (!lines) return refuse(400);
  const headers = new Headers({ 'cache-control': 'no-store', 'x-svc-cookies': lines.map((l) => l.split('=')[0]).join(' ') });
  for (const line of lines) headers.append('set-cookie', line);
  return new Response(null, { status: 204, headers });
}

/**
 * serverCookies (analytics.load(..., { apiHost: '/ingest', serverCookies: true })): POST /ingest/v1/cookies is
 * answered here and forwarded nowhere. Its JSON body, {"cookies":{"svc_anonymous_id":"...",...},"domain":"example.com"},
 * names the library's identity cookies, of which this server sets those of SERVER_COOKIES for 400 days (Safari caps
 * the ones a script writes at 7 days), and names them in X-Svc-Cookies (the library writes the others itself). Refused: another method (405), another Content-Type (415; application/json also keeps other sites' pages out,
 * as browsers ask first and nobody answers), a body over 4 KB (413), another cookie name, a value that is not a plain
 * token (letters, digits and % . _ ~ ! * ' ( ) -, at most 512), or a Domain that is not this host or one of its
 * parents (400).
 */
const COOKIE_NAMES = ['svc_anonymous_id', 'svc_user_id', 'svc_group_id'];
const COOKIE_VALUE = /^[A-Za-z0-9%._~!*'()-]{1,512}$/;
const COOKIE_BODY_MAX = 4096;
const COOKIE_MAX_AGE = 400 * 86400;

/** The Set-Cookie lines for a body the library sent to `host`, or null when anything in it is refused. */
function setCookies(text, host, secure) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const cookies = body && typeof body === 'object' ? body.cookies : null;
  if (!cookies || typeof cookies !== 'object' || Array.isArray(cookies)) return null;
  const { domain } = body;
  if (domain !== undefined && !(typeof domain === 'string' && /^[a-z0-9.-]{1,253}$/.test(domain) && (host === domain || host.endsWith('.' + domain)))) return null;
  const attributes = `; Path=/; Max-Age=${COOKIE_MAX_AGE}; SameSite=Lax${domain ? '; Domain=' + domain : ''}${secure ? '; Secure' : ''}`;
  const lines = [];
  for (const [name, value] of Object.entries(cookies)) {
    if (!COOKIE_NAMES.includes(name) || typeof value !== 'string' || !COOKIE_VALUE.test(value)) return null;
    if (SERVER_COOKIES.includes(name)) lines.push(name + '=' + value + attributes);
  }
  return lines;
}

/** The body as text, or null once it passes `max` bytes (read no further). */
async function textAtMost(request, max) {
  const reader = request.body?.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = reader ? await reader.read() : { done: true };
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) all.set(c, (at += c.byteLength) - c.byteLength);
  return new TextDecoder().decode(all);
}

function pick(headers, names) {
  const out = new Headers();
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) out.set(name, value);
  }
  return out;
}
