#!/usr/bin/env node
// svc-analytics CLI: a local collector imitating the Data Pipelines API, and the demo site.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startCollector, normalizeOrigin, LOOPBACK_NAMES } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

// Everything is found relative to this file, so `npx svc-analytics start` works from an installed package too.
const PKG_ROOT = fileURLToPath(new URL('..', import.meta.url));
const VERSION = JSON.parse(fs.readFileSync(path.join(PKG_ROOT, 'package.json'), 'utf8')).version;
const DEFAULT_KEY = 'dev-write-key';

const HELP = `svc-analytics: local tools for the svc-analytics browser library

Usage:
  svc-analytics collector [--port 8787] [--host 127.0.0.1] [--write-key KEY | --any-key] [--log FILE]
                          [--allow-origin ORIGIN ...] [--plan FILE]
      A local Data Pipelines API: POST /v1/batch and /v1/{identify,track,page,screen,group,alias}, for
      pages of any origin. Open its URL for the live inspector. With --log, accepted messages are
      appended to FILE as JSON lines; without it, they are kept in memory only.

  svc-analytics start [--port 8787] [--site-port 8080] [--host 127.0.0.1] [--write-key KEY] [--log FILE]
                      [--allow-origin ORIGIN ...] [--plan FILE]
      The collector plus the demo shop (the package's demo/, with its dist/ at /dist/), which sends its
      events to this collector, whatever its port; it checks the demo's tracking plan unless --plan names one.

  The inspector and the control API (/_/*: the captured messages, faults, reset) answer only the
  inspector's own page, the demo's, and the origins named with --allow-origin, at 127.0.0.1,
  localhost or [::1]; other websites cannot read or drive them.

Options:
  --port N        collector port (default 8787; 0 picks a free one)
  --site-port N   demo site port (default 8080)
  --host H        interface to listen on (default 127.0.0.1; any other address is reachable from
                  other machines, and a warning says so)
  --write-key K   write key the collector requires (default ${DEFAULT_KEY})
  --any-key       accept any write key, or none
  --allow-origin O  a browser origin (http://localhost:3000) that may also read the captured messages
                  and drive the control API; repeat it for more
  --plan FILE     check every accepted message against a tracking plan: violations in GET /_/violations
                  ("kind": "plan") and in the inspector, beside the message
  --log FILE      append accepted messages (names, emails, URLs...) to FILE as JSON lines
  --no-log        write no log file (the default)
  --verbose       print one line per request (default for these commands)
  --quiet         do not print a line per request
  -h, --help      this help
  -v, --version   the version

  svc-analytics plan types|check|infer ...   the tracking plan's tools (svc-analytics plan --help)
`;

const OPTIONS = {
  port: { type: 'string' },
  'site-port': { type: 'string' },
  host: { type: 'string' },
  'write-key': { type: 'string' },
  'any-key': { type: 'boolean' },
  log: { type: 'string' },
  plan: { type: 'string' },
  'allow-origin': { type: 'string', multiple: true },
  'no-log': { type: 'boolean' },
  quiet: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

/** One line on stderr, no stack trace, and the exit code (2: bad usage, 1: could not run). */
function fail(message, code = 1) {
  console.error(`svc-analytics: ${String(message).split('\n')[0]}`);
  process.exit(code);
}

const usage = (message) => fail(`${message} (run svc-analytics --help)`, 2);

function parsePort(value, fallback, flag) {
  if (value === undefined) return fallback;
  const n = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0 && n <= 65535)) usage(`${flag} must be a port number 0-65535, got "${value}"`);
  return n;
}

/** An IP address or a host name (letters, digits, hyphens, dots); anything else is refused before listening. */
function parseHost(value) {
  if (value === undefined) return '127.0.0.1';
  const host = value.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(host) || /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(host)) return host;
  usage(`--host must be an IP address or a host name, got "${value}"`);
}

/** The parser's errors, in a line of our own (its text names internals and suggests `--`). */
function parseCli(argv) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    const name = (/'(-[^' ]+)/.exec(err.message) || [])[1];
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') usage(`unknown option ${name || ''}`.trim());
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
      usage(name && OPTIONS[name.replace(/^-+/, '')]?.type === 'string' ? `${name} needs a value` : `${name || 'an option'} takes no value`);
    usage('cannot read the arguments');
  }
}

/** The log file must be writable before anything starts: a clear line instead of a failure on the first message. */
function checkLogFile(file) {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.closeSync(fs.openSync(file, 'a'));
  } catch (err) {
    const why = { EACCES: 'permission denied', EPERM: 'permission denied', EROFS: 'read-only file system', EISDIR: 'it is a directory', ENOTDIR: 'part of its path is a file', EEXIST: 'part of its path is a file', ENOSPC: 'no space left' }[err.code] || err.code || err.message;
    fail(`cannot write the log file ${file} (${why}); pick another with --log FILE or use --no-log`);
  }
}

function collectorOptions(values, defaultPlan = null) {
  if (values['any-key'] && values['write-key'] !== undefined) fail('use either --write-key or --any-key, not both', 2);
  if (values['no-log'] && values.log !== undefined) usage('use either --log or --no-log, not both');
  // Only when asked: the log holds what visitors typed (names, emails) and is easy to commit by mistake.
  const logFile = values.log === undefined ? null : path.resolve(values.log);
  const port = parsePort(values.port, 8787, '--port');
  const host = parseHost(values.host);
  const allowOrigins = (values['allow-origin'] || []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean).map((v) => {
    try {
      return normalizeOrigin(v);
    } catch {
      return usage(`--allow-origin must be an origin such as http://localhost:3000, got "${v}"`);
    }
  });
  if (logFile) checkLogFile(logFile);
  return {
    port,
    host,
    writeKey: values['any-key'] ? null : values['write-key'] ?? DEFAULT_KEY,
    logFile,
    allowOrigins,
    plan: values.plan === undefined ? defaultPlan : path.resolve(values.plan),
    quiet: Boolean(values.quiet) && !values.verbose,
  };
}

const isLoopback = (host) => LOOPBACK_NAMES.includes(host.includes(':') ? `[${host}]` : host) || /^127\./.test(host);

/** A URL to open on this machine: a wildcard address (every interface) as 127.0.0.1, a name the inspector answers. */
const local = (url) => url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, 'http://127.0.0.1');

/** Listening on anything but loopback puts the collector (and the demo) on the network: say so, on stderr. */
function warnIfExposed(host) {
  if (isLoopback(host)) return;
  const where = ['0.0.0.0', '::'].includes(host) ? 'every network interface' : host;
  console.warn(`Warning: listening on ${where}, not loopback: other machines on the network can send events to this collector` +
    ' and, with a Host header of their choosing, read what it captured (traits, emails, URLs) and reset it.' +
    ' Use --host 127.0.0.1 unless you mean that.');
}

/** Starts a server, turning a busy port, a host that is not this machine's, or any other failure into one line. */
async function startOrExplain(what, port, host, start) {
  try {
    return await start();
  } catch (err) {
    if (err.name === 'PlanLoadError') fail(err.message, 2);
    if (err.code === 'EADDRINUSE') fail(`port ${port} on ${host} is already in use (${what}). Stop whatever uses it or pick another port.`);
    if (err.code === 'EACCES') fail(`no permission to listen on ${host}:${port} (${what}).`);
    if (err.code === 'EADDRNOTAVAIL') fail(`cannot listen on ${host} (${what}): it is not an address of this machine; try --host 127.0.0.1`);
    if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') fail(`cannot listen on ${host} (${what}): no such host`);
    fail(`cannot start the ${what} on ${host}:${port}: ${err.code || err.message}`);
  }
}

function closeOnSignal(servers, cleanup = () => {}) {
  let closing = false;
  const stop = async () => {
    if (closing) process.exit(130);
    closing = true;
    await Promise.all(servers.map((s) => s.close()));
    cleanup();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function describeKey(writeKey) {
  return writeKey === null ? 'any (not checked)' : writeKey;
}

async function runCollector(values) {
  const opts = collectorOptions(values);
  const collector = await startOrExplain('collector', opts.port, opts.host, () => startCollector(opts));
  warnIfExposed(opts.host);
  // (before the lines are printed: whoever reads them may signal at once)
  closeOnSignal([collector]);
  console.log(`Collector: ${local(collector.url)}/  (inspector; POST ${local(collector.url)}/v1/batch)`);
  console.log(`Write key: ${describeKey(opts.writeKey)}`);
  if (opts.logFile) console.log(`Log:       ${opts.logFile}`);
  if (opts.plan) console.log(`Plan:      ${opts.plan}`);
  console.log('Press Ctrl-C to stop.');
}

function checkBuild() {
  const dist = path.join(PKG_ROOT, 'dist');
  const missing = ['analytics.min.js', 'snippet.min.js'].filter((f) => !fs.existsSync(path.join(dist, f)));
  if (missing.length) {
    console.warn(`Note: ${missing.map((f) => 'dist/' + f).join(' and ')} missing; run \`npm run build\` in ${PKG_ROOT} first.`);
  }
}

/**
 * What the demo's pages get inline where they ask for the snippet: the collector to send to (demo/index.html reads
 * `window.svcDemo.apiHost` unless the URL names one with `?api=`), then the stub. Written to a file of its own
 * (rewritten when a build changes the stub), removed when the CLI stops.
 */
function demoSnippet(collector, host) {
  const stubFile = path.join(PKG_ROOT, 'dist', 'snippet.min.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-analytics-demo-'));
  const file = path.join(dir, 'snippet.js');
  // Listening on every interface: the collector is on the host the page was opened with.
  const wildcard = host === '0.0.0.0' || host === '::';
  const apiHost = wildcard ? `location.protocol+"//"+location.hostname+":"+${collector.port}` : JSON.stringify(collector.url);
  const write = () => {
    let stub;
    try {
      stub = fs.readFileSync(stubFile, 'utf8');
    } catch {
      stub = `console.error(${JSON.stringify(`svc-analytics: ${stubFile} not found; run npm run build`)});`;
    }
    fs.writeFileSync(file, `window.svcDemo={apiHost:${apiHost}};\n${stub}`);
  };
  write();
  fs.watchFile(stubFile, { interval: 1000 }, write);
  const remove = () => {
    fs.unwatchFile(stubFile, write);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', remove);
  return { file, remove };
}

async function runStart(values) {
  if (values['any-key']) usage('start needs a real write key for the demo; use --write-key');
  const opts = collectorOptions(values, path.join(PKG_ROOT, 'demo', 'tracking-plan.json'));
  const sitePort = parsePort(values['site-port'], 8080, '--site-port');
  if (!fs.existsSync(path.join(PKG_ROOT, 'demo', 'index.html'))) fail(`the demo site is missing: ${path.join(PKG_ROOT, 'demo', 'index.html')}`);
  checkBuild();
  const collector = await startOrExplain('collector', opts.port, opts.host, () => startCollector(opts));
  const snippet = demoSnippet(collector, opts.host);
  let site;
  try {
    site = await startOrExplain('demo site', sitePort, opts.host, () => startStatic({
      root: path.join(PKG_ROOT, 'demo'),
      port: sitePort,
      host: opts.host,
      mounts: { '/dist/': path.join(PKG_ROOT, 'dist') },
      snippetFile: snippet.file,
    }));
  } finally {
    if (!site) await collector.close();
  }
  warnIfExposed(opts.host);
  // The demo's pages may use the inspector and the control API, at whichever name of this machine they are opened.
  const wildcard = ['0.0.0.0', '::'].includes(opts.host);
  const siteHosts = [...(isLoopback(opts.host) || wildcard ? LOOPBACK_NAMES : []), ...(wildcard ? [] : [new URL(site.url).hostname])];
  for (const name of new Set(siteHosts)) collector.allowOrigin(`http://${name}:${site.port}`);
  // (before the lines are printed: whoever reads them may signal at once)
  closeOnSignal([site, collector], snippet.remove);
  console.log(`Demo:      ${local(site.url)}/`);
  console.log(`Inspector: ${local(collector.url)}/`);
  console.log(`Write key: ${describeKey(opts.writeKey)}`);
  if (opts.logFile) console.log(`Log:       ${opts.logFile}`);
  if (opts.plan) console.log(`Plan:      ${opts.plan}`);
  console.log('Press Ctrl-C to stop.');
}

async function main() {
  // `plan ...` has options of its own (bin/plan.mjs).
  if (process.argv[2] === 'plan') return (await import('./plan.mjs')).runPlan(process.argv.slice(3), fail);
  const { values, positionals } = parseCli(process.argv.slice(2));
  const command = positionals[0];
  if (values.version || command === 'version') {
    console.log(VERSION);
    return;
  }
  if (values.help || !command || command === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (positionals.length > 1) usage(`unexpected argument "${positionals[1]}"`);
  if (command === 'collector') return runCollector(values);
  if (command === 'start') return runStart(values);
  usage(`unknown command "${command}"`);
}

// Anything unexpected: one line, no stack trace (SVC_ANALYTICS_DEBUG=1 prints it).
main().catch((err) => {
  if (process.env.SVC_ANALYTICS_DEBUG) console.error(err);
  fail((err && (err.message || err.code)) || String(err));
});
