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
  // Half the 50 ms: a task also waits, without CPU, on the browser (cookies, storage), which CPU time does not show.
  // (Without the split, one task of 12-16 ms of CPU here, 70-133 ms at 4x in Lighthouse; with it, 5 ms at most.)
  expect(cpuMs.length, 'the bundle ran in tasks of the page').toBeGreaterThan(0);
  expect(Math.max(...cpuMs) * CPU_SLOWDOWN, `our tasks' CPU ms: ${cpuMs}`).toBeLessThan(LONG_TASK_MS / 2);
});
