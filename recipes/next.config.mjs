// svc-analytics first-party serving with Next.js rewrites: the Data Pipelines API under /ingest/ and the bundle
// under /s/, both on your site's own origin, so ad-blockers that block the analytics hosts let them through.
// Load the snippet with  analytics.load('WRITE_KEY', { cdnUrl: '/s/a.js', apiHost: '/ingest' })
// (or AnalyticsBrowser.load({ writeKey }, { apiHost: '/ingest' }) with the npm package, which needs no bundle).
//
// Merge `rewrites` into your own next.config.mjs, and add next-proxy.js (saved as proxy.js) for the visitor's address
// and to keep your cookies from the API. Works with `next dev`, `next start` and on Vercel (where the platform
// proxies the rewrite). Tested with `next dev`: e2e/first-party.spec.ts.

// --- change these two lines ----------------------------------------------------------------------------------
/** The Data Pipelines API (EU accounts: https://cdp-eu.svc.example), no trailing slash. */
const API_HOST = 'https://cdp.svc.example';
/** The CDN folder that holds analytics.min.js and analytics.debug.min.js, no trailing slash. */
const CDN_DIR = 'https://cdn.svc.example/analytics.js/v1';
// --------------------------------------------------------------------------------------------------------------

/** @type {import('next').NextConfig} */
const nextConfig = {
  async rewrites() {
    return [
      // /ingest/v1/batch -> {API_HOST}/v1/batch: method, body and headers (as proxy.js left them) pass as they are
      { source: '/ingest/:path*', destination: `${API_HOST}/:path*` },
      // the bundle under a name that filter lists do not block (they block "/analytics.min." on every site), and
      // its neighbour, which the bundle loads from next to itself on analytics.debug(true)
      { source: '/s/a.js', destination: `${CDN_DIR}/analytics.min.js` },
      { source: '/s/analytics.debug.min.js', destination: `${CDN_DIR}/analytics.debug.min.js` },
    ];
  },
};

export default nextConfig;
