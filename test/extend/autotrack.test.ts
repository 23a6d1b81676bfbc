import { afterEach, describe, expect, it } from 'vitest';
import { createAutotrack } from '../../src/extend/autotrack';

// A track call whose message is not queued at once (a middleware still has it): the navigation would be held.
const held = () =>
  createAutotrack({
    _track: () => ({ _queued: false, _done: new Promise(() => {}) }),
    _report: () => {},
    _timeout: () => 60_000,
  });

const click = (el: Element) => {
  const e = new MouseEvent('click', { bubbles: true, cancelable: true });
  el.dispatchEvent(e);
  return e;
};

afterEach(() => {
  document.body.innerHTML = '';
});

describe('trackLink: the held navigation', () => {
  it('never follows a javascript:, data: or vbscript: link of a tracked container: the click is left to the browser', () => {
    for (const href of ['javascript:window.pwned=1', ' JavaScript:alert(1)', 'data:text/html,<script>1</script>', 'vbscript:msgbox(1)']) {
      document.body.innerHTML = `<div id="card"><span id="title">Card</span><a href="${href}">more</a></div>`;
      held().trackLink(document.getElementById('card'), 'Card Clicked');
      expect(click(document.getElementById('title')!).defaultPrevented, href).toBe(false);
    }
  });

  it('never follows a javascript: href of the tracked link itself either', () => {
    document.body.innerHTML = '<a id="l" href="javascript:void 0">go</a>';
    held().trackLink(document.getElementById('l'), 'Go');
    expect(click(document.getElementById('l')!).defaultPrevented).toBe(false);
  });

  it("follows the link clicked inside a tracked card, and never holds one that opens elsewhere or downloads (found by review 8)", async () => {
    const { vi } = await import('vitest');
    const assign = vi.spyOn(location, 'assign').mockImplementation(() => {});
    // whether the library held each click: seen once the click is dispatched (the library decides last, on the window)
    document.body.innerHTML = '<div id="card"><a id="first" href="/product/1">Product</a> <a id="ext" href="https://docs.example/spec" target="_blank">Spec</a> <a id="dl" href="/report.csv" download="q3.csv">CSV</a> <a id="second" href="/product/2">Other</a></div>';
    try {
      const quick = createAutotrack({ _track: () => ({ _queued: false, _done: Promise.resolve() }), _report: () => {}, _timeout: () => 60_000 });
      quick.trackLink(document.getElementById('card'), 'Card Clicked');
      const second = document.getElementById('second')!;
      const held = [
        click(document.getElementById('ext')!).defaultPrevented,
        click(document.getElementById('dl')!).defaultPrevented,
        !second.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, altKey: true })),
        click(second).defaultPrevented,
      ];
      expect(held).toEqual([false, false, false, true]);
      await vi.waitFor(() => expect(assign).toHaveBeenCalledTimes(1));
      expect(assign.mock.calls[0][0]).toMatch(/\/product\/2$/);
    } finally {
      assign.mockRestore();
    }
  });

  it("never holds a link of a page whose <base target> opens elsewhere", () => {
    document.head.insertAdjacentHTML('beforeend', '<base target="_blank">');
    try {
      document.body.innerHTML = '<a id="l" href="/pricing">go</a>';
      createAutotrack({ _track: () => ({ _queued: false, _done: new Promise(() => {}) }), _report: () => {}, _timeout: () => 60_000 }).trackLink(document.getElementById('l'), 'Go');
      expect(click(document.getElementById('l')!).defaultPrevented).toBe(false);
    } finally {
      document.head.querySelector('base')!.remove();
    }
  });

  it("leaves a click that a handler after its own prevented (a router's, delegated on the document) to that handler: the router only steps aside when the library prevented first (found by review 8)", () => {
    document.body.innerHTML = '<a id="l" href="/pricing">go</a>';
    // as React Router's and Next.js's <Link>, and Vue Router: a click already prevented is not theirs
    const routed: boolean[] = [];
    const router = (e: Event) => (routed.push(!e.defaultPrevented), e.defaultPrevented || e.preventDefault());
    document.addEventListener('click', router);
    try {
      held().trackLink(document.getElementById('l'), 'Go');
      expect(click(document.getElementById('l')!).defaultPrevented).toBe(true);
      expect(routed, 'the router had the click').toEqual([true]);
    } finally {
      document.removeEventListener('click', router);
    }
  });

  it('holds a relative or http(s) link of a container until its message is queued', () => {
    for (const href of ['/pricing', 'next.html', 'https://other.example/x', 'HTTP://other.example/y']) {
      document.body.innerHTML = `<div id="card"><span id="title">Card</span><a href="${href}">more</a></div>`;
      held().trackLink(document.getElementById('card'), 'Card Clicked');
      expect(click(document.getElementById('title')!).defaultPrevented, href).toBe(true);
    }
  });
});
