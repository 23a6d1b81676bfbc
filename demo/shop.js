// Field Goods: a small single-page shop instrumented with svc-analytics.
// Routes: ./ (products), product/<id>, cart, checkout, order/<id>; all relative to the <base> set in index.html.
// Page views are automatic (`trackPageViews: true`); this file sends the ecommerce events of spec 000 §2.7
// through `analytics.ecommerce.*` and one `identify` when an order is placed.
import { BRAND, CURRENCY, PRODUCTS, productById, art } from './catalog.js';
import { mountEventsWidget } from './widget.js';
import { mountConsent, consentState } from './consent.js';

// `window.analytics` is the snippet's stub until the bundle loads and replaces it: always look it up at call time.
const analytics = () => window.analytics;
const ecommerce = () => window.analytics.ecommerce;

const BASE = new URL(document.baseURI).pathname; // '/' or '/…/demo/'
const href = (rel) => new URL(rel, document.baseURI).href;
const TAX_RATE = 0.08;
const COUPONS = { DEMO10: { name: '10% off everything', percent: 10 } };
const SHIPPING = {
  standard: { label: 'Standard', detail: '3–5 business days, free over $50', price: (goods) => (goods >= 50 ? 0 : 4.95) },
  express: { label: 'Express', detail: 'Next business day', price: () => 12 },
};
const PAYMENT = {
  card: 'Card',
  paypal: 'PayPal',
  invoice: 'Invoice',
};

let main; // <main>, once the page is parsed
const $ = (sel, el = main) => el.querySelector(sel);
const cents = (n) => Math.round(n * 100) / 100;
const moneyFormat = new Intl.NumberFormat('en-US', { style: 'currency', currency: CURRENCY });
const money = (n) => moneyFormat.format(n);
const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function uid(prefix, length = 10) {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  return prefix + Array.from(bytes, (b) => alphabet[b % 32]).join('');
}

// ---- state (kept in localStorage so a reload keeps the cart) ----------------------------------------------

const KEY = 'field-goods:';
const store = {
  get(name, fallback) {
    try {
      return JSON.parse(localStorage.getItem(KEY + name)) ?? fallback;
    } catch {
      return fallback;
    }
  },
  set(name, value) {
    try {
      localStorage.setItem(KEY + name, JSON.stringify(value));
    } catch {
      // private mode or full storage: the shop still works for this page
    }
  },
};

const newCart = () => ({ id: uid('cart_'), items: [], coupon: null });
let cart = store.get('cart', null) || newCart();
cart.items = cart.items.filter((it) => productById(it.id) && Number.isInteger(it.quantity) && it.quantity > 0);

function saveCart() {
  store.set('cart', cart);
  updateBadge();
}

const itemCount = () => cart.items.reduce((n, it) => n + it.quantity, 0);

/** The money of the current cart; `shipping` only once a method is chosen. */
function totals(shippingMethod) {
  const subtotal = cents(cart.items.reduce((sum, it) => sum + productById(it.id).price * it.quantity, 0));
  const coupon = cart.coupon && COUPONS[cart.coupon];
  const discount = coupon ? cents((subtotal * coupon.percent) / 100) : 0;
  const revenue = cents(subtotal - discount);
  const shipping = shippingMethod ? SHIPPING[shippingMethod].price(revenue) : 0;
  const tax = cents(revenue * TAX_RATE);
  const total = cents(revenue + shipping + tax);
  return { subtotal, discount, revenue, shipping, tax, total };
}

// ---- event properties (types as spec 000 §2.7 has them: ids strings, price a number, quantity an integer) ----

function productProps(p, extra = {}) {
  return {
    product_id: p.id,
    sku: p.sku,
    category: p.category,
    name: p.name,
    brand: BRAND,
    variant: p.variant,
    price: p.price,
    url: href('product/' + p.id),
    ...extra,
  };
}

const cartProducts = () =>
  cart.items.map((it, i) => productProps(productById(it.id), { quantity: it.quantity, position: i + 1 }));

function addToCart(p, quantity) {
  const line = cart.items.find((it) => it.id === p.id);
  if (line) line.quantity += quantity;
  else cart.items.push({ id: p.id, quantity });
  saveCart();
  ecommerce().productAdded({ cart_id: cart.id, ...productProps(p), quantity });
}

function removeFromCart(p, quantity) {
  const line = cart.items.find((it) => it.id === p.id);
  if (!line) return;
  quantity = Math.min(quantity, line.quantity);
  line.quantity -= quantity;
  if (!line.quantity) cart.items = cart.items.filter((it) => it !== line);
  saveCart();
  ecommerce().productRemoved({ cart_id: cart.id, ...productProps(p), quantity });
}

// ---- router -------------------------------------------------------------------------------------------------

function parseRoute() {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname.slice(1);
  let parts;
  try {
    parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { name: 'notFound' };
  }
  if (!parts.length || (parts.length === 1 && parts[0] === 'index.html')) return { name: 'list' };
  if (parts.length === 2 && parts[0] === 'product') return { name: 'product', id: parts[1] };
  if (parts.length === 2 && parts[0] === 'order') return { name: 'order', id: parts[1] };
  if (parts.length === 1 && parts[0] === 'cart') return { name: 'cart' };
  if (parts.length === 1 && parts[0] === 'checkout') return { name: 'checkout' };
  return { name: 'notFound' };
}

function go(rel, { replace = false } = {}) {
  const url = href(rel);
  if (url === location.href && !replace) return void window.scrollTo(0, 0);
  history[replace ? 'replaceState' : 'pushState'](null, '', url);
  render();
  window.scrollTo(0, 0);
  main.focus({ preventScroll: true }); // the clicked link is gone: start keyboard and screen readers at the new page
}

let navigation = 0;
let current = null; // { name, render(), track?() } of the route on screen

/**
 * Runs the route's ecommerce events once its page view has been sent. `trackPageViews` sends the page view a
 * frame after the URL changes (so the new title is in it); waiting for that keeps the collector's log in the
 * order a person sees it: page, then Product Viewed. Skipped if the person already moved on.
 */
function afterPageView(fn) {
  const seq = navigation;
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    if (seq === navigation) fn();
  };
  requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, 150); // a hidden tab gets no frames
}

function render() {
  navigation++;
  const route = parseRoute();
  const view = VIEWS[route.name](route);
  if (!view) return; // the view redirected
  current = view;
  document.title = view.title ? `${view.title} · ${BRAND}` : `${BRAND} · small goods, well made`;
  for (const a of document.querySelectorAll('[data-nav]')) {
    a.toggleAttribute('aria-current', a.dataset.nav === route.name || (a.dataset.nav === 'list' && route.name === 'product'));
  }
  view.render();
  if (view.track) afterPageView(view.track);
}

/** Re-draws the route on screen after a change, without sending its view events again. */
const refresh = () => current && current.render();

document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[href]');
  if (!a) return;
  // Product Clicked goes out for every click on a product card, including ones that open a new tab.
  if (a.dataset.product && e.button === 0) {
    const p = productById(a.dataset.product);
    ecommerce().productClicked({ ...productProps(p, { position: Number(a.dataset.position) }), list_id: a.dataset.list, currency: CURRENCY });
  }
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  if (a.target || a.hasAttribute('download')) return;
  const raw = a.getAttribute('href');
  if (raw.startsWith('#')) {
    // in-page links (the skip link): with a <base> they would otherwise point at the shop's home
    e.preventDefault();
    document.getElementById(raw.slice(1))?.focus();
    return;
  }
  const url = new URL(a.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE)) return;
  e.preventDefault();
  go(url.pathname.slice(BASE.length) + url.search);
});

addEventListener('popstate', render);

// ---- views ----------------------------------------------------------------------------------------------------

function productCard(p, position, list) {
  return `<a class="card" href="product/${p.id}" data-product="${p.id}" data-position="${position}" data-list="${list}">
    ${art(p)}
    <span class="card-body">
      <span class="eyebrow">${escape(p.category)}</span>
      <span class="card-name">${escape(p.name)}</span>
      <span class="card-foot"><span class="price">${money(p.price)}</span><span class="card-cta" aria-hidden="true">View →</span></span>
    </span>
  </a>`;
}

const VIEWS = {
  list() {
    return {
      title: '',
      render() {
        main.innerHTML = `
          <section class="hero">
            <div>
              <p class="eyebrow">New season</p>
              <h1>Small goods, well made.</h1>
              <p class="lead">A demo shop wired to <b>svc-analytics</b>. Browse, add to the cart and check out: every step
              sends an ecommerce event to your local collector. Watch them arrive in the corner.</p>
            </div>
          </section>
          <h2 class="section-title">All products <span class="muted">${PRODUCTS.length} items</span></h2>
          <div class="grid" data-testid="products">${PRODUCTS.map((p, i) => productCard(p, i + 1, 'all-products')).join('')}</div>`;
      },
      track() {
        ecommerce().productListViewed({
          list_id: 'all-products',
          category: 'All products',
          currency: CURRENCY,
          products: PRODUCTS.map((p, i) => productProps(p, { position: i + 1 })),
        });
      },
    };
  },

  product({ id }) {
    const p = productById(id);
    if (!p) return VIEWS.notFound();
    let quantity = 1;
    const related = PRODUCTS.filter((x) => x !== p).slice(0, 3);
    return {
      title: p.name,
      render() {
        main.innerHTML = `
          <nav class="crumbs" aria-label="Breadcrumb"><a href="./">Shop</a><span aria-hidden="true">/</span><span>${escape(p.category)}</span></nav>
          <article class="product">
            <div class="product-art">${art(p)}</div>
            <div class="product-info">
              <p class="eyebrow">${escape(p.category)}</p>
              <h1>${escape(p.name)}</h1>
              <p class="product-price">${money(p.price)}</p>
              <p class="lead">${escape(p.blurb)}</p>
              <dl class="facts">
                <div><dt>Variant</dt><dd>${escape(p.variant)}</dd></div>
                <div><dt>SKU</dt><dd>${escape(p.sku)}</dd></div>
              </dl>
              <div class="buy">
                <div class="stepper" role="group" aria-label="Quantity">
                  <button type="button" data-step="-1" aria-label="Decrease quantity">−</button>
                  <output id="qty" aria-live="polite">1</output>
                  <button type="button" data-step="1" aria-label="Increase quantity">+</button>
                </div>
                <button type="button" class="btn primary" id="add">Add to cart</button>
              </div>
              <p class="added" id="added" role="status"></p>
            </div>
          </article>
          <section class="related">
            <h2 class="section-title">You might also like</h2>
            <div class="grid small">${related.map((r, i) => productCard(r, i + 1, 'related-' + p.id)).join('')}</div>
          </section>`;
        main.querySelectorAll('[data-step]').forEach((b) =>
          b.addEventListener('click', () => {
            quantity = Math.min(9, Math.max(1, quantity + Number(b.dataset.step)));
            $('#qty').textContent = String(quantity);
          }),
        );
        $('#add').addEventListener('click', () => {
          addToCart(p, quantity);
          const note = $('#added');
          note.innerHTML = `<span class="tick" aria-hidden="true">✓</span> Added ${quantity} to your cart. <a href="cart">View cart →</a>`;
          note.classList.remove('show');
          void note.offsetWidth; // restart the animation
          note.classList.add('show');
          quantity = 1;
          $('#qty').textContent = '1';
        });
      },
      track() {
        ecommerce().productViewed({ ...productProps(p), currency: CURRENCY, value: p.price });
      },
    };
  },

  cart() {
    let couponMessage = '';
    return {
      title: 'Your cart',
      render() {
        if (!cart.items.length) {
          main.innerHTML = `
            <h1 class="page-title">Your cart</h1>
            <div class="empty-state">
              <p>Your cart is empty.</p>
              <a class="btn primary" href="./">Browse the shop</a>
            </div>`;
          return;
        }
        const t = totals();
        main.innerHTML = `
          <h1 class="page-title">Your cart <span class="muted">${itemCount()} ${itemCount() === 1 ? 'item' : 'items'}</span></h1>
          <div class="two-col">
            <ul class="lines" data-testid="cart-lines">
              ${cart.items
                .map((it) => {
                  const p = productById(it.id);
                  return `<li class="line" data-line="${p.id}">
                    <a class="line-art" href="product/${p.id}" tabindex="-1" aria-hidden="true">${art(p)}</a>
                    <div class="line-info">
                      <a class="line-name" href="product/${p.id}">${escape(p.name)}</a>
                      <span class="muted">${escape(p.variant)} · ${money(p.price)}</span>
                      <button type="button" class="link-button" data-remove="${p.id}">Remove</button>
                    </div>
                    <div class="stepper small" role="group" aria-label="Quantity of ${escape(p.name)}">
                      <button type="button" data-dec="${p.id}" aria-label="One fewer">−</button>
                      <output>${it.quantity}</output>
                      <button type="button" data-inc="${p.id}" aria-label="One more">+</button>
                    </div>
                    <b class="line-total">${money(p.price * it.quantity)}</b>
                  </li>`;
                })
                .join('')}
            </ul>
            <aside class="summary">
              <h2>Order summary</h2>
              ${summaryRows(t, null)}
              <form class="coupon" id="coupon" novalidate>
                ${
                  cart.coupon
                    ? `<p class="coupon-on"><span>Code <b>${escape(cart.coupon)}</b>: ${escape(COUPONS[cart.coupon].name)}</span>
                       <button type="button" class="link-button" id="coupon-remove">Remove</button></p>`
                    : `<label for="coupon-code">Discount code</label>
                       <div class="inline"><input id="coupon-code" name="code" autocomplete="off" placeholder="Try DEMO10"><button class="btn">Apply</button></div>`
                }
                <p class="coupon-msg" role="status">${escape(couponMessage)}</p>
              </form>
              <a class="btn primary wide" href="checkout" id="to-checkout">Checkout</a>
              <a class="btn ghost wide" href="./">Continue shopping</a>
            </aside>
          </div>`;
        main.querySelectorAll('[data-inc]').forEach((b) =>
          b.addEventListener('click', () => (addToCart(productById(b.dataset.inc), 1), refresh())),
        );
        main.querySelectorAll('[data-dec]').forEach((b) =>
          b.addEventListener('click', () => (removeFromCart(productById(b.dataset.dec), 1), refresh())),
        );
        main.querySelectorAll('[data-remove]').forEach((b) =>
          b.addEventListener('click', () => {
            const line = cart.items.find((it) => it.id === b.dataset.remove);
            removeFromCart(productById(b.dataset.remove), line ? line.quantity : 1);
            refresh();
          }),
        );
        $('#coupon').addEventListener('submit', (e) => {
          e.preventDefault();
          const code = $('#coupon-code').value.trim().toUpperCase();
          if (!code) return;
          ecommerce().couponEntered({ cart_id: cart.id, coupon_id: code });
          const coupon = COUPONS[code];
          if (coupon) {
            cart.coupon = code;
            saveCart();
            ecommerce().couponApplied({ cart_id: cart.id, coupon_id: code, coupon_name: coupon.name, discount: totals().discount });
            couponMessage = 'Code applied.';
          } else {
            ecommerce().couponDenied({ cart_id: cart.id, coupon_id: code, reason: 'Unknown code' });
            couponMessage = `“${code}” is not a valid code. Try DEMO10.`;
          }
          refresh();
        });
        $('#coupon-remove')?.addEventListener('click', () => {
          const code = cart.coupon;
          const discount = totals().discount;
          cart.coupon = null;
          saveCart();
          ecommerce().couponRemoved({ cart_id: cart.id, coupon_id: code, coupon_name: COUPONS[code].name, discount });
          couponMessage = '';
          refresh();
        });
      },
      track() {
        ecommerce().cartViewed({ cart_id: cart.id, products: cartProducts() });
      },
    };
  },

  checkout() {
    if (!cart.items.length) {
      go('cart', { replace: true });
      return null;
    }
    // One checkout per visit to this page; both steps stay on /checkout.
    const state = { id: uid('chk_'), step: 1, email: '', name: '', shipping: 'standard', payment: 'card' };
    const stepEvent = (step, extra = {}) => ({ checkout_id: state.id, step, shipping_method: state.shipping, ...extra });
    const view = {
      title: 'Checkout',
      render() {
        const t = totals(state.shipping);
        main.innerHTML = `
          <h1 class="page-title">Checkout</h1>
          <div class="two-col">
            <div class="steps">
              ${state.step === 1 ? stepOne() : stepOneDone()}
              ${state.step === 2 ? stepTwo(t) : `<section class="step pending"><h2><span class="n">2</span> Payment</h2></section>`}
            </div>
            <aside class="summary">
              <h2>Order summary</h2>
              <ul class="mini-lines">${cart.items
                .map((it) => {
                  const p = productById(it.id);
                  return `<li>${art(p, 'art mini')}<span>${escape(p.name)} <span class="muted">× ${it.quantity}</span></span><b>${money(p.price * it.quantity)}</b></li>`;
                })
                .join('')}</ul>
              <div id="summary-rows">${summaryRows(t, state.shipping)}</div>
            </aside>
          </div>`;
        if (state.step === 1) wireStepOne();
        else wireStepTwo();
      },
      track() {
        const t = totals();
        ecommerce().checkoutStarted({
          products: cartProducts(),
          value: t.revenue,
          revenue: t.revenue,
          ...(cart.coupon && { coupon: cart.coupon, discount: t.discount }),
          currency: CURRENCY,
        });
        ecommerce().checkoutStepViewed(stepEvent(1));
      },
    };

    function stepOne() {
      return `<form class="step" id="step1">
        <h2><span class="n">1</span> Contact &amp; shipping</h2>
        <div class="fields">
          <label>Email<input type="email" name="email" required autocomplete="email" placeholder="you@example.com" value="${escape(state.email)}"></label>
          <label>Full name<input name="name" required autocomplete="name" placeholder="Ada Lovelace" value="${escape(state.name)}"></label>
        </div>
        <fieldset class="options">
          <legend>Shipping method</legend>
          ${Object.entries(SHIPPING)
            .map(
              ([key, s]) => `<label class="option"><input type="radio" name="shipping" value="${key}" ${state.shipping === key ? 'checked' : ''}>
                <span><b>${s.label}</b><span class="muted">${s.detail}</span></span>
                <b>${s.price(totals().revenue) ? money(s.price(totals().revenue)) : 'Free'}</b></label>`,
            )
            .join('')}
        </fieldset>
        <button class="btn primary">Continue to payment</button>
      </form>`;
    }

    function stepOneDone() {
      return `<section class="step done">
        <h2><span class="n">✓</span> Contact &amp; shipping <button type="button" class="link-button" id="edit1">Edit</button></h2>
        <p class="muted">${escape(state.name)} · ${escape(state.email)} · ${SHIPPING[state.shipping].label} shipping</p>
      </section>`;
    }

    function stepTwo(t) {
      return `<form class="step" id="step2">
        <h2><span class="n">2</span> Payment</h2>
        <fieldset class="options">
          <legend>Payment method</legend>
          ${Object.entries(PAYMENT)
            .map(
              ([key, label]) => `<label class="option"><input type="radio" name="payment" value="${key}" ${state.payment === key ? 'checked' : ''}>
                <span><b>${label}</b></span></label>`,
            )
            .join('')}
        </fieldset>
        <p class="muted small">This is a demo: no payment details are asked for and nothing is charged.</p>
        <button class="btn primary" id="place">Place order · ${money(t.total)}</button>
      </form>`;
    }

    function wireStepOne() {
      const form = $('#step1');
      form.addEventListener('change', (e) => {
        if (e.target.name !== 'shipping') return;
        state.shipping = e.target.value;
        $('#summary-rows').innerHTML = summaryRows(totals(state.shipping), state.shipping);
      });
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        state.email = form.email.value.trim();
        state.name = form.name.value.trim();
        state.shipping = form.shipping.value;
        ecommerce().checkoutStepCompleted(stepEvent(1));
        state.step = 2;
        view.render();
        ecommerce().checkoutStepViewed(stepEvent(2));
      });
    }

    function wireStepTwo() {
      $('#edit1').addEventListener('click', () => {
        state.step = 1;
        view.render();
        ecommerce().checkoutStepViewed(stepEvent(1));
      });
      const form = $('#step2');
      form.addEventListener('change', () => (state.payment = form.payment.value));
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        state.payment = form.payment.value;
        placeOrder();
      });
    }

    function placeOrder() {
      const t = totals(state.shipping);
      const order = {
        id: uid('FG-', 8),
        checkoutId: state.id,
        email: state.email,
        name: state.name,
        shipping: state.shipping,
        payment: state.payment,
        coupon: cart.coupon,
        items: cart.items.map((it) => ({ ...it })),
        totals: t,
        placedAt: new Date().toISOString(),
      };
      const products = cartProducts();
      const step2 = stepEvent(2, { payment_method: state.payment });
      ecommerce().paymentInfoEntered({ ...step2, order_id: order.id });
      ecommerce().checkoutStepCompleted(step2);
      // The person is known from here on: their email is the user id, so later events carry it too.
      analytics().identify(state.email.toLowerCase(), { email: state.email, name: state.name });
      ecommerce().orderCompleted({
        order_id: order.id,
        checkout_id: state.id,
        affiliation: BRAND + ' demo',
        total: t.total,
        subtotal: t.subtotal,
        revenue: t.revenue,
        shipping: t.shipping,
        tax: t.tax,
        discount: t.discount,
        ...(cart.coupon && { coupon: cart.coupon }),
        currency: CURRENCY,
        products,
      });
      const orders = store.get('orders', {});
      orders[order.id] = order;
      store.set('orders', orders);
      cart = newCart();
      saveCart();
      go('order/' + order.id);
    }

    return view;
  },

  order({ id }) {
    const order = store.get('orders', {})[id];
    if (!order) {
      return {
        title: 'Order not found',
        render() {
          main.innerHTML = `<div class="empty-state"><h1>Order not found</h1>
            <p>There is no order ${escape(id)} in this browser.</p><a class="btn primary" href="./">Back to the shop</a></div>`;
        },
      };
    }
    return {
      title: `Order ${order.id}`,
      render() {
        const first = order.name.split(/\s+/)[0] || order.name;
        main.innerHTML = `
          <section class="confirm">
            <div class="confirm-mark" aria-hidden="true">✓</div>
            <h1>Thank you, ${escape(first)}!</h1>
            <p class="lead">Order <b data-testid="order-id">${escape(order.id)}</b> is confirmed. A (pretend) receipt is on its way to ${escape(order.email)}.</p>
            <div class="confirm-box">
              <ul class="mini-lines">${order.items
                .map((it) => {
                  const p = productById(it.id);
                  return `<li>${art(p, 'art mini')}<span>${escape(p.name)} <span class="muted">× ${it.quantity}</span></span><b>${money(p.price * it.quantity)}</b></li>`;
                })
                .join('')}</ul>
              ${summaryRows(order.totals, order.shipping)}
              <p class="muted small">Paid by ${PAYMENT[order.payment]} · ${SHIPPING[order.shipping].label} shipping${order.coupon ? ` · code ${escape(order.coupon)}` : ''}</p>
            </div>
            <p class="muted">The <b>Order Completed</b> event with this order's id is in the <a href="${escape(inspectorUrl)}" target="_blank" rel="noopener">inspector</a>.</p>
            <a class="btn primary" href="./">Continue shopping</a>
          </section>`;
      },
    };
  },

  notFound() {
    return {
      title: 'Not found',
      render() {
        main.innerHTML = `<div class="empty-state"><h1>Page not found</h1><p>Nothing lives at this address.</p>
          <a class="btn primary" href="./">Back to the shop</a></div>`;
      },
    };
  },
};

function summaryRows(t, shippingMethod) {
  const row = (label, value, cls = '') => `<div class="row ${cls}"><span>${label}</span><span>${value}</span></div>`;
  return `<div class="rows">
    ${row('Subtotal', money(t.subtotal))}
    ${t.discount ? row('Discount', '−' + money(t.discount), 'discount') : ''}
    ${row('Shipping', shippingMethod ? (t.shipping ? money(t.shipping) : 'Free') : '<span class="muted">at checkout</span>')}
    ${row(`Tax (${TAX_RATE * 100}%)`, money(t.tax))}
    ${row(shippingMethod ? 'Total' : 'Estimated total', money(shippingMethod ? t.total : cents(t.revenue + t.tax)), 'total')}
  </div>`;
}

function updateBadge() {
  const badge = document.getElementById('cart-count');
  const n = itemCount();
  if (badge.textContent !== String(n)) {
    badge.textContent = String(n);
    badge.classList.remove('bump');
    void badge.offsetWidth;
    badge.classList.add('bump');
  }
  badge.classList.toggle('zero', n === 0);
}

// ---- start ----------------------------------------------------------------------------------------------------

/** The collector's inspector: where the events go, with a trailing slash; only ever an http(s) URL. */
function inspectorOf(apiHost) {
  try {
    const url = new URL(String(apiHost).replace(/\/+$/, '') + '/', location.href);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {
    // not a URL
  }
  return 'http://127.0.0.1:8787/';
}
const inspectorUrl = inspectorOf(window.apiHost || 'http://127.0.0.1:8787');
function start() {
  main = document.getElementById('main');
  mountEventsWidget({ inspectorUrl, base: BASE, consentState });
  mountConsent({ analytics });
  updateBadge();
  render();
}
// index.html adds this module from a script, so it may run before the page is parsed.
if (document.readyState === 'loading') addEventListener('DOMContentLoaded', start, { once: true });
else start();
