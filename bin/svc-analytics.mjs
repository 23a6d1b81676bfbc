#!/usr/bin/env node
// svc-analytics CLI: a local collector imitating the Data Pipelines API, and the demo site.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

const PKG_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_KEY = 'dev-write-key';

const HELP = `svc-analytics: local tools for the svc-analytics browser library

Usage:
  svc-analytics collector [--port 8787] [--host 127.0.0.1] [--write-key KEY | --any-key] [--log FILE | --no-log]
      A local Data Pipelines API: POST /v1/batch and /v1/{identify,track,page,screen,group,alias}.
      Open its URL for the live inspector. Accepted messages are appended to FILE as JSON lines
      (default .collector/events.jsonl in the current directory).

  svc-analytics start [--port 8787] [--site-port 8080] [--host 127.0.0.1] [--write-key KEY] [--log FILE | --no-log]
      The collector plus the demo site (demo/ with dist/ mounted at /dist/). Run npm run build first.

Options:
  --port N        collector port (default 8787; 0 picks a free one)
  --site-port N   demo site port (default 8080)
  --host H        interface to listen on (default 127.0.0.1)
  --write-key K   write key the collector requires (default ${DEFAULT_KEY})
  --any-key       accept any write key, or none
  --log FILE      JSON-lines file of accepted messages
  --no-log        do not write a log file
  --verbose       print one line per request (default for these commands)
  --quiet         do not print a line per request
  -h, --help      this help
`;

const OPTIONS = {
  port: { type: 'string' },
  'site-port': { type: 'string' },
  host: { type: 'string' },
  'write-key': { type: 'string' },
  'any-key': { type: 'boolean' },
  log: { type: 'string' },
  'no-log': { type: 'boolean' },
  quiet: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

function fail(message, code = 1) {
  console.error(`svc-analytics: ${message}`);
  process.exit(code);
}

function parsePort(value, fallback, flag) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) fail(`${flag} must be a port number 0-65535, got "${value}"`, 2);
  return n;
}

function parseCli(argv) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    fail(`${err.message}\nRun svc-analytics --help for usage.`, 2);
  }
}

function collectorOptions(values) {
  if (values['any-key'] && values['write-key'] !== undefined) fail('use either --write-key or --any-key, not both', 2);
  const logFile = values['no-log'] ? null : path.resolve(values.log ?? path.join('.collector', 'events.jsonl'));
  return {
    port: parsePort(values.port, 8787, '--port'),
    host: values.host ?? '127.0.0.1',
    writeKey: values['any-key'] ? null : values['write-key'] ?? DEFAULT_KEY,
    logFile,
    quiet: Boolean(values.quiet) && !values.verbose,
  };
}

/** Starts a server, turning a busy port into a clear message and exit 1. */
async function startOrExplain(what, port, host, start) {
  try {
    return await start();
  } catch (err) {
    if (err.code === 'EADDRINUSE') fail(`port ${port} on ${host} is already in use (${what}). Stop whatever uses it or pick another port.`);
    if (err.code === 'EACCES') fail(`no permission to listen on ${host}:${port} (${what}).`);
    throw err;
  }
}

function closeOnSignal(servers) {
  let closing = false;
  const stop = async () => {
    if (closing) process.exit(130);
    closing = true;
    await Promise.all(servers.map((s) => s.close()));
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
  console.log(`Collector: ${collector.url}/  (inspector; POST ${collector.url}/v1/batch)`);
  console.log(`Write key: ${describeKey(opts.writeKey)}`);
  if (opts.logFile) console.log(`Log:       ${opts.logFile}`);
  console.log('Press Ctrl-C to stop.');
  closeOnSignal([collector]);
}

function checkBuild() {
  const dist = path.join(PKG_ROOT, 'dist');
  const missing = ['analytics.min.js', 'snippet.min.js'].filter((f) => !fs.existsSync(path.join(dist, f)));
  if (missing.length) {
    console.warn(`Note: ${missing.map((f) => 'dist/' + f).join(' and ')} missing; run \`npm run build\` in ${PKG_ROOT} first.`);
  }
}

async function runStart(values) {
  if (values['any-key']) fail('start needs a real write key for the demo; use --write-key', 2);
  const opts = collectorOptions(values);
  const sitePort = parsePort(values['site-port'], 8080, '--site-port');
  if (!fs.existsSync(path.join(PKG_ROOT, 'demo', 'index.html'))) fail(`the demo site is missing: ${path.join(PKG_ROOT, 'demo', 'index.html')}`);
  checkBuild();
  const collector = await startOrExplain('collector', opts.port, opts.host, () => startCollector(opts));
  let site;
  try {
    site = await startOrExplain('demo site', sitePort, opts.host, () => startStatic({
      root: path.join(PKG_ROOT, 'demo'),
      port: sitePort,
      host: opts.host,
      mounts: { '/dist/': path.join(PKG_ROOT, 'dist') },
      snippetFile: path.join(PKG_ROOT, 'dist', 'snippet.min.js'),
    }));
  } finally {
    if (!site) await collector.close();
  }
  console.log(`Demo:      ${site.url}/`);
  console.log(`Inspector: ${collector.url}/`);
  console.log(`Write key: ${describeKey(opts.writeKey)}`);
  if (opts.logFile) console.log(`Log:       ${opts.logFile}`);
  console.log('Press Ctrl-C to stop.');
  closeOnSignal([site, collector]);
}

async function main() {
  const { values, positionals } = parseCli(process.argv.slice(2));
  const command = positionals[0];
  if (values.help || !command || command === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (positionals.length > 1) fail(`unexpected argument "${positionals[1]}"`, 2);
  if (command === 'collector') return runCollector(values);
  if (command === 'start') return runStart(values);
  fail(`unknown command "${command}". Run svc-analytics --help.`, 2);
}

main().catch((err) => fail(err && err.stack || String(err)));
