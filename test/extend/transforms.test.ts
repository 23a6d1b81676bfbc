import { describe, expect, it, vi } from 'vitest';
import { createTransforms } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';
import type { Plugin } from '../../src/extend/types';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';
import type { Checked } from '../../src/extend/transforms';

// What the stage passes on (checked as the API would check it), or the error that ended it.
const passed = async (out: Checked | Promise<Checked>): Promise<Message | AnalyticsError> => {
  const c = await out;
  return c instanceof Error ? c : c.message;
};

const message = (over: Partial<Message> = {}): Message =>
  ({
    type: 'track',
    event: 'Clicked',
    properties: { email: 'a@b.c', n: 1 },
    messageId: '01J0000000000000000000000A',
    timestamp: '2026-01-01T00:00:00.000Z',
    anonymousId: 'anon',
    integrations: {},
    context: { library: { name: 'svc-analytics', version: '0' } },
    ...over,
  }) as Message;

function setup(timeout = 50) {
  const reported: AnalyticsError[] = [];
  const settings = { integrations: { All: true }, timeout };
  const t = createTransforms(settings, (e) => reported.push(e), () => Promise.resolve(pluginRunner));
  return { t, reported, settings };
}

describe('source middleware', () => {
  it('is inactive until one is added, and runs each in the order added with analytics.js arguments', async () => {
    const { t } = setup();
    expect(t.active()).toBe(false);
    const seen: unknown[] = [];
    t.use(({ payload, next, integrations }) => {
      seen.push(['first', payload.type(), payload.event(), integrations]);
      payload.obj.properties!.first = true;
      next(payload);
    });
    t.use(({ payload, next }) => {
      seen.push(['second', payload.obj.properties!.first]);
      delete payload.obj.properties!.email;
      next(payload);
    });
    expect(t.active()).toBe(true);
    const out = (await passed(t.run(message()))) as Message;
    expect(seen).toEqual([['first', 'track', 'Clicked', { All: true }], ['second', true]]);
    expect(out.properties).toEqual({ n: 1, first: true });
  });

  it('never changes the message it was given (each middleware gets a copy)', async () => {
    const { t } = setup();
    const m = message();
    t.use(({ payload, next }) => ((payload.obj.properties!.x = 1), next(payload)));
    await passed(t.run(m));
    expect(m.properties).toEqual({ email: 'a@b.c', n: 1 });
  });

  it('waits for a next called later, within the time limit', async () => {
    const { t } = setup(200);
    t.use(({ payload, next }) => void setTimeout(() => next(payload), 20));
    expect(((await passed(t.run(message()))) as Message).event).toBe('Clicked');
  });

  it('drops the message when a middleware does not pass it on: its promise settled without next, or next(null)', async () => {
    for (const mw of [async () => {}, ({ next }: any) => next(null), ({ next }: any) => next()]) {
      const { t, reported } = setup();
      t.use(mw);
      const out = (await passed(t.run(message()))) as AnalyticsError;
      expect(out.code).toBe('dropped');
      expect(out.messageIds).toEqual(['01J0000000000000000000000A']);
      // a filter doing its job is not an error
      expect(reported).toEqual([]);
    }
  });

  it('drops and reports a middleware that throws, rejects or does not answer in time', async () => {
    const cases = [
      () => {
        throw new Error('boom');
      },
      async () => {
        throw new Error('async boom');
      },
      () => new Promise(() => {}),
      // returned without next: it may still call it later, so it has until the time limit
      () => {},
    ];
    for (const mw of cases) {
      const { t, reported } = setup(30);
      const later = vi.fn();
      t.use(mw);
      t.use(later);
      const out = (await passed(t.run(message()))) as AnalyticsError;
      expect(out.code).toBe('middleware_error');
      expect(reported).toHaveLength(1);
      expect(reported[0].code).toBe('middleware_error');
      expect(later).not.toHaveBeenCalled();
    }
  });

  it('refuses what is not a function, without throwing', () => {
    const { t, reported } = setup();
    t.use('nope' as any);
    expect(t.active()).toBe(false);
    expect(reported[0].code).toBe('invalid_arguments');
  });
});

describe('plugins', () => {
  it('loads each plugin with a context and the instance, then runs before, then enrichment hooks by type', async () => {
    const { t } = setup();
    const order: string[] = [];
    const instance = { me: 1 };
    const load = vi.fn();
    const enrich: Plugin = {
      name: 'enrich',
      type: 'enrichment',
      load,
      track: (ctx) => (order.push('enrichment'), ctx.updateEvent('context.app.name', 'shop'), ctx),
    };
    const before: Plugin = { name: 'before', type: 'before', track: (ctx) => (order.push('before'), (ctx.event.properties!.b = 1), ctx) };
    const ctx = await t.register([enrich, before], instance);
    expect(ctx.event.event).toBe('register');
    expect(load).toHaveBeenCalledWith(expect.objectContaining({ event: expect.any(Object) }), instance);
    const out = (await passed(t.run(message()))) as Message;
    expect(order).toEqual(['before', 'enrichment']);
    expect(out.properties!.b).toBe(1);
    expect(out.context.app).toEqual({ name: 'shop' });
    // no hook for this type: passed through
    expect(((await passed(t.run(message({ type: 'page', event: undefined })))) as Message).type).toBe('page');
  });

  it('orders before plugins and source middleware as they were added (both are "before" in analytics.js)', async () => {
    const { t } = setup();
    const order: string[] = [];
    t.use(({ payload, next }) => (order.push('mw'), next(payload)));
    await t.register([{ name: 'p', type: 'before', track: (ctx) => (order.push('plugin'), ctx) }], {});
    await passed(t.run(message()));
    expect(order).toEqual(['mw', 'plugin']);
  });

  it('cancels with ctx.cancel() in before and enrichment hooks, silently', async () => {
    for (const type of ['before', 'enrichment'] as const) {
      const { t, reported } = setup();
      await t.register([{ name: 'c', type, track: (ctx) => ctx.cancel() }], {});
      expect(((await passed(t.run(message()))) as AnalyticsError).code).toBe('dropped');
      expect(reported).toEqual([]);
    }
  });

  it('a before hook that throws drops the message; an enrichment one is reported and the message goes on', async () => {
    const boom = () => {
      throw new Error('boom');
    };
    let s = setup();
    await s.t.register([{ name: 'b', type: 'before', track: boom }], {});
    expect(((await passed(s.t.run(message()))) as AnalyticsError).code).toBe('plugin_error');
    expect(s.reported.map((e) => e.code)).toEqual(['plugin_error']);
    s = setup();
    await s.t.register([{ name: 'e', type: 'enrichment', track: boom }], {});
    expect(((await passed(s.t.run(message()))) as Message).event).toBe('Clicked');
    expect(s.reported.map((e) => e.code)).toEqual(['plugin_error']);
  });

  it('leaves out a plugin whose load fails or hangs, reported; register still resolves; messages do not wait forever', async () => {
    const { t, reported } = setup(30);
    const hook = vi.fn((ctx) => ctx);
    const done = t.register(
      [
        { name: 'bad', type: 'before', load: () => Promise.reject(new Error('no')), track: hook },
        { name: 'slow', type: 'before', load: () => new Promise(() => {}), track: hook },
        { name: 'nameless' } as any,
      ],
      {},
    );
    // a message made while plugins load waits for them (bounded)
    const out = (await passed(t.run(message()))) as Message;
    await done;
    expect(out.event).toBe('Clicked');
    expect(hook).not.toHaveBeenCalled();
    expect(reported.map((e) => e.code).sort()).toEqual(['invalid_arguments', 'plugin_error', 'plugin_error']);
  });

  it('leaves out a plugin that cannot be read (a revoked Proxy, a throwing getter), reported; register resolves and the good one loads', async () => {
    const { t, reported } = setup();
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwing = { get name(): string { throw new Error('hostile'); }, type: 'before' };
    const hook = vi.fn((ctx) => ctx);
    await expect(t.register([revoked.proxy, throwing, { name: 'ok', type: 'before', track: hook }], {})).resolves.toBeTruthy();
    expect(reported.map((e) => e.code)).toEqual(['invalid_arguments', 'invalid_arguments']);
    await passed(t.run(message()));
    expect(hook).toHaveBeenCalledTimes(1);
  });

  it('waits for a plugin still loading before running a message through', async () => {
    const { t } = setup(500);
    let loaded!: () => void;
    const registered = t.register([{ name: 'p', type: 'before', load: () => new Promise<void>((r) => (loaded = r)), track: (ctx) => ((ctx.event.properties!.p = 1), ctx) }], {});
    expect(t.active()).toBe(true);
    const out = t.run(message());
    setTimeout(() => loaded(), 10);
    await registered;
    expect(((await passed(out)) as Message).properties!.p).toBe(1);
  });

  it('shows after plugins a copy of the queued message, reporting what they throw', async () => {
    const { t, reported } = setup();
    const seen = vi.fn();
    await t.register(
      [
        { name: 'a', type: 'after', track: (ctx) => (seen(ctx.event.event), (ctx.event.event = 'changed'), ctx) },
        {
          name: 'b',
          type: 'after',
          track: () => {
            throw new Error('x');
          },
        },
      ],
      {},
    );
    expect(t.active()).toBe(false); // after plugins do not hold messages up
    const m = message();
    t.after(m);
    await vi.waitFor(() => expect(reported.map((e) => e.code)).toEqual(['plugin_error']));
    expect(seen).toHaveBeenCalledWith('Clicked');
    expect(m.event).toBe('Clicked');
  });

  it('updateEvent never writes through __proto__ or constructor', async () => {
    const { t } = setup();
    await t.register(
      [
        {
          name: 'p',
          type: 'before',
          track: (ctx) => {
            ctx.updateEvent('__proto__.polluted', 1);
            ctx.updateEvent('properties.constructor.prototype.polluted', 1);
            return ctx;
          },
        },
      ],
      {},
    );
    await passed(t.run(message()));
    expect(({} as any).polluted).toBeUndefined();
  });
});
