import type { CallOptions, CallResult, Callback } from '../types';

// The types of the ecommerce helpers (spec 000 section 2.7): each event's properties and its helper.

/**
 * The spec's fields only: a key the spec does not define (a misspelt `order_Id`) is a type error in an object
 * literal. (Custom events stay open: `track(name, properties)` takes any object.)
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface CustomProperties {}

/** Product fields "P" of spec 000 section 2.7. */
export interface ProductFields {
  product_id?: string;
  sku?: string;
  category?: string;
  name?: string;
  brand?: string;
  variant?: string;
  coupon?: string;
  url?: string;
  image_url?: string;
  price?: number;
  /** An integer. */
  quantity?: number;
  position?: number;
}

/** Money-flow fields "O" of spec 000 section 2.7. */
export interface OrderFields {
  order_id?: string;
  affiliation?: string;
  coupon?: string;
  currency?: string;
  revenue?: number;
  shipping?: number;
  tax?: number;
  discount?: number;
}

/** One item of a `products` array. */
export interface Product extends ProductFields, CustomProperties {}

/** One item of `filters` (Product List Filtered). */
export interface Filter {
  type: string;
  value: string;
}

/** One item of `sorts` (Product List Filtered). */
export interface Sort {
  type: string;
  value: string;
}

/** Properties of `Products Searched`. */
export interface ProductsSearchedProperties extends CustomProperties {
  query?: string;
}

/** Properties of `Product Viewed` (and of `Product List Viewed`, `Product Clicked`). */
export interface ProductViewedProperties extends ProductFields, CustomProperties {
  currency?: string;
  /** Total after multiplying by quantity. */
  value?: number;
}
/** Properties of `Product List Viewed`. */
export type ProductListViewedProperties = ProductViewedProperties;
/** Properties of `Product Clicked`. */
export type ProductClickedProperties = ProductViewedProperties;

/** Properties of `Product List Filtered`. */
export interface ProductListFilteredProperties extends CustomProperties {
  list_id?: string;
  category?: string;
  products?: Product[];
  filters?: Filter[];
  sorts?: Sort[];
}

/** Properties of `Product Added` (and of `Product Removed`). */
export interface ProductAddedProperties extends ProductFields, CustomProperties {
  cart_id?: string;
}
/** Properties of `Product Removed`. */
export type ProductRemovedProperties = ProductAddedProperties;

/** Properties of `Cart Viewed`. */
export interface CartViewedProperties extends CustomProperties {
  cart_id?: string;
  products?: Product[];
}

/** Properties of `Checkout Started`. */
export interface CheckoutStartedProperties extends OrderFields, CustomProperties {
  products?: Product[];
  value?: number;
}

/** Properties of `Checkout Step Viewed` (and of `Checkout Step Completed`). */
export interface CheckoutStepViewedProperties extends CustomProperties {
  checkout_id?: string;
  shipping_method?: string;
  payment_method?: string;
  /** An integer. */
  step?: number;
}
/** Properties of `Checkout Step Completed`. */
export type CheckoutStepCompletedProperties = CheckoutStepViewedProperties;

/** Properties of `Payment Info Entered`. */
export interface PaymentInfoEnteredProperties extends CheckoutStepViewedProperties {
  order_id?: string;
}

/** Properties of `Order Completed`. */
export interface OrderCompletedProperties extends OrderFields, CustomProperties {
  subtotal?: number;
  total?: number;
  products?: Product[];
  checkout_id?: string;
}

/** Properties of `Order Updated`. */
export interface OrderUpdatedProperties extends OrderFields, CustomProperties {
  products?: Product[];
}

/** Properties of `Order Refunded`. */
export interface OrderRefundedProperties extends OrderUpdatedProperties {
  total?: number;
  subtotal?: number;
  checkout_id?: string;
}

/** Properties of `Order Cancelled`. */
export interface OrderCancelledProperties extends OrderUpdatedProperties {
  total?: number;
}

/** Properties of `Promotion Viewed` (and of `Promotion Clicked`). */
export interface PromotionViewedProperties extends CustomProperties {
  promotion_id?: string;
  creative?: string;
  name?: string;
  /** A string here, unlike a product's `position`. */
  position?: string;
}
/** Properties of `Promotion Clicked`. */
export type PromotionClickedProperties = PromotionViewedProperties;

/** Properties of `Coupon Entered`. */
export interface CouponEnteredProperties extends CustomProperties {
  order_id?: string;
  cart_id?: string;
  coupon_id?: string;
}

/** Properties of `Coupon Applied` (and of `Coupon Removed`). */
export interface CouponAppliedProperties extends CouponEnteredProperties {
  coupon_name?: string;
  discount?: number;
}
/** Properties of `Coupon Removed`. */
export type CouponRemovedProperties = CouponAppliedProperties;

/** Properties of `Coupon Denied`. */
export interface CouponDeniedProperties extends CouponEnteredProperties {
  coupon_name?: string;
  reason?: string;
}

/** Properties of `Product Added to Wishlist` (and of `Product Removed from Wishlist`). */
export interface ProductAddedToWishlistProperties extends ProductFields, CustomProperties {
  wishlist_id?: string;
  wishlist_name?: string;
}
/** Properties of `Product Removed from Wishlist`. */
export type ProductRemovedFromWishlistProperties = ProductAddedToWishlistProperties;

/** Properties of `Wishlist Product Added to Cart`. */
export interface WishlistProductAddedToCartProperties extends ProductAddedToWishlistProperties {
  cart_id?: string;
}

/** Properties of `Product Reviewed`. */
export interface ProductReviewedProperties extends CustomProperties {
  product_id?: string;
  review_id?: string;
  review_body?: string;
  /** An integer. */
  rating?: number;
}

/** A helper: sends a `track` call with its fixed event name; settles like `track`. */
export type EcommerceHelper<T> = (properties?: T, options?: CallOptions, callback?: Callback) => Promise<CallResult>;

/** One helper per ecommerce event of spec 000 section 2.7, named by camel-casing the event name. */
export interface EcommerceHelpers {
  /** `Products Searched` */
  productsSearched: EcommerceHelper<ProductsSearchedProperties>;
  /** `Product List Viewed` */
  productListViewed: EcommerceHelper<ProductListViewedProperties>;
  /** `Product List Filtered` */
  productListFiltered: EcommerceHelper<ProductListFilteredProperties>;
  /** `Product Clicked` */
  productClicked: EcommerceHelper<ProductClickedProperties>;
  /** `Product Viewed` */
  productViewed: EcommerceHelper<ProductViewedProperties>;
  /** `Product Added` */
  productAdded: EcommerceHelper<ProductAddedProperties>;
  /** `Product Removed` */
  productRemoved: EcommerceHelper<ProductRemovedProperties>;
  /** `Cart Viewed` */
  cartViewed: EcommerceHelper<CartViewedProperties>;
  /** `Checkout Started` */
  checkoutStarted: EcommerceHelper<CheckoutStartedProperties>;
  /** `Checkout Step Viewed` */
  checkoutStepViewed: EcommerceHelper<CheckoutStepViewedProperties>;
  /** `Checkout Step Completed` */
  checkoutStepCompleted: EcommerceHelper<CheckoutStepCompletedProperties>;
  /** `Payment Info Entered` */
  paymentInfoEntered: EcommerceHelper<PaymentInfoEnteredProperties>;
  /** `Order Completed` */
  orderCompleted: EcommerceHelper<OrderCompletedProperties>;
  /** `Order Updated` */
  orderUpdated: EcommerceHelper<OrderUpdatedProperties>;
  /** `Order Refunded` */
  orderRefunded: EcommerceHelper<OrderRefundedProperties>;
  /** `Order Cancelled` */
  orderCancelled: EcommerceHelper<OrderCancelledProperties>;
  /** `Promotion Viewed` */
  promotionViewed: EcommerceHelper<PromotionViewedProperties>;
  /** `Promotion Clicked` */
  promotionClicked: EcommerceHelper<PromotionClickedProperties>;
  /** `Coupon Entered` */
  couponEntered: EcommerceHelper<CouponEnteredProperties>;
  /** `Coupon Applied` */
  couponApplied: EcommerceHelper<CouponAppliedProperties>;
  /** `Coupon Removed` */
  couponRemoved: EcommerceHelper<CouponRemovedProperties>;
  /** `Coupon Denied` */
  couponDenied: EcommerceHelper<CouponDeniedProperties>;
  /** `Product Added to Wishlist` */
  productAddedToWishlist: EcommerceHelper<ProductAddedToWishlistProperties>;
  /** `Product Removed from Wishlist` */
  productRemovedFromWishlist: EcommerceHelper<ProductRemovedFromWishlistProperties>;
  /** `Wishlist Product Added to Cart` */
  wishlistProductAddedToCart: EcommerceHelper<WishlistProductAddedToCartProperties>;
  /** `Product Reviewed` */
  productReviewed: EcommerceHelper<ProductReviewedProperties>;
}
