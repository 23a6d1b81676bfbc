// svc-analytics first-party serving with Next.js (App Router route handlers), part 1 of 2: the Data Pipelines API
// under /ingest/, on your site's own origin, so ad-blockers that block the analytics hosts let it through.
// Save this file as app/ingest/[...path]/route.js (src/app/... if you use src/); part 2, next-bundle.js, serves the
// bundle. Load the snippet with  analytics.load('WRITE_KEY', { cdnUrl: '/s/a.js', apiHost: '/ingest' })
// (or AnalyticsBrowser.load({ writeKey }, { apiHost: '/ingest' }) with the npm package, which needs no bundle, nor
// part 2). Works with `next dev`, `next start` and on Vercel; tested with `next dev`: e2e/first-party.spec.ts.
//
// A route handler rather than a rewrite: a rewrite forwards every path, method and header of the API host, and passes
// the API's Set-Cookie on to your origin. This forwards the one request the library makes, POST /ingest/v1/batch,
// and answers 404 to other paths under /ingest/ and 405 to other methods.

// --- change this line ----------------------------------------------------------------------------------------
/** The Data Pipelines API (EU accounts: https://cdp-eu.svc.example), no trailing slash. */
const API_HOST = 'https://cdp.svc.example';
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

/**
 * The API endpoints the library calls, by first-party path. (The `serverCookies` endpoint, POST /ingest/v1/cookies,
 * will be one more entry, answered by your app and not forwarded.)
 */
const ENDPOINTS = { '/ingest/v1/batch': batch };

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

function pick(headers, names) {
  const out = new Headers();
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) out.set(name, value);
  }
  return out;
}
