import type { AnalyticsError } from '../message/errors';
import { analyticsError } from '../message/errors';
import { unlink } from '../message/context';
import { LINKABLE, sign } from '../identity/adopt-link';

/** The link parameter's value for `id` at `now` (src/identity/adopt-link.ts reads it). */
export const linkValue = (id: string, now: number): string => {
  const t = now.toString(36);
  return `${t}.${sign(t, id)}.${id}`;
};

/** A URL with the parameter set to `value` (an older one replaced), its own parameters and fragment kept as they are. */
export const linked = (url: string, value: string): string =>
  unlink(url).replace(/^([^?#]*)\??([^#]*)/, (_, path, query) => `${path}?svc_link=${encodeURIComponent(value)}${query && '&' + query}`);

/**
 * Decorates links and forms to `domains` (a host name covers its subdomains; this page's own host is never decorated)
 * with the id `id()` gives (none while it gives nothing), at the last moment: in the capture phase of `click`
 * (keyboard activation included), `auxclick` (middle click), `contextmenu` (the browser's menu takes the href as it
 * opens: "Open link in new tab") and `submit`, by rewriting the `href` or `action` the
 * browser is about to follow (a GET form: a hidden field, since its fields replace the action's query). Nothing is
 * prevented: a router that handles the link itself still sees a link, with the parameter. Never throws.
 * Only an id of the library's shape (`LINKABLE`) is carried: a page there adopts no other, and a site's own id (set with
 * `setAnonymousId`, an e-mail perhaps) stays off URLs. A decorated link without a `referrerpolicy` of its own gets
 * `referrerpolicy="origin"`, taken back with the decoration: the page there adopts only a link whose referrer is listed,
 * and a page's `no-referrer` policy would withhold it (a form has no such attribute: under that policy, it is not
 * adopted; nor is a link the site marks `rel=noreferrer`).
 */
export function decorateLinks(list: unknown, id: () => string | false | undefined, report: (e: AnalyticsError) => void) {
  if (!Array.isArray(list)) return report(analyticsError('invalid_arguments', 'linkDomains: an array of host names is required'));
  const domains = list.map((d) => String(d).toLowerCase().replace(/^\./, ''));
  const resolve = (url: string) => new URL(url, document.baseURI);
  const listed = (u: URL) => u.host != location.host && domains.some((d) => ('.' + u.hostname).endsWith('.' + d));
  // The links given `referrerpolicy="origin"` by a decoration.
  const ours = new WeakSet<Element>();
  // An href or action that carries the parameter from an earlier decoration, without it (see `on`).
  const undecorate = (el: Element, attr: string) => {
    const raw = el.getAttribute(attr);
    if (raw && unlink(raw) != raw) el.setAttribute(attr, unlink(raw));
    if (ours.delete(el)) el.removeAttribute('referrerpolicy');
  };
  const on = (e: Event & { submitter?: HTMLElement | null }) => {
    try {
      const v = id();
      // (none while there is no id to give: consent pending, an opt-out; a decoration made before is taken back then,
      // as it is for a link or form that now goes elsewhere)
      const value = v && LINKABLE.test(v) && linkValue(v, Date.now());
      if (e.type != 'submit') {
        // The link clicked, inside a web component's (open) shadow root too: seen from here, the event's target is the
        // shadow host, and its path goes through the link.
        const a = e.composedPath().find((n): n is Element => n instanceof Element && n.matches('a[href],area[href]'))!;
        const u = resolve(a.getAttribute('href')!);
        if (!value || !listed(u)) return undecorate(a, 'href');
        a.setAttribute('href', linked(u.href, value));
        if (!a.hasAttribute('referrerpolicy')) ours.add(a), a.setAttribute('referrerpolicy', 'origin');
        return;
      }
      const t = e.target as Element;
      // The button that submitted may name its own action and method (formaction, formmethod).
      const by = e.submitter;
      const [el, attr] = by?.hasAttribute('formaction') ? [by, 'formaction'] : [t, 'action'];
      const u = resolve(el.getAttribute(attr) || location.href);
      const field = t.querySelector('input[name=svc_link]');
      if (!value || !listed(u)) return field?.remove(), undecorate(el, attr);
      if (/^post$/i.test(by?.getAttribute('formmethod') || t.getAttribute('method')!)) return field?.remove(), el.setAttribute(attr, linked(u.href, value));
      const hidden = field || t.appendChild(document.createElement('input'));
      hidden.setAttribute('type', 'hidden');
      hidden.setAttribute('name', 'svc_link');
      hidden.setAttribute('value', value);
    } catch {
      // not a link (a click elsewhere), an odd URL: left as it is
    }
  };
  for (const type of ['click', 'auxclick', 'contextmenu', 'submit']) addEventListener(type, on, true);
}
