import type { AnalyticsError, Message } from '../message/types';
import type { TransformSettings } from './transforms';
import type { Payload, Plugin, PluginContext, SourceMiddleware } from './types';
import { analyticsError, describe } from '../message/errors';
import { copyJSON } from '../message/validate';

/**
 * The stage between building a message and queuing it (CONTRACT section 2): source middleware
 * (`addSourceMiddleware`) and analytics.js plugins (`register`). Nothing here runs, and no call waits, until a site
 * adds one.
 */

// The message getters of analytics.js's facade that sites' middleware reads (`payload.event()`).
const GETTERS = ['type', 'event', 'name', 'category', 'userId', 'anonymousId', 'groupId', 'previousId', 'messageId', 'timestamp', 'properties', 'traits', 'context', 'integrations'];
// Keys `updateEvent` never walks into (prototype pollution).
const UNSAFE = /^(__proto__|constructor|prototype)$/;
// Thrown by `ctx.cancel()`; a deliberate cancel is not an error.
const CANCELLED = {};

function payload(obj: Message): Payload {
  const p: Payload = { obj, rawEvent: () => p.obj };
  for (const k of GETTERS) p[k] = () => p.obj[k];
  return p;
}

function pluginContext(event: Message): PluginContext {
  const ctx: PluginContext = {
    id: event.messageId,
    event,
    updateEvent(path, value) {
      const keys = String(path).split('.');
      let at: any = ctx.event;
      keys.forEach((k, i) => {
        if (UNSAFE.test(k) || !at || typeof at != 'object') return (at = undefined);
        if (i == keys.length - 1) at[k] = value;
        else at = at[k] && typeof at[k] == 'object' ? at[k] : (at[k] = {});
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

/**
 * Settles like `work`, or rejects with `'timeout'` after `ms`. `work` is a function of the page: what it throws
 * becomes a rejection.
 */
function bounded<T>(ms: number, work: (done: (v: T) => void) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject('timeout'), ms);
    const done = (v: T) => (clearTimeout(timer), resolve(v));
    try {
      Promise.resolve(work(done)).catch((e) => (clearTimeout(timer), reject(e ?? 'rejected')));
    } catch (e) {
      clearTimeout(timer);
      reject(e ?? 'threw');
    }
  });
}

// A copy of what a function of the page receives: it changes nothing but what it passes on.
const copy: <T>(m: T) => T = copyJSON;

/**
 * Source middleware and plugins. `run` passes a message through the `before` chain (middlewares and `before` plugins
 * in the order added, then `enrichment` plugins) and resolves with the message to queue, or with an AnalyticsError
 * (`dropped` for a message a middleware did not pass on or a hook cancelled; `middleware_error` / `plugin_error`,
 * also reported, for one that threw or ran out of time: a filter that failed never lets the message through).
 * `after` shows `after` plugins what was queued.
 */
export function createTransforms(settings: TransformSettings, report: (e: AnalyticsError) => void) {
  type Step = { middleware?: SourceMiddleware; plugin?: Plugin };
  const before: Step[] = [];
  const enrichment: Plugin[] = [];
  const after: Plugin[] = [];
  // Plugins still loading: messages wait for them (each for at most `timeout`).
  let loading: Promise<unknown> = Promise.resolve();
  let pending = 0;

  const failed = (code: 'middleware_error' | 'plugin_error', who: string, e: unknown, ids: string[], outcome = 'message dropped') => {
    const error = analyticsError(code, `${who} ${e == 'timeout' ? `did not finish within ${settings.timeout} ms` : `threw: ${describe(e)}`}; ${outcome}`, ids);
    report(error);
    return error;
  };

  type Outcome = Message | AnalyticsError;
  const isThenable = (v: unknown): v is PromiseLike<unknown> => !!v && typeof (v as PromiseLike<unknown>).then == 'function';
  // A hook's answer: the context's event (a hook may return the context, a promise of it, or nothing).
  const eventOf = (out: any, ctx: PluginContext) => (out && typeof out == 'object' && out.event && typeof out.event == 'object' ? out.event : ctx.event) as Message;

  // One step on message `m`: the message it passes on, the error that ends the run, or a promise of either. A step
  // that answers at once is taken at once: no call waits on a middleware or hook that did not make it wait.
  function step(m: Message, s: Step, enriching: boolean): Outcome | Promise<Outcome> {
    const ids = [m.messageId];
    const who = s.plugin ? `plugin ${s.plugin.name}` : `source middleware ${s.middleware!.name || ''}`.trim();
    const fail = (e: unknown): Outcome => {
      if (e === CANCELLED) return analyticsError('dropped', `${who} cancelled message ${m.messageId}`, ids);
      // as analytics.js: an enrichment that fails leaves the message as it was before it
      if (enriching) return failed('plugin_error', who, e, ids, 'message kept as it was before it'), m;
      return failed(s.plugin ? 'plugin_error' : 'middleware_error', who, e, ids);
    };
    if (s.plugin) {
      const fn = s.plugin[m.type];
      if (typeof fn != 'function') return m;
      const ctx = pluginContext(copy(m));
      let out: unknown;
      try {
        out = fn.call(s.plugin, ctx);
      } catch (e) {
        return fail(e);
      }
      if (!isThenable(out)) return eventOf(out, ctx);
      return bounded<unknown>(settings.timeout, (done) => out.then(done)).then((o) => eventOf(o, ctx), fail);
    }
    const passedOn = (p: Payload | null | undefined): Outcome =>
      p && p.obj && typeof p.obj == 'object' ? p.obj : analyticsError('dropped', `${who} did not pass message ${m.messageId} on`, ids);
    let called = false;
    let passed: Payload | null | undefined;
    let later: ((p: Payload | null | undefined) => void) | undefined;
    let result: unknown;
    try {
      result = s.middleware!({
        payload: payload(copy(m)),
        integrations: copy(settings.integrations),
        next: (p) => void (called || ((called = true), (passed = p), later?.(p))),
      });
    } catch (e) {
      return fail(e);
    }
    if (called) return passedOn(passed);
    // Not passed on yet: it has until the time limit. (analytics.js: one whose promise settles without calling
    // `next` dropped the message.)
    return bounded<Payload | null | undefined>(settings.timeout, (done) => {
      later = done;
      return isThenable(result) ? result.then(() => done(passed)) : undefined;
    }).then(passedOn, fail);
  }

  // Runs the steps from `i` on: at once while each answers at once, then as each settles.
  function from(m: Message, steps: [Step, boolean][], i: number): Outcome | Promise<Outcome> {
    for (; i < steps.length; i++) {
      const out = step(m, steps[i][0], steps[i][1]);
      if (out instanceof Promise) {
        const next = i + 1;
        return out.then((o) => (o instanceof Error ? o : from(o, steps, next)));
      }
      if (out instanceof Error) return out;
      m = out;
    }
    return m;
  }

  /**
   * The message through every middleware and plugin: the message to queue or the error that ended it, at once when
   * every step answered at once, else a promise of it (it waits too for plugins still loading).
   */
  function run(message: Message): Outcome | Promise<Outcome> {
    const steps: [Step, boolean][] = [...before.map((s): [Step, boolean] => [s, false]), ...enrichment.map((plugin): [Step, boolean] => [{ plugin }, true])];
    if (!pending) return from(message, steps, 0);
    return bounded(settings.timeout, (done) => loading.then(done))
      .catch(() => {})
      .then(() => run(message));
  }

  return {
    /** True when a message must go through `run` (or wait for a plugin that loads). */
    active: () => !!(before.length || enrichment.length || pending),
    /** `addSourceMiddleware(fn)`. */
    use(fn: SourceMiddleware) {
      if (typeof fn == 'function') before.push({ middleware: fn });
      else report(analyticsError('invalid_arguments', 'addSourceMiddleware: a function is required'));
    },
    run,
    /** `register(...plugins)`: each plugin's `load` runs now; one that fails is reported and left out. */
    register(plugins: unknown[], analytics: unknown): Promise<PluginContext> {
      const ctx = pluginContext({ type: 'track', event: 'register', messageId: 'register' } as Message);
      const loads = plugins.map((p) => {
        const plugin = p as Plugin;
        const name = plugin && typeof plugin == 'object' && typeof plugin.name == 'string' ? plugin.name : '';
        if (!name || !/^(before|enrichment|after|utility|destination)$/.test(plugin.type)) {
          report(analyticsError('invalid_arguments', 'register: a plugin needs a name and a type (before, enrichment, after, utility or destination)'));
          return;
        }
        pending++;
        const loaded = bounded(settings.timeout, (done) => Promise.resolve(typeof plugin.load == 'function' ? plugin.load(ctx, analytics) : 0).then(done))
          .then(() => {
            if (plugin.type == 'before') before.push({ plugin });
            else if (plugin.type == 'enrichment') enrichment.push(plugin);
            else if (plugin.type == 'after') after.push(plugin);
          })
          .catch((e) => void failed('plugin_error', `plugin ${name}: load`, e, [], 'plugin left out'))
          .finally(() => pending--);
        loading = Promise.all([loading, loaded]);
        return loaded;
      });
      return Promise.all(loads).then(() => ctx);
    },
    /** Shows `after` plugins a copy of a queued message; what they throw is reported. */
    after(message: Message) {
      for (const plugin of after) {
        const fn = plugin[message.type];
        if (typeof fn == 'function')
          bounded(settings.timeout, (done) => Promise.resolve(fn.call(plugin, pluginContext(copy(message)))).then(done)).catch(
            (e) => e !== CANCELLED && failed('plugin_error', `plugin ${plugin.name}`, e, [message.messageId], 'the message was queued'),
          );
      }
    },
  };
}

export type Transforms = ReturnType<typeof createTransforms>;
/** What creates the stage (`createTransforms`, or the lazy stand-in of src/extend/transforms.ts). */
export type TransformsFactory = (settings: TransformSettings, report: (e: AnalyticsError) => void) => Transforms;
