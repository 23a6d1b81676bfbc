// The bundle's start-up adds no long task to the page (Total Blocking Time counts the part of a task over 50 ms at
// Lighthouse's mobile preset, 4x CPU): it runs in several short tasks (src/entry/browser.ts `later`).
import { test, expect, ready } from './fixtures';

const LONG_TASK_MS = 50;
const CPU_SLOWDOWN = 4;

test('start-up with a stub that recorded page() and 5 tracks: no task of ours would be over 50 ms at 4x CPU, and every call arrives in order', async ({ browser, page, site, collector }) => {
  // Each main-thread task's own CPU time (the trace's `tdur`), not its wall time: other work of a loaded machine that
  // preempts the page does not count, and 4x the CPU time is what the task takes with the CPU 4x slower.
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  await page.goto(site.page('/startup.html'));
  await ready(page);
  const got = await collector.waitFor(6, {}, 20000);
  const trace = JSON.parse((await browser.stopTracing()).toString()).traceEvents as any[];
  // every call arrived, in call order
  expect(got.map((m) => (m.type == 'page' ? 'page' : m.event))).toEqual(['page', 'Product Viewed', 'Product Image Zoomed', 'Size Selected', 'Color Selected', 'Reviews Viewed']);
  const ours = trace.filter((e) => (e.name == 'EvaluateScript' || e.name == 'FunctionCall') && String(e.args?.data?.url).includes('/dist/analytics.min.js'));
  const tasks = trace.filter((e) => e.name == 'RunTask' && e.ph == 'X' && ours.some((o) => o.pid == e.pid && o.tid == e.tid && o.ts >= e.ts && o.ts < e.ts + e.dur));
  const cpuMs = tasks.map((t) => Math.round((t.tdur ?? t.dur) / 100) / 10);
  // 70% of the 50 ms: a task also waits, without CPU, on the browser (cookies, storage), which CPU time does not show.
  // (Without the split, one task of 12-16 ms of CPU here, 49-65 ms at 4x, and 70-133 ms at 4x in Lighthouse; with
  // it, 7 ms at most: 28 ms at 4x, and no long task of ours in Lighthouse.)
  expect(cpuMs.length, 'the bundle ran in tasks of the page').toBeGreaterThan(0);
  expect(Math.max(...cpuMs) * CPU_SLOWDOWN, `our tasks' CPU ms: ${cpuMs}`).toBeLessThan(LONG_TASK_MS * 0.7);
});

test('a page hidden before start-up is done runs the rest of it at once: the calls made meanwhile leave with the exit hand-off', async ({ page, site, collector }) => {
  await page.goto(site.page('/startup-hide.html'));
  await page.waitForFunction(() => (window as any).__hidden === true, undefined, { timeout: 15_000 });
  // (the call was made before `load` ran: start-up was still ahead)
  expect(await page.evaluate(() => (window as any).__startedAtHide)).toBe(false);
  const got = await collector.waitFor(2, {}, 15_000);
  expect(got.map((m) => (m.type == 'page' ? 'page' : m.event))).toEqual(['page', 'During Start-up']);
  // flushInterval is 60 s: they left with the hand-off of the second hide (a beacon, the write key in the body), not
  // with the normal path once start-up got to them.
  const batches = (await collector.requests()).filter((r) => r.path == '/v1/batch');
  expect(batches.map((r) => r.auth)).toEqual(['body']);
});

// Issue 28: what the first event no longer waits for. Checked by the order in which the page's built-ins are used (an
// init script wraps them before the bundle runs), not by timers.
test('with a source middleware the stub recorded, the middleware chunk is fetched before the bundle takes the stub over', async ({ page, site, collector }) => {
  await page.addInitScript(() => {
    const append = Node.prototype.appendChild;
    Node.prototype.appendChild = function <T extends Node>(this: Node, node: T): T {
      // (what `window.analytics` is as the chunk's script goes in: still the stub, an array, or already the API)
      if (node instanceof HTMLScriptElement && node.src.includes('analytics.extend.min.js')) (window as any).__stubThen = Array.isArray((window as any).analytics);
      return append.call(this, node) as T;
    };
  });
  await page.goto(site.page('/startup-mw.html'));
  const [got] = await collector.waitFor(1, {}, 20000);
  expect(got.properties?.mw).toBe(true);
  expect(await page.evaluate(() => (window as any).__stubThen)).toBe(true);
});
