// The loader stub a site pastes inline (dist/snippet.min.js). No imports: it has its own tiny build.
// It records each call as [method, args, [url, title, referrer], time] on the `analytics` array, and `load`
// inserts the bundle, which replays the calls in order and replaces this stub.
declare const __CDN_URL__: string;
((w: any, d: Document) => {
  const a = (w.analytics = w.analytics || []);
  if (a.VERSION || a.invoked) return; // the bundle took over already, or the snippet ran twice
  a.invoked = 1;
  // Kept now: under a strict CSP the bundle's <script> needs the nonce of the script that pasted us.
  const nonce = (d.currentScript as HTMLScriptElement | null)?.nonce;
  const rec =
    (m: string) =>
    (...args: unknown[]) => (a.push([m, args, [location.href, d.title, d.referrer], Date.now()]), a);
  'identify track page screen group alias reset setAnonymousId ready flush on off debug user'
    .split(' ')
    .forEach((m) => (a[m] = rec(m)));
  // Every helper of a namespace (analytics.ecommerce.orderCompleted, ...) without listing them: a Proxy.
  ['ecommerce', 'semantic'].forEach((n) => (a[n] = new Proxy({}, { get: (_, k) => rec(n + '.' + String(k)) })));
  a.load = (key: string, o?: { cdnUrl?: string }) => {
    rec('load')(key, o);
    const s = d.createElement('script');
    s.async = true;
    s.src = (o && o.cdnUrl) || __CDN_URL__;
    if (nonce) s.nonce = nonce;
    d.head.appendChild(s);
  };
})(window, document);
