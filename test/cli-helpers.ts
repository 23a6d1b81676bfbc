// Helpers of the CLI tests (test/cli.test.ts, test/package.test.ts): spawn bin/svc-analytics.mjs as a user runs it,
// with bounded waits, and read where the demo it serves sends its events.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI = path.join(ROOT, 'bin', 'svc-analytics.mjs');

/** Runs the CLI to its end (at most 10 s). */
export const run = (args: string[], cwd = os.tmpdir(), cli = CLI) => {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 10_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** A port nothing listens on now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

const started: ChildProcess[] = [];
/** Stops (SIGTERM, then SIGKILL after 3 s) what startCli started: call it in afterEach. */
export async function stopAll() {
  for (const child of started.splice(0)) {
    if (child.exitCode !== null || child.signalCode) continue;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (child.exitCode === null && !child.signalCode) child.kill('SIGKILL');
  }
}

/** Starts a long-running command and waits (at most 10 s) for the lines it prints once it listens. */
export async function startCli(args: string[], cwd = os.tmpdir(), cli = CLI) {
  const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "Press Ctrl-C" line within 10 s:\n${out}\n${err}`)), 10_000);
    const check = () => /Press Ctrl-C/.test(out) && (clearTimeout(timer), resolve());
    child.stdout!.on('data', check);
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`exited ${code}:\n${out}\n${err}`))));
  });
  const url = (label: string) => (new RegExp(`${label}:\\s+(\\S+)`).exec(out) || [])[1]?.replace(/\/$/, '');
  return { child, out, demo: url('Demo'), inspector: url('Inspector'), collector: url('Collector') };
}

/**
 * Runs the demo page's inline scripts (the snippet the server put in, then the shop's own `load`) in a bare context
 * and returns what `analytics.load` was given and the bundle script the stub inserted: where its events go.
 */
export function demoLoad(html: string, search = '') {
  const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  const inserted: { src?: string }[] = [];
  const storage: Record<string, string> = {};
  const ctx: any = {
    location: { search, href: 'http://127.0.0.1/' + search, origin: 'http://127.0.0.1', protocol: 'http:', hostname: '127.0.0.1' },
    URL,
    URLSearchParams,
    queueMicrotask, // the stub writes its calls at the end of the task
    console,
    localStorage: Object.assign(storage, { getItem: (k: string) => storage[k] ?? null }),
    document: { currentScript: null, title: '', referrer: '', createElement: () => ({}), head: { append: (s: any) => inserted.push(s) } },
  };
  ctx.window = ctx.self = ctx;
  vm.createContext(ctx);
  vm.runInContext(inline[0], ctx);
  vm.runInContext(inline[1], ctx);
  const load = Array.from(ctx.analytics as any[]).find((c) => c[0] == 'load');
  return { writeKey: load[1][0], options: load[1][1], inserted };
}

