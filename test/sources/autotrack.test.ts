import { afterEach, describe, expect, it } from 'vitest';
import { createAutotrack } from '../../src/sources/autotrack';

// A track call whose message is not queued at once (a middleware still has it): the navigation would be held.
const held = () =>
  createAutotrack({
    track: () => ({ queued: false, done: new Promise(() => {}) }),
    report: () => {},
    timeout: () => 60_000,
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
    // whether the library held each click: seen once the click is dispatched (the library decides last, on the window);
    // a click it leaves alone opens nothing from the test DOM (no new page, no request)
    const navigation = (window as any).happyDOM.settings.navigation;
    const before = { ...navigation };
    Object.assign(navigation, { disableChildPageNavigation: true, disableMainFrameNavigation: true });
    document.body.innerHTML = '<div id="card"><a id="first" href="/product/1">Product</a> <a id="ext" href="https://docs.example/spec" target="_blank">Spec</a> <a id="dl" href="/report.csv" download="q3.csv">CSV</a> <a id="second" href="/product/2">Other</a></div>';
    try {
      const quick = createAutotrack({ track: () => ({ queued: false, done: Promise.resolve() }), report: () => {}, timeout: () => 60_000 });
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
      Object.assign(navigation, before);
      assign.mockRestore();
    }
  });

  it("never holds a link of a page whose <base target> opens elsewhere", () => {
    document.head.insertAdjacentHTML('beforeend', '<base target="_blank">');
    try {
      document.body.innerHTML = '<a id="l" href="/pricing">go</a>';
      createAutotrack({ track: () => ({ queued: false, done: new Promise(() => {}) }), report: () => {}, timeout: () => 60_000 }).trackLink(document.getElementById('l'), 'Go');
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

describe('held clicks and submits that a handler stops on their way (found by review 12)', () => {
  it("a click that a card's handler stops (it never reaches the window) is still held, and followed once the message is queued", async () => {
    const { vi } = await import('vitest');
    const assign = vi.spyOn(location, 'assign').mockImplementation(() => {});
    try {
      let queue!: () => void;
      const done = new Promise<void>((r) => (queue = r));
      document.body.innerHTML = '<div id="card"><a id="l" href="/pricing">go</a></div>';
      createAutotrack({ track: () => ({ queued: false, done: done }), report: () => {}, timeout: () => 60_000 }).trackLink(document.getElementById('l'), 'Go');
      document.getElementById('card')!.addEventListener('click', (e) => e.stopPropagation());
      expect(click(document.getElementById('l')!).defaultPrevented, 'held').toBe(true);
      expect(assign).not.toHaveBeenCalled();
      queue();
      await vi.waitFor(() => expect(assign).toHaveBeenCalledTimes(1));
      expect(assign.mock.calls[0][0]).toMatch(/\/pricing$/);
    } finally {
      assign.mockRestore();
    }
  });

  it('a handler that stops the click and then prevents it (a router that owns it) takes it over: never followed', async () => {
    const { vi } = await import('vitest');
    const assign = vi.spyOn(location, 'assign').mockImplementation(() => {});
    try {
      document.body.innerHTML = '<div id="nav"><a id="l" href="/pricing">go</a></div>';
      createAutotrack({ track: () => ({ queued: false, done: Promise.resolve() }), report: () => {}, timeout: () => 60_000 }).trackLink(document.getElementById('l'), 'Go');
      document.getElementById('nav')!.addEventListener('click', (e) => (e.stopPropagation(), e.preventDefault()));
      click(document.getElementById('l')!);
      await new Promise((r) => setTimeout(r));
      expect(assign).not.toHaveBeenCalled();
    } finally {
      assign.mockRestore();
    }
  });

  it('a submit handler that submits by script while the submit event is dispatched, with the message still held: tracked once', async () => {
    const tracked: unknown[] = [];
    document.body.innerHTML = '<form id="f" action="/search"><input name="q" value="x"><button id="b">go</button></form>';
    const form = document.getElementById('f') as HTMLFormElement;
    let queue!: () => void;
    const done = new Promise<void>((r) => (queue = r));
    createAutotrack({ track: (event) => (tracked.push(event), { queued: false, done: done }), report: () => {}, timeout: () => 60_000 }).trackForm(form, 'Searched');
    // (the browser's own submission of the test DOM is not wanted: the prototype's submit does nothing here)
    const native = HTMLFormElement.prototype.submit;
    HTMLFormElement.prototype.submit = () => {};
    try {
      form.addEventListener('submit', () => form.submit());
      form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
      queue();
      await new Promise((r) => setTimeout(r));
      expect(tracked).toEqual(['Searched']);
    } finally {
      HTMLFormElement.prototype.submit = native;
    }
  });
});
