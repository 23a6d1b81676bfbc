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

  it('holds a relative or http(s) link of a container until its message is queued', () => {
    for (const href of ['/pricing', 'next.html', 'https://other.example/x', 'HTTP://other.example/y']) {
      document.body.innerHTML = `<div id="card"><span id="title">Card</span><a href="${href}">more</a></div>`;
      held().trackLink(document.getElementById('card'), 'Card Clicked');
      expect(click(document.getElementById('title')!).defaultPrevented, href).toBe(true);
    }
  });
});
