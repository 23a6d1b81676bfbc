// svc-analytics first-party serving as a fetch handler, the shape Cloudflare Workers, Vercel and Netlify edge
// functions, Deno and Bun run: the Data Pipelines API under /ingest/ and the bundle under /s/, both on your site's
// own origin, so ad-blockers that block the analytics hosts let them through.
// Load the snippet with  analytics.load('WRITE_KEY', { cdnUrl: '/s/a.js', apiHost: '/ingest' })
//
// Route /ingest/* and /s/* of your site to this handler (Cloudflare: a Worker route `example.com/ingest/*` and
// `example.com/s/*`; anything else that reaches it goes on to your site). Tested under Node 20 through a small
// node:http adapter: e2e/first-party.spec.ts.

// --- change these two lines ----------------------------------------------------------------------------------
/** The Data Pipelines API (EU accounts: https://cdp-eu.svc.example), no trailing slash. */
const API_HOST = 'https://cdp.svc.example';
/** The CDN folder that holds analytics.min.js and analytics.debug.min.js, no trailing slash. */
const CDN_DIR = 'https://cdn.svc.example/analytics.js/v1';
// --------------------------------------------------------------------------------------------------------------

const INGEST = '/ingest/';
/**
 * The bundle under a name that filter lists do not block (they block "/analytics.min." on every site), and its
 * neighbour, which the bundle loads from next to itself on analytics.debug(true).
 */
const FILES = { '/s/a.js': 'analytics.min.js', '/s/analytics.debug.min.js': 'analytics.debug.min.js' };

/** The request headers each upstream gets; no cookies (a beacon to your own origin carries your site's). */
const API_HEADERS = ['content-type', 'authorization', 'origin', 'user-agent', 'accept-language'];
const CDN_HEADERS = ['user-agent', 'if-none-match', 'if-modified-since'];

export default {
  /** @param {Request} request */
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname.startsWith(INGEST)) {
      // /ingest/v1/batch -> {API_HOST}/v1/batch; method and body as they are, never cached
      const target = API_HOST + url.pathname.slice(INGEST.length - 1) + url.search;
      const headers = pick(request.headers, API_HEADERS);
      // The API records context.ip from the request: tell it the visitor's address, not this function's.
      const ip = visitorIp(request.headers);
      if (ip) headers.set('x-forwarded-for', ip);
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
      return relay(await fetch(target, { method: request.method, headers, body, redirect: 'manual' }));
    }
    const file = Object.hasOwn(FILES, url.pathname) ? FILES[url.pathname] : null;
    if (file && (request.method === 'GET' || request.method === 'HEAD')) {
      // The CDN's Cache-Control passes through to browsers (and to the platform's cache where it honours it).
      return relay(await fetch(`${CDN_DIR}/${file}${url.search}`, { method: request.method, headers: pick(request.headers, CDN_HEADERS) }));
    }
    return fetch(request);
  },
};

/** The visitor's address as the platform tells it: Cloudflare, Netlify, Vercel (and most proxies), in that order. */
function visitorIp(headers) {
  const forwarded = headers.get('x-forwarded-for');
  return headers.get('cf-connecting-ip') || headers.get('x-nf-client-connection-ip') || headers.get('x-real-ip')
    || (forwarded ? forwarded.split(',')[0].trim() : null);
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
 * The upstream answer, less its cookies. `fetch` has already decoded a compressed body, so its Content-Encoding
 * and Content-Length no longer describe it: the platform compresses the answer again as it sends it.
 */
function relay(answer) {
  const headers = new Headers(answer.headers);
  for (const name of ['set-cookie', 'content-encoding', 'content-length']) headers.delete(name);
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
}
