import type { Message } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import type { PluginContext, SourceMiddleware } from './types';
import type { PluginRunner } from './plugins';
import type { Checked, Transforms, TransformSettings } from './transforms';
import { analyticsError, describe } from '../message/errors';
import type { share } from './lib';

/** What the middleware chunk (dist/analytics.extend.min.js, src/entry/extend-browser.ts) leaves for the bundle. */
export interface ExtendChunk {
  transforms: (settings: TransformSettings, report: (e: AnalyticsError) => void, loadPlugins: () => Promise<PluginRunner>) => Transforms;
  plugins: PluginRunner;
  /** Gives the chunk the bundle's message code (src/extend/lib.ts). */
  share: typeof share;
}

/**
 * The middleware stage in the CDN bundle (CONTRACT section 1, core and edges): it stands for the stage of
 * transforms.ts, which comes in a chunk of its own, fetched on the first `addSourceMiddleware` or `register`. A page
 * that adds none never fetches it, and its calls never wait for it. Once one is added, every message waits for the
 * chunk, in call order (calls.ts keeps the order of what waits), and then goes through every middleware and plugin
 * added before it. A chunk that cannot load loses nothing: the failure is reported (`middleware_error`), what waits
 * stays held, and the chunk is fetched again on the next call, middleware or plugin.
 */
export function createEdgeTransforms(settings: TransformSettings, report: (e: AnalyticsError) => void, load: () => Promise<ExtendChunk>): Transforms {
  // What the page added, and the messages that wait, before the chunk came: one list in call order, so that each
  // message goes through the middleware and plugins added before it, as once the chunk is here.
  const pending: ((t: Transforms) => void)[] = [];
  const edge: { _real?: Transforms; _loading?: Promise<void>; _added: number } = { _added: 0 };
  const need = () =>
    (edge._loading ||= load().then(
      (chunk) => {
        const real = (edge._real = chunk.transforms(settings, report, () => Promise.resolve(chunk.plugins)));
        for (const f of pending.splice(0)) f(real);
      },
      (e) => {
        edge._loading = undefined;
        report(analyticsError('middleware_error', `the middleware and plugin code could not be loaded (${describe(e)}); messages wait for it, and it is fetched again on the next call`));
      },
    ));
  // Runs `f` with the stage once it is here, after what waits for it already.
  const later = (f: (t: Transforms) => void) => (pending.push(f), void need());
  const add = (f: (t: Transforms) => void) => (edge._real ? f(edge._real) : (edge._added++, later(f)));
  return {
    active: () => (edge._real ? edge._real.active() : edge._added > 0),
    use: (fn: SourceMiddleware) =>
      void (typeof fn == 'function' ? add((t) => t.use(fn)) : report(analyticsError('invalid_arguments', 'addSourceMiddleware: a function is required'))),
    register: (plugins: unknown[], analytics: unknown) =>
      new Promise<PluginContext>((res, rej) => add((t) => t.register(plugins, analytics).then(res, rej))),
    run: (message: Message): Checked | Promise<Checked> => (edge._real ? edge._real.run(message) : new Promise<Checked>((res) => later((t) => res(t.run(message))))),
    after: (message: Message) => edge._real?.after(message),
  };
}
