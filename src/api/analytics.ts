import type { MessageType } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import type { CallResult, LoadOptions } from '../types';
import type { Group, CoreAnalytics, HelperDeps } from './types';
import type { DebugTools } from '../debug/debug-mode';
import { analyticsError, describe } from '../message/errors';
import { freeze } from '../message/context';
import { readEnvironment } from '../message/environment';
import { createIdentity, uuid, type Identity } from '../identity/identity';
import { startLink, type LinkTools } from '../identity/link';
import { serverCookies } from '../identity/server-cookies';
import { createGate } from '../privacy/gate';
import { categoriesOf, UNLISTED } from '../privacy/consent';
import { overBounds } from '../delivery/queue';
import { eraseDelivery, startDelivery, type Delivery } from '../delivery/start';
import { DEFAULT_MIDDLEWARE_TIMEOUT, type TransformSettings, type TransformsFactory } from '../extend/transforms';
import { createDebugMode } from '../debug/debug-mode';
import { batchUrl, ownOptions, resolve } from './config';
import { readTestHook } from './test-hook';
import { once } from './emitter';
import { createPageGuard } from './guard';
import { createContextCache, readPage } from './page-context';
import { sourcesEdge, watchPages } from './sources-edge';
import type { Sources } from '../sources';
import { createCalls, type Calls, type Instance } from './calls';
import { clearBuffer } from '../stub/buffer';
import { clearWaiting } from '../extend/waiting';
import { createReplay, type Recorded } from '../stub/replay';
import type { PlanCheck } from '../plan/browser-check';
import { hasDocument, noBrowser } from '../offline/scope';
import { byteLength } from '../message/validate';

// The longest id `setAnonymousId` takes: it goes on every message, which must stay under the 32 KB limit.
const MAX_ID_BYTES = 8000;

/**
 * Creates an instance: usable at once (calls before `load` wait for it). This file only wires the stages: the guard
 * at the page boundary (guard.ts), the call pipeline (calls.ts: message, middleware and plugins, the gate's store),
 * the consent and opt-out gate (privacy/gate.ts), delivery (delivery/start.ts) and the stub's replay (stub/replay.ts).
 * `load` takes, besides the public arguments, the calls recorded before it (they run before automatic page views
 * start); `replay` runs a recorded call with its page and time. The entry gives the stages that are not in every
 * build: the debug tools' loader, the middleware and plugin stage (eager in the npm entries, the middleware chunk
 * in the CDN bundle: src/extend/edge.ts), the link and server-cookie tools (`linkDomains`, `serverCookies`: a lazy chunk in the CDN bundle), and
 * the tracking-plan checker's loader (a chunk of its own, loaded only for a `plan` option).
 */
export function createAnalytics(stages: {
  debug?: () => Promise<DebugTools>;
  transforms: TransformsFactory;
  tools?: () => Promise<LinkTools>;
  plan: (plan: unknown, report: (e: AnalyticsError) => void) => Promise<PlanCheck>;
  sources: () => Sources | Promise<Sources>;
}) {
  // Runs `use` with the link and server-cookie tools once they are here; a chunk that cannot load is reported.
  const tools = (use: (t: LinkTools) => void) => stages.tools?.().then(use, (e) => report(analyticsError('invalid_arguments', describe(e))));
  const debugMode = createDebugMode(stages.debug, (e) => report(analyticsError('invalid_arguments', `debug: the debug tools could not be loaded (${describe(e)}); plain console lines instead`)));
  // Read when the library starts (before the page's later scripts could define it).
  const hook = readTestHook();
  const guard = createPageGuard(debugMode);
  const { emitter, report, safely } = guard;
  // Source middleware and plugins: usable before `load` (a snippet's calls may add them first), which sets these.
  const transformSettings: TransformSettings = { integrations: {}, timeout: DEFAULT_MIDDLEWARE_TIMEOUT };
  const transforms = stages.transforms(transformSettings, report);
  let core: Instance | undefined;
  const calls = createCalls({ guard, transforms, instance: () => core, emit: emitter.emit });
  const { invoke, whenLoaded } = calls;
  const replay = createReplay(() => api, invoke);
  // The `ready` event: once, when the stored queue was read, or at load while nothing may be stored.
  const sayReady = once(() => emitter.emit('ready'));

  /**
   * Starts the instance (never throws into the page: a failure to start is reported like any other error). `recorded`
   * runs the calls made before the bundle came (the snippet's), right after the instance is up and before automatic
   * page views start, so that they keep their order; a `load` that fails keeps them for the next one. `later` runs
   * each further step of start-up, in order (delivery; then the recorded calls, the calls made since, which wait
   * for them, and automatic page views): the CDN bundle gives each a task of its own (Total Blocking Time counts the
   * part of a task over 50 ms); else at once.
   */
  function load(writeKey: string, options?: LoadOptions, recorded?: Recorded, later = (step: () => void) => step()): AnalyticsError | void {
    if (api.initialized || noBrowser()) return; // once only
    replay.keep(recorded);
    let instance: Instance;
    // A load that fails is reported once the page's current script is done, so that handlers added right after the
    // load call hear of it too; it is returned (the npm entry then refuses the calls that wait for a load).
    const failed = (error: AnalyticsError) => (Promise.resolve().then(() => report(error)), error);
    try {
      if (!writeKey || typeof writeKey != 'string') return failed(analyticsError('invalid_arguments', 'load: a writeKey is required'));
      // Own properties only: nothing on a prototype decides where events go or what consent is.
      options = ownOptions(options);
      if (options.debug) debugMode.set(true);
      instance = start(writeKey, options, later);
    } catch (e) {
      return failed(analyticsError('invalid_arguments', `load failed: ${describe(e)}`));
    }
    api.initialized = true;
    later(() => {
      // Calls made since wait until the recorded ones ran (`core`: the instance the calls see).
      core = instance;
      // While nothing may be stored, this page's recorded calls run from memory; other pages' stored ones wait for a grant.
      replay.take(instance.gate._state() == 'open');
      calls.loaded();
      calls.resume(instance);
      // (a worker has no page to view: CONTRACT section 1, no DOM touched where there is none)
      // (each automatic page view with the title read now through Document.prototype, as a call's: readPage)
      if (options.trackPageViews && hasDocument()) watchPages((page) => void (page[0] != calls.pagedUrl() && invoke('page', [], { page: [page[0], readPage()[1], page[2]], time: Date.now() })), sources);
    });
  }

  // Creates the stages of an instance and wires them.
  function start(writeKey: string, options: LoadOptions, later: (step: () => void) => void): Instance {
    // The testing kit's override (src/api/test-hook.ts) points every page of a test at the kit's collector, whatever
    // `apiHost` the page names.
    const settings = resolve(hook ? { ...options, apiHost: hook.apiHost } : options);
    // The kit flushes every instance of the page before a `.not` check (an npm app keeps its own).
    hook?.instances.push(api);
    // A path is on the page's own origin, whatever a <base href> says (fetch and sendBeacon resolve against it).
    if (settings.url[0] == '/') settings.url = location.origin + settings.url;
    transformSettings.integrations = freeze(settings.integrations);
    transformSettings.timeout = settings.middlewareTimeout;
    if (settings.ignored.length) report(analyticsError('invalid_arguments', `load: integrations ${settings.ignored} ignored: the API takes true or false`));
    // Nothing is written before the gate opens: the identity is read, and kept in memory.
    const isOpen = () => gate._open();
    const server = options.serverCookies ? serverCookies(batchUrl(options.apiHost), isOpen, report, tools) : undefined;
    const identity = createIdentity({ storage: options.storage, cookie: ownOptions(options.cookie), persist: false, server });
    const decorate = options.linkDomains ? startLink(options.linkDomains, identity, isOpen, report, tools) : undefined;
    const categories = categoriesOf(options.consent);
    if (categories?.[0] == UNLISTED) report(analyticsError('invalid_arguments', 'load: consent needs { categories: [...] }; nothing is stored or sent until it lists them'));
    const owner = uuid();
    // The plan's checker: messages are checked once it is there, never held for it (a chunk that fails loses no call).
    const plan = options.plan ? stages.plan(options.plan, report).catch((e) => void report(analyticsError('plan_unavailable', 'plan: ' + describe(e)))) : undefined;
    // Storage and delivery, started once storing is allowed (at load, or when consent is granted).
    let delivery: Delivery | undefined;
    let queue: ReturnType<Calls['queueTo']>;
    const open = () =>
      delivery || (delivery = startDelivery({ ...settings, owner, writeKey, identity, open: isOpen, report, emit: emitter.emit }));
    const gate = createGate({
      identity,
      _categories: categories,
      _respectGPC: options.respectGPC,
      _overBounds: (count, bytes) => overBounds(settings.bounds, count, bytes),
      report,
      _full: guard.full.add,
      _opened(held) {
        open();
        identity._persist();
        decorate?.();
        for (const built of held) queue(built);
        // (the stub's recorded calls still to take from storage come after the held ones: a recorded consent() that
        // granted came after them)
        replay.take(true);
        calls.resume(instance);
      },
      _queue: (queue = calls.queueTo(open, owner)),
      _erase: () => eraseStored(delivery),
    });
    const instance: Instance = {
      identity,
      integrations: transformSettings.integrations,
      owner,
      binding: writeKey + ' ' + settings.url,
      gate,
      context: createContextCache(readEnvironment()),
      delivery: () => delivery,
      plan,
    };
    if (gate._state() == 'open') decorate?.();
    later(() => (gate._state() == 'open' ? open()._ready.then(sayReady) : setTimeout(sayReady)));
    return instance;
  }

  // Once the stored queue was read (at once while nothing may be stored) and the trackLink/trackForm calls so far bound.
  const ready = (instance: Instance) => Promise.all([instance.delivery()?._ready, sources._settled(3000)]).then(() => {});

  const group = groupCall(invoke, () => core?.identity);
  const userId = () => core?.identity._userId() ?? null;
  const sources = sourcesEdge(stages.sources, report, {
    track(event, properties, options) {
      const [done, later] = calls.start('track', [event, properties, options]);
      return { queued: !later, done };
    },
    report,
    timeout: () => transformSettings.timeout,
  });
  const autotrack = sources._autotrack;
  // (the API method starts the pipeline itself: one call from the page to it)
  const call = (type: MessageType) => (...args: unknown[]) => calls.start(type, args)[0];

  const api: CoreAnalytics = {
    load: (writeKey, options) => load(writeKey, options),
    identify: call('identify'),
    track: call('track'),
    page: call('page'),
    screen: call('screen'),
    group,
    alias: call('alias'),
    reset: () => whenLoaded((instance) => (instance.identity._reset(), emitter.emit('reset'))),
    user: () => ({
      id: userId,
      anonymousId: () => core?.identity._anonymousId() ?? '',
      traits: () => core?.identity._traits() ?? {},
    }),
    // (an id that would leave a message no room, or is no string or number, is refused: it would be on every message)
    setAnonymousId: (id) =>
      whenLoaded((instance) =>
        !id ? 0 : (typeof id == 'string' || typeof id == 'number') && byteLength('' + id) <= MAX_ID_BYTES ? instance.identity._setAnonymousId('' + id) : report(analyticsError('invalid_arguments', `setAnonymousId: a string of at most ${MAX_ID_BYTES} bytes is required`)),
      ),
    ready: (callback) => new Promise<void>((res) => whenLoaded((instance) => ready(instance).then(res), res)).then(() => safely(callback)),
    flush: () => new Promise<void>((res) => whenLoaded((instance) => ready(instance).then(() => instance.delivery()?._scheduler._flush()).then(res), res)),
    on: (name, handler) => (emitter.on(name, handler), api),
    off: (name, handler) => (emitter.off(name, handler), api),
    once(name, handler) {
      const one = (...args: Parameters<typeof handler>) => (emitter.off(name, one), handler(...args));
      emitter.on(name, one);
      return api;
    },
    debug: (on = true) => (debugMode.set(!!on), api),
    pageview: (url) => invoke('page', [{ path: url }]),
    trackLink: (...args) => (autotrack((a) => a.trackLink(...args)), api),
    trackClick: (...args) => (autotrack((a) => a.trackLink(...args)), api),
    trackForm: (...args) => (autotrack((a) => a.trackForm(...args)), api),
    trackSubmit: (...args) => (autotrack((a) => a.trackForm(...args)), api),
    addSourceMiddleware: (fn) => (transforms.use(fn), api),
    addDestinationMiddleware: () => api,
    addIntegrationMiddleware: () => api,
    register: (...plugins) => transforms.register(plugins, api),
    consent: (preferences) =>
      whenLoaded((instance) => instance.gate._consent(preferences) || report(analyticsError('invalid_arguments', 'consent: an object of category names to booleans is required'))),
    optOut: () => whenLoaded((instance) => instance.gate._optOut()),
    optIn: () => whenLoaded((instance) => instance.gate._optIn()),
    initialized: false,
    VERSION: '__VERSION__',
  };

  // What the helper namespaces need of this instance (helpers/add-helpers.ts adds them: the bundle and the npm entry
  // do, `svc-analytics/core` does not).
  const helperDeps: HelperDeps = {
    _track: (event, properties, options, callback, site, check) => invoke('track', [event, properties, options, callback], site, check),
    _userId: userId,
    _check: (event, properties) => debugMode.use((tools) => tools.checkEcommerce(event, properties)),
  };
  return { api, load, replay: replay.run, keep: replay.keep, unloadable: calls.unloadable, helperDeps };
}

// `group(...)` makes a group message; `group()` with no arguments reads the group, as analytics.js.
function groupCall(invoke: (type: MessageType, args: unknown[]) => Promise<CallResult>, identity: () => Identity | undefined) {
  const handle: Group = {
    id: () => identity()?._groupId() ?? null,
    traits: () => identity()?._groupTraits() ?? {},
  };
  function group(): Group;
  function group(...args: unknown[]): Promise<CallResult>;
  function group(...args: unknown[]) {
    return args.length ? invoke('group', args) : handle;
  }
  return group;
}

// What the library stored in this browser, erased (consent withdrawn or denied, opt-out): the queue (through delivery,
// once started), the stub's buffer, the messages waiting for middleware, the exit note.
function eraseStored(delivery?: Delivery) {
  eraseDelivery(delivery);
  clearBuffer();
  clearWaiting();
}
