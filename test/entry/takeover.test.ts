// From the review of the drop-in and consent work: the stub's replay with consent, trackForm, and throws into the host page.
import { QUIET, sent, start } from '../harness';
import { describe, expect, it, vi } from 'vitest';

describe('the bundle taking over a consent-mode stub (src/browser.ts)', () => {
  it('sends the recorded calls in call order when a recorded consent() grants between them', async () => {
    vi.resetModules();
    const page = [location.href, '', ''];
    const t = Date.now() - 1000;
    const pid = 0.5;
    // what the snippet records for: load(consent); track('First'); consent(grant); track('Second')
    const stub: any = [
      ['load', ['wk_test', { ...QUIET, consent: { categories: ['analytics'] } }], page, t, pid, 0],
      ['track', ['First'], page, t + 1, pid, 1],
      ['consent', [{ analytics: true }], page, t + 2, pid, 2],
      ['track', ['Second'], page, t + 3, pid, 3],
    ];
    stub.pid = pid;
    stub.invoked = 1;
    (window as any).analytics = stub;
    await import('../../src/entry/browser');
    const api = (window as any).analytics;
    await api.ready();
    await vi.waitFor(async () => {
      await api.flush();
      expect(sent().map((m) => m.event)).toHaveLength(2);
    });
    expect(sent().map((m) => m.event)).toEqual(['First', 'Second']);
    delete (window as any).analytics;
  });
});

describe("a load the page makes itself right after the bundle took over the stub (found by review 9)", () => {
  it("replays the stub's recorded calls too, in order, before the page's own", async () => {
    vi.resetModules();
    const page = [location.href, '', ''];
    const t = Date.now() - 1000;
    const stub: any = [
      ['load', ['wk_test', { ...QUIET }], page, t, 0.25, 0],
      ['page', [], page, t + 1, 0.25, 1],
      ['track', ['Stub Track'], page, t + 2, 0.25, 2],
    ];
    stub.invoked = 0.25;
    (window as any).analytics = stub;
    await import('../../src/entry/browser');
    const api = (window as any).analytics;
    // before the bundle's own load step (its next task): a second install, app code that makes sure it is loaded
    api.load('wk_test', { ...QUIET });
    api.track('After');
    await vi.waitFor(async () => {
      await api.flush();
      expect(sent()).toHaveLength(3);
    });
    expect(sent().map((m) => m.event || m.type)).toEqual(['page', 'Stub Track', 'After']);
    delete (window as any).analytics;
  });
});

describe('trackForm', () => {
  it("tracks one submission once when the page's own earlier submit handler submits by script (jQuery validate's submitHandler)", async () => {
    const { api } = start();
    await api.ready();
    document.body.innerHTML = '<form id="f" action="#"><input name="q"></form>';
    const form = document.getElementById('f') as HTMLFormElement;
    const native = vi.spyOn(HTMLFormElement.prototype, 'submit').mockImplementation(() => {});
    // the page's handler, added before trackForm: validates, then submits by script
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      form.submit();
    });
    api.trackForm(form, 'Searched');
    form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    expect(native).toHaveBeenCalledTimes(1);
    await api.flush();
    expect(sent().map((m) => m.event)).toEqual(['Searched']);
  });
});

describe('never throws into the page', () => {
  it('a middleware that passes on a payload whose obj getter throws: the call does not throw', async () => {
    const { api } = start();
    await api.ready();
    api.addSourceMiddleware(({ next }) =>
      next({
        get obj(): any {
          throw new Error('page bug');
        },
      } as any),
    );
    let p: Promise<unknown> | undefined;
    expect(() => (p = api.track('x'))).not.toThrow();
    await p?.catch(() => {});
  });

  it('a held trackLink click on an href the URL parser refuses does not throw from the listener', async () => {
    const { api } = start();
    await api.ready();
    api.addSourceMiddleware(({ payload, next }) => void setTimeout(() => next(payload), 5));
    document.body.innerHTML = '<a id="l" href="http://[bad">Go</a>';
    const el = document.getElementById('l')!;
    api.trackLink(el, 'Go');
    const thrown: unknown[] = [];
    const onError = (e: Event) => thrown.push((e as ErrorEvent).error);
    window.addEventListener('error', onError);
    const click = new MouseEvent('click', { bubbles: true, cancelable: true });
    let direct: unknown;
    try {
      el.dispatchEvent(click);
    } catch (e) {
      direct = e;
    }
    window.removeEventListener('error', onError);
    expect([direct, ...thrown].filter(Boolean)).toEqual([]);
  });
});
