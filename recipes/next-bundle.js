// svc-analytics first-party serving with Next.js (App Router route handlers), part 2 of 2: the bundle under /s/, on
// your site's own origin. Save this file as app/s/[file]/route.js (src/app/... if you use src/); part 1,
// next-ingest.js, forwards the API. Tested with `next dev`: e2e/first-party.spec.ts.
//
// It serves the bundle under a name that filter lists do not block (they block "/analytics.min." on every site), and
// its neighbours, which the bundle loads from next to itself: the tools chunk (analytics.debug(true), linkDomains,
// serverCookies) and the tracking-plan checker (`plan`); any other /s/ file is 404, and
// Next answers 405 to methods other than GET and HEAD.

// --- change this line ----------------------------------------------------------------------------------------
/** The CDN folder that holds analytics.min.js and its chunks, no trailing slash. */
const CDN_DIR = 'https://cdn.svc.example/analytics.js/v1';
// --------------------------------------------------------------------------------------------------------------

export const dynamic = 'force-dynamic';

const FILES = { 'a.js': 'analytics.min.js', 'analytics.debug.min.js': 'analytics.debug.min.js', 'analytics.plan.min.js': 'analytics.plan.min.js', 'analytics.extend.min.js': 'analytics.extend.min.js', 'analytics.sources.min.js': 'analytics.sources.min.js' };
/** The request headers the CDN gets; no cookies (the <script> request to your own origin carries your site's). */
const CDN_HEADERS = ['user-agent', 'if-none-match', 'if-modified-since'];
/** The answer headers that go back to the browser; not the CDN's Set-Cookie, nor any other that acts on your origin. */
const ANSWER_HEADERS = ['content-type', 'cache-control', 'expires', 'etag', 'last-modified', 'age'];

/** @param {Request} request */
export async function GET(request, { params }) {
  const { file } = await params;
  if (!Object.hasOwn(FILES, file)) return new Response(null, { status: 404 });
  // The CDN's Cache-Control passes through to browsers (fetch's own cache is off: the browser's is the one that counts).
  const answer = await fetch(`${CDN_DIR}/${FILES[file]}${new URL(request.url).search}`, {
    headers: pick(request.headers, CDN_HEADERS),
    cache: 'no-store',
  });
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
