// The servers e2e/first-party.spec.ts puts around each recipe of recipes/: taps that record what reaches the API and
// the CDN, the CDN itself (dist/ on a static server), the page, and the four real proxies (nginx, the fetch handler
// under node:http, `next dev`, `vite`) configured from the recipe files with only their upstream lines changed (and,
// for nginx's TLS test, its resolver and CA bundle).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startStatic } from '../../collector/static.mjs';
import { serveFetchHandler, type FetchHandler } from './worker-adapter';

export const repo = fileURLToPath(new URL('../..', import.meta.url));
const recipes = path.join(repo, 'recipes');

/** The first-party paths every recipe serves (README, docs/first-party.md). */
export const BUNDLE_PATH = '/s/a.js';
export const DEBUG_PATH = '/s/analytics.debug.min.js';
export const API_PATH = '/ingest';
/** Where the stand-in CDN keeps the bundle, as the real one does (`cdnUrl` default). */
export const CDN_DIR_PATH = '/analytics.js/v1';

/** One request as an upstream received it. */
export interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  bytes: number;
}

/**
 * A recording forwarder in front of an upstream: what arrived (headers included), then passed on unchanged. Its
 * answers carry `answerHeaders` too (an upstream that sets cookies, say).
 */
export interface Tap {
  url: string;
  seen: Seen[];
  answerHeaders: http.OutgoingHttpHeaders;
  close(): Promise<void>;
}

export async function startTap(target: string): Promise<Tap> {
  const to = new URL(target);
  const seen: Seen[] = [];
  const answerHeaders: http.OutgoingHttpHeaders = {};
  const server = http.createServer((req, res) => {
    const record: Seen = { method: req.method || '', path: req.url || '', headers: req.headers, bytes: 0 };
    seen.push(record);
    req.on('data', (c: Buffer) => (record.bytes += c.length));
    const upstream = http.request(
      { hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
      (answer) => {
        res.writeHead(answer.statusCode || 502, { ...answer.headers, ...answerHeaders });
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  const port = await listen(server, 0);
  return { url: `http://127.0.0.1:${port}`, seen, answerHeaders, close: () => closeServer(server) };
}

/** The CDN: dist/ under /analytics.js/v1/, behind a tap. */
export async function startCdn(): Promise<Tap> {
  const dist = path.join(repo, 'dist');
  const cdn = await startStatic({ root: dist, port: 0, mounts: { [CDN_DIR_PATH + '/']: dist } });
  const tap = await startTap(cdn.url);
  return { ...tap, close: async () => (await tap.close(), await cdn.close()) };
}

function listen(server: http.Server | net.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A port free on 127.0.0.1 now, for servers that cannot pick their own (nginx, next, vite). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server, 0);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A recipe's text with its upstreams pointed elsewhere: the quoted default API host and CDN folder, each of which the
 * recipe must name exactly once (that is what "one line to change" means); null for an upstream the file has not.
 */
export function configure(recipe: string, api: string | null, cdnDir: string | null, { allIds = false } = {}): string {
  let text = fs.readFileSync(path.join(recipes, recipe), 'utf8');
  // `allIds`: the recipe's serverCookies option set to the user and group ids too (SERVER_COOKIES, $svc_server_cookies)
  if (allIds) {
    const option = /const SERVER_COOKIES = \['svc_anonymous_id'\];|set \$svc_server_cookies "anonymous";/;
    if (!option.test(text)) throw new Error(`recipes/${recipe}: the serverCookies option line not found`);
    text = text.replace(option, (line) => (line[0] == 'c' ? "const SERVER_COOKIES = ['svc_anonymous_id', 'svc_user_id', 'svc_group_id'];" : 'set $svc_server_cookies "anonymous user group";'));
  }
  for (const [from, to] of [['https://cdp.svc.example', api], ['https://cdn.svc.example/analytics.js/v1', cdnDir]] as const) {
    if (to === null) continue;
    const literal = new RegExp(`(['"])${from.replace(/[.\/]/g, '\\$&')}\\1`, 'g');
    const found = text.match(literal)?.length || 0;
    if (found !== 1) throw new Error(`recipes/${recipe} names ${from} ${found} times; expected once`);
    text = text.replace(literal, (_, q) => q + to + q);
  }
  return text;
}

/** The test page: the snippet inline, loaded with the first-party bundle path and API path, then a page view. */
export function pageHtml(): string {
  const stub = fs.readFileSync(path.join(repo, 'dist/snippet.min.js'), 'utf8').trim();
  // flushInterval 30 s: after the page view (the first message of a quiet spell goes at once), messages wait in the
  // queue until flush() or the page goes away, so the exit message can only leave by the page-exit path.
  const options = { cdnUrl: BUNDLE_PATH, apiHost: API_PATH, flushAt: 1000, flushInterval: 30000 };
  return `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>First-party page</title>
<script>${stub}
analytics.load('dev-write-key', ${JSON.stringify(options)});
analytics.page();</script>
</head>
<body><h1>First-party page</h1></body>
</html>
`;
}

/** A running proxy: its origin, and how to stop it. `output()` is what it printed (for failure messages). */
export interface Proxy {
  url: string;
  close(): Promise<void>;
  output(): string;
}

function tempDir(name: string, under = os.tmpdir()): string {
  fs.mkdirSync(under, { recursive: true });
  const dir = fs.mkdtempSync(path.join(under, `svc-first-party-${name}-`));
  fs.chmodSync(dir, 0o755); // nginx's workers (nobody, when run as root) read the page from here
  return dir;
}

/**
 * Waits (bounded) until the proxy serves the page and, through itself, the bundle: the first request of a path can be
 * slow (`next dev` compiles proxy.js then), and is better out of the way before a test measures anything.
 */
async function ready(origin: string, child: ChildProcess, timeoutMs: number, output: () => string, paths = ['/page.html', BUNDLE_PATH]) {
  const deadline = Date.now() + timeoutMs;
  for (const p of paths) await answering(origin + p, child, Math.max(0, deadline - Date.now()), output);
}

/** Waits until `url` answers 200 (bounded), or the process exits. */
async function answering(url: string, child: ChildProcess, timeoutMs: number, output: () => string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited (${child.exitCode ?? child.signalCode ?? 'did not start'}) before ${url} answered:\n${output()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Process groups still running: killed when this process exits, should afterAll never run (a killed worker). */
const running = new Set<number>();
process.on('exit', () => {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
});

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  child.on('error', (err) => (log += `\n${command}: ${err.message}\n`)); // cannot start: `answering` reports it
  if (child.pid) running.add(child.pid);
  child.once('exit', () => running.delete(child.pid!));
  child.stdout!.on('data', (c) => (log += c));
  child.stderr!.on('data', (c) => (log += c));
  const stop = async () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(-child.pid!, 'SIGTERM'); // its own process group: nginx's workers, next's router and render workers
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    }, 5000);
    await exited;
    clearTimeout(timer);
  };
  return { child, output: () => log, stop };
}

/** NGINX_PATH, else Debian's (`apt-get install nginx-light`), else null. */
export function nginxPath(): string | null {
  return process.env.NGINX_PATH || ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((p) => fs.existsSync(p)) || null;
}

/** The recipe's resolver line and CA bundle path, which startNginx's `resolver` and `ca` replace. */
const NGINX_RESOLVER = /^resolver 127\.0\.0\.53 /m;
const NGINX_CA = 'proxy_ssl_trusted_certificate /etc/ssl/certs/ca-certificates.crt;';

/**
 * nginx with recipes/nginx.conf included in the site's server block; the page is a file of its root. `resolver`
 * (host:port) and `ca` (a PEM file) replace the recipe's DNS server and CA bundle; with `bundleReady: false` it only
 * waits for the page, not for the bundle through the proxy.
 */
export async function startNginx(
  api: string,
  cdnDir: string,
  { resolver, ca, bundleReady = true, allIds = false }: { resolver?: string; ca?: string; bundleReady?: boolean; allIds?: boolean } = {},
): Promise<Proxy> {
  let conf = configure('nginx.conf', api, cdnDir, { allIds });
  if (!NGINX_RESOLVER.test(conf) || !conf.includes(NGINX_CA)) throw new Error('recipes/nginx.conf: resolver or CA bundle line not found');
  if (resolver) conf = conf.replace(NGINX_RESOLVER, `resolver ${resolver} `);
  if (ca) conf = conf.replaceAll(NGINX_CA, `proxy_ssl_trusted_certificate ${ca};`);
  const dir = tempDir('nginx');
  fs.mkdirSync(path.join(dir, 'site'));
  fs.writeFileSync(path.join(dir, 'site/page.html'), pageHtml());
  fs.writeFileSync(path.join(dir, 'svc-analytics.conf'), conf);
  const port = await freePort();
  const temp = (name: string) => `${name}_temp_path ${path.join(dir, name)};`;
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off;
worker_processes 1;
pid ${path.join(dir, 'nginx.pid')};
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  types { text/html html; text/javascript js; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${port};
    root ${path.join(dir, 'site')};
    include ${path.join(dir, 'svc-analytics.conf')};
  }
}
`,
  );
  const proc = run(nginxPath() || 'nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], dir);
  const url = `http://127.0.0.1:${port}`;
  try {
    await ready(url, proc.child, 10000, proc.output, bundleReady ? undefined : ['/page.html']);
  } catch (e) {
    await proc.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { url, output: proc.output, close: async () => (await proc.stop(), fs.rmSync(dir, { recursive: true, force: true })) };
}

/** recipes/worker.mjs under the node:http adapter; /ingest/ and /s/ are routed to it, the page is the site. */
export async function startWorker(api: string, cdnDir: string, { allIds = false } = {}): Promise<Proxy> {
  const dir = tempDir('worker');
  const file = path.join(dir, 'worker.mjs');
  fs.writeFileSync(file, configure('worker.mjs', api, cdnDir, { allIds }));
  const handler: FetchHandler = (await import(pathToFileURL(file).href)).default;
  const html = pageHtml();
  const site: http.RequestListener = (req, res) => {
    const found = req.url === '/page.html';
    res.writeHead(found ? 200 : 404, { 'Content-Type': found ? 'text/html; charset=utf-8' : 'text/plain' });
    res.end(found ? html : 'Not Found');
  };
  const server = await serveFetchHandler(handler, [API_PATH + '/', '/s/'], site);
  return { url: server.url, output: () => '', close: async () => (await server.close(), fs.rmSync(dir, { recursive: true, force: true })) };
}

/**
 * `next dev` on a tiny app: recipes/next-ingest.js as app/ingest/[...path]/route.js and recipes/next-bundle.js as
 * app/s/[file]/route.js, the page in public/. The app lives under the repository's .tmp/ so that Turbopack finds next
 * and react in its node_modules.
 */
export async function startNext(api: string, cdnDir: string): Promise<Proxy> {
  const dir = tempDir('next', path.join(repo, '.tmp'));
  fs.mkdirSync(path.join(dir, 'public'));
  fs.mkdirSync(path.join(dir, 'pages'));
  fs.writeFileSync(path.join(dir, 'public/page.html'), pageHtml());
  // Next wants a pages/ or app/ directory; nothing requests this page.
  fs.writeFileSync(path.join(dir, 'pages/index.js'), 'export default function Home() {\n  return null;\n}\n');
  fs.mkdirSync(path.join(dir, 'app/ingest/[...path]'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'app/s/[file]'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'app/ingest/[...path]/route.js'), configure('next-ingest.js', api, null));
  fs.writeFileSync(path.join(dir, 'app/s/[file]/route.js'), configure('next-bundle.js', null, cdnDir));
  // A worktree whose node_modules links to another checkout's: Turbopack resolves nothing outside its root, so the
  // root is the folder that holds both.
  const modules = fs.realpathSync(path.join(repo, 'node_modules'));
  if (!modules.startsWith(path.join(repo, 'node_modules'))) {
    let root = repo;
    while (!modules.startsWith(root + path.sep)) root = path.dirname(root);
    fs.writeFileSync(path.join(dir, 'next.config.mjs'), `export default { turbopack: { root: ${JSON.stringify(root)} } };\n`);
  }
  const port = await freePort();
  const bin = path.join(repo, 'node_modules/next/dist/bin/next');
  const proc = run(process.execPath, [bin, 'dev', '--hostname', '127.0.0.1', '--port', String(port)], dir, { NEXT_TELEMETRY_DISABLED: '1' });
  const url = `http://127.0.0.1:${port}`;
  try {
    await ready(url, proc.child, 60000, proc.output);
  } catch (e) {
    await proc.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { url, output: proc.output, close: async () => (await proc.stop(), fs.rmSync(dir, { recursive: true, force: true })) };
}

/** `vite` (the dev server) with recipes/vite.config.mjs; the page is page.html of its root. */
export async function startVite(api: string, cdnDir: string): Promise<Proxy> {
  const dir = tempDir('vite');
  fs.writeFileSync(path.join(dir, 'page.html'), pageHtml());
  fs.writeFileSync(path.join(dir, 'vite.config.mjs'), configure('vite.config.mjs', api, cdnDir));
  const port = await freePort();
  const bin = path.join(repo, 'node_modules/vite/bin/vite.js');
  const proc = run(process.execPath, [bin, '--config', 'vite.config.mjs', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], dir);
  const url = `http://127.0.0.1:${port}`;
  try {
    await ready(url, proc.child, 30000, proc.output);
  } catch (e) {
    await proc.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { url, output: proc.output, close: async () => (await proc.stop(), fs.rmSync(dir, { recursive: true, force: true })) };
}
