// svc-analytics first-party serving as a fetch handler, the shape Cloudflare Workers, Vercel and Netlify edge
// functions, Deno and Bun run: the Data Pipelines API under /ingest/ and the bundle under /s/, both on your site's
// own origin, so ad-blockers that block the analytics hosts let them through.
// Load the snippet with  analytics.load('WRITE_KEY', { cdnUrl: '/s/a.js', apiHost: '/ingest' })
//
// Route /ingest/* and /s/* of your site to this handler (Cloudflare: a Worker route `example.com/ingest/*` and
// `example.com/s/*`; anything under /s/ that is not the bundle goes on to your site). It forwards only what the library
// sends: POST /ingest/v1/batch (other paths under /ingest/ answer 404, other methods 405) and GET /s/a.js and
// /s/analytics.debug.min.js, /s/analytics.plan.min.js, /s/analytics.extend.min.js and /s/analytics.sources.min.js, with an allowlist of headers each way; it answers POST /ingest/v1/cookies itself. Tested under Node 20 through a small node:http
// adapter: e2e/first-party.spec.ts.

// --- change these lines --------------------------------------------------------------------------------------
/** The Data Pipelines API (EU accounts: https://cdp-eu.svc.example), no trailing slash. */
const API_HOST = 'https://cdp.svc.example';
/** The CDN folder that holds analytics.min.js and its chunks, no trailing slash. */
const CDN_DIR = 'https://cdn.svc.example/analytics.js/v1';
/**
 * The request header in which your platform puts the address that connected to it, replacing any the visitor sent:
 * Cloudflare 'cf-connecting-ip', Netlify 'x-nf-client-connection-ip', Vercel 'x-real-ip'. Deno and Bun set none
 * themselves: put them behind a proxy that sets one (nginx: `proxy_set_header X-Real-IP $remote_addr;`) and name it
 * here. A header that the platform only passes along is the visitor's to choose; without this one, the API gets no
 * address from the recipe.
 */
const IP_HEADER = 'cf-connecting-ip';
/**
 * serverCookies: the identity cookies this server sets for 400 days. By default the anonymous id only. Add
 * 'svc_user_id' and 'svc_group_id' to set those too, knowing that a user id is often an e-mail address, then kept 400
 * days and sent to every subdomain of the cookie's domain; left out, the page's script keeps writing them itself.
 */
const SERVER_COOKIES = ['svc_anonymous_id'];
// --------------------------------------------------------------------------------------------------------------

const INGEST = '/ingest';
/** The API endpoints the library calls, by first-party path: batches go on to the API; cookies are answered here. */
const ENDPOINTS = { '/ingest/v1/batch': batch, '/ingest/v1/cookies': cookies };
/**
 * The bundle under a name that filter lists do not block (they block "/analytics.min." on every site), and its
 * neighbours, which the bundle loads from next to itself: the tools chunk (analytics.debug(true), linkDomains,
 * serverCookies), the tracking-plan checker (`plan`) and the middleware chunk.
 */
const FILES = { '/s/a.js': 'analytics.min.js', '/s/analytics.debug.min.js': 'analytics.debug.min.js', '/s/analytics.plan.min.js': 'analytics.plan.min.js', '/s/analytics.extend.min.js': 'analytics.extend.min.js', '/s/analytics.sources.min.js': 'analytics.sources.min.js' };

/** The request headers each upstream gets; no cookies (a beacon to your own origin carries your site's). */
const API_HEADERS = ['content-type', 'authorization', 'origin', 'user-agent', 'accept-language'];
const CDN_HEADERS = ['user-agent', 'if-none-match', 'if-modified-since'];
/**
 * The answer headers that go back to the browser. Nothing else: an upstream's Set-Cookie, Clear-Site-Data,
 * Strict-Transport-Security, Alt-Svc or reporting headers would act on your whole origin.
 */
const ANSWER_HEADERS = ['content-type', 'cache-control', 'expires', 'etag', 'last-modified', 'age', 'vary', 'retry-after'];
/** The library sends at most 500,000 bytes in one request. */
const MAX_BODY = 1_000_000;
/** The Content-Types of the library's requests: JSON, and text/plain for page-exit beacons (the write key in the body). */
const BODY_TYPES = /^(application\/json|text\/plain)\s*(;|$)/i;

export default {
  /** @param {Request} request */
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === INGEST || url.pathname.startsWith(INGEST + '/')) {
      return Object.hasOwn(ENDPOINTS, url.pathname) ? ENDPOINTS[url.pathname](request) : refuse(404);
    }
    if (Object.hasOwn(FILES, url.pathname)) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return refuse(405, 'GET, HEAD');
      // The CDN's Cache-Control passes through to browsers (and to the platform's cache where it honours it).
      const file = `${CDN_DIR}/${FILES[url.pathname]}${url.search}`;
      return relay(await fetch(file, { method: request.method, headers: pick(request.headers, CDN_HEADERS) }));
    }
    return fetch(request);
  },
};

/** POST /ingest/v1/batch -> {API_HOST}/v1/batch: the body as it is, no query string, never cached. */
async function batch(request) {
  if (request.method !== 'POST') return refuse(405, 'POST');
  if (!BODY_TYPES.test(request.headers.get('content-type') || '')) return refuse(415);
  if (Number(request.headers.get('content-length')) > MAX_BODY) return refuse(413);
  const body = await request.arrayBuffer();
  if (body.byteLength > MAX_BODY) return refuse(413);
  const headers = pick(request.headers, API_HEADERS);
  // The API records context.ip from the request: tell it the visitor's address, not this function's.
  const ip = request.headers.get(IP_HEADER);
  if (ip) headers.set('x-forwarded-for', ip);
  return relay(await fetch(`${API_HOST}/v1/batch`, { method: 'POST', headers, body, redirect: 'manual' }));
}

/** POST /ingest/v1/cookies: the identity cookies set by this origin's server (see setCookies). */
async function cookies(request) {
  if (request.method !== 'POST') return refuse(405, 'POST');
  if (!/^application\/json\s*(;|$)/i.test(request.headers.get('content-type') || '')) return refuse(415);
  if (Number(request.headers.get('content-length')) > COOKIE_BODY_MAX) return refuse(413);
  const text = await textAtMost(request, COOKIE_BODY_MAX);
  if (text === null) return refuse(413);
  const url = new URL(request.url);
  // (behind a proxy that ends TLS, as Deno or Bun are run, the page's https comes in X-Forwarded-Proto)
  const lines = setCookies(text, url.hostname, url.protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https');
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

function refuse(status, allow) {
  return new Response(null, { status, headers: allow ? { allow } : {} });
}

function pick(headers, names) {
  const out = new Headers();
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) out.set(name, value);
  }
  return out;
}

/**
 * The upstream answer with ANSWER_HEADERS only. (`fetch` has already decoded a compressed body, so the upstream's
 * Content-Encoding and Content-Length no longer describe it: the platform compresses the answer again as it sends it.)
 */
function relay(answer) {
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: pick(answer.headers, ANSWER_HEADERS) });
}
