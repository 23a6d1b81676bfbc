// The debug tools: loaded only when a page calls `debug(true)` (or loads with `debug: true`), never part of the
// main bundle: the IIFE build is dist/analytics.debug.min.js, next to dist/analytics.min.js; the npm entry imports
// this module on demand.
const TAG = '[svc-analytics]';

/** What `debug()` adds to an instance. */
export interface DebugTools {
  /** Logs one event of the instance (`track`, `error`, `delivered`, `retry`, ...) with its arguments. */
  log(name: string, args: unknown[]): void;
  /** Warns about each field of an ecommerce event's properties whose type is not the spec's (spec 000 section 2.7). */
  checkEcommerce(event: string, properties: unknown): void;
}

// The field table, transcribed from spec 000 section 2.7: one row per schema, `Event,Event|fields`.
// A field is `name` (a string), `name:n` (a number) or `name:i` (an integer); `name:P` is an array
// whose items have the fields of group P. A bare `P` or `O` stands for that group's fields.
// Fields the spec leaves untyped (ids, names, `query`, `reason`) are taken as strings.
const GROUPS: Record<string, string> = {
  P: 'product_id sku category name brand variant coupon url image_url price:n quantity:i position:n',
  O: 'order_id affiliation coupon currency revenue:n shipping:n tax:n discount:n',
  F: 'type value',
};
const TABLE = `Products Searched|query
Product List Viewed,Product Clicked,Product Viewed|P currency value:n
Product List Filtered|list_id category products:P filters:F sorts:F
Product Added,Product Removed|P cart_id
Cart Viewed|cart_id products:P
Checkout Started|O products:P value:n
Checkout Step Viewed,Checkout Step Completed|checkout_id shipping_method payment_method step:i
Payment Info Entered|checkout_id shipping_method payment_method step:i order_id
Order Completed|O products:P total:n subtotal:n checkout_id
Order Updated|O products:P
Order Refunded|O products:P total:n subtotal:n checkout_id
Order Cancelled|O products:P total:n
Promotion Viewed,Promotion Clicked|promotion_id creative name position
Coupon Entered|order_id cart_id coupon_id
Coupon Applied,Coupon Removed|order_id cart_id coupon_id coupon_name discount:n
Coupon Denied|order_id cart_id coupon_id coupon_name reason
Product Added to Wishlist,Product Removed from Wishlist|wishlist_id wishlist_name P
Wishlist Product Added to Cart|wishlist_id wishlist_name cart_id P
Product Reviewed|product_id review_id review_body rating:i`;

/** Fields of each ecommerce event, by event name. */
export const ECOMMERCE_FIELDS: Record<string, string> = {};
for (const row of TABLE.split('\n')) {
  const [events, fields] = row.split('|');
  for (const event of events.split(',')) ECOMMERCE_FIELDS[event] = fields;
}

// What a wrong value is; a number (where one is expected) by its value, as 1.5 is a number but no integer.
const got = (value: unknown, numeric?: string) =>
  `, got ${Array.isArray(value) ? 'array' : value === null || (numeric && typeof value == 'number') ? value : typeof value}`;

// Warns about each field of `obj` (named `at`) whose value has the wrong type.
function check(obj: any, fields: string, at: string, warn: (text: string) => void): void {
  if (Object(obj) !== obj) return warn(at + ' should be an object' + got(obj));
  fields.split(' ').forEach((field) => {
    const [key, type = ''] = field.split(':');
    const value = obj[key];
    const path = at == 'properties' ? key : `${at}.${key}`;
    const items = GROUPS[type];
    if (!type && GROUPS[key]) return check(obj, GROUPS[key], at, warn);
    if (value === undefined) return;
    const ok = items
      ? Array.isArray(value)
      : type
        ? (type == 'n' ? Number.isFinite : Number.isInteger)(value)
        : typeof value == 'string';
    if (!ok) {
      const expected = type == 'n' ? 'a number' : type == 'i' ? 'an integer' : type ? 'an array' : 'a string';
      warn(`${path} should be ${expected}` + got(value, type));
    } else if (items) value.forEach((item: unknown, i: number) => check(item, items, `${path}[${i}]`, warn));
  });
}

const describe = (name: string, args: unknown[]): unknown[] => {
  const last = args[args.length - 1] as { event?: { type?: string } } | undefined;
  if (name == 'error') {
    const e = args[0] as { code?: string; message?: string };
    return [e && e.code, e && e.message];
  }
  if (name == 'delivered') return ['delivered', (args[0] as unknown[]).length, 'message(s)', args[0]];
  // A call's event carries the message as queued.
  return last && last.event && last.event.type ? [name, last.event] : [name, ...args];
};

/** Creates the debug tools (console output with the library's tag). */
export function createDebugTools(): DebugTools {
  return {
    log(name, args) {
      (name == 'error' || name == 'retry' ? console.warn : console.log)(TAG, ...describe(name, args));
    },
    checkEcommerce(event, properties) {
      const fields = ECOMMERCE_FIELDS[event];
      if (fields && properties !== undefined) check(properties, fields, 'properties', (text) => console.warn(TAG, `${event}: ${text}`));
    },
  };
}
