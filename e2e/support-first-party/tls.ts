// What the nginx recipe's TLS test puts around it: certificates made with `openssl` for the test (a CA the recipe is
// told to trust, and one it is not), a DNS server that answers 127.0.0.1 for every name (the resolver the recipe is
// pointed at, standing in for a spoofed answer), and an HTTPS upstream whose certificate can be swapped between
// requests.
import dgram from 'node:dgram';
import https from 'node:https';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type net from 'node:net';

export interface Pem {
  key: string;
  cert: string;
}

/** `openssl` on the PATH (Debian's package openssl), else null. */
export function opensslPath(): string | null {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return 'openssl';
  } catch {
    return null;
  }
}

function openssl(dir: string, args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'];

/** A self-signed CA in `dir`: its certificate file's path, and what it takes to sign with it. */
export function makeCa(dir: string, name: string): { file: string; key: string } {
  const file = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  openssl(dir, ['req', '-x509', ...KEY, '-keyout', key, '-out', file, '-subj', `/CN=${name}`]);
  return { file, key };
}

/** A server certificate for `names`, signed by `ca`. */
export function makeCert(dir: string, ca: { file: string; key: string }, label: string, names: string[]): Pem {
  const key = path.join(dir, `${label}.key`);
  const cert = path.join(dir, `${label}.pem`);
  openssl(dir, [
    'req', '-x509', '-CA', ca.file, '-CAkey', ca.key, ...KEY, '-keyout', key, '-out', cert, '-subj', `/CN=${names[0]}`,
    '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`, '-addext', 'basicConstraints=critical,CA:FALSE',
  ]);
  return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') };
}

/** A DNS server on 127.0.0.1 (UDP) that answers every A query with 127.0.0.1, and others with no answer. */
export async function startDns(): Promise<{ address: string; names: string[]; close(): Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  const names: string[] = [];
  socket.on('message', (query, from) => {
    if (query.length < 17) return;
    // The question: labels from offset 12, then type and class.
    let at = 12;
    const labels: string[] = [];
    while (at < query.length && query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('latin1'));
      at += query[at] + 1;
    }
    const end = at + 5;
    const type = query.readUInt16BE(at + 1);
    names.push(labels.join('.'));
    const header = Buffer.from(query.subarray(0, 12));
    header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(type === 1 ? 1 : 0, 6);
    header.writeUInt32BE(0, 8); // no authority or additional records
    const answer = type === 1 ? Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]) : Buffer.alloc(0);
    socket.send(Buffer.concat([header, query.subarray(12, end), answer]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    names,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** One request as the HTTPS upstream received it, with the server name the client sent (SNI). */
export interface TlsSeen {
  method: string;
  path: string;
  servername: string | false;
}

/** An HTTPS upstream on 127.0.0.1: `body` for every GET, `{}` for every POST. `use(pem)` swaps its certificate. */
export async function startTlsUpstream(pem: Pem, body: string) {
  const seen: TlsSeen[] = [];
  const server = https.createServer(pem, (req, res) => {
    seen.push({ method: req.method || '', path: req.url || '', servername: (req.socket as import('node:tls').TLSSocket).servername });
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': req.method === 'POST' ? 'application/json' : 'text/javascript' });
      res.end(req.method === 'POST' ? '{}' : body);
    });
  });
  server.on('tlsClientError', () => {}); // the refused handshakes
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    seen,
    use: (next: Pem) => server.setSecureContext(next),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
