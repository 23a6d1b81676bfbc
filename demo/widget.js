// The "events sent" corner: lists each page, track and identify call as svc-analytics queues it (analytics.on)
// and ticks it off once the collector has it ('delivered'). A link opens the collector's live inspector.
// On a wide screen the open list docks to the right of the shop (the shop narrows, nothing is covered); on a
// narrow one it opens above its button. Open or closed is remembered.

const MAX_ROWS = 60;
const KEY = 'field-goods:events-open';
const WIDE = matchMedia('(min-width: 1100px)');

const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const clock = (d) => d.toLocaleTimeString('en-GB', { hour12: false });

// The few properties worth a glance, in this order; the inspector has the full message.
const KEYS = ['order_id', 'product_id', 'quantity', 'price', 'step', 'shipping_method', 'payment_method', 'coupon_id', 'revenue', 'total', 'list_id', 'cart_id', 'email'];
function glance(obj) {
  if (!obj) return '';
  const show = (v) => (Array.isArray(v) ? `[${v.length}]` : typeof v === 'string' ? v : JSON.stringify(v));
  const keys = KEYS.filter((k) => obj[k] !== undefined).slice(0, 3);
  if (Array.isArray(obj.products) && keys.length < 3) keys.push('products');
  return keys.map((k) => `${k}: ${show(obj[k])}`).join(' · ');
}

// How a row's dot reads while the visitor has not accepted (see demo/consent.js).
const HELD = { pending: ['held', 'held in memory until you decide'], denied: ['dropped', 'not sent: analytics rejected'], out: ['dropped', 'not sent: opted out'] };

export function mountEventsWidget({ inspectorUrl, base = '/', consentState = () => 'granted' }) {
  const root = document.createElement('aside');
  root.className = 'events';
  root.setAttribute('aria-label', 'Analytics events sent by this page');
  root.dataset.testid = 'events-widget';
  // Links are http(s) only, whatever the caller passes.
  if (!/^https?:\/\//i.test(inspectorUrl)) inspectorUrl = 'http://127.0.0.1:8787/';
  const host = inspectorUrl.replace(/^https?:\/\//i, '').replace(/\/$/, '');
  root.innerHTML = `
    <div class="events-panel" id="events-panel">
      <div class="events-head">
        <span class="pulse" aria-hidden="true"></span>
        <b>Events sent</b> <span class="events-total">0</span>
        <a class="events-inspect" href="${escape(inspectorUrl)}" target="_blank" rel="noopener" data-testid="inspector-link">Inspector ↗</a>
        <button type="button" class="events-close" aria-label="Hide the events list" title="Hide">×</button>
      </div>
      <p class="events-to">to the collector at <span class="mono">${escape(host)}</span></p>
      <p class="events-to">visitor <span class="mono" data-testid="events-anonymous-id"></span></p>
      <p class="events-consent" data-testid="events-consent"></p>
      <ol class="events-list"></ol>
      <p class="events-empty">Click around: each page view and shop action shows up here as svc-analytics queues it.</p>
      <p class="events-foot"><span class="st held"></span> held <span class="st"></span> queued <span class="st sent"></span> delivered</p>
    </div>
    <button type="button" class="events-pill" aria-controls="events-panel">
      <span class="pulse" aria-hidden="true"></span>
      <b class="events-count">0</b><span class="events-word">events</span>
      <span class="events-last"></span>
      <span class="chev" aria-hidden="true"></span>
    </button>`;
  document.body.append(root);

  const list = root.querySelector('.events-list');
  const pill = root.querySelector('.events-pill');
  const rows = new Map(); // messageId -> <li>
  let count = 0;

  let stored = null;
  try {
    stored = localStorage.getItem(KEY);
  } catch {
    // no storage: the state lasts for this page
  }
  const setOpen = (open, remember) => {
    root.classList.toggle('open', open);
    document.body.classList.toggle('events-docked', open && WIDE.matches);
    pill.setAttribute('aria-expanded', String(open));
    if (remember) {
      try {
        localStorage.setItem(KEY, open ? '1' : '0');
      } catch {
        // ignore
      }
    }
  };
  // Open by default where it fits beside the shop.
  setOpen(stored ? stored === '1' : WIDE.matches, false);
  WIDE.addEventListener('change', () => setOpen(root.classList.contains('open'), false));
  pill.addEventListener('click', () => setOpen(!root.classList.contains('open'), true));
  root.querySelector('.events-close').addEventListener('click', () => setOpen(false, true));

  function add(type, label, detail, result) {
    const m = result && result.event;
    // The anonymous id the message went with: the same on the shop and on its checkout domain (linkDomains).
    if (m && m.anonymousId) root.querySelector('[data-testid="events-anonymous-id"]').textContent = m.anonymousId;
    count++;
    root.querySelector('.events-count').textContent = String(count);
    root.querySelector('.events-total').textContent = String(count);
    root.querySelector('.events-word').textContent = count === 1 ? 'event' : 'events';
    root.querySelector('.events-last').textContent = label;
    root.classList.add('has-events');
    for (const el of root.querySelectorAll('.pulse')) {
      el.classList.remove('flash');
      void el.offsetWidth; // restart the animation
      el.classList.add('flash');
    }
    const li = document.createElement('li');
    li.className = 'events-row';
    li.dataset.type = type;
    const [cls, title] = HELD[consentState()] || ['', 'queued'];
    li.innerHTML = `<span class="st ${cls}" title="${title}"></span><span class="chip ${type}">${type}</span>
      <span class="events-label">${escape(label)}</span><time>${clock(m ? new Date(m.timestamp) : new Date())}</time>
      ${detail ? `<span class="events-detail">${escape(detail)}</span>` : ''}`;
    list.prepend(li);
    if (m && m.messageId) rows.set(m.messageId, li);
    while (list.children.length > MAX_ROWS) list.lastElementChild.remove();
  }

  // The visitor's consent (demo/consent.js): shown in the panel; rows held meanwhile follow the decision.
  addEventListener('field-goods:consent', (e) => {
    const { state, text } = e.detail;
    root.querySelector('.events-consent').textContent = text;
    root.dataset.consent = state;
    for (const st of list.querySelectorAll('.st.held')) {
      const [cls, title] = HELD[state] || ['', 'queued'];
      st.className = 'st ' + cls;
      st.title = title;
    }
  });

  // The arguments analytics.js gives these handlers; the last one is the queued call's result ({ event: message }).
  const handlers = {
    track: (event, properties, result) => add('track', event, glance(properties), result),
    page: (_category, name, properties, result) => {
      const path = (properties && properties.path) || name || '';
      add('page', path.startsWith(base) ? '/' + path.slice(base.length) : path, properties && properties.title, result);
    },
    identify: (userId, traits, result) => add('identify', userId || 'anonymous', traits && traits.name, result),
    delivered: (messages) => {
      for (const m of messages || []) {
        const li = rows.get(m.messageId);
        if (!li) continue;
        const st = li.querySelector('.st');
        st.className = 'st sent';
        st.title = 'delivered';
        rows.delete(m.messageId);
      }
    },
  };
  // index.html registered the handlers with the snippet (so none of the first calls is missed) and buffered
  // what they heard in `shopEvents`: show that, then take each new one as it comes.
  const feed = window.shopEvents;
  if (Array.isArray(feed)) {
    for (const [name, args] of feed.splice(0)) handlers[name](...args);
    feed.push = ([name, args]) => (handlers[name](...args), 0);
  } else {
    for (const name of Object.keys(handlers)) window.analytics.on(name, handlers[name]);
  }
}
