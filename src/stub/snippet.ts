// The loader stub a site pastes inline (dist/snippet.min.js). No imports: it has its own tiny build.
// It records each call as [method, args, [url, title, referrer], time, page id, seq] on the `analytics` array, and
// `load` inserts the bundle, which replays the calls in order and replaces this stub.
// (Written for its size: at most 1,000 bytes minified, CONTRACT section 1. Its state is in the parameters, which are
// set once, before the body runs: `unwritten`, the calls on the array from this index on are not written yet, see
// `write`; `a`, what the page has at `window.analytics`, then the stub; `page`, set in the body.)
declare const __CDN_URL__: string;
declare const __BUFFER_KEY__: string;
((
  d: Document,
  unwritten = 0,
  // (`self`: the window, as `window` is: its own property, which no element named `self` shadows)
  a = self.analytics as any,
  // Kept now: under a strict CSP the bundle's <script> needs the nonce of the script that pasted us.
  nonce = d.currentScript?.nonce,
  // Taken now: a page may replace it later.
  atEndOfTask = queueMicrotask,
  // Writes the calls of the task that ends in one read and one write of the buffer, instead of one per call: a page
  // is left between tasks, never inside one, so they are stored before a page that ends before the bundle arrives
  // is gone, where that page's bundle or a later page's finds them. The buffer keeps the last 100 calls of all pages.
  // Not written: calls the bundle took already (when a page runs it in the same task: they are no longer on the
  // array, and it replays them), and any call of a task in which a `load` in consent-pending mode was recorded, or
  // after it (nothing is stored before consent; other pages never replay a `load`, and drop it with that page's calls).
  // A write that fails (storage full) loses that task's calls from the buffer only, as a failed write of one call did
  // (the bundle still has them in memory); a buffer that cannot be read (storage blocked, not JSON) leaves `unwritten`
  // where it was, so no later call of the page queues a write that would fail alike.
  // (`l`: localStorage, read once per write; the calls are taken, and `unwritten` moved, before JSON.stringify calls
  // a toJSON of the page, which may make a call: that one queues the next write)
  // Nor on a page that gave Array.prototype a toJSON (Prototype.js): JSON.stringify writes arrays as JSON strings
  // there, and the next write would spread one into characters, wrecking the calls of every page in the buffer (this
  // page's bundle takes its calls from memory; `a.toJSON`: Array.prototype's, as the stub is an array).
  write = (l?: any) => {
    try {
      a.c || a.toJSON || ((l = localStorage)[__BUFFER_KEY__] = JSON.stringify([...JSON.parse(l[__BUFFER_KEY__] || '[]'), ...a.slice(unwritten, (unwritten = a.length))].slice(-100)));
    } catch {}
  },
  // Records a call and returns the stub; the first call not written yet queues the write of its task.
  rec =
    (m: string) =>
    (...args: unknown[]) => (a.push([m, args, [location.href, d.title, d.referrer], +new Date(), page, a.length]) - unwritten < 2 && atEndOfTask(write), a),
  // This page's id (`invoked`): its calls in the shared buffer carry it (see src/stub/buffer.ts).
  page?: number,
) => {
  // The stub ran already (`invoked`: ours, or analytics.js's), or the bundle took over (its `VERSION` is a string):
  // nothing to do. Anything else there is not ours and is replaced (security-3 L2): nothing, or an element named
  // `analytics` (`<a id="analytics">`, `<img name="analytics">`, a collection of them, whose `push` would throw into the
  // page and whose named children can fake `invoked` or `VERSION`, but never as a number or a string), or an
  // `<iframe name="analytics">` whose window may be of another origin (reading a property throws).
  try {
    // (`.big`: String.prototype's, in every engine (ECMAScript Annex B): only a string has it, never an element)
    if (a.invoked > 0 || a.VERSION?.big) return;
  } catch {}
  if (!Array.isArray(a)) a = (self as any).analytics = [];
  // (`invoked`, as analytics.js's snippet sets it, is this page's id too: its calls in the shared buffer carry it)
  page = a.invoked = Math.random();
  // Every method of analytics.js's snippet too, so a site's code written for it runs unchanged before the bundle comes;
  // the first two are namespaces: every helper of them (analytics.ecommerce.orderCompleted, ...) without listing them,
  // through a Proxy.
  'ecommerce semantic identify track page screen group alias reset setAnonymousId ready flush on off once debug user pageview trackLink trackClick trackForm trackSubmit addSourceMiddleware addDestinationMiddleware addIntegrationMiddleware register consent optOut optIn'
    .split(' ')
    .map((m, i) => (a[m] = i < 2 ? new Proxy({}, { get: (_, k) => rec(m + '.' + String(k)) }) : rec(m)));
  a.load = (key: any, o?: { cdnUrl?: string; consent?: unknown; __proto__?: null }) => {
    rec('load')(key, o);
    // The options' own properties only: nothing on Object.prototype chooses the script or the consent mode.
    o = { __proto__: null, ...o };
    a.c = o.consent;
    // (a script element inserted by script is async: https://html.spec.whatwg.org/multipage/scripting.html#script-force-async)
    // (`key` is recorded: the script element now, for its size)
    (key = d.createElement('script')).src = o.cdnUrl || __CDN_URL__;
    key.nonce = nonce;
    d.head.append(key);
  };
})(document);
