import { QUIET, net, sent, start } from '../harness';
import { describe, expect, it, vi } from 'vitest';

describe('analytics.js methods', () => {
  it('returns the instance from the methods analytics.js chains', () => {
    const { api } = start();
    for (const m of ['trackLink', 'trackClick', 'trackForm', 'trackSubmit', 'addSourceMiddleware', 'addDestinationMiddleware', 'addIntegrationMiddleware'] as const)
      expect((api as any)[m](null, 'x')).toBe(api);
  });

  it('pageview(url) sends a page whose properties.path is the url', async () => {
    const { api } = start();
    const { event } = await api.pageview('/pricing');
    expect(event.type).toBe('page');
    expect(event.properties!.path).toBe('/pricing');
  });

  it("on(type) handlers get the call's options as their last argument, as analytics.js, with the message as event", async () => {
    const { api } = start();
    const heard: unknown[][] = [];
    api.on('track', (...args) => heard.push(args));
    api.on('page', (...args) => heard.push(args));
    const { event } = await api.track('E', { a: 1 }, { integrations: { X: false }, context: { app: { name: 'shop' } } });
    await api.page('Docs', { b: 2 });
    const [e, props, options] = heard[0] as [string, object, any];
    expect([e, props]).toEqual(['E', { a: 1 }]);
    expect(options.integrations).toEqual({ X: false });
    expect(options.context).toEqual({ app: { name: 'shop' } });
    expect(options.event).toEqual(event);
    expect((heard[1] as any[])[3].event.name).toBe('Docs');
  });

  it('once() hears one event only', async () => {
    const { api } = start();
    const h = vi.fn();
    api.once('track', h);
    await api.track('A');
    await api.track('B');
    expect(h).toHaveBeenCalledTimes(1);
    expect(h.mock.calls[0][0]).toBe('A');
  });

  it('group() with no arguments gives the group of the last group call', async () => {
    const { api } = start();
    expect(api.group().id()).toBeNull();
    await api.group('g1', { plan: 'pro' });
    expect(api.group().id()).toBe('g1');
    expect(api.group().traits()).toEqual({ plan: 'pro' });
    api.reset();
    await api.ready();
    expect(api.group().id()).toBeNull();
  });
});

describe('source middleware and plugins through the API', () => {
  it('stores and sends what the middleware passed on; the promise resolves with it', async () => {
    const { api } = start();
    api.addSourceMiddleware(({ payload, next }) => {
      delete payload.obj.properties!.email;
      payload.obj.context.app = { name: 'shop' };
      next(payload);
    });
    const { event } = await api.track('Signed Up', { email: 'a@b.c', plan: 'pro' });
    expect(event.properties).toEqual({ plan: 'pro' });
    await api.flush();
    const [m] = sent();
    expect(m.properties).toEqual({ plan: 'pro' });
    expect(m.context.app).toEqual({ name: 'shop' });
    expect(m.messageId).toBe(event.messageId);
  });

  it('runs before the message is validated (CONTRACT section 2): a middleware may make a message the API would refuse acceptable', async () => {
    const { api, errors } = start();
    api.addSourceMiddleware(({ payload, next }) => {
      const m = payload.obj;
      delete m.properties!.blob;
      // analytics.js-style integration settings objects become the booleans the API takes
      for (const k of Object.keys(m.integrations)) m.integrations[k] = !!m.integrations[k];
      next(payload);
    });
    const big = await api.track('Big', { blob: 'x'.repeat(40000), kept: 1 });
    expect(big.event.properties).toEqual({ kept: 1 });
    const ints = await api.track('Ints', {}, { integrations: { GA: { id: 1 } } as never });
    expect(ints.event.integrations).toEqual({ GA: true });
    await api.flush();
    expect(sent().map((m) => [m.event, m.properties, m.integrations])).toEqual([
      ['Big', { kept: 1 }, {}],
      ['Ints', {}, { GA: true }],
    ]);
    expect(errors).toEqual([]);
    // what it passes on is still checked: too large, or integrations that are not booleans, is refused
    const { api: api2 } = start();
    api2.addSourceMiddleware(({ payload, next }) => next(payload));
    await expect(api2.track('Big', { blob: 'x'.repeat(40000) })).rejects.toMatchObject({ code: 'message_too_large' });
    await expect(api2.track('Ints', {}, { integrations: { GA: { id: 1 } } as never })).rejects.toMatchObject({ code: 'invalid_payload' });
  });

  it('a dropped message is never stored nor sent; its promise rejects and its callback hears why', async () => {
    const { api, errors } = start();
    api.addSourceMiddleware(({ payload, next }) => (payload.obj.event == 'Bot' ? next(null) : next(payload)));
    const cb = vi.fn();
    await expect(api.track('Bot', {}, {}, cb)).rejects.toMatchObject({ code: 'dropped' });
    expect(cb.mock.calls[0][0].code).toBe('dropped');
    await api.track('Human');
    await api.flush();
    expect(sent().map((m) => m.event)).toEqual(['Human']);
    expect(errors).toEqual([]);
  });

  it('a middleware that throws drops the message and reports middleware_error; nothing is thrown to the page', async () => {
    const { api, errors } = start();
    api.addSourceMiddleware(() => {
      throw new Error('PII filter broke');
    });
    await expect(api.track('Signed Up', { email: 'a@b.c' })).rejects.toMatchObject({ code: 'middleware_error' });
    await api.flush();
    expect(sent()).toEqual([]);
    expect(errors.map((e) => e.code)).toEqual(['middleware_error']);
  });

  it('refuses what a middleware made invalid', async () => {
    const { api } = start();
    api.addSourceMiddleware(({ payload, next }) => ((payload.obj.integrations = { A: 'yes' } as any), next(payload)));
    await expect(api.track('X')).rejects.toMatchObject({ code: 'invalid_payload' });
  });

  it('runs register()ed plugins; after plugins see the queued message', async () => {
    const { api } = start();
    const after = vi.fn();
    await api.register(
      { name: 'b', type: 'before', version: '1', track: (ctx) => ctx.updateEvent('properties.b', 1) && ctx },
      { name: 'a', type: 'after', version: '1', track: (ctx) => (after(ctx.event.properties), ctx) },
    );
    await api.track('X');
    await vi.waitFor(() => expect(after).toHaveBeenCalledWith({ b: 1 }));
  });

  it('passes load options: middleware gets the load integrations, and middlewareTimeout bounds a middleware', async () => {
    const { api, errors } = start({ integrations: { Mixpanel: false }, middlewareTimeout: 20 });
    const seen = vi.fn();
    api.addSourceMiddleware(({ integrations }) => seen(integrations));
    await expect(api.track('X')).rejects.toMatchObject({ code: 'middleware_error' });
    expect(seen).toHaveBeenCalledWith({ Mixpanel: false });
    expect(errors[0].message).toMatch(/20 ms/);
  });
});

describe('trackLink and trackForm', () => {
  it('tracks a click with event and properties of the element, without holding the navigation', async () => {
    const { api } = start();
    await api.ready();
    document.body.innerHTML = '<a id="l" href="#next" data-plan="pro">Go</a>';
    const link = document.getElementById('l')!;
    api.trackLink(link, (el: Element) => `Clicked ${el.id}`, (el: Element) => ({ plan: el.getAttribute('data-plan') }));
    const click = new MouseEvent('click', { bubbles: true, cancelable: true });
    link.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(false);
    await api.flush();
    expect(sent().map((m) => [m.event, m.properties])).toEqual([['Clicked l', { plan: 'pro' }]]);
  });

  it('takes arrays, NodeLists and jQuery-like objects', async () => {
    const { api } = start();
    await api.ready();
    document.body.innerHTML = '<a class="x" href="#1">1</a><a class="x" href="#2">2</a><a id="j" href="#3">3</a>';
    api.trackLink(document.querySelectorAll('.x'), 'NodeList');
    api.trackLink({ toArray: () => [document.getElementById('j')!] }, 'jQuery');
    for (const a of document.querySelectorAll('a')) a.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
    await api.flush();
    expect(sent().map((m) => m.event)).toEqual(['NodeList', 'NodeList', 'jQuery']);
  });

  it('reports an event function that throws, never into the page', async () => {
    const { api, errors } = start();
    await api.ready();
    document.body.innerHTML = '<a id="l" href="#x">Go</a>';
    api.trackLink(document.getElementById('l'), () => {
      throw new Error('oops');
    });
    document.getElementById('l')!.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
    expect(errors.map((e) => e.code)).toEqual(['callback_error']);
  });

  it('holds a navigation while an async middleware has the message, then navigates', async () => {
    const { api } = start();
    await api.ready();
    const assign = vi.spyOn(location, 'assign').mockImplementation(() => {});
    api.addSourceMiddleware(({ payload, next }) => void setTimeout(() => next(payload), 5));
    document.body.innerHTML = '<a id="l" href="/next">Go</a>';
    api.trackLink(document.getElementById('l'), 'Go');
    const click = new MouseEvent('click', { bubbles: true, cancelable: true });
    document.getElementById('l')!.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(assign).toHaveBeenCalledWith(new URL('/next', location.href).href));
  });

  it('does not force a held navigation that a later handler of the page cancelled (a router)', async () => {
    const { api } = start();
    await api.ready();
    const assign = vi.spyOn(location, 'assign').mockImplementation(() => {});
    api.addSourceMiddleware(({ payload, next }) => void setTimeout(() => next(payload), 5));
    document.body.innerHTML = '<div id="root"><a id="l" href="/next">Go</a></div>';
    document.getElementById('root')!.addEventListener('click', (e) => e.preventDefault());
    api.trackLink(document.getElementById('l'), 'Go');
    document.getElementById('l')!.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
    await api.flush();
    await vi.waitFor(() => expect(sent().map((m) => m.event)).toEqual(['Go']));
    expect(assign).not.toHaveBeenCalled();
  });

  it('never holds a new-tab click', async () => {
    const { api } = start();
    await api.ready();
    api.addSourceMiddleware(({ payload, next }) => void setTimeout(() => next(payload), 5));
    document.body.innerHTML = '<a id="b" href="#x" target="_blank">B</a><a id="m" href="#y">M</a>';
    api.trackLink(document.querySelectorAll('a'), 'Go');
    // what our listener left, then no default action (happy-dom would open a window)
    const seen: boolean[] = [];
    const stop = (e: Event) => (seen.push(e.defaultPrevented), e.preventDefault());
    window.addEventListener('click', stop);
    const blank = new MouseEvent('click', { bubbles: true, cancelable: true });
    const meta = new MouseEvent('click', { bubbles: true, cancelable: true, metaKey: true });
    document.getElementById('b')!.dispatchEvent(blank);
    document.getElementById('m')!.dispatchEvent(meta);
    window.removeEventListener('click', stop);
    expect(seen).toEqual([false, false]);
  });

  it('tracks a submit event once, and a script submission once, but not the script submission that carries out a held submit', async () => {
    const { api } = start();
    await api.ready();
    document.body.innerHTML = '<form id="f" action="#"><input name="q"></form>';
    const form = document.getElementById('f') as HTMLFormElement;
    const native = vi.spyOn(HTMLFormElement.prototype, 'submit').mockImplementation(() => {});
    api.trackForm(form, 'Searched');
    // a handler of the page that stops the submit, then submits by script
    const stop = (e: Event) => e.preventDefault();
    form.addEventListener('submit', stop);
    const ev = new Event('submit', { bubbles: true, cancelable: true });
    form.dispatchEvent(ev);
    expect(ev.defaultPrevented).toBe(true);
    form.submit();
    expect(native).toHaveBeenCalledTimes(1);
    // a plain script submission
    form.submit();
    await api.flush();
    expect(sent().map((m) => m.event)).toEqual(['Searched', 'Searched']);
  });
});

describe('the testing kit override', () => {
  it('window.__svcAnalyticsTest.apiHost, read once at load, replaces the apiHost the page names', async () => {
    (window as any).__svcAnalyticsTest = { apiHost: 'http://127.0.0.1:9/' };
    // (a browser under automation: CONTRACT section 6)
    Object.defineProperty(navigator, 'webdriver', { value: true, configurable: true });
    try {
      const { api } = start({ apiHost: 'https://api.production.example' });
      delete (window as any).__svcAnalyticsTest; // read at load only
      await api.track('X');
      await api.flush();
      expect(net.fetch.mock.calls.map((c) => c[0])).toEqual(['http://127.0.0.1:9/v1/batch']);
    } finally {
      delete (window as any).__svcAnalyticsTest;
      delete (navigator as any).webdriver;
    }
  });

  // CONTRACT section 6: only under automation, only for a loopback host, only as an own data property of window.
  const sentTo = async (setup: () => void, apiHost = 'https://api.production.example') => {
    setup();
    try {
      const { api } = start({ apiHost });
      await api.track('X');
      await api.flush();
      return net.fetch.mock.calls.map((c) => c[0]);
    } finally {
      delete (window as any).__svcAnalyticsTest;
      delete (Object.prototype as any).__svcAnalyticsTest;
      delete (Object.prototype as any).apiHost;
      delete (navigator as any).webdriver;
    }
  };
  const automated = () => Object.defineProperty(navigator, 'webdriver', { value: true, configurable: true });

  it('is ignored in a browser that is not under automation', async () => {
    const manual = () => Object.defineProperty(navigator, 'webdriver', { value: false, configurable: true });
    expect(await sentTo(() => (manual(), ((window as any).__svcAnalyticsTest = { apiHost: 'http://127.0.0.1:9/' })))).toEqual(['https://api.production.example/v1/batch']);
  });

  it('is ignored for a host that is not a loopback one', async () => {
    const to = await sentTo(() => (automated(), ((window as any).__svcAnalyticsTest = { apiHost: 'https://collector.attacker.example' })));
    expect(to).toEqual(['https://api.production.example/v1/batch']);
  });

  it('is ignored on a prototype', async () => {
    expect(await sentTo(() => (automated(), ((Object.prototype as any).__svcAnalyticsTest = { apiHost: 'http://127.0.0.1:9/' })))).toEqual([
      'https://api.production.example/v1/batch',
    ]);
  });

  it('is ignored as a getter', async () => {
    const getter = () => (automated(), Object.defineProperty(window, '__svcAnalyticsTest', { get: () => ({ apiHost: 'http://127.0.0.1:9/' }), configurable: true }));
    expect(await sentTo(getter)).toEqual(['https://api.production.example/v1/batch']);
  });

  it('a polluted Object.prototype.apiHost does not move the events of a page that names no apiHost', async () => {
    const to = await sentTo(() => ((Object.prototype as any).apiHost = 'https://collector.attacker.example'), undefined);
    expect(to.every((u: string) => !u.includes('attacker'))).toBe(true);
    expect(to).toHaveLength(1);
  });
});

describe('a first-party apiHost path', () => {
  it('is on the page origin, whatever a <base href> says', async () => {
    const base = document.createElement('base');
    base.href = 'https://elsewhere.example/';
    document.head.appendChild(base);
    try {
      const { api } = start({ apiHost: '/ingest' });
      await api.track('X');
      await api.flush();
      expect(net.fetch.mock.calls.map((c) => c[0])).toEqual([location.origin + '/ingest/v1/batch']);
    } finally {
      base.remove();
    }
  });
});

describe('AnalyticsBrowser.load that fails (no write key: an unset variable in a preview deploy; found by review 9)', () => {
  it('refuses every call with why, settles ready() and flush(), and an error handler added right after it hears why', async () => {
    const { AnalyticsBrowser } = await import('../../src/entry');
    const a = AnalyticsBrowser.load({ writeKey: undefined as unknown as string }, QUIET);
    const errors: string[] = [];
    a.on('error', (e) => errors.push(e.code + ': ' + e.message));
    const cb = vi.fn();
    await expect(a.track('Clicked', {}, {}, cb)).rejects.toMatchObject({ code: 'invalid_arguments', message: 'load: a writeKey is required' });
    expect(cb).toHaveBeenCalledWith(expect.objectContaining({ code: 'invalid_arguments' }));
    await expect(a.ecommerce.orderCompleted({ order_id: 'o' })).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(a.ready()).resolves.toBeUndefined();
    await expect(a.flush()).resolves.toBeUndefined();
    expect(errors).toEqual(['invalid_arguments: load: a writeKey is required']);
    expect(a.initialized).toBe(false);
  });
});

describe('AnalyticsBrowser.load', () => {
  it('returns the one instance of a write key in a page (StrictMode effects run twice; hot reload evaluates the module again)', async () => {
    const { AnalyticsBrowser } = await import('../../src/entry');
    const a = AnalyticsBrowser.load({ writeKey: 'wk_once' }, QUIET);
    const b = AnalyticsBrowser.load({ writeKey: 'wk_once' }, { ...QUIET, trackPageViews: true });
    expect(b).toBe(a);
    // a module evaluated again (hot reload) shares the registry on the global object
    vi.resetModules();
    const again = await import('../../src/entry');
    expect(again.AnalyticsBrowser.load({ writeKey: 'wk_once' })).toBe(a);
    expect(AnalyticsBrowser.load({ writeKey: 'wk_other' }, QUIET)).not.toBe(a);
  });

  it('svc-analytics first, then svc-analytics/core: the same instance, helpers and all; plugins see the helpers', async () => {
    const { AnalyticsBrowser } = await import('../../src/entry');
    const seen: unknown[] = [];
    const plugin = { name: 'p', type: 'utility' as const, version: '1', isLoaded: () => true, load: async (_: unknown, a: any) => void seen.push(typeof a.ecommerce.orderCompleted) };
    const full = AnalyticsBrowser.load({ writeKey: 'wk_full_first', plugins: [plugin] }, QUIET);
    const core = await import('../../src/entry/core');
    expect(core.AnalyticsBrowser.load({ writeKey: 'wk_full_first' }, QUIET)).toBe(full);
    await full.ready();
    expect(seen).toEqual(['function']);
  });

  it('svc-analytics/core has no helper namespaces; svc-analytics then gives the same instance its helpers', async () => {
    const core = await import('../../src/entry/core');
    const lean = core.AnalyticsBrowser.load({ writeKey: 'wk_core' }, QUIET);
    expect('ecommerce' in lean || 'semantic' in lean).toBe(false);
    expect(typeof lean.track).toBe('function');
    const { AnalyticsBrowser } = await import('../../src/entry');
    const full = AnalyticsBrowser.load({ writeKey: 'wk_core' }, QUIET);
    expect(full).toBe(lean);
    const ecommerce = full.ecommerce;
    expect(Object.keys(ecommerce)).toHaveLength(26);
    // a second load keeps the helpers it made, and core's load returns the same instance, helpers and all
    expect(AnalyticsBrowser.load({ writeKey: 'wk_core' }).ecommerce).toBe(ecommerce);
    expect(core.AnalyticsBrowser.load({ writeKey: 'wk_core' })).toBe(full);
    await full.ecommerce.orderCompleted({ order_id: 'o1' });
    await full.semantic.experimentViewed({ experiment_id: 'e1' });
    await full.flush();
    expect(sent().map((m) => m.event)).toEqual(['Order Completed', 'Experiment Viewed']);
  });
});
