// svc-analytics first-party serving with Vite's dev server (and `vite preview`): the Data Pipelines API under
// /ingest/ and the bundle under /s/, both on the page's own origin, as in production behind nginx or a worker
// (see the other recipes: Vite's proxy exists only in development and preview, not in what `vite build` makes).
// Load the snippet with  analytics.load('WRITE_KEY', { cdnUrl: '/s/a.js', apiHost: '/ingest' })
//
// Merge `server.proxy` and `preview.proxy` into your own vite.config. It forwards only what the library sends:
// POST /ingest/v1/batch (other paths under /ingest/ answer 404, other methods 405) and GET /s/a.js and
// /s/analytics.debug.min.js, /s/analytics.plan.min.js, /s/analytics.extend.min.js and /s/analytics.sources.min.js, with an allowlist of headers each way; it answers POST /ingest/v1/cookies itself. Tested with `vite` (dev): e2e/first-party.spec.ts.

// --- change these lines ----------------------------------------------------------------------------------
/** The Data Pipelines API (EU accounts: https://cdp-eu.svc.example), no trailing slash. */
const API_HOST = 'https://cdp.svc.example';
/** The CDN folder that holds analytics.min.js and its chunks, no trailing slash. */
const CDN_DIR = 'https://cdn.svc.example/analytics.js/v1';
/**
 * serverCookies: the identity cookies this server sets for 400 days. By default the anonymous id only. Add
 * 'svc_user_id' and 'svc_group_id' to set those too, knowing that a user id is often an e-mail address, then kept 400
 * days and sent to every subdomain of the cookie's domain; left out, the page's script keeps writing them itself.
 */
const SERVER_COOKIES = ['svc_anonymous_id'];
// --------------------------------------------------------------------------------------------------------------

/** The request headers each upstream gets (and Host, Content-Length); no cookies, no visitor-chosen X-Forwarded-*. */
const API_HEADERS = ['host', 'content-length', 'content-type', 'authorization', 'origin', 'user-agent', 'accept-language'];
const CDN_HEADERS = ['host', 'user-agent', 'accept-encoding', 'if-none-match', 'if-modified-since'];
/**
 * The answer headers that go back to the browser. Nothing else: an upstream's Set-Cookie, Clear-Site-Data,
 * Strict-Transport-Security, Alt-Svc or reporting headers would act on your whole origin.
 */
const ANSWER_HEADERS = ['content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'cache-control', 'expires', 'etag', 'last-modified', 'age', 'vary', 'retry-after'];
/** The Content-Types of the library's requests: JSON, and text/plain for page-exit beacons (the write key in the body). */
const BODY_TYPES = /^(application\/json|text\/plain)\s*(;|$)/i;

/** Keeps only the allowed headers each way; the API also gets the address that connected as X-Forwarded-For. */
const allow = (requestHeaders, visitorIp) => (proxy) => {
  proxy.on('proxyReq', (upstream, request) => {
    for (const name of upstream.getHeaderNames()) if (!requestHeaders.includes(name)) upstream.removeHeader(name);
    if (visitorIp && request.socket.remoteAddress) upstream.setHeader('x-forwarded-for', request.socket.remoteAddress.replace(/^::ffff:/, ''));
  });
  proxy.on('proxyRes', (answer) => {
    for (const name of Object.keys(answer.headers)) if (!ANSWER_HEADERS.includes(name)) delete answer.headers[name];
  });
};

/** Answers a request here instead of forwarding it (Vite stops when the answer has been sent). */
const refuse = (request, response, status, headers = {}) => {
  response.writeHead(status, headers).end();
  return request.url;
};

/** The API endpoints the library calls, by first-party path (POST /ingest/v1/cookies is answered here: `cookies`). */
const INGEST = { '/ingest/v1/batch': '/v1/batch' };
const COOKIES = '/ingest/v1/cookies';

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


/** POST /ingest/v1/cookies: the identity cookies set by the dev server (see setCookies); ends the response. */
async function cookies(request, response) {
  if (request.method !== 'POST') return refuse(request, response, 405, { allow: 'POST' });
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] || '')) return refuse(request, response, 415);
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > COOKIE_BODY_MAX) return refuse(request, response, 413, { connection: 'close' });
    chunks.push(chunk);
  }
  const host = (request.headers.host || '').replace(/:\d+$/, '');
  // (behind a proxy that ends TLS, the page's https comes in X-Forwarded-Proto)
  const lines = setCookies(Buffer.concat(chunks).toString('utf8'), host, !!request.socket.encrypted || request.headers['x-forwarded-proto'] === 'https');
  if (!lines) return refuse(request, response, 400);
  return refuse(request, response, 204, { 'cache-control': 'no-store', 'set-cookie': lines, 'x-svc-cookies': lines.map((l) => l.split('=')[0]).join(' ') });
}

const FILES = { '/s/a.js': '/analytics.min.js', '/s/analytics.debug.min.js': '/analytics.debug.min.js', '/s/analytics.plan.min.js': '/analytics.plan.min.js', '/s/analytics.extend.min.js': '/analytics.extend.min.js', '/s/analytics.sources.min.js': '/analytics.sources.min.js' };
const pathOf = (url) => url.split('?')[0];

const proxy = {
  // POST /ingest/v1/batch -> {API_HOST}/v1/batch: body, Authorization and Content-Type as they are, and
  // X-Forwarded-For is the visitor's address (the API records context.ip from the request).
  '^/ingest(/|$)': {
    target: API_HOST,
    changeOrigin: true,
    bypass: (request, response) => {
      if (pathOf(request.url) === COOKIES) return cookies(request, response);
      if (!Object.hasOwn(INGEST, pathOf(request.url))) return refuse(request, response, 404);
      if (request.method !== 'POST') return refuse(request, response, 405, { allow: 'POST' });
      if (!BODY_TYPES.test(request.headers['content-type'] || '')) return refuse(request, response, 415);
    },
    rewrite: (url) => INGEST[pathOf(url)],
    configure: allow(API_HEADERS, true),
  },
  // the bundle under a name that filter lists do not block (they block "/analytics.min." on every site), and its
  // neighbours, which the bundle loads from next to itself: the tools chunk (analytics.debug(true), linkDomains,
  // serverCookies), the tracking-plan checker (`plan`) and the middleware chunk (addSourceMiddleware, register)
  '^/s/(a|analytics\\.(debug|plan|extend|sources)\\.min)\\.js(\\?|$)': {
    target: CDN_DIR,
    changeOrigin: true,
    bypass: (request, response) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return refuse(request, response, 405, { allow: 'GET, HEAD' });
    },
    rewrite: (url) => FILES[pathOf(url)] + url.slice(pathOf(url).length),
    configure: allow(CDN_HEADERS, false),
  },
};

export default {
  server: { proxy },
  preview: { proxy },
};
