// One small interface over three ways of driving a browser, so one suite runs in Chromium, Firefox and WebKit:
//   chromium  Playwright (CDP), the Chromium of scripts/chromium.mjs
//   firefox   puppeteer-core over WebDriver BiDi, Debian's firefox-esr
//   webkit    webdriverio over classic WebDriver, WebKitWebDriver driving WebKitGTK's MiniBrowser under Xvfb
// Plain JavaScript (typed by driver.d.mts) so that both the Playwright specs and plain `node` scripts import it.
// Every wait here is bounded. Nothing but 127.0.0.1 is contacted.
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { executablePath as chromiumPath, args as chromiumArgs } from '../../scripts/chromium.mjs';

/** @typedef {'chromium' | 'firefox' | 'webkit'} EngineName */

export const ENGINES = /** @type {EngineName[]} */ (['chromium', 'firefox', 'webkit']);

/** Bound of one driver command (a navigation, an evaluate, opening or closing a tab). */
const COMMAND_MS = 30_000;

const FIREFOX = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';
// Debian's libwebkit2gtk-4.1-0 (a dependency of webkit2gtk-driver) puts it under the multiarch directory.
const MULTIARCH = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch] || `${process.arch}-linux-gnu`;
const MINIBROWSER = process.env.MINIBROWSER_PATH || `/usr/lib/${MULTIARCH}/webkit2gtk-4.1/MiniBrowser`;

/** The first executable called `cmd` on PATH, or null. */
function which(cmd) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, cmd))) return path.join(dir, cmd);
  }
  return null;
}

/**
 * Why `name` cannot run on this machine, or null when everything it needs is installed.
 * @param {EngineName} name
 * @returns {string | null}
 */
export function missing(name) {
  if (name === 'chromium') {
    // no system Chromium: Playwright's own download, if it was made
    const exe = chromiumPath || chromium.executablePath();
    return existsSync(exe) ? null : `chromium: ${exe} not found (Debian package chromium, or npx playwright install chromium)`;
  }
  if (name === 'firefox') return existsSync(FIREFOX) ? null : `firefox: ${FIREFOX} not found (Debian package firefox-esr)`;
  if (name === 'webkit') {
    const need = [];
    if (!which('WebKitWebDriver')) need.push('WebKitWebDriver (Debian package webkit2gtk-driver)');
    if (!existsSync(MINIBROWSER)) need.push(`${MINIBROWSER} (Debian package libwebkit2gtk-4.1-0, with webkit2gtk-driver)`);
    if (!which('xvfb-run')) need.push('xvfb-run (Debian package xvfb)');
    return need.length ? `webkit: missing ${need.join(', ')}` : null;
  }
  return `unknown engine ${name}`;
}

/** Runs `p` with a bound; rejects with a message naming `what` when the bound passes first. */
function bounded(p, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** A free TCP port on 127.0.0.1 (free when asked; the caller binds it soon after). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; rejects after `ms` or if `gone()`. */
async function untilListening(port, ms, gone) {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    const why = gone();
    if (why) throw new Error(why);
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Serialises async sections: WebDriver has one "current window" per session, so switch + command is atomic.
 * @returns {<T>(fn: () => Promise<T>) => Promise<T>}
 */
function createMutex() {
  let tail = Promise.resolve();
  return (fn) => {
    const run = tail.then(fn, fn);
    tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  };
}

/**
 * Launches `name`. Each context is a fresh profile (its own cookies, storage and IndexedDB); each tab a
 * top-level page in it.
 * @param {EngineName} name
 */
export async function launch(name) {
  const why = missing(name);
  if (why) throw new Error(why);
  if (name === 'chromium') return launchChromium();
  if (name === 'firefox') return launchFirefox();
  return launchWebKit();
}

async function launchChromium() {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, timeout: COMMAND_MS });
  return {
    name: /** @type {const} */ ('chromium'),
    version: browser.version(),
    async newContext() {
      const ctx = await browser.newContext();
      ctx.setDefaultTimeout(COMMAND_MS);
      ctx.setDefaultNavigationTimeout(COMMAND_MS);
      return {
        async newTab() {
          const page = await ctx.newPage();
          return {
            async goto(url) {
              await page.goto(url, { waitUntil: 'load' });
            },
            async reload() {
              await page.reload({ waitUntil: 'load' });
            },
            evaluate: (fn, arg) => page.evaluate(fn, arg),
            async close() {
              // Target.closeTarget: the page goes as when the user closes its tab (pagehide, visibilitychange)
              await page.close({ runBeforeUnload: false });
            },
          };
        },
        async close() {
          await ctx.close().catch(() => {});
        },
      };
    },
    async close() {
      await bounded(browser.close(), COMMAND_MS, 'chromium: close');
    },
  };
}

async function launchFirefox() {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    timeout: COMMAND_MS,
    protocolTimeout: COMMAND_MS,
    extraPrefsFirefox: {
      // Anything not on 127.0.0.1 goes to a proxy port where nothing listens: the tests cannot reach the internet,
      // and neither can Firefox's own background services.
      'network.proxy.type': 1,
      'network.proxy.http': '127.0.0.1',
      'network.proxy.http_port': 9,
      'network.proxy.ssl': '127.0.0.1',
      'network.proxy.ssl_port': 9,
      'network.proxy.no_proxies_on': '127.0.0.1,localhost',
      'network.proxy.allow_hijacking_localhost': false,
    },
  });
  return {
    name: /** @type {const} */ ('firefox'),
    version: await browser.version(),
    async newContext() {
      const ctx = await browser.createBrowserContext();
      return {
        async newTab() {
          const page = await ctx.newPage();
          page.setDefaultTimeout(COMMAND_MS);
          page.setDefaultNavigationTimeout(COMMAND_MS);
          return {
            async goto(url) {
              await page.goto(url, { waitUntil: 'load' });
            },
            async reload() {
              await page.reload({ waitUntil: 'load' });
            },
            evaluate: (fn, arg) => page.evaluate(fn, arg),
            async close() {
              // BiDi browsingContext.close (promptUnload false): as when the user closes the tab
              await page.close();
            },
          };
        },
        async close() {
          await bounded(ctx.close(), COMMAND_MS, 'firefox: close context').catch(() => {});
        },
      };
    },
    async close() {
      await bounded(browser.close(), COMMAND_MS, 'firefox: close').catch(async (e) => {
        browser.process()?.kill('SIGKILL');
        throw e;
      });
    },
  };
}

async function launchWebKit() {
  const { remote } = await import('webdriverio');
  const port = await freePort();
  // Its own process group, so that stopping it also stops Xvfb, MiniBrowser and WebKit's helper processes.
  const proc = spawn('xvfb-run', ['-a', 'WebKitWebDriver', `--port=${port}`], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited = null;
  proc.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  const exit = new Promise((resolve) => proc.once('exit', (code, signal) => resolve((exited = { code, signal }))));
  const kill = async () => {
    if (exited) return;
    try {
      process.kill(-proc.pid, 'SIGTERM');
    } catch {}
    await bounded(exit, 5000, 'webkit: WebKitWebDriver exit').catch(() => {
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {}
    });
  };
  try {
    await untilListening(port, 15_000, () => exited && `WebKitWebDriver exited (${JSON.stringify(exited)}): ${stderr}`);
  } catch (e) {
    await kill();
    throw e;
  }
  const sessions = new Set();
  let version = '';

  async function newSession() {
    const b = await remote({
      hostname: '127.0.0.1',
      port,
      path: '/',
      logLevel: 'silent',
      connectionRetryCount: 0,
      connectionRetryTimeout: COMMAND_MS + 5000,
      capabilities: {
        'wdio:enforceWebDriverClassic': true,
        'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
      },
    });
    version = b.capabilities.browserVersion || version;
    await b.setTimeout({ script: COMMAND_MS, pageLoad: COMMAND_MS });
    return b;
  }

  return {
    name: /** @type {const} */ ('webkit'),
    get version() {
      return version;
    },
    // A context is a WebDriver session: its own MiniBrowser, whose automation session keeps data ephemeral.
    async newContext() {
      const b = await newSession();
      sessions.add(b);
      const exclusive = createMutex();
      // The session's first window is never closed: closing a session's last window ends the session.
      const anchor = await b.getWindowHandle();
      let current = anchor;
      const on = (handle, fn) =>
        exclusive(async () => {
          if (current !== handle) {
            await b.switchToWindow(handle);
            current = handle;
          }
          return fn();
        });
      return {
        async newTab() {
          // New Window needs an open current window: the one last used may have been closed.
          const { handle } = await on(anchor, () => b.createWindow('window'));
          return {
            goto: (url) => on(handle, () => b.navigateTo(url)).then(() => undefined),
            reload: () => on(handle, () => b.refresh()).then(() => undefined),
            async evaluate(fn, arg) {
              // The function's source goes into the script itself (no eval: pages under a strict CSP forbid it).
              const script =
                'var done = arguments[arguments.length - 1], arg = arguments[0];' +
                `Promise.resolve().then(function () { return (${fn.toString()})(arg); }).then(` +
                'function (v) { done({ ok: true, value: v === undefined ? null : v }); },' +
                'function (e) { done({ ok: false, why: String(e && e.message ? e.name + ": " + e.message : e) }); });';
              const r = await on(handle, () => b.executeAsync(script, arg === undefined ? null : arg));
              if (!r || !r.ok) throw new Error(`webkit: evaluate failed in the page: ${r ? r.why : 'no result'}`);
              return r.value;
            },
            // WebDriver Close Window: the page goes as when the user closes it (pagehide, visibilitychange). Sent
            // as a plain request: webdriverio's closeWindow also switches windows behind our back, unawaited.
            close: () =>
              on(handle, async () => {
                const res = await fetch(`http://127.0.0.1:${port}/session/${b.sessionId}/window`, {
                  method: 'DELETE',
                  signal: AbortSignal.timeout(COMMAND_MS),
                });
                current = undefined;
                if (!res.ok) throw new Error(`webkit: closing a window: ${res.status} ${await res.text()}`);
              }),
          };
        },
        async close() {
          sessions.delete(b);
          await bounded(b.deleteSession(), COMMAND_MS, 'webkit: delete session').catch(() => {});
        },
      };
    },
    async close() {
      for (const b of sessions) await bounded(b.deleteSession(), COMMAND_MS, 'webkit: delete session').catch(() => {});
      sessions.clear();
      await kill();
    },
  };
}
