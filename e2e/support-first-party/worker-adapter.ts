// Runs a fetch handler (`export default { fetch(request) }`, recipes/worker.mjs) under node:http, the way an edge
// platform does: the request becomes a WHATWG Request with the visitor's address in `cf-connecting-ip` (as Cloudflare
// gives it), the handler's Response goes back as it is. Only the paths the platform would route to the handler reach
// it (`routes`); everything else is the site (`site`).
import http from 'node:http';

export interface FetchHandler {
  fetch(request: Request, env?: unknown, ctx?: unknown): Response | Promise<Response>;
}

/** Headers of a node:http message that a WHATWG Request computes itself or may not carry. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'content-length']);

async function toRequest(req: http.IncomingMessage, origin: string): Promise<Request> {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (!HOP_BY_HOP.has(name)) headers.append(name, req.rawHeaders[i + 1]);
  }
  headers.set('cf-connecting-ip', req.socket.remoteAddress || '');
  const method = req.method || 'GET';
  let body: Buffer | undefined;
  if (method !== 'GET' && method !== 'HEAD') {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    body = Buffer.concat(chunks);
  }
  return new Request(origin + req.url, { method, headers, body });
}

async function send(res: http.ServerResponse, response: Response, head: boolean) {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers['set-cookie'] = cookies;
  res.writeHead(response.status, response.statusText, headers);
  if (response.body && !head) {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  }
  res.end();
}

/**
 * Serves `handler` on 127.0.0.1 (a free port): requests whose path starts with one of `routes` go to the handler,
 * the others to `site`. Returns the origin and a close function.
 */
export async function serveFetchHandler(
  handler: FetchHandler,
  routes: string[],
  site: http.RequestListener,
): Promise<{ url: string; close(): Promise<void> }> {
  let origin = '';
  const server = http.createServer((req, res) => {
    const path = (req.url || '/').split('?')[0];
    if (!routes.some((r) => path.startsWith(r))) return site(req, res);
    (async () => send(res, await handler.fetch(await toRequest(req, origin)), req.method === 'HEAD'))().catch((err) => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(String(err && err.stack || err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
