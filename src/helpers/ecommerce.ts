import type { CallSite, HelperDeps } from '../api/types';
import type { EcommerceHelper, EcommerceHelpers } from './ecommerce-types';

export type * from './ecommerce-types';

// The 26 ecommerce events of spec 000 section 2.7, in the spec's order (their fields: src/debug/debug.ts).
const EVENTS = `Products Searched
Product List Viewed
Product Clicked
Product Viewed
Product List Filtered
Product Added
Product Removed
Cart Viewed
Checkout Started
Checkout Step Viewed
Checkout Step Completed
Payment Info Entered
Order Completed
Order Updated
Order Refunded
Order Cancelled
Promotion Viewed
Promotion Clicked
Coupon Entered
Coupon Applied
Coupon Removed
Coupon Denied
Product Added to Wishlist
Product Removed from Wishlist
Wishlist Product Added to Cart
Product Reviewed`;

/** The 26 ecommerce event names of spec 000 section 2.7, in the spec's order. */
export const ECOMMERCE_EVENTS: string[] = /*#__PURE__*/ EVENTS.split('\n');

/** The helper name of an event name: camel-cased, e.g. `Product Added to Wishlist` is `productAddedToWishlist`. */
export function helperName(eventName: string): string {
  return eventName.toLowerCase().replace(/ (.)/g, (_, c: string) => c.toUpperCase());
}

/**
 * Creates the ecommerce helpers over the core's `track`. `check` hears of every call first: in debug mode it
 * type-checks the properties against the spec (warnings only; src/debug/debug.ts, loaded on `debug()`).
 */
export function createEcommerce(deps: Pick<HelperDeps, '_track' | '_check'>): EcommerceHelpers {
  const helpers: Partial<EcommerceHelpers> & Record<string, EcommerceHelper<object>> = {};
  for (const event of ECOMMERCE_EVENTS)
    helpers[helperName(event)] = (properties, options, callback, site?: CallSite) => {
      deps._check(event, properties);
      return deps._track(event, properties, options, callback, site);
    };
  return helpers as EcommerceHelpers;
}
