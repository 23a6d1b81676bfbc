// The loader stub a site pastes inline (dist/snippet.min.js). No imports: it has its own tiny build.
// It records each call as [method, args, [url, title, referrer], time, page id, seq] on the `analytics` array, and
// `load` inserts the bundle, which replays the calls in order and replaces this stub.
declare const __CDN_URL__: string;
declare const __BUFFER_KEY__: string;
// (`unwritten`: the calls on the array from this index on are not written yet, see `write`)
((w: any, d: Document, unwritten = 0) => {
  const a = (w.analytics = w.analytics || []);
  if (a.VERSION || a.invoked) return; // the bundle took over already, or the snippet ran twice
  a.invoked = 1;
  // Kept now: under a strict CSP the bundle's <script> needs the nonce of the script that pasted us.
  const nonce = d.currentScript?.nonce;
  // This page's id: its calls in the shared buffer carry it (see src/buffer.ts).
  const page = (a.pid = Math.random());
  // Writes the calls of the task that ends in one read and one write of the buffer, instead of one per call: a page
  // is left between tasks, never inside one, so they are stored before a page that ends before the bundle arrives
  // is gone, where that page's bundle or a later page's finds them. The buffer keeps the last 100 calls of all pages.
  // Not written: calls the bundle took already (when a page runs it in the same task: they are no longer on the
  // array, and it replays them), and any call of a task in which a `load` in consent-pending mode was recorded, or
  // after it (nothing is stored before consent; other pages never replay a `load`, and drop it with that page's calls).
  // A write that fails (storage full) loses that task's calls from the buffer only, as a failed write of one call did
  // (the bundle still has them in memory); a buffer that cannot be read (storage blocked, not JSON) leaves `unwritten`
  // where it was, so no later call of the page queues a write that would fail alike.
  const write = () => {
    if (!a.c)
      try {
        // (the calls are taken, and `unwritten` moved, before JSON.stringify calls a toJSON of the page, which may
        // make a call: that one queues the next write)
        localStorage[__BUFFER_KEY__] = JSON.stringify([...JSON.parse(localStorage[__BUFFER_KEY__] || '[]'), ...a.slice(unwritten, (unwritten = a.length))].slice(-100));
      } catch {}
  };
  // Taken now: a page may replace it later.
  const atEndOfTask = queueMicrotask;
  const rec =
    (m: string) =>
    (...args: unknown[]) => {
      // The first call not written yet queues the write of its task.
      if (a.push([m, args, [location.href, d.title, d.referrer], Date.now(), page, a.length]) <= unwritten + 1) atEndOfTask(write);
      return a;
    };
  // Every method of analytics.js's snippet too, so a site's code written for it runs unchanged before the bundle comes.
  'identify track page screen group alias reset setAnonymousId ready flush on off once debug user pageview trackLink trackClick trackForm trackSubmit addSourceMiddleware addDestinationMiddleware addIntegrationMiddleware register consent optOut optIn'
    .split(' ')
    .forEach((m) => (a[m] = rec(m)));
  // Every helper of a namespace (analytics.ecommerce.orderCompleted, ...) without listing them: a Proxy.
  ['ecommerce', 'semantic'].forEach((n) => (a[n] = new Proxy({}, { get: (_, k) => rec(n + '.' + String(k)) })));
  a.load = (key: string, o?: { cdnUrl?: string; consent?: unknown }) => {
    a.c = o?.consent;
    rec('load')(key, o);
    // (a script element inserted by script is async: https://html.spec.whatwg.org/multipage/scripting.html#script-force-async)
    const s = d.createElement('script');
    s.src = o?.cdnUrl || __CDN_URL__;
    if (nonce) s.nonce = nonce;
    d.head.append(s);
  };
})(window, document);
