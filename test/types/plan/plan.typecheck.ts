// Checked by `tsc` (npm run typecheck), never run: with the declaration file `svc-analytics plan types` wrote from
// demo/tracking-plan.json (tracking-plan.d.ts, next to this file), track, identify and group of `svc-analytics`,
// `svc-analytics/core` and `window.analytics` are typed by the plan under `strict`. Every `@ts-expect-error` line must
// be a type error, every other line must compile. (A program of its own: the plan's types are global.)
import { AnalyticsBrowser } from '../../../src/entry/index';
import { AnalyticsBrowser as CoreBrowser } from '../../../src/entry/core';
import type { CallResult, AnalyticsError, TrackProperties } from '../../../src/entry/index';
import '../../../src/entry/global';

const cb = (r: CallResult | AnalyticsError) => void r;
const product = { product_id: 'stoneware-mug', price: 24 };

for (const analytics of [AnalyticsBrowser.load({ writeKey: 'k' }), CoreBrowser.load({ writeKey: 'k' }), window.analytics]) {
  // The plan's events, with their properties
  analytics.track('Product Added', { ...product, quantity: 2 });
  analytics.track('Product Added', { ...product, quantity: 2, cart_id: 'c1', anything: 'else' }, { timestamp: new Date() }, cb);
  analytics.track('Product Added', { ...product, quantity: 2 }, cb);
  analytics.track('Newsletter Subscribed', { source: 'footer' });
  // The spec's ecommerce and semantic events need no entry
  analytics.track('Cart Viewed', { cart_id: 'c1' });
  analytics.track('Experiment Viewed');

  // @ts-expect-error a misspelt event (unplannedEvents is "error")
  analytics.track('Product added', { ...product, quantity: 2 });
  // @ts-expect-error an event the plan does not list
  analytics.track('Signed Up');
  // @ts-expect-error a missing required property (quantity)
  analytics.track('Product Added', product);
  // @ts-expect-error no properties where the plan requires some
  analytics.track('Order Completed');
  // @ts-expect-error a property of the wrong type
  analytics.track('Product Added', { ...product, quantity: '2' });
  // @ts-expect-error a value the plan's enum does not list
  analytics.track('Newsletter Subscribed', { source: 'popup' });
  // @ts-expect-error a property the plan does not allow (additionalProperties: false)
  analytics.track('Newsletter Subscribed', { source: 'footer', extra: 1 });

  // identify's traits are typed by the plan; group's stay open (the plan has no group entry)
  analytics.identify('u1', { email: 'a@b.example', name: 'A' });
  analytics.identify({ email: 'a@b.example' }, cb);
  // @ts-expect-error a trait of the wrong type
  analytics.identify('u1', { email: 'a@b.example', name: 1 });
  // @ts-expect-error a missing required trait
  analytics.identify('u1', { name: 'A' });
  analytics.group('g1', { anything: true });
}

// The plan's descriptions are the properties' JSDoc, and its types can be named.
const seats: TrackProperties<'Order Completed'>['currency'] = 'USD';
// @ts-expect-error not a currency of the plan
const other: TrackProperties<'Order Completed'>['currency'] = 'GBP';
void seats, other;
