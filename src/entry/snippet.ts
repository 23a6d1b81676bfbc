// The loader stub a site pastes inline (dist/snippet.min.js). No imports: it has its own tiny build.
// It records each call as [method, args, [url, title, referrer], time, page id, seq] on the `analytics` array, and
// `load` inserts the bundle, which replays the calls in order and replaces this stub.
declare const __CDN_URL__: string;
declare const __BUFFER_KEY__: string;
((w: any, d: Document) => {
  const a = (w.analytics = w.analytics || []);
  if (a.VERSION || a.invoked) return; // the bundle took over already, or the snippet ran twice
  a.invoked = 1;
  // Kept now: under a strict CSP the bundle's <script> needs the nonce of the script that pasted us.
  const nonce = (d.currentScript as HTMLScriptElement | null)?.nonce;
  // This page's id: its calls in the shared buffer carry it (see src/buffer.ts).
  const page = (a.pid = Math.random());
  const rec =
    (m: string) =>
    (...args: unknown[]) => {
      const call: any = [m, args, [location.href, d.title, d.referrer], Date.now(), page, a.length];
      a.push(call);
      // Written at once where a later page's bundle finds it: a page that ends before the bundle arrives may get
      // no pagehide. The buffer keeps the last 100 calls of all pages; a call that cannot be written stays unmarked.
      // (not from a `load` in consent-pending mode on, that `load` included: nothing is stored before consent; other
      // pages never replay a `load`, and drop it with that page's calls)
      if (!a.c)
        try {
          const b = JSON.parse(localStorage[__BUFFER_KEY__] || '[]');
          b.push(call);
          localStorage[__BUFFER_KEY__] = JSON.stringify(b.slice(-100));
          call.kept = 1;
        } catch {}
      return a;
    };
  // Every method of analytics.js's snippet too, so a site's code written for it runs unchanged before the bundle comes.
  'identify track page screen group alias reset setAnonymousId ready flush on off once debug user pageview trackLink trackClick trackForm trackSubmit addSourceMiddleware addDestinationMiddleware addIntegrationMiddleware register consent optOut optIn'
    .split(' ')
    .forEach((m) => (a[m] = rec(m)));
  // Every helper of a namespace (analytics.ecommerce.orderCompleted, ...) without listing them: a Proxy.
  ['ecommerce', 'semantic'].forEach((n) => (a[n] = new Proxy({}, { get: (_, k) => rec(n + '.' + String(k)) })));
  a.load = (key: string, o?: { cdnUrl?: string; consent?: unknown }) => {
    a.c = o && o.consent;
    rec('load')(key, o);
    // (a script element inserted by script is async: https://html.spec.whatwg.org/multipage/scripting.html#script-force-async)
    const s = d.createElement('script');
    s.src = (o && o.cdnUrl) || __CDN_URL__;
    if (nonce) s.nonce = nonce;
    d.head.append(s);
  };
})(window, document);
