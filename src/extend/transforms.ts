import type { JSONObject, Message } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import type { Payload, Plugin, PluginContext, SourceMiddleware } from './types';
import type { Failed, PluginRunner } from './plugins';
import { analyticsError, describe } from '../message/errors';
import { bounded, copy, isThenable } from './bounded';
import { checkMessage } from '../message/check';
import type { BuiltMessage } from '../message/message';

/**
 * Set by `load` (a middleware may be added before it): read when a message goes through. (This stage and its
 * settings cross from the bundle to the middleware chunk, built apart: their names have no `_`, which the minifier
 * would rename differently in each.)
 */
export interface TransformSettings {
  /** The load-time default `integrations` (what a middleware gets as `integrations`). */
  integrations: JSONObject;
  /** How long one middleware, hook or plugin `load` may take, in ms. */
  timeout: number;
}

/** `middlewareTimeout` default: one second. */
export const DEFAULT_MIDDLEWARE_TIMEOUT = 1000;

// The message getters of analytics.js's facade that sites' middleware reads (`payload.event()`).
const GETTERS = ['type', 'event', 'name', 'category', 'userId', 'anonymousId', 'groupId', 'previousId', 'messageId', 'timestamp', 'properties', 'traits', 'context', 'integrations'] as const;

function payload(obj: Message): Payload {
  const p: Payload = { obj, rawEvent: () => p.obj };
  for (const k of GETTERS) p[k] = () => p.obj[k];
  return p;
}

type Outcome = Message | AnalyticsError;
/** What a message comes out of the stage as. */
export type Checked = BuiltMessage | AnalyticsError;
type Step = { _middleware: SourceMiddleware; _plugin?: undefined } | { _plugin: Plugin; _middleware?: undefined };

/**
 * The stage between building a message and queuing it (CONTRACT section 2): source middleware
 * (`addSourceMiddleware`) and analytics.js plugins (`register`, run by `loadPlugins`' runner). In the CDN build this
 * stage is an edge: it comes in the middleware chunk (dist/analytics.extend.min.js), and edge.ts stands for it until then. Nothing here runs, and no call waits, until a site adds one. `run` passes a message through the
 * `before` chain (middlewares and `before` plugins in the order added, then `enrichment` plugins) and resolves with
 * the message to queue, or with an AnalyticsError (`dropped` for a message a middleware did not pass on or a hook
 * cancelled; `middleware_error` / `plugin_error`, also reported, for one that threw or ran out of time: a filter that
 * failed never lets the message through). `after` shows `after` plugins what was queued.
 */
export function createTransforms(settings: TransformSettings, report: (e: AnalyticsError) => void, loadPlugins: () => Promise<PluginRunner>) {
  const before: Step[] = [];
  const enrichment: Plugin[] = [];
  const after: Plugin[] = [];
  // Plugins still loading (or the runner): messages wait for them (for at most `timeout`).
  const loads: { _pending: number; _all: Promise<unknown>; _runner?: PluginRunner } = { _pending: 0, _all: Promise.resolve(), _runner: undefined };

  const failed = (code: 'middleware_error' | 'plugin_error', who: string, e: unknown, ids: string[], outcome = 'message dropped') => {
    const error = analyticsError(code, `${who} ${e == 'timeout' ? `did not finish within ${settings.timeout} ms` : `threw: ${describe(e)}`}; ${outcome}`, ids);
    report(error);
    return error;
  };
  const pluginFailed: Failed = (who, e, ids, outcome) => failed('plugin_error', who, e, ids, outcome);

  // One step on message `m`: the message it passes on, the error that ends the run, or a promise of either. A step
  // that answers at once is taken at once: no call waits on a middleware or hook that did not make it wait.
  function step(m: Message, s: Step, enriching: boolean): Outcome | Promise<Outcome> {
    const ids = [m.messageId];
    const who = s._plugin ? `plugin ${s._plugin.name}` : `source middleware ${s._middleware.name || ''}`.trim();
    const fail = (e: unknown): Outcome =>
      // as analytics.js: an enrichment that fails leaves the message as it was before it
      enriching ? (failed('plugin_error', who, e, ids, 'message kept as it was before it'), m) : failed(s._plugin ? 'plugin_error' : 'middleware_error', who, e, ids);
    // (a plugin is in the chain only once the runner loaded it)
    if (s._plugin) return loads._runner!.hook(m, s._plugin, settings.timeout, fail);
    const passedOn = (p: Payload | null | undefined): Outcome =>
      p && p.obj && typeof p.obj == 'object' ? p.obj : analyticsError('dropped', `${who} did not pass message ${m.messageId} on`, ids);
    let called = false;
    let passed: Payload | null | undefined;
    let later: ((p: Payload | null | undefined) => void) | undefined;
    let result: unknown;
    try {
      result = s._middleware({
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

  // The message through every middleware and plugin: what they pass on or the error that ended it, at once when every
  // step answered at once, else a promise of it (it waits too for plugins still loading).
  function pass(message: Message): Outcome | Promise<Outcome> {
    const steps: [Step, boolean][] = [...before.map((s): [Step, boolean] => [s, false]), ...enrichment.map((plugin): [Step, boolean] => [{ _plugin: plugin }, true])];
    if (!loads._pending) return from(message, steps, 0);
    return bounded(settings.timeout, (done) => loads._all.then(done))
      .catch(() => {})
      .then(() => pass(message));
  }

  // A plugin loaded: it joins its chain.
  const add = (plugin: Plugin) =>
    plugin.type == 'before' ? before.push({ _plugin: plugin }) : plugin.type == 'enrichment' ? enrichment.push(plugin) : plugin.type == 'after' && after.push(plugin);

  return {
    /** True when a message must go through `run` (or wait for a plugin that loads). */
    active: () => !!(before.length || enrichment.length || loads._pending),
    /** `addSourceMiddleware(fn)`. */
    use(fn: SourceMiddleware) {
      if (typeof fn == 'function') before.push({ _middleware: fn });
      else report(analyticsError('invalid_arguments', 'addSourceMiddleware: a function is required'));
    },
    /**
     * The message through every middleware and plugin, and what they pass on checked as the API would check it
     * (`checkMessage`; a refusal is reported here): the message to queue, or the error that ended it (reported where
     * it came from, or no error: a message a middleware dropped), at once when every step answered at once, else a
     * promise of it.
     */
    run(message: Message): Checked | Promise<Checked> {
      const checked = (out: Outcome): Checked => {
        if (out instanceof Error) return out;
        const built = checkMessage(message, out);
        if (built instanceof Error) report(built);
        return built;
      };
      const out = pass(message);
      return out instanceof Promise ? out.then(checked) : checked(out);
    },
    /**
     * `register(...plugins)`: each plugin's `load` runs once the runner is here; one that fails is reported and left
     * out. A runner that cannot be loaded (the npm entry's import) is reported; messages do not wait for it longer than
     * for a plugin that loads (`timeout`), so nothing is lost.
     */
    register(plugins: unknown[], analytics: unknown): Promise<PluginContext> {
      loads._pending++;
      const registered = loadPlugins()
        .then(
          (runner) => (loads._runner = runner).register(plugins, analytics, settings.timeout, add, report, pluginFailed),
          (e) => {
            const error = analyticsError('plugin_error', `register: the plugin code could not be loaded (${describe(e)}); plugins left out`);
            report(error);
            throw error;
          },
        )
        .finally(() => loads._pending--);
      loads._all = Promise.all([loads._all, registered.catch(() => {})]);
      return registered;
    },
    /** Shows `after` plugins a copy of a queued message; what they throw is reported. */
    after(message: Message) {
      if (after.length) loads._runner!.after(after, message, settings.timeout, pluginFailed);
    },
  };
}

export type Transforms = ReturnType<typeof createTransforms>;
/** What creates the stage for an instance (the entries bind `loadPlugins`). */
export type TransformsFactory = (settings: TransformSettings, report: (e: AnalyticsError) => void) => Transforms;
