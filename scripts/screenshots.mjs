#!/usr/bin/env node
// Walks the demo shop in headless Chromium (list → product → add → cart → checkout → confirmation) against a
// local collector, and saves docs/demo.png (the shop) and docs/inspector.png (the collector's inspector), 1280x800.
// Usage: npm run build && node scripts/screenshots.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { executablePath, args } from './chromium.mjs';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = path.join(ROOT, 'dist');
const DOCS = path.join(ROOT, 'docs');
const VIEWPORT = { width: 1280, height: 800 };

for (const f of ['analytics.min.js', 'snippet.min.js']) {
  if (!fs.existsSync(path.join(DIST, f))) {
    console.error(`dist/${f} is missing: run \`npm run build\` first.`);
    process.exit(1);
  }
}

// A system Chromium when there is one (as playwright.config.ts does), else Playwright's own.


const collector = await startCollector({ port: 0 });
const site = await startStatic({
  root: path.join(ROOT, 'demo'),
  port: 0,
  mounts: { '/dist/': DIST },
  snippetFile: path.join(DIST, 'snippet.min.js'),
});
let browser;
try {
  browser = await chromium.launch({
    executablePath,
    args,
  });
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, reducedMotion: 'reduce' });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.on('console', (m) => m.type() === 'error' && console.error('console:', m.text()));
  fs.mkdirSync(DOCS, { recursive: true });

  // The shop: browse, open a product, add two of it, add a second product; the product page with its cart badge
  // and the events list beside it is the picture.
  await page.goto(`${site.url}/?api=${encodeURIComponent(collector.url)}`);
  // the shop asks for consent first (consent-pending mode: nothing is sent until then)
  await page.getByRole('button', { name: 'Accept' }).click();
  await page.getByRole('link', { name: /Single-Origin Coffee/ }).click();
  await page.getByRole('button', { name: 'Add to cart' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Shop' }).click();
  await page.getByRole('link', { name: /Pour-Over Kettle/ }).click();
  await page.getByRole('button', { name: 'Increase quantity' }).click();
  await page.getByRole('button', { name: 'Add to cart' }).click();
  await page.locator('.events.open').waitFor(); // the events list is docked open on a wide screen
  await page.locator('.events-row .st.sent').first().waitFor(); // the first events reached the collector
  // every event listed was delivered (bounded: the page's flushInterval is a second)
  await page.waitForFunction(() => document.querySelectorAll('.events-row .st:not(.sent)').length == 0, null, { timeout: 15000 });
  await page.screenshot({ path: path.join(DOCS, 'demo.png') });
  console.log('wrote docs/demo.png');

  // The rest of the walk: cart (with the demo code), checkout, confirmation.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Cart/ }).click();
  await page.getByPlaceholder('Try DEMO10').fill('DEMO10');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('link', { name: 'Checkout' }).click();
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Full name').fill('Ada Lovelace');
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  await page.getByRole('button', { name: /Place order/ }).click();
  await page.getByRole('heading', { name: /Thank you/ }).waitFor();
  const orderId = await page.getByTestId('order-id').textContent();
  await page.evaluate(() => window.analytics.flush());
  const [done] = await fetch(`${collector.url}/_/messages?event=Order+Completed&min=1&timeout=10000`).then((r) => r.json());
  if (!done || done.properties.order_id !== orderId) throw new Error('the collector did not receive Order Completed');

  // The inspector after the walk, with the Order Completed message's JSON open.
  const inspector = await context.newPage();
  await inspector.goto(collector.url + '/');
  const row = inspector.locator('tbody tr', { hasText: 'Order Completed' }).first();
  await row.click();
  await inspector.locator('#detail', { hasText: orderId }).waitFor();
  await inspector.screenshot({ path: path.join(DOCS, 'inspector.png') });
  console.log('wrote docs/inspector.png');
} finally {
  await browser?.close();
  await site.close();
  await collector.close();
}
