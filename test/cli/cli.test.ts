// @vitest-environment node
// The CLI (bin/svc-analytics.mjs), spawned with node as a user runs it, on 127.0.0.1 ports, with bounded waits.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { CLI, ROOT, demoLoad, freePort, run, startCli, stopAll } from '../cli-helpers';

const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
afterEach(stopAll);

describe('svc-analytics CLI', () => {
  it('--version and -v print the version', () => {
    for (const flag of ['--version', '-v']) {
      const r = run([flag]);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout.trim()).toBe(VERSION);
    }
  });

  it('--help prints the usage, with every command and option', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    for (const text of ['svc-analytics collector', 'svc-analytics start', '--port', '--site-port', '--host', '--write-key', '--any-key', '--allow-origin', '--log', '--no-log', '--version', '--help'])
      expect(r.stdout).toContain(text);
    expect(run(['start', '-h']).stdout).toBe(r.stdout);
  });

  describe('bad usage: one line on stderr, no stack trace, a non-zero exit', () => {
    const cases: [string, string[], RegExp][] = [
      ['an unknown flag', ['start', '--nope'], /^svc-analytics: unknown option --nope \(run svc-analytics --help\)$/],
      ['an unknown short flag', ['collector', '-x'], /^svc-analytics: unknown option -x/],
      ['a flag without its value', ['collector', '--port'], /^svc-analytics: --port needs a value/],
      ['a value for a flag that takes none', ['collector', '--any-key=yes'], /^svc-analytics: --any-key takes no value/],
      ['a bad port', ['collector', '--port', '80a'], /^svc-analytics: --port must be a port number 0-65535, got "80a"/],
      ['a port out of range', ['start', '--site-port', '70000'], /^svc-analytics: --site-port must be a port number/],
      ['a malformed --host', ['collector', '--host', 'not a host!', '--no-log'], /^svc-analytics: --host must be an IP address or a host name, got "not a host!"/],
      ['a --host that is not this machine', ['collector', '--host', '203.0.113.7', '--port', '0', '--no-log'], /^svc-analytics: cannot listen on 203\.0\.113\.7 \(collector\): it is not an address of this machine/],
      ['an --allow-origin that is not an origin', ['collector', '--allow-origin', 'http://localhost:3000/app', '--no-log'], /^svc-analytics: --allow-origin must be an origin such as http:\/\/localhost:3000, got "http:\/\/localhost:3000\/app"/],
      ['an unknown command', ['serve'], /^svc-analytics: unknown command "serve"/],
      ['an extra argument', ['collector', 'extra'], /^svc-analytics: unexpected argument "extra"/],
    ];
    for (const [what, args, line] of cases)
      it(what, () => {
        const r = run(args);
        expect(r.code, r.stderr).not.toBe(0);
        expect(r.stdout).toBe('');
        const lines = r.stderr.trimEnd().split('\n');
        expect(lines, r.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(line);
        expect(r.stderr).not.toMatch(/\n\s+at |ERR_PARSE_ARGS|To specify a positional/);
      });
  });

  it('an unwritable --log: one line naming the file, exit 1, nothing started', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
    try {
      const file = path.join(dir, 'a-file');
      fs.writeFileSync(file, '');
      const port = await freePort();
      for (const log of [path.join(file, 'events.jsonl'), dir]) {
        for (const command of ['collector', 'start']) {
          const r = run([command, '--port', String(port), '--site-port', '0', '--log', log]);
          expect(r.code, r.stderr).toBe(1);
          expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
          expect(r.stderr).toMatch(new RegExp(`^svc-analytics: cannot write the log file ${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\((part of its path is a file|it is a directory)\\)`));
          expect(r.stdout).toBe('');
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('start --port N: the demo sends its events to the collector on port N, not 8787', async () => {
    const port = await freePort();
    const { demo, inspector } = await startCli(['start', '--port', String(port), '--site-port', '0', '--no-log']);
    expect(inspector).toBe(`http://127.0.0.1:${port}`);
    const html = await (await fetch(demo + '/')).text();
    const { writeKey, options, inserted } = demoLoad(html);
    expect(writeKey).toBe('dev-write-key');
    expect(options.apiHost).toBe(`http://127.0.0.1:${port}`);
    expect(inserted.map((s) => s.src)).toEqual(['/dist/analytics.min.js']);
    // A deep link of the shop (served its index.html) says the same; `?api=` still wins.
    expect(demoLoad(await (await fetch(demo + '/product/x')).text()).options.apiHost).toBe(`http://127.0.0.1:${port}`);
    expect(demoLoad(html, '?api=http://127.0.0.1:1').options.apiHost).toBe('http://127.0.0.1:1');
    // That collector is this CLI's: it takes the demo's write key.
    const res = await fetch(`${inspector}/v1/batch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + Buffer.from('dev-write-key:').toString('base64') },
      body: JSON.stringify({ batch: [{ type: 'track', event: 'CLI test', messageId: 'm1', anonymousId: 'a1', timestamp: new Date().toISOString(), properties: {}, context: {}, integrations: {} }] }),
    });
    expect(res.status).toBe(200);
    const messages = await (await fetch(`${inspector}/_/messages?event=CLI%20test`)).json();
    expect(messages).toHaveLength(1);
    // The bundle is served next to the demo.
    expect((await fetch(demo + '/dist/analytics.min.js')).status).toBe(200);
  });

  it('start --port 0: the demo names the port the collector got', async () => {
    const { demo, inspector } = await startCli(['start', '--port', '0', '--site-port', '0', '--no-log']);
    const { options } = demoLoad(await (await fetch(demo + '/')).text());
    expect(options.apiHost).toBe(inspector);
    expect(inspector).not.toMatch(/:8787$/);
  });

  it('a busy port: one line, exit 1', async () => {
    const server = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as net.AddressInfo;
      const r = run(['collector', '--port', String(port), '--no-log']);
      expect(r.code).toBe(1);
      expect(r.stderr.trimEnd().split('\n')).toEqual([`svc-analytics: port ${port} on 127.0.0.1 is already in use (collector). Stop whatever uses it or pick another port.`]);
    } finally {
      server.close();
    }
  });

  it('stops on SIGTERM and removes its temporary files', async () => {
    const before = new Set(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('svc-analytics-demo-')));
    const { child } = await startCli(['start', '--port', '0', '--site-port', '0', '--no-log']);
    const made = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('svc-analytics-demo-') && !before.has(f));
    expect(made).toHaveLength(1);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 5000))])).toBe(0);
    expect(fs.existsSync(path.join(os.tmpdir(), made[0]))).toBe(false);
  });

  describe('the log and the network (security review L6)', () => {
    const track = (url: string, event: string) =>
      fetch(`${url}/v1/batch`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + Buffer.from('dev-write-key:').toString('base64') },
        body: JSON.stringify({ batch: [{ type: 'track', event, messageId: event, anonymousId: 'a1', timestamp: new Date().toISOString(), traits: { email: 'ada@example.com' } }] }),
      });
    const stop = async (child: import('node:child_process').ChildProcess) => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    };

    it('writes captured events to a file only when asked (--log), never by default', async () => {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
      try {
        for (const command of ['collector', 'start']) {
          const { child, out, collector, inspector } = await startCli([command, '--port', '0', '--site-port', '0'], cwd);
          expect(out).not.toMatch(/^Log:/m);
          expect((await track(collector ?? inspector!, 'Unlogged')).status).toBe(200);
          await stop(child);
        }
        expect(fs.readdirSync(cwd)).toEqual([]);
        const { child, out, collector } = await startCli(['collector', '--port', '0', '--log', 'captured.jsonl'], cwd);
        expect(out).toContain(`Log:       ${path.join(fs.realpathSync(cwd), 'captured.jsonl')}`);
        expect((await track(collector!, 'Logged')).status).toBe(200);
        await stop(child);
        expect(fs.readFileSync(path.join(cwd, 'captured.jsonl'), 'utf8')).toContain('"Logged"');
      } finally {
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    }, 30_000);

    it('--host on anything but loopback prints a warning; loopback prints none', async () => {
      /** What the CLI printed on stderr by the time it is listening. */
      const stderrOf = async (args: string[]) => {
        const child = spawn(process.execPath, [CLI, ...args], { cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stderr.on('data', (d) => (err += d));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`not listening within 10 s: ${out} ${err}`)), 10_000);
          child.stdout.on('data', (d) => (out += d) && /Press Ctrl-C/.test(out) && (clearTimeout(timer), resolve()));
          child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`exited ${code}: ${err}`))));
        });
        await stop(child);
        return err;
      };
      for (const [command, host] of [['collector', '0.0.0.0'], ['collector', '::'], ['start', '0.0.0.0']]) {
        expect(await stderrOf([command, '--port', '0', '--site-port', '0', '--host', host]), host).toMatch(
          /^Warning: listening on every network interface, not loopback: other machines on the network can send events to this collector and, with a Host header of their choosing, read what it captured \(traits, emails, URLs\) and reset it\. Use --host 127\.0\.0\.1 unless you mean that\.\n$/,
        );
      }
      for (const host of ['127.0.0.1', 'localhost', '::1']) expect(await stderrOf(['collector', '--port', '0', '--host', host]), host).toBe('');
    }, 40_000);

    it('start: the demo\'s origin may read the control API, another origin may not, unless --allow-origin names it', async () => {
      const { demo, inspector } = await startCli(['start', '--port', '0', '--site-port', '0', '--allow-origin', 'http://localhost:5173,https://app.test']);
      const read = (origin: string) => fetch(`${inspector}/_/messages`, { headers: { Origin: origin } });
      const port = new URL(demo!).port;
      for (const origin of [demo!, `http://localhost:${port}`, 'http://localhost:5173', 'https://app.test']) {
        const res = await read(origin);
        expect(res.status, origin).toBe(200);
        expect(res.headers.get('access-control-allow-origin'), origin).toBe(origin);
      }
      for (const origin of ['http://localhost:5174', 'https://evil.example', 'null']) {
        const res = await read(origin);
        expect(res.status, origin).toBe(403);
        expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
      }
    });
  });

  it('the demo takes ?api= only as an http(s) URL on this machine or its own origin (security review L12)', async () => {
    const { demo, inspector } = await startCli(['start', '--port', '0', '--site-port', '0']);
    const html = await (await fetch(demo + '/')).text();
    const api = (search: string) => demoLoad(html, search).options.apiHost;
    for (const ok of ['http://127.0.0.1:1', 'http://localhost:9', 'https://localhost:9/ingest', 'http://[::1]:8787']) expect(api('?api=' + encodeURIComponent(ok)), ok).toBe(ok);
    // The shop's own origin (the page is at http://127.0.0.1/ here): a first-party path.
    expect(api('?api=/ingest')).toBe('http://127.0.0.1/ingest');
    for (const bad of ['javascript:alert(document.domain)', 'JavaScript:alert(1)//http://127.0.0.1', 'data:text/html,x', 'https://collector.evil.example', 'http://127.0.0.1.evil.example', 'http://localhost@evil.example', 'http://u:p@127.0.0.1:1', '//evil.example', '/\\evil.example', 'file:///etc/passwd']) {
      expect(api('?api=' + encodeURIComponent(bad)), bad).toBe(inspector);
    }
  });
});
