import type { ConsoleMessage } from '@playwright/test';
import { test, expect, ready, sleep, consoleSettled } from './fixtures';

// The typed helpers `analytics.ecommerce.*` and `analytics.semantic.*` through the snippet (e2e/site/basic.html).

const OPTS = JSON.stringify({ flushInterval: 100 });

const PRODUCT = {
  product_id: 'p-507',
  sku: 'G-32',
  category: 'Games',
  name: 'Monopoly: 3rd Edition',
  brand: 'Hasbro',
  variant: '200 pieces',
  price: 18.99,
  quantity: 1,
  coupon: 'MAYDEALS',
  position: 3,
  url: 'https://shop.example/product/p-507',
  image_url: 'https://shop.example/p-507.jpg',
};
const SECOND = { product_id: 'p-11', sku: 'B-7', name: 'Uno', price: 7.5, quantity: 2 };
const CART = [PRODUCT, SECOND];

// Each flow step: helper name, the event name the spec gives it, properties.
const FLOW: [string, string, Record<string, unknown>][] = [
  ['productViewed', 'Product Viewed', { ...PRODUCT, currency: 'USD', value: 18.99 }],
  ['productAdded', 'Product Added', { cart_id: 'cart-1', ...PRODUCT }],
  ['cartViewed', 'Cart Viewed', { cart_id: 'cart-1', products: CART }],
  ['checkoutStarted', 'Checkout Started', { order_id: 'o-1', affiliation: 'Web', value: 33.99, revenue: 33.99, shipping: 3, tax: 2.5, discount: 2.5, coupon: 'MAYDEALS', currency: 'USD', products: CART }],
  ['orderCompleted', 'Order Completed', { order_id: 'o-1', checkout_id: 'ch-1', affiliation: 'Web', subtotal: 33.99, total: 36.99, revenue: 33.99, shipping: 3, tax: 2.5, discount: 2.5, coupon: 'MAYDEALS', currency: 'USD', products: CART }],
];

test('a cart flow through the helpers arrives in order with the spec event names and exactly the given properties', async ({
  page,
  site,
  collector,
}) => {
  await page.goto(site.page('/basic.html', { opts: OPTS }));
  await ready(page);
  const results = await page.evaluate(async (flow) => {
    const a = (window as any).analytics;
    const out = [];
    for (const [helper, , props] of flow) out.push((await a.ecommerce[helper](props)).event.event);
    return out;
  }, FLOW);
  // Each helper's promise resolves with the queued track message.
  expect(results).toEqual(FLOW.map((f) => f[1]));

  const got = await collector.waitFor(FLOW.length, { type: 'track' }, 10000);
  expect(got.map((m) => m.event)).toEqual(FLOW.map((f) => f[1]));
  got.forEach((m, i) => {
    expect(m.type).toBe('track');
    expect(m.properties).toEqual(FLOW[i][2]);
  });
  const ids = got.map((m) => m.messageId);
  expect([...ids].sort()).toEqual(ids);
  expect(new Set(ids).size).toBe(ids.length);
});

test('helpers called on the snippet stub before the bundle loads are replayed in order, with call-time timestamps and pages', async ({
  page,
  site,
  collector,
}) => {
  const url = site.page('/basic.html', { noload: '1' });
  await page.goto(url);
  // Each call on the stub at its own time (spaced out with sleep), recorded in the page as it is made.
  const times: number[] = [];
  const at = async (call: () => number) => times.push(await page.evaluate(call));
  await at(() => {
    const a = (window as any).analytics;
    if (a.VERSION) throw new Error('the bundle is already loaded: the test needs the stub');
    const t = Date.now();
    a.ecommerce.productViewed({ product_id: 'p-1', price: 10, currency: 'EUR' });
    return t;
  });
  await sleep(300);
  await at(() => {
    const t = Date.now();
    (window as any).analytics.track('Plain Track', { between: true });
    return t;
  });
  await sleep(300);
  await at(() => {
    const t = Date.now();
    (window as any).analytics.ecommerce.productAdded({ product_id: 'p-1', price: 10, quantity: 2 });
    return t;
  });
  await sleep(300);
  const stubUrl = await page.evaluate(() => location.href);
  await at(() => {
    const t = Date.now();
    (window as any).analytics.ecommerce.orderCompleted({ order_id: 'o-9', revenue: 20, currency: 'EUR', products: [{ product_id: 'p-1', quantity: 2 }] });
    // The page moves on (SPA) and time passes before the bundle arrives.
    history.pushState({}, '', '/x-later');
    return t;
  });
  await sleep(700);
  const loadAt = await page.evaluate((stubUrl) => {
    const loadAt = Date.now();
    const q = new URLSearchParams(new URL(stubUrl).search);
    (window as any).analytics.load('dev-write-key', { apiHost: q.get('api'), cdnUrl: '/dist/analytics.min.js', flushInterval: 100 });
    return loadAt;
  }, stubUrl);
  const calls = { times, loadAt, stubUrl };
  expect(calls.stubUrl).toBe(url);
  await ready(page);

  const got = await collector.waitFor(4, { type: 'track' }, 10000);
  expect(got.map((m) => m.event)).toEqual(['Product Viewed', 'Plain Track', 'Product Added', 'Order Completed']);
  expect(got[0].properties).toEqual({ product_id: 'p-1', price: 10, currency: 'EUR' });
  expect(got[2].properties).toEqual({ product_id: 'p-1', price: 10, quantity: 2 });
  expect(got[3].properties).toEqual({ order_id: 'o-9', revenue: 20, currency: 'EUR', products: [{ product_id: 'p-1', quantity: 2 }] });
  got.forEach((m, i) => {
    const ts = Date.parse(m.timestamp);
    // The time of the call on the stub (recorded within a millisecond or two), not the time of the replay.
    expect(Math.abs(ts - calls.times[i]), `${m.event} timestamp vs call time`).toBeLessThanOrEqual(50);
    expect(ts).toBeLessThan(calls.loadAt - 500);
    expect(m.context.page.url, `${m.event} page`).toBe(calls.stubUrl);
  });
  // Call-time order survives: timestamps and ids ascend.
  const ts = got.map((m) => Date.parse(m.timestamp));
  expect([...ts].sort((x, y) => x - y)).toEqual(ts);
  const ids = got.map((m) => m.messageId);
  expect([...ids].sort()).toEqual(ids);
});

function warnings(page: import('@playwright/test').Page) {
  const list: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'warning') list.push(m.text());
  });
  return list;
}

test('debug mode: a wrongly typed field logs a warning naming the field and expected type, and the event is still sent', async ({
  page,
  site,
  collector,
}) => {
  const warns = warnings(page);
  await page.goto(site.page('/basic.html', { opts: JSON.stringify({ flushInterval: 100, debug: true }) }));
  await ready(page);
  await page.evaluate(() => {
    const a = (window as any).analytics;
    a.ecommerce.productAdded({ product_id: 'p-1', price: '9.99', quantity: 1 });
    a.ecommerce.cartViewed({ cart_id: 'c-1', products: [{ product_id: 'p-1', quantity: 1.5 }] });
  });
  const got = await collector.waitFor(2, { type: 'track' }, 10000);
  expect(got.map((m) => m.event)).toEqual(['Product Added', 'Cart Viewed']);
  // Sent as given: the check only warns.
  expect(got[0].properties).toEqual({ product_id: 'p-1', price: '9.99', quantity: 1 });
  expect(got[1].properties).toEqual({ cart_id: 'c-1', products: [{ product_id: 'p-1', quantity: 1.5 }] });

  await expect.poll(() => warns.find((w) => /Product Added/.test(w) && /\bprice\b/.test(w))).toBeTruthy();
  const price = warns.find((w) => /Product Added/.test(w) && /\bprice\b/.test(w))!;
  expect(price).toMatch(/number/);
  expect(price).toMatch(/string/);
  await expect.poll(() => warns.find((w) => /products\[0\]\.quantity/.test(w))).toBeTruthy();
  expect(warns.find((w) => /products\[0\]\.quantity/.test(w))).toMatch(/integer/);
  await consoleSettled(page);
  // Correct fields (product_id, quantity 1, cart_id, products itself) are not warned about: two warnings in all.
  expect(warns.filter((w) => w.includes('svc-analytics'))).toHaveLength(2);
});

test('without debug mode a wrongly typed field logs no warning and the event is sent', async ({ page, site, collector }) => {
  const warns = warnings(page);
  await page.goto(site.page('/basic.html', { opts: OPTS }));
  await ready(page);
  await page.evaluate(() => (window as any).analytics.ecommerce.productAdded({ product_id: 'p-1', price: '9.99' }));
  const [m] = await collector.waitFor(1, { event: 'Product Added' }, 10000);
  expect(m.properties).toEqual({ product_id: 'p-1', price: '9.99' });
  // The call was sent: any console message of it was logged before, and has reached the test once the console has.
  await consoleSettled(page);
  expect(warns).toEqual([]);
});

test('semantic helpers: a device event needs an identified user; report delivery event is sent', async ({ page, site, collector }) => {
  await page.goto(site.page('/basic.html', { opts: OPTS }));
  await ready(page);
  const refused = await page.evaluate(async () => {
    const a = (window as any).analytics;
    const errors: string[] = [];
    a.on('error', (e: any) => errors.push(e.code));
    let cbArg: any;
    try {
      await a.semantic.deviceCreatedOrUpdated({ device: { token: 't', type: 'web' } }, {}, (r: any) => (cbArg = r));
      return { outcome: 'resolved' };
    } catch (e: any) {
      return { outcome: 'rejected', code: e && e.code, message: String(e && e.message), errors, cbCode: cbArg && cbArg.code };
    }
  });
  expect(refused).toMatchObject({ outcome: 'rejected', code: 'invalid_arguments', errors: ['invalid_arguments'], cbCode: 'invalid_arguments' });
  expect(refused.message).toMatch(/user/i);

  const sent = await page.evaluate(async () => {
    const a = (window as any).analytics;
    await a.identify('u1');
    const device = await a.semantic.deviceCreatedOrUpdated({ device: { token: 't', type: 'web' } });
    const delivery = await a.semantic.reportDeliveryEvent({ deliveryId: 'd1', metric: 'opened' });
    return [device.event.event, delivery.event.event];
  });
  expect(sent).toEqual(['Device Created or Updated', 'Report Delivery Event']);

  const got = await collector.waitFor(3, {}, 10000);
  expect(got.map((m) => [m.type, m.event ?? null])).toEqual([
    ['identify', null],
    ['track', 'Device Created or Updated'],
    ['track', 'Report Delivery Event'],
  ]);
  expect(got[1]).toMatchObject({ userId: 'u1', properties: { device: { token: 't', type: 'web' } } });
  expect(got[2]).toMatchObject({ userId: 'u1', properties: { deliveryId: 'd1', metric: 'opened' } });
  // The refused call was never sent: exactly one device event reached the collector.
  await page.evaluate(() => (window as any).analytics.flush());
  expect(await collector.messages({ event: 'Device Created or Updated' })).toHaveLength(1);
});
