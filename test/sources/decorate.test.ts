import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { decorateLinks, linked, linkValue } from '../../src/sources/decorate';
import { linkedId } from '../../src/identity/adopt-link';

const ANON = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

describe('linked', () => {
  it("adds the parameter, keeping the link's own parameters and fragment", () => {
    expect(linked('https://b.test/p?q=a%20b&flag#/cart?x=1', 'V')).toBe('https://b.test/p?svc_link=V&q=a%20b&flag#/cart?x=1');
    expect(linked('https://b.test/p#top', 'V')).toBe('https://b.test/p?svc_link=V#top');
    expect(linked('https://b.test/', 'a b')).toBe('https://b.test/?svc_link=a%20b');
  });
  it('replaces an older parameter', () => {
    expect(linked('https://b.test/?a=1&svc_link=old&b=2', 'new')).toBe('https://b.test/?svc_link=new&a=1&b=2');
    expect(linked('https://b.test/?svc_link=old', 'new')).toBe('https://b.test/?svc_link=new');
  });
});

describe('decorateLinks', () => {
  let id: string | false = ANON;
  const report = vi.fn();
  beforeAll(() => {
    (window as any).happyDOM.setURL('https://shop.test/');
    decorateLinks(['Checkout.test', '.blog.test'], () => id, report);
  });
  afterEach(() => {
    document.body.innerHTML = '';
    id = ANON;
  });
  const carried = (url: string) => linkedId(new URL(url).searchParams.get('svc_link') || '', Date.now());
  const link = (href: string) => {
    document.body.innerHTML = `<a href="${href}"><span>go</span></a>`;
    const a = document.querySelector('a')!;
    a.addEventListener('click', (e) => e.preventDefault()); // no navigation in the test DOM
    return a;
  };

  it('decorates a link to a listed domain (or its subdomain) at click, from an inner element, keeping its parameters', () => {
    const a = link('https://checkout.test/pay?step=2#card');
    a.querySelector('span')!.click();
    expect(a.getAttribute('href')).toMatch(/^https:\/\/checkout\.test\/pay\?svc_link=[^&]+&step=2#card$/);
    expect(carried(a.href)).toBe(ANON);
    const b = link('https://www.blog.test/post');
    b.dispatchEvent(new MouseEvent('auxclick', { bubbles: true, button: 1 }));
    expect(carried(b.href)).toBe(ANON);
  });
  it('decorates a link as its context menu opens ("Open link in new tab": no click follows)', () => {
    const a = link('https://checkout.test/pay');
    a.dispatchEvent(new MouseEvent('contextmenu', { bubbles: true, button: 2 }));
    expect(carried(a.href)).toBe(ANON);
  });
  it('leaves links elsewhere, to this host and of other schemes untouched', () => {
    for (const href of ['https://other.test/x', '/local?a=1', 'https://shop.test/x', 'mailto:a@checkout.test', 'https://notcheckout.test/']) {
      const a = link(href);
      a.click();
      expect(a.getAttribute('href')).toBe(href);
    }
  });
  it('decorates nothing while there is no id to give (consent pending)', () => {
    id = false;
    const a = link('https://checkout.test/');
    a.click();
    expect(a.getAttribute('href')).toBe('https://checkout.test/');
  });
  it('decorates a POST form by its action, a GET form by a hidden field', () => {
    document.body.innerHTML = `<form method="post" action="https://checkout.test/pay?a=1"></form><form action="https://checkout.test/search"><input name="svc_link" value="old"></form><form action="https://other.test/"></form>`;
    const [post, get, other] = Array.from(document.forms);
    for (const f of [post, get, other]) f.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    expect(carried(post.getAttribute('action')!)).toBe(ANON);
    expect(post.getAttribute('action')).toMatch(/&a=1$/);
    const fields = get.querySelectorAll('input[name=svc_link]');
    expect(fields.length).toBe(1);
    expect(linkedId(fields[0].getAttribute('value')!, Date.now())).toBe(ANON);
    expect(other.outerHTML).toBe('<form action="https://other.test/"></form>');
  });
  it("follows the submitting button's formaction and formmethod", () => {
    document.body.innerHTML = `<form action="/local"><button formaction="https://checkout.test/pay" formmethod="post">pay</button></form>`;
    const form = document.forms[0];
    form.addEventListener('submit', (e) => e.preventDefault());
    const button = form.querySelector('button')!;
    form.dispatchEvent(new SubmitEvent('submit', { bubbles: true, cancelable: true, submitter: button }));
    expect(carried(button.getAttribute('formaction')!)).toBe(ANON);
    expect(form.getAttribute('action')).toBe('/local');
  });
  it('reports linkDomains that is not an array', () => {
    decorateLinks('checkout.test', () => 'x', report);
    expect(report).toHaveBeenCalledWith(expect.objectContaining({ code: 'invalid_arguments' }));
  });
  it('takes back a decoration made before once there is no id to give (an opt-out, a withdrawal)', () => {
    const a = link('https://checkout.test/pay?step=2');
    a.dispatchEvent(new MouseEvent('auxclick', { bubbles: true, button: 1 }));
    expect(carried(a.href)).toBe(ANON);
    id = false;
    a.click();
    expect(a.getAttribute('href')).toBe('https://checkout.test/pay?step=2');
  });
  it("takes a GET form's hidden field back when it submits elsewhere or with no id", () => {
    document.body.innerHTML = `<form action="https://checkout.test/search"><button formaction="https://other.test/">x</button></form>`;
    const form = document.forms[0];
    form.addEventListener('submit', (e) => e.preventDefault());
    form.dispatchEvent(new SubmitEvent('submit', { bubbles: true, cancelable: true }));
    expect(new FormData(form).get('svc_link')).toBeTruthy();
    form.dispatchEvent(new SubmitEvent('submit', { bubbles: true, cancelable: true, submitter: form.querySelector('button') }));
    expect(new FormData(form).get('svc_link')).toBeNull();
    form.dispatchEvent(new SubmitEvent('submit', { bubbles: true, cancelable: true }));
    id = false;
    form.dispatchEvent(new SubmitEvent('submit', { bubbles: true, cancelable: true }));
    expect(new FormData(form).get('svc_link')).toBeNull();
  });
  it("finds the link in the event's path (a web component's shadow root, where the target seen here is its host)", () => {
    document.body.innerHTML = '<x-nav></x-nav>';
    const host = document.querySelector('x-nav')!;
    const a = document.createElement('a');
    a.setAttribute('href', 'https://checkout.test/');
    host.attachShadow({ mode: 'open' }).append(a);
    const click = new MouseEvent('click', { bubbles: true, composed: true, cancelable: true });
    // (as a browser retargets it: seen from the window, the target is the host; the path still has the link)
    Object.defineProperty(click, 'target', { get: () => host });
    Object.defineProperty(click, 'composedPath', { value: () => [a, a.parentNode, host, document.body, document.documentElement, document, window] });
    a.addEventListener('click', (e) => e.preventDefault());
    window.dispatchEvent(click);
    expect(carried(a.getAttribute('href')!)).toBe(ANON);
  });
  it('makes values linkedId reads back', () => {
    expect(linkedId(linkValue(ANON, 5), 6)).toBe(ANON);
  });
  it("carries no id of another shape (a site's own id stays off URLs; no page would adopt it)", () => {
    for (const own of ['jane@shop.test', 'anon-1', ANON + '0']) {
      id = own;
      const a = link('https://checkout.test/');
      a.click();
      expect(a.getAttribute('href')).toBe('https://checkout.test/');
    }
  });
  it('gives a decorated link referrerpolicy="origin" (a page policy may withhold the referrer there), unless it has its own, and takes it back with the decoration', () => {
    const a = link('https://checkout.test/');
    a.click();
    expect(a.getAttribute('referrerpolicy')).toBe('origin');
    id = false;
    a.click();
    expect(a.hasAttribute('referrerpolicy')).toBe(false);
    id = ANON;
    const own = link('https://checkout.test/');
    own.setAttribute('referrerpolicy', 'unsafe-url');
    own.click();
    expect(carried(own.href)).toBe(ANON);
    expect(own.getAttribute('referrerpolicy')).toBe('unsafe-url');
  });
});
