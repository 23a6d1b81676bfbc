// The demo shop (demo/) walked like a person: clicks, back/forward, a coupon, a two-step checkout. The collector
// must receive the page views and the spec 000 §2.7 ecommerce events in the order they happened, typed as the
// spec has them (ids strings, price a number, quantity an integer).
//
// Written on the testing kit (svc-analytics/playwright), as a site's own tests would be: the shop names its
// production API host (`?api=`, the shop's setting) and the kit's `analytics` fixture receives what it sends.
// The last test is not on the kit: what the shop itself makes of a hostile `?api=` (security review L12).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as plain, type Page } from '@playwright/test';
import { test as kit, expect } from 'svc-analytics/playwright';
import { startCollector } from '../collector/server.mjs';
import { startStatic } from '../collector/static.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
/**
 * The API host the shop is told to use: the kit points the library elsewhere, so nothing may go there. (`?api=` takes
 * only an address of this machine or the shop's own origin; nothing listens on port 9.)
 */
const PRODUCTION = 'http://localhost:9';

/** The site, as a shop's tests start it: the demo under /demo/, the bundle under /dist/. */
const test = kit.extend<{}, { site: { url: string } }>({
  site: [
    async ({}, use) => {
      const site = await startStatic({
        root: root + 'e2e/site',
        port: 0,
        mounts: { '/dist/': root + 'dist', '/demo/': root + 'demo' },
        snippetFile: root + 'dist/snippet.min.js',
      });
      await use({ url: site.url });
      await site.close();
    },
    { scope: 'worker' },
  ],
});

/** One line per message: `page <path>`, `identify <userId>` or the track event's name. */
const label = (m: any) =>
  m.type === 'track' ? m.event : m.type === 'page' ? `page ${m.properties.path}` : `${m.type} ${m.userId}`;

const byEvent = (messages: any[], event: string) => messages.filter((m) => m.event === event);

const mainNav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

function expectProduct(p: any, fields: { product_id: string; price: number; quantity?: number }) {
  expect(p).toMatchObject(fields);
  expect(typeof p.product_id).toBe('string');
  expect(typeof p.price).toBe('number');
  expect(typeof p.name).toBe('string');
  expect(typeof p.sku).toBe('string');
  if (fields.quantity !== undefined) expect(Number.isInteger(p.quantity)).toBe(true);
}

// The shop follows its own tracking plan: any message off it fails the test that sent it (the kit's after-test check).
test.use({ analyticsPlan: 'demo/tracking-plan.json' });

test('a shopper browses, fills a cart and checks out; the collector gets the journey in order', async ({ page, site, analytics }) => {
  // Each step waits (bounded by the expect timeout) until the collector has that step's event, as a person would
  // take longer than a frame.
  const received = async (event: string, n = 1) => {
    await expect(analytics).toHaveTracked(event);
    await expect.poll(() => analytics.messages({ event }).length).toBe(n);
  };
  const leaks: string[] = [];
  page.on('request', (r) => r.url().startsWith(PRODUCTION) && leaks.push(r.url()));

  await page.goto(site.url + '/demo/?api=' + PRODUCTION);
  // The shop is in consent-pending mode: nothing is sent before the visitor accepts.
  await page.getByRole('button', { name: 'Accept' }).click();
  const products = page.getByTestId('products').getByRole('link');
  await expect(products).toHaveCount(6);
  await received('Product List Viewed');

  // A product, two of it into the cart.
  await products.filter({ hasText: 'Pour-Over Kettle' }).click();
  await expect(page).toHaveURL(/\/demo\/product\/pour-over-kettle$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Pour-Over Kettle');
  await expect(page).toHaveTitle('Pour-Over Kettle · Field Goods');
  await received('Product Viewed');
  await page.getByRole('button', { name: 'Increase quantity' }).click();
  await page.getByRole('button', { name: 'Add to cart' }).click();
  await expect(page.locator('#cart-count')).toHaveText('2');
  await received('Product Added');

  // Back to the list and forward again with the browser's buttons.
  await page.goBack();
  await expect(page).toHaveURL(/\/demo\/(\?.*)?$/);
  await expect(products).toHaveCount(6);
  await received('Product List Viewed', 2);
  await page.goForward();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Pour-Over Kettle');
  await received('Product Viewed', 2);

  // A second product from "You might also like".
  await page.locator('.related').getByRole('link', { name: /Stoneware Mug/ }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Stoneware Mug');
  await received('Product Viewed', 3);
  await page.getByRole('button', { name: 'Add to cart' }).click();
  await expect(page.locator('#cart-count')).toHaveText('3');
  await received('Product Added', 2);

  // The cart: one kettle fewer, the demo code.
  await mainNav(page).getByRole('link', { name: /Cart/ }).click();
  await expect(page).toHaveURL(/\/demo\/cart$/);
  await received('Cart Viewed');
  await page.locator('[data-line="pour-over-kettle"]').getByRole('button', { name: 'One fewer' }).click();
  await expect(page.locator('#cart-count')).toHaveText('2');
  await page.getByLabel('Discount code').fill('DEMO10');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByText('Code applied.')).toBeVisible();

  // Checkout: contact and shipping, then payment.
  await page.getByRole('link', { name: 'Checkout', exact: true }).click();
  await expect(page).toHaveURL(/\/demo\/checkout$/);
  await received('Checkout Step Viewed');
  await page.getByLabel('Email').fill('Ada@Example.com');
  await page.getByLabel('Full name').fill('Ada Lovelace');
  await page.getByRole('radio', { name: /Express/ }).check();
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  await page.getByRole('button', { name: /Place order/ }).click();

  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Thank you, Ada!');
  const orderId = (await page.getByTestId('order-id').textContent())!;
  expect(orderId).toMatch(/^FG-[0-9A-Z]{8}$/);
  await expect(page).toHaveURL(new RegExp(`/demo/order/${orderId}$`));

  const expected = [
    'page /demo/',
    'Product List Viewed',
    'Product Clicked',
    'page /demo/product/pour-over-kettle',
    'Product Viewed',
    'Product Added',
    'page /demo/',
    'Product List Viewed',
    'page /demo/product/pour-over-kettle',
    'Product Viewed',
    'Product Clicked',
    'page /demo/product/stoneware-mug',
    'Product Viewed',
    'Product Added',
    'page /demo/cart',
    'Cart Viewed',
    'Product Removed',
    'Coupon Entered',
    'Coupon Applied',
    'page /demo/checkout',
    'Checkout Started',
    'Checkout Step Viewed',
    'Checkout Step Completed',
    'Checkout Step Viewed',
    'Payment Info Entered',
    'Checkout Step Completed',
    'identify ada@example.com',
    'Order Completed',
    `page /demo/order/${orderId}`,
  ];
  await expect(analytics).toHavePaged(`/demo/order/${orderId}`);
  await expect(analytics).toHaveTracked('Order Completed', { order_id: orderId, currency: 'USD', coupon: 'DEMO10' });
  await expect(analytics).toHaveIdentified('ada@example.com', { name: 'Ada Lovelace' });
  await expect.poll(() => analytics.messages().length).toBeGreaterThanOrEqual(expected.length);
  const all: any[] = analytics.messages();
  expect(all.map(label)).toEqual(expected);

  // One visitor throughout; known by email from the identify on.
  expect(new Set(all.map((m) => m.anonymousId)).size).toBe(1);
  const identifyAt = all.findIndex((m) => m.type === 'identify');
  all.forEach((m, i) => expect(m.userId).toBe(i < identifyAt ? undefined : 'ada@example.com'));
  expect(all[identifyAt].traits).toMatchObject({ email: 'Ada@Example.com', name: 'Ada Lovelace' });

  // Page views carry the page facts of the route they are for.
  const pages = all.filter((m) => m.type === 'page');
  for (const m of pages) expect(m.context.page.path).toBe(m.properties.path);
  expect(pages[1].properties).toMatchObject({ title: 'Pour-Over Kettle · Field Goods', referrer: expect.stringContaining('/demo/') });

  // The list and the clicks.
  const [list] = byEvent(all, 'Product List Viewed');
  expect(list.properties.products).toHaveLength(6);
  list.properties.products.forEach((p: any, i: number) => {
    expectProduct(p, { product_id: p.product_id, price: p.price });
    expect(p.position).toBe(i + 1);
  });
  const [click1, click2] = byEvent(all, 'Product Clicked');
  expectProduct(click1.properties, { product_id: 'pour-over-kettle', price: 64 });
  expect(click1.properties).toMatchObject({ position: 2, list_id: 'all-products' });
  expect(click2.properties).toMatchObject({ product_id: 'stoneware-mug', list_id: 'related-pour-over-kettle' });
  const viewed = byEvent(all, 'Product Viewed');
  expectProduct(viewed[0].properties, { product_id: 'pour-over-kettle', price: 64 });
  expect(viewed[0].properties).toMatchObject({ currency: 'USD', value: 64 });

  // The cart: one cart_id throughout, quantities as integers.
  const [added1, added2] = byEvent(all, 'Product Added');
  const cartId = added1.properties.cart_id;
  expect(cartId).toMatch(/^cart_/);
  expectProduct(added1.properties, { product_id: 'pour-over-kettle', price: 64, quantity: 2 });
  expectProduct(added2.properties, { product_id: 'stoneware-mug', price: 18, quantity: 1 });
  expect(added2.properties.cart_id).toBe(cartId);
  const [removed] = byEvent(all, 'Product Removed');
  expectProduct(removed.properties, { product_id: 'pour-over-kettle', price: 64, quantity: 1 });
  expect(removed.properties.cart_id).toBe(cartId);
  const [cartViewed] = byEvent(all, 'Cart Viewed');
  expect(cartViewed.properties.cart_id).toBe(cartId);
  expect(cartViewed.properties.products.map((p: any) => [p.product_id, p.quantity])).toEqual([
    ['pour-over-kettle', 2],
    ['stoneware-mug', 1],
  ]);
  const [coupon] = byEvent(all, 'Coupon Applied');
  expect(coupon.properties).toMatchObject({ cart_id: cartId, coupon_id: 'DEMO10', discount: 8.2 });

  // Checkout: one checkout_id, integer steps, the shipping method chosen in step 1.
  const [started] = byEvent(all, 'Checkout Started');
  expect(started.properties).toMatchObject({ currency: 'USD', revenue: 73.8, value: 73.8, coupon: 'DEMO10', discount: 8.2 });
  expect(started.properties.products).toHaveLength(2);
  const steps = all.filter((m) => /^Checkout Step|^Payment Info/.test(m.event));
  const checkoutId = steps[0].properties.checkout_id;
  expect(checkoutId).toMatch(/^chk_/);
  expect(steps.map((m) => [m.event, m.properties.step, m.properties.checkout_id])).toEqual([
    ['Checkout Step Viewed', 1, checkoutId],
    ['Checkout Step Completed', 1, checkoutId],
    ['Checkout Step Viewed', 2, checkoutId],
    ['Payment Info Entered', 2, checkoutId],
    ['Checkout Step Completed', 2, checkoutId],
  ]);
  expect(steps[1].properties.shipping_method).toBe('express');
  expect(steps[3].properties).toMatchObject({ order_id: orderId, payment_method: 'card', shipping_method: 'express' });

  // The order: money as numbers that add up, the products bought.
  const [order] = byEvent(all, 'Order Completed');
  const o = order.properties;
  expect(o).toMatchObject({ order_id: orderId, checkout_id: checkoutId, currency: 'USD', coupon: 'DEMO10', shipping: 12 });
  for (const k of ['total', 'subtotal', 'revenue', 'shipping', 'tax', 'discount']) expect(typeof o[k]).toBe('number');
  expect(o.subtotal).toBe(82);
  expect(o.revenue).toBeCloseTo(o.subtotal - o.discount, 2);
  expect(o.total).toBeCloseTo(o.revenue + o.shipping + o.tax, 2);
  expect(o.products).toHaveLength(2);
  expectProduct(o.products[0], { product_id: 'pour-over-kettle', price: 64, quantity: 1 });
  expectProduct(o.products[1], { product_id: 'stoneware-mug', price: 18, quantity: 1 });

  // The corner widget saw every call and links to the inspector of the API host the shop was given.
  const widget = page.getByTestId('events-widget');
  await expect(widget.locator('.events-total')).toHaveText(String(expected.length));
  await expect(widget.getByTestId('inspector-link')).toHaveAttribute('href', PRODUCTION + '/');
  await expect(widget.locator('.events-row').first()).toContainText(`/order/${orderId}`);
  // Nothing went to the host the shop named.
  expect(leaks).toEqual([]);
});

test.describe('the footer control that sends an event off the plan', () => {
  test.use({ analyticsOptions: { violations: false } });
  test('is listed as a violation that names the event and suggests the planned one', async ({ page, site, analytics }) => {
    await page.goto(site.url + '/demo/?api=' + PRODUCTION);
    await page.getByRole('button', { name: 'Accept' }).click();
    await page.getByTestId('subscribe').click();
    await page.getByTestId('off-plan').click();
    await expect(analytics).toHaveTracked('Newsletter subscribed', { source: 'footer' });
    await expect(analytics).toHaveTracked('Newsletter Subscribed', { source: 'footer' });
    await expect.poll(() => analytics.violations()).toEqual([
      expect.objectContaining({ kind: 'plan', event: 'Newsletter subscribed', pointer: '/event', expected: 'an event of the plan (did you mean "Newsletter Subscribed"?), got "Newsletter subscribed"' }),
    ]);
  });
});

test('deep links load the right route when the shop is served at the root (as npm start does)', async ({ page, analytics }) => {
  const site = await startStatic({
    root: root + 'demo',
    port: 0,
    mounts: { '/dist/': root + 'dist' },
    snippetFile: root + 'dist/snippet.min.js',
  });
  try {
    const failed: string[] = [];
    page.on('response', (r) => r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`));
    // No ?api=: the shop names its default host, and the kit points the library at its own collector all the same.
    // (the visitor accepted on an earlier visit: the shop's own record of it)
    await page.addInitScript(() => localStorage.setItem('field-goods:consent', 'granted'));
    await page.goto(`${site.url}/product/desk-succulent`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Desk Succulent');
    // styled: the stylesheet came from /shop.css, not /product/shop.css
    await expect(page.locator('.product')).toHaveCSS('display', 'grid');
    await expect(analytics).toHaveTracked('Product Viewed', { product_id: 'desk-succulent', price: 22, url: `${site.url}/product/desk-succulent` });
    await expect(analytics).toHavePaged('/product/desk-succulent');
    expect(analytics.messages({ type: 'page' })).toHaveLength(1);

    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Shop' }).click();
    await expect(page).toHaveURL(`${site.url}/`);
    await expect(page.getByTestId('products').getByRole('link')).toHaveCount(6);

    await page.goto(`${site.url}/order/FG-NOSUCH00`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Order not found');
    expect(failed).toEqual([]);
  } finally {
    await site.close();
  }
});

plain('a hostile ?api= neither sends the shop\'s events elsewhere nor makes the inspector link a javascript: one', async ({ page }) => {
  const collector = await startCollector({ port: 0 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-demo-api-'));
  const snippetFile = path.join(dir, 'snippet.js');
  // As `svc-analytics start` serves it: the shop names the collector the CLI started.
  fs.writeFileSync(snippetFile, `window.svcDemo={apiHost:${JSON.stringify(collector.url)}};\n${fs.readFileSync(root + 'dist/snippet.min.js', 'utf8')}`);
  const site = await startStatic({ root: root + 'demo', port: 0, mounts: { '/dist/': root + 'dist' }, snippetFile });
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    const { hostname } = new URL(r.url());
    if (hostname !== '127.0.0.1' && !r.url().startsWith('data:')) elsewhere.push(r.url());
  });
  const dialogs: string[] = [];
  page.on('dialog', (d) => (dialogs.push(d.message()), d.dismiss()));
  await page.addInitScript(() => localStorage.setItem('field-goods:consent', 'granted'));
  try {
    for (const api of ['javascript:alert(document.domain)//', 'https://collector.evil.example', 'http://127.0.0.1.evil.example:8787', '//evil.example', 'http://localhost@evil.example']) {
      const before = collector.state.messages.length;
      await page.goto(`${site.url}/?api=${encodeURIComponent(api)}`);
      await expect(page.getByTestId('products').getByRole('link')).toHaveCount(6);
      const link = page.getByTestId('inspector-link');
      await expect(link, api).toHaveAttribute('href', collector.url + '/');
      // Its page view went to the collector the shop was started with.
      await expect.poll(() => collector.state.messages.length, { message: api }).toBeGreaterThan(before);
      await expect(page.locator('.events-row .st:not(.sent)')).toHaveCount(0);
    }
    expect(elsewhere).toEqual([]);
    expect(dialogs).toEqual([]);
    // A loopback collector is still taken, and the link follows it.
    await page.goto(`${site.url}/?api=${encodeURIComponent('http://localhost:9/')}`);
    await expect(page.getByTestId('inspector-link')).toHaveAttribute('href', 'http://localhost:9/');
    expect(await page.evaluate(() => (window as any).apiHost)).toBe('http://localhost:9');
  } finally {
    await Promise.all([site.close(), collector.close()]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the footer links to the checkout domain (the other loopback name), whose events panel shows the same anonymous id', async ({ page, site }) => {
  await page.addInitScript(() => localStorage.setItem('field-goods:consent', 'granted'));
  await page.goto(site.url + '/demo/?api=' + PRODUCTION);
  const panelId = page.getByTestId('events-anonymous-id');
  await expect(panelId).not.toBeEmpty();
  const id = await page.evaluate(() => (window as any).analytics.user().anonymousId());
  await expect(panelId).toHaveText(id);
  // Decoration comes with the lazy chunk, requested at load.
  await page.waitForFunction(() => (window as any).svcAnalyticsDebug);
  const link = page.getByTestId('other-domain');
  await expect(link).toHaveText(new URL(site.url.replace('127.0.0.1', 'localhost')).host);
  await Promise.all([page.waitForURL(/\/\/localhost:/), link.click()]);
  await expect(page.getByTestId('events-anonymous-id')).toHaveText(id);
  expect(page.url()).not.toContain('svc_link');
});
