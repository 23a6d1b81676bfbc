// Checked by `tsc --noEmit --strict`, never run: every `@ts-expect-error` line must be a type error,
// every other line must compile.
import { createEcommerce, type Product, type OrderCompletedProperties } from '../../src/helpers/ecommerce';
import { createSemantic } from '../../src/helpers/semantic';
import type { CallResult } from '../../src/types';

declare const track: (event: string, properties: object | undefined) => Promise<CallResult>;
const ecommerce = createEcommerce({ _track: track, _check: () => {} });
const semantic = createSemantic({ _track: track, _userId: () => null });

// Valid calls compile, custom properties included.
const done: Promise<CallResult> = ecommerce.productViewed({ product_id: 'p1', price: 9.99, quantity: 2, currency: 'USD' });
void done;
ecommerce.productViewed();
ecommerce.productViewed({ price: 1 }, { timestamp: new Date() }, (result) => void result);
ecommerce.productsSearched({ query: 'shoes' });
ecommerce.productListFiltered({
  list_id: 'l',
  products: [{ product_id: 'p1' }],
  filters: [{ type: 'size', value: 'M' }],
  sorts: [{ type: 'price', value: 'desc' }],
});
const order: OrderCompletedProperties = { order_id: 'o1', total: 20, revenue: 18, products: [{ sku: 's', price: 9 }] };
ecommerce.orderCompleted(order);
ecommerce.promotionViewed({ promotion_id: 'x', position: 'banner_top' });
ecommerce.productAddedToWishlist({ wishlist_id: 'w', product_id: 'p' });
ecommerce.wishlistProductAddedToCart({ wishlist_id: 'w', cart_id: 'c', quantity: 1 });
ecommerce.productReviewed({ product_id: 'p', rating: 5 });
const item: Product = { name: 'n', price: 1 };
void item;
semantic.deviceCreatedOrUpdated({ device: { token: 't', type: 'ios' } });
semantic.deviceDeleted();
semantic.reportDeliveryEvent({ deliveryId: 'd', metric: 'opened' });
semantic.reportDeliveryEvent({ deliveryId: 'd', metric: 'converted', href: 'https://e.x' });
semantic.experimentViewed({ experiment_id: 'e', variation_name: 'b' });
semantic.relationshipDeleted({ objectId: 'o', objectTypeId: '2' });
semantic.objectDeleted({ objectId: 'o' });
semantic.userDeleted();
semantic.userSuppressed(undefined, { timestamp: '2024-01-01T00:00:00Z' });
semantic.userUnsuppressed();

// Wrong types are errors.
// @ts-expect-error price is a number
ecommerce.productViewed({ price: '9.99' });
// @ts-expect-error quantity is a number
ecommerce.productAdded({ quantity: '2' });
// @ts-expect-error product_id is a string
ecommerce.productClicked({ product_id: 42 });
// @ts-expect-error products is an array
ecommerce.orderCompleted({ products: 'x' });
// @ts-expect-error a product's price is a number
ecommerce.cartViewed({ products: [{ price: '9.99' }] });
// @ts-expect-error a filter needs a string value
ecommerce.productListFiltered({ filters: [{ type: 'size', value: 1 }] });
// @ts-expect-error a promotion's position is a string
ecommerce.promotionClicked({ position: 1 });
// @ts-expect-error there is no such helper
ecommerce.productBought({ price: 1 });
// Keys the spec does not define are errors (a misspelling is caught), in products too.
// @ts-expect-error order_Id is not order_id
ecommerce.orderCompleted({ order_Id: 'o1' });
// @ts-expect-error a product has no such key
ecommerce.cartViewed({ products: [{ product_id: 'p', colour: 'red' }] });
// Semantic events keep custom properties.
semantic.experimentViewed({ experiment_id: 'e', my_custom: 1 });
// @ts-expect-error Device Created or Updated requires device.token
semantic.deviceCreatedOrUpdated({ device: { type: 'ios' } });
// @ts-expect-error Device Created or Updated requires its properties
semantic.deviceCreatedOrUpdated();
// @ts-expect-error Report Delivery Event requires deliveryId
semantic.reportDeliveryEvent({ metric: 'opened' });
// @ts-expect-error Object Deleted requires objectId
semantic.objectDeleted({ objectTypeId: '1' });
