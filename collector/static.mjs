// A tiny static file server for the demo and the e2e site: no caching, SPA fallback, optional
// snippet injection and CSP headers. Node built-ins only.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

/** Content types by file extension. */
export const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.webmanifest': 'application/manifest+json',
};

const SNIPPET_MARKER = /<!--\s*svc:snippet(?:\s+nonce="([^"]*)")?\s*-->/g;

const escapeAttr = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `</script` inside the snippet would end the inline script early. */
const escapeScript = (js) => js.replace(/<\/(script)/gi, '<\\/$1');

/**
 * Replaces every `<!--svc:snippet-->` (or `<!--svc:snippet nonce="…"-->`) in `html` with an inline
 * script holding `js`.
 * @param {string} html
 * @param {string} js
 * @returns {string}
 */
export function injectSnippet(html, js) {
  return html.replace(SNIPPET_MARKER, (_, nonce) => {
    const attr = nonce !== undefined ? ` nonce="${escapeAttr(nonce)}"` : '';
    return `<script${attr}>${escapeScript(js)}</script>`;
  });
}

async function readSnippet(snippetFile) {
  try {
    return await fs.promises.readFile(snippetFile, 'utf8');
  } catch {
    const msg = `svc-analytics: snippet file ${snippetFile} not found; run npm run build`;
    return `console.error(${JSON.stringify(msg)});`;
  }
}

/** Real path of `p` if it exists and stays inside `base` (symlinks included), else null. */
async function containedRealPath(base, p) {
  try {
    base = await fs.promises.realpath(base);
    const real = await fs.promises.realpath(p);
    return real === base || real.startsWith(base + path.sep) ? real : null;
  } catch {
    return null;
  }
}

async function statFile(p) {
  try {
    return await fs.promises.stat(p);
  } catch {
    return null;
  }
}

/** Finds which directory serves `pathname`: the longest matching mount, else the root. */
function pickBase(pathname, root, mounts) {
  const prefix = Object.keys(mounts)
    .filter((m) => pathname.startsWith(m) || pathname + '/' === m)
    .sort((a, b) => b.length - a.length)[0];
  if (prefix) return { base: mounts[prefix], rel: pathname.slice(prefix.length), mounted: true };
  return { base: root, rel: pathname.slice(1), mounted: false };
}

/**
 * Resolves a URL path to a file: `{ file }`, `{ redirect }` for a directory without its slash, or
 * `{ status }` when there is nothing (404) or the path escapes its base (403).
 */
async function resolveFile(pathname, root, mounts) {
  if (pathname.includes('\0')) return { status: 400 };
  const { base, rel, mounted } = pickBase(pathname, root, mounts);
  const target = path.resolve(base, rel);
  if (target !== base && !target.startsWith(base + path.sep)) return { status: 403 };
  const stat = await statFile(target);
  if (stat && stat.isDirectory()) {
    if (!pathname.endsWith('/')) return { redirect: pathname + '/' };
    const index = path.join(target, 'index.html');
    const real = await containedRealPath(base, index);
    return real ? { file: real } : { status: 404 };
  }
  if (stat && stat.isFile()) {
    const real = await containedRealPath(base, target);
    return real ? { file: real } : { status: 403 };
  }
  // SPA routes: an unknown extension-less path under the root gets the app's index.html.
  if (!mounted && !path.extname(pathname)) {
    const real = await containedRealPath(root, path.join(root, 'index.html'));
    if (real) return { file: real };
  }
  return { status: 404 };
}

function decodePath(rawUrl) {
  const url = new URL(rawUrl, 'http://static');
  try {
    return { url, pathname: decodeURIComponent(url.pathname) };
  } catch {
    return { url, pathname: null };
  }
}

// A mounted directory may not exist yet (dist/ before the first build); serve it once it does.
function realOrResolved(dir) {
  try {
    return fs.realpathSync(path.resolve(dir));
  } catch {
    return path.resolve(dir);
  }
}

/**
 * A first-party path forwarded to another server, the way a site proxies the API (`/ingest/v1/batch` to
 * `{target}/v1/batch`): method, headers (Host excepted) and body pass through, and the answer comes back as it is.
 * Returns a function that forwards a request under one of the prefixes and says whether it did.
 */
function createProxy(proxies) {
  const rules = Object.entries(proxies).map(([prefix, target]) => ['/' + prefix.replace(/^\/+|\/+$/g, ''), new URL(target)]);
  return (req, res) => {
    const rule = rules.find(([prefix]) => req.url === prefix || req.url.startsWith(prefix + '/') || req.url.startsWith(prefix + '?'));
    if (!rule) return false;
    const [prefix, target] = rule;
    const { host: _host, ...headers } = req.headers;
    const upstream = http.request(
      { hostname: target.hostname, port: target.port, method: req.method, path: req.url.slice(prefix.length) || '/', headers },
      (answer) => {
        res.writeHead(answer.statusCode || 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
    return true;
  };
}

function normaliseMounts(mounts) {
  const out = {};
  for (const [prefix, dir] of Object.entries(mounts)) {
    const p = '/' + prefix.replace(/^\/+|\/+$/g, '') + '/';
    out[p] = realOrResolved(dir);
  }
  return out;
}

function createHandler({ root, mounts, snippetFile, headers }) {
  const base = { 'Cache-Control': 'no-store', ...headers };

  function end(req, res, status, body, extra = {}) {
    const buf = Buffer.from(body);
    res.writeHead(status, { ...base, 'Content-Length': String(buf.length), ...extra });
    res.end(req.method === 'HEAD' ? undefined : buf);
  }

  async function serveFile(req, res, file, url) {
    const ext = path.extname(file).toLowerCase();
    const type = CONTENT_TYPES[ext] || 'application/octet-stream';
    const isHtml = ext === '.html' || ext === '.htm';
    let body = await fs.promises.readFile(file);
    const extra = { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff' };
    if (isHtml) {
      if (snippetFile) body = injectSnippet(body.toString('utf8'), await readSnippet(snippetFile));
      const csp = url.searchParams.get('csp');
      if (csp) extra['Content-Security-Policy'] = csp;
      // `?cache=revalidate`: no-cache instead of no-store, which keeps a page out of the back/forward cache.
      if (url.searchParams.get('cache') === 'revalidate') extra['Cache-Control'] = 'no-cache';
    }
    end(req, res, 200, body, extra);
  }

  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return end(req, res, 405, 'Method Not Allowed', { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'GET, HEAD' });
    }
    const { url, pathname } = decodePath(req.url);
    if (pathname === null) return end(req, res, 400, 'Bad Request', { 'Content-Type': 'text/plain; charset=utf-8' });
    const found = await resolveFile(pathname, root, mounts);
    if (found.redirect) return end(req, res, 301, '', { Location: found.redirect + url.search });
    if (found.file) return serveFile(req, res, found.file, url);
    const text = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found' }[found.status];
    end(req, res, found.status, text, { 'Content-Type': 'text/plain; charset=utf-8' });
  };
}

/**
 * Starts a static file server.
 * @param {object} options
 * @param {string} options.root Directory served at `/`.
 * @param {number} [options.port=8080] 0 picks a free port.
 * @param {string} [options.host='127.0.0.1']
 * @param {Record<string, string>} [options.mounts={}] URL prefix to directory, e.g. `{ '/dist/': '/abs/dist' }`.
 * @param {string|null} [options.snippetFile=null] Inlined at every `<!--svc:snippet-->` marker of served HTML, read per request.
 * @param {Record<string, string>} [options.headers={}] Added to every response (e.g. a CSP).
 * @returns {Promise<{ url: string, port: number, close(): Promise<void> }>}
 */
export async function startStatic({ root, port = 8080, host = '127.0.0.1', mounts = {}, snippetFile = null, headers = {}, proxies = {} }) {
  if (!root) throw new Error('startStatic: root is required');
  const forward = createProxy(proxies);
  const handler = createHandler({
    root: fs.realpathSync(path.resolve(root)),
    mounts: normaliseMounts(mounts),
    snippetFile: snippetFile && path.resolve(snippetFile),
    headers,
  });
  // (URLs up to 64 KB, as browsers send them: node's default 16 KB of headers refuses a long link the tests forge)
  const server = http.createServer({ maxHeaderSize: 65536 }, (req, res) => {
    if (forward(req, res)) return;
    handler(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(String(err && err.message || err));
    });
  });
  const actualPort = await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address().port);
    });
  });
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
    port: actualPort,
    async close() {
      const done = new Promise((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await done;
    },
  };
}
