// svc-analytics first-party serving with Vite's dev server (and `vite preview`): the Data Pipelines API under
// /ingest/ and the bundle under /s/, both on the page's own origin, as in production behind nginx or a worker
// (see the other recipes: Vite's proxy exists only in development and preview, not in what `vite build` makes).
// Load the snippet with  analytics.load('WRITE_KEY', { cdnUrl: '/s/a.js', apiHost: '/ingest' })
//
// Merge `server.proxy` and `preview.proxy` into your own vite.config. Tested with `vite` (dev): e2e/first-party.spec.ts.

// --- change these two lines ----------------------------------------------------------------------------------
/** The Data Pipelines API (EU accounts: https://cdp-eu.svc.example), no trailing slash. */
const API_HOST = 'https://cdp.svc.example';
/** The CDN folder that holds analytics.min.js and analytics.debug.min.js, no trailing slash. */
const CDN_DIR = 'https://cdn.svc.example/analytics.js/v1';
// --------------------------------------------------------------------------------------------------------------

/** No cookies either way: a beacon to your own origin carries your site's, and upstream ones are not your site's. */
const noCookies = (proxy) => {
  proxy.on('proxyReq', (upstream) => upstream.removeHeader('cookie'));
  proxy.on('proxyRes', (answer) => delete answer.headers['set-cookie']);
};

const proxy = {
  // /ingest/v1/batch -> {API_HOST}/v1/batch: method, body, Authorization and Content-Type pass as they are, and
  // X-Forwarded-For carries the visitor's address (the API records context.ip from the request)
  '/ingest/': { target: API_HOST, changeOrigin: true, xfwd: true, rewrite: (path) => path.slice('/ingest'.length), configure: noCookies },
  // the bundle under a name that filter lists do not block (they block "/analytics.min." on every site), and its
  // neighbour, which the bundle loads from next to itself on analytics.debug(true)
  '^/s/a\\.js(\\?|$)': { target: CDN_DIR, changeOrigin: true, rewrite: (path) => path.replace(/^\/s\/a\.js/, '/analytics.min.js'), configure: noCookies },
  '^/s/analytics\\.debug\\.min\\.js(\\?|$)': { target: CDN_DIR, changeOrigin: true, rewrite: (path) => path.slice('/s'.length), configure: noCookies },
};

export default {
  server: { proxy },
  preview: { proxy },
};
