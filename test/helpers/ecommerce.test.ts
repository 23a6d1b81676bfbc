import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEcommerce, ECOMMERCE_EVENTS, helperName } from '../../src/helpers/ecommerce';
import { createDebugTools, ECOMMERCE_FIELDS } from '../../src/debug/debug';
import type { CallResult } from '../../src/types';

// Written by hand from spec 000 section 2.7 (not derived from the code under test): helper -> event.
const SPEC: [string, string][] = [
  ['productsSearched', 'Products Searched'],
  ['productListViewed', 'Product List Viewed'],
  ['productClicked', 'Product Clicked'],
  ['productViewed', 'Product Viewed'],
  ['productListFiltered', 'Product List Filtered'],
  ['productAdded', 'Product Added'],
  ['productRemoved', 'Product Removed'],
  ['cartViewed', 'Cart Viewed'],
  ['checkoutStarted', 'Checkout Started'],
  ['checkoutStepViewed', 'Checkout Step Viewed'],
  ['checkoutStepCompleted', 'Checkout Step Completed'],
  ['paymentInfoEntered', 'Payment Info Entered'],
  ['orderCompleted', 'Order Completed'],
  ['orderUpdated', 'Order Updated'],
  ['orderRefunded', 'Order Refunded'],
  ['orderCancelled', 'Order Cancelled'],
  ['promotionViewed', 'Promotion Viewed'],
  ['promotionClicked', 'Promotion Clicked'],
  ['couponEntered', 'Coupon Entered'],
  ['couponApplied', 'Coupon Applied'],
  ['couponRemoved', 'Coupon Removed'],
  ['couponDenied', 'Coupon Denied'],
  ['productAddedToWishlist', 'Product Added to Wishlist'],
  ['productRemovedFromWishlist', 'Product Removed from Wishlist'],
  ['wishlistProductAddedToCart', 'Wishlist Product Added to Cart'],
  ['productReviewed', 'Product Reviewed'],
];

const RESULT = { event: { type: 'track' } } as unknown as CallResult;

// The helpers with the debug tools' checker behind `check`, as the library wires them in debug mode (`warn` hears
// each console warning's text, without the tag).
function setup(debug = false) {
  const track = vi.fn(async (..._args: unknown[]) => RESULT);
  const warn = vi.fn();
  vi.spyOn(console, 'warn').mockImplementation((_tag: unknown, text: unknown) => warn(text));
  const tools = createDebugTools();
  const check = vi.fn((event: string, properties: unknown) => debug && tools.checkEcommerce(event, properties));
  const helpers = createEcommerce({ _track: track, _check: check }) as unknown as Record<string, (...args: unknown[]) => Promise<CallResult>>;
  return { helpers, track, warn, check };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('ECOMMERCE_EVENTS', () => {
  it('lists the 26 spec event names in the spec order', () => {
    expect(ECOMMERCE_EVENTS).toEqual(SPEC.map(([, event]) => event));
  });
});

describe('helperName', () => {
  it('camel-cases an event name, lower-casing short words', () => {
    expect(helperName('Order Completed')).toBe('orderCompleted');
    expect(helperName('Product Added to Wishlist')).toBe('productAddedToWishlist');
    expect(helperName('Product Removed from Wishlist')).toBe('productRemovedFromWishlist');
  });
});

describe('createEcommerce', () => {
  it('has exactly one helper per spec event', () => {
    const { helpers } = setup();
    expect(Object.keys(helpers).sort()).toEqual(SPEC.map(([name]) => name).sort());
  });

  it.each(SPEC)('%s sends a track call named %j', async (name, event) => {
    const { helpers, track } = setup();
    await helpers[name]({ order_id: 'o1' });
    expect(track).toHaveBeenCalledTimes(1);
    expect(track.mock.calls[0][0]).toBe(event);
  });

  it('passes properties, options and callback to track unchanged and returns its promise', async () => {
    const { helpers, track } = setup();
    const properties = { product_id: 'p1', price: 9.99, custom: { a: 1 } };
    const options = { timestamp: '2024-01-01T00:00:00.000Z', context: { ip: '1.2.3.4' } };
    const callback = vi.fn();
    const result = await helpers.productViewed(properties, options, callback);
    expect(track).toHaveBeenCalledWith('Product Viewed', properties, options, callback, undefined);
    expect(track.mock.calls[0][1]).toBe(properties);
    expect(track.mock.calls[0][2]).toBe(options);
    expect(result).toBe(RESULT);
  });

  it('sends a call without properties', async () => {
    const { helpers, track } = setup(true);
    await helpers.cartViewed();
    expect(track).toHaveBeenCalledWith('Cart Viewed', undefined, undefined, undefined, undefined);
  });

  describe('in debug mode', () => {
    it('warns about a wrong string, number and integer field, naming event, field and expected type', async () => {
      const { helpers, track, warn } = setup(true);
      await helpers.productViewed({ product_id: 42, price: '9.99', quantity: 1.5, currency: 'EUR' });
      expect(warn.mock.calls.map((c) => c[0])).toEqual([
        'Product Viewed: product_id should be a string, got number',
        'Product Viewed: price should be a number, got string',
        'Product Viewed: quantity should be an integer, got 1.5',
      ]);
      expect(track).toHaveBeenCalledTimes(1);
    });

    it('warns about a field that should be an array', async () => {
      const { helpers, track, warn } = setup(true);
      await helpers.orderCompleted({ products: 'x', filters: 'custom, unchecked' });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn).toHaveBeenCalledWith('Order Completed: products should be an array, got string');
      expect(track).toHaveBeenCalledTimes(1);
    });

    it('checks each products[i] item as product fields', async () => {
      const { helpers, warn } = setup(true);
      await helpers.checkoutStarted({
        revenue: '10',
        products: [{ product_id: 'a', price: 1 }, { price: '9.99', quantity: '2' }, null],
      });
      expect(warn.mock.calls.map((c) => c[0])).toEqual([
        'Checkout Started: revenue should be a number, got string',
        'Checkout Started: products[1].price should be a number, got string',
        'Checkout Started: products[1].quantity should be an integer, got string',
        'Checkout Started: products[2] should be an object, got null',
      ]);
    });

    it('checks filters and sorts items', async () => {
      const { helpers, warn } = setup(true);
      await helpers.productListFiltered({ filters: [{ type: 'size', value: 'M' }], sorts: [{ type: 'price', value: 1 }] });
      expect(warn.mock.calls.map((c) => c[0])).toEqual(['Product List Filtered: sorts[0].value should be a string, got number']);
    });

    it('types fields per event: position is a number for products, a string for promotions', async () => {
      const { helpers, warn } = setup(true);
      await helpers.promotionViewed({ position: 'top' });
      await helpers.productClicked({ position: 3 });
      expect(warn).not.toHaveBeenCalled();
      await helpers.promotionClicked({ position: 3 });
      await helpers.productClicked({ position: 'top' });
      expect(warn.mock.calls.map((c) => c[0])).toEqual([
        'Promotion Clicked: position should be a string, got number',
        'Product Clicked: position should be a number, got string',
      ]);
    });

    it('rejects non-finite numbers and fractional integers', async () => {
      const { helpers, warn } = setup(true);
      await helpers.productReviewed({ rating: 4.5 });
      await helpers.checkoutStepViewed({ step: 2 });
      await helpers.couponApplied({ discount: Number.NaN });
      expect(warn.mock.calls.map((c) => c[0])).toEqual([
        'Product Reviewed: rating should be an integer, got 4.5',
        'Coupon Applied: discount should be a number, got NaN',
      ]);
    });

    it('accepts valid and custom properties without a warning', async () => {
      const { helpers, warn } = setup(true);
      await helpers.orderCompleted({
        order_id: 'o1',
        total: 20,
        subtotal: 18,
        revenue: 18,
        currency: 'USD',
        products: [{ product_id: 'p1', sku: 's', price: 9, quantity: 2, position: 1, my_flag: true }],
        my_custom: { nested: [1, 2] },
      });
      await helpers.wishlistProductAddedToCart({ wishlist_id: 'w', cart_id: 'c', price: 1, quantity: 1 });
      expect(warn).not.toHaveBeenCalled();
    });

    it('warns when properties are not an object and still sends', async () => {
      const { helpers, warn, track } = setup(true);
      await helpers.productAdded('shoe');
      expect(warn).toHaveBeenCalledWith('Product Added: properties should be an object, got string');
      expect(track).toHaveBeenCalledWith('Product Added', 'shoe', undefined, undefined, undefined);
    });
  });

  it('does no checking outside debug mode', async () => {
    const { helpers, warn, track } = setup(false);
    const properties = { price: '9.99', quantity: 'x', products: 'x' };
    await helpers.productViewed(properties);
    await helpers.orderCompleted(properties);
    expect(warn).not.toHaveBeenCalled();
    expect(track).toHaveBeenCalledTimes(2);
  });

  it('hands every call to check first, with its event name and properties as given', async () => {
    const { helpers, check } = setup(false);
    const properties = { price: 1 };
    await helpers.productViewed(properties);
    await helpers.cartViewed();
    expect(check.mock.calls).toEqual([
      ['Product Viewed', properties],
      ['Cart Viewed', undefined],
    ]);
    expect(check.mock.calls[0][1]).toBe(properties);
  });
});

describe('ECOMMERCE_FIELDS (src/debug.ts)', () => {
  it('has the fields of exactly the 26 spec events', () => {
    expect(Object.keys(ECOMMERCE_FIELDS).sort()).toEqual([...ECOMMERCE_EVENTS].sort());
  });
});
