import { chromium } from '@playwright/test';
import { startStatic } from '/work/main/collector/static.mjs';
const root = '/work/main/';
const site = await startStatic({ root: root + 'e2e/site', port: 0, mounts: { '/node_modules/': root + 'node_modules' } });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage();
await page.goto(site.url + '/smoke.html');
for (const n of [2000, 5000, 10000, 20000]) {
  const r = await page.evaluate(async (n) => {
    const { createStore, setMany, clear, values } = await import('/node_modules/idb-keyval/dist/index.js');
    const store = createStore('bench-' + n, 'q');
    const pad = 'x'.repeat(900);
    const recs = Array.from({ length: n }, (_, i) => [String(i).padStart(8, '0'), { id: String(i), message: { type: 'track', event: 'E', properties: { i, pad }, context: { page: { url: location.href } } }, bytes: 1000, queuedAt: Date.now(), attempts: 0, owner: 'x' }]);
    const t0 = performance.now();
    let longest = 0, last = performance.now();
    const iv = setInterval(() => { const t = performance.now(); longest = Math.max(longest, t - last); last = t; }, 5);
    await setMany(recs, store);
    const write = performance.now() - t0;
    const t1 = performance.now();
    const all = await values(store);
    const read = performance.now() - t1;
    clearInterval(iv);
    await clear(store);
    return { n, writeMs: Math.round(write), readMs: Math.round(read), longestGapMs: Math.round(longest), count: all.length };
  }, n);
  console.log(JSON.stringify(r));
}
await browser.close(); await site.close();
