import type { JSONObject, Message } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import type { Plugin, PluginContext } from './types';
import { analyticsError } from '../message/errors';
import { bounded, copy, isThenable } from './bounded';

/**
 * analytics.js plugins (`register`, CONTRACT section 2): their contexts, hooks, loading and `after` hooks. In the CDN
 * bundle this comes in the middleware chunk (CONTRACT section 1), fetched on the first plugin or source middleware; the
 * middleware stage (transforms.ts) runs the hooks in its chain.
 */

// Keys `updateEvent` never walks into (prototype pollution).
const UNSAFE = /^(__proto__|constructor|prototype)$/;
// Thrown by `ctx.cancel()`; a deliberate cancel is not an error.
const CANCELLED = {};

function pluginContext(event: Message): PluginContext {
  const ctx: PluginContext = {
    id: event.messageId,
    event,
    updateEvent(path, value) {
      const keys = String(path).split('.');
      let at: JSONObject | undefined = ctx.event;
      keys.forEach((k, i) => {
        if (UNSAFE.test(k) || !at || typeof at != 'object') return (at = undefined);
        if (i == keys.length - 1) at[k] = value;
        else {
          const next = at[k];
          at = next && typeof next == 'object' ? next : (at[k] = {});
        }
      });
      return ctx.event;
    },
    cancel(): never {
      throw CANCELLED;
    },
    log() {},
    stats: { increment() {}, gauge() {} },
  };
  return ctx;
}

// A hook's answer: the context's event (a hook may return the context, a promise of it, or nothing).
const eventOf = (out: unknown, ctx: PluginContext): Message => {
  const event = out && typeof out == 'object' ? (out as Partial<PluginContext>).event : undefined;
  return event && typeof event == 'object' ? event : ctx.event;
};

type Outcome = Message | AnalyticsError;
/** Reports a plugin that threw or ran out of time (`outcome`: what became of the message) and returns the error. */
export type Failed = (who: string, e: unknown, ids: string[], outcome?: string) => AnalyticsError;

/** The plugin runner the middleware stage uses once a site registered a plugin. */
export const pluginRunner = {
  /**
   * One plugin's hook on message `m`: the message it passes on, the error that ends the run (`dropped` for a
   * cancel), or a promise of either; `fail` decides what a hook that threw or ran out of time does.
   */
  hook(m: Message, plugin: Plugin, timeout: number, fail: (e: unknown) => Outcome): Outcome | Promise<Outcome> {
    const fn = plugin[m.type];
    if (typeof fn != 'function') return m;
    const failed = (e: unknown) => (e === CANCELLED ? analyticsError('dropped', `plugin ${plugin.name} cancelled message ${m.messageId}`, [m.messageId]) : fail(e));
    const ctx = pluginContext(copy(m));
    let out: unknown;
    try {
      out = fn.call(plugin, ctx);
    } catch (e) {
      return failed(e);
    }
    if (!isThenable(out)) return eventOf(out, ctx);
    return bounded<unknown>(timeout, (done) => out.then(done)).then((o) => eventOf(o, ctx), failed);
  },

  /**
   * `register(...plugins)`: each plugin's `load` runs now (at most `timeout`); `add` hears of each one loaded, and
   * one that is not a plugin, or fails, is reported and left out.
   */
  register(list: unknown[], analytics: unknown, timeout: number, add: (plugin: Plugin) => void, report: (e: AnalyticsError) => void, failed: Failed): Promise<PluginContext> {
    const ctx = pluginContext({ type: 'track', event: 'register', messageId: 'register' } as Message);
    const loads = list.map((p) => {
      const plugin = p && typeof p == 'object' ? (p as Plugin) : undefined;
      let name = '';
      let type: unknown;
      try {
        name = plugin && typeof plugin.name == 'string' ? plugin.name : '';
        type = plugin?.type;
      } catch {
        // (a plugin that cannot be read: a revoked Proxy, a getter that throws: not a plugin, reported below)
      }
      if (!plugin || !name || !/^(before|enrichment|after|utility|destination)$/.test(type as string))
        return report(analyticsError('invalid_arguments', 'register: a plugin needs a name and a type (before, enrichment, after, utility or destination)'));
      return bounded(timeout, (done) => Promise.resolve(typeof plugin.load == 'function' ? plugin.load(ctx, analytics) : 0).then(done))
        .then(() => add(plugin))
        .catch((e) => void failed(`plugin ${name}: load`, e, [], 'plugin left out'));
    });
    return Promise.all(loads).then(() => ctx);
  },

  /** Shows `after` plugins a copy of a queued message; what they throw is reported. */
  after(plugins: Plugin[], message: Message, timeout: number, failed: Failed) {
    for (const plugin of plugins) {
      const fn = plugin[message.type];
      if (typeof fn == 'function')
        bounded(timeout, (done) => Promise.resolve(fn.call(plugin, pluginContext(copy(message)))).then(done)).catch(
          (e) => e !== CANCELLED && failed(`plugin ${plugin.name}`, e, [message.messageId], 'the message was queued'),
        );
    }
  },
};

export type PluginRunner = typeof pluginRunner;
