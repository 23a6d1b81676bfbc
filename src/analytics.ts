import type {
  AnalyticsError,
  BrowserSettings,
  Callback,
  CallResult,
  EventName,
  JSONObject,
  LoadOptions,
  Message,
  MessageType,
  PageContext,
  User,
} from './types';
import { analyticsError, refused } from './errors';
import { normalise } from './call';
import { monotonicUlid } from './ulid';
import { buildContext, merge, pageContext, type Environment } from './context';
import { readEnvironment, connectionType, highEntropyHints } from './environment';
import { check, timestamp } from './validate';
import { createIdentity, uuid, type Identity } from './identity';
import { createQueue, type Queue } from './queue';
import { createTabs, LEASE_MS, ORPHAN_GRACE_MS } from './locks';
import { createTransport } from './transport';
import { createScheduler, type Scheduler } from './scheduler';
import { listenLifecycle } from './lifecycle';
import { createEmitter, createGuard } from './emitter';
import { resolve } from './config';
import { createEcommerce, type EcommerceHelpers, type TrackFn } from './ecommerce';
import { createSemantic, type SemanticHelpers } from './semantic';
import { trackPageViews } from './pageviews';

const TAG = '[svc-analytics]';

/** A page snapshot as the snippet records it: `[url, title, referrer]`. */
export type RecordedPage = [string, string, string];

/** The public API (CONTRACT section 2). */
export interface Analytics {
  load(writeKey: string, options?: LoadOptions): void;
  identify(...args: unknown[]): Promise<CallResult>;
  track(...args: unknown[]): Promise<CallResult>;
  page(...args: unknown[]): Promise<CallResult>;
  screen(...args: unknown[]): Promise<CallResult>;
  group(...args: unknown[]): Promise<CallResult>;
  alias(...args: unknown[]): Promise<CallResult>;
  reset(): void;
  user(): User;
  setAnonymousId(id: string): void;
  ready(callback?: () => void): Promise<void>;
  flush(): Promise<void>;
  on(name: EventName, handler: (...args: any[]) => void): void;
  off(name: EventName, handler: (...args: any[]) => void): void;
  debug(on?: boolean): void;
  ecommerce: EcommerceHelpers;
  semantic: SemanticHelpers;
  /** True once `load` has run. */
  initialized: boolean;
  readonly VERSION: string;
}

interface Core {
  identity: Identity;
  scheduler: Scheduler;
  env: Environment;
  integrations: JSONObject;
  owner: string;
  queue: Queue;
  ready: Promise<void>;
}

/**
 * Creates an instance: usable at once (calls before `load` wait for it), wired call → context → validate →
 * queue → scheduler (batch, deliver, retry). `replay` runs a call the snippet recorded, with its page and time.
 */
export function createAnalytics() {
  // A function of the page that throws is reported as an `'error'` (a throwing `'error'` handler only in debug mode).
  const pageThrew = (e: unknown, name?: string) =>
    name == 'error'
      ? debugOn && console.warn(TAG, "an 'error' handler threw", e)
      : report(analyticsError('callback_error', `a callback or handler of the page threw: ${(e as Error)?.message || e}`));
  const emitter = createEmitter(pageThrew);
  const safely = createGuard(pageThrew);
  const waitingForLoad: (() => void)[] = [];
  const nextId = monotonicUlid();
  let core: Core | undefined;
  let debugOn = false;
  let lastPage: { key: string; page: PageContext } | undefined;
  // URL of the last page message queued, so an automatic page view never repeats a page() the site made itself.
  let pagedUrl: string | undefined;
  // Set while a recorded (snippet) call is replayed: its page and time stand in for the current ones.
  let recorded: { page?: RecordedPage; time?: number } | undefined;

  // Ids of calls refused while the queue is full, reported through `'error'` once per episode (not once per call).
  let refusedIds: string[] | undefined;
  const full = (e: AnalyticsError) => {
    if (!refusedIds) {
      const ids: string[] = (refusedIds = []);
      setTimeout(() => report(analyticsError('queue_full', `${ids.length} call(s) refused: the queue is full`, ids)));
    }
    refusedIds.push(...(e.messageIds || []));
  };
  const log = (...a: unknown[]) => debugOn && console.log(TAG, ...a);
  const report = (e: AnalyticsError) => {
    debugOn && console.warn(TAG, e.code, e.message);
    emitter.emit('error', e);
  };

  // Same page as the last call: reuse its parsed context (most calls on a page share it).
  const pageOf = ([url, title, referrer]: RecordedPage): PageContext => {
    const key = url + '\n' + title + '\n' + referrer;
    if (!lastPage || lastPage.key != key) lastPage = { key, page: pageContext(url, title, referrer) };
    return lastPage.page;
  };

  function invoke(type: MessageType, args: unknown[], page?: RecordedPage, time?: number): Promise<CallResult> {
    // Found before normalise runs, so arguments it refuses still reach the callback (normalise finds the same one).
    const callback = args.find((x) => typeof x == 'function') as Callback | undefined;
    if (!core && typeof window == 'undefined') {
      const err = analyticsError('not_loaded', 'svc-analytics runs in a browser only');
      safely(callback, err);
      return refused(err);
    }
    // The page and time of the call itself, also for a call that waits for `load`.
    page ||= recorded?.page || [location.href, document.title, document.referrer];
    time ||= recorded?.time || Date.now();
    if (!core) return new Promise((res, rej) => waitingForLoad.push(() => invoke(type, args, page, time).then(res, rej)));
    const c = core;
    try {
      const n = normalise(type, args);
      const o = n.options;
      const f = n.fields;
      const ts = timestamp(o.timestamp == null ? time : o.timestamp);
      if (!ts) throw analyticsError('invalid_arguments', `${type}: options.timestamp must be a Date or an ISO 8601 date-time (years 0000-9999)`);
      const id = c.identity;
      const userId = type == 'identify' ? f.userId || id.userId() : id.userId();
      const p = pageOf(page);
      c.env.connectionType = connectionType(); // the network can change during a visit
      const ctx = buildContext(c.env, p);
      if (type == 'page') {
        // page() properties carry the page facts; the caller's values win in both places
        f.properties = { ...p, ...(f.name && { name: f.name }), ...(f.category && { category: f.category }), ...f.properties };
        for (const k of Object.keys(p) as (keyof PageContext)[])
          if (typeof f.properties[k] == 'string') ctx.page = { ...ctx.page, [k]: f.properties[k] };
      } else if (type == 'screen' && f.name) f.properties = { name: f.name, ...f.properties };
      if (type == 'identify') f.traits = id.merged(f.userId, f.traits);
      if (type == 'alias' && !f.previousId) f.previousId = id.userId() || id.anonymousId();
      const message = {
        type,
        ...f,
        messageId: nextId(time),
        timestamp: ts,
        anonymousId: o.anonymousId ? String(o.anonymousId) : id.anonymousId(),
        ...(userId && type != 'alias' && { userId }),
        integrations: { ...c.integrations, ...o.integrations },
        context: merge(ctx, o.context),
      } as Message;
      const checked = check(message);
      if (checked instanceof Error) throw checked;
      const m = checked.value;
      if (type == 'page') pagedUrl = m.properties!.url;
      // What persists is what was sent: the sanitised traits (a cycle or a function never reaches storage).
      if (type == 'identify') id.identify(f.userId, m.traits!);
      const result: CallResult = { event: m };
      const queued = c.queue.add({ id: m.messageId, message: m, bytes: checked.bytes, queuedAt: Date.now(), attempts: 0, owner: c.owner }).then(
        () => {
          refusedIds = undefined;
          log(type, m);
          safely(callback, result);
          emitter.emit(type, ...EVENT_ARGS[type].map((k) => m[k]), result);
          c.scheduler.notify();
          return result;
        },
        (e: AnalyticsError) => {
          full(e);
          safely(callback, e);
          throw e;
        },
      );
      queued.catch(() => {}); // ignoring the promise is allowed: no unhandled rejection
      return queued;
    } catch (e) {
      const err = (e as AnalyticsError).code ? (e as AnalyticsError) : analyticsError('invalid_arguments', String(e));
      report(err);
      safely(callback, err);
      return refused(err);
    }
  }

  // Calls that change state or read it wait for `load` like the others, keeping their order.
  const whenLoaded = (fn: (c: Core) => void) => (core ? fn(core) : waitingForLoad.push(() => fn(core!)));

  // Never throws into the page: a failure to start is reported like any other error.
  function load(writeKey: string, options?: LoadOptions) {
    try {
      start(writeKey, options || {});
    } catch (e) {
      report(analyticsError('invalid_arguments', `load failed: ${(e as Error)?.message || e}`));
    }
  }

  function start(writeKey: string, options: LoadOptions) {
    if (core || typeof window == 'undefined') return void (core && log('load() called again: ignored'));
    if (!writeKey || typeof writeKey != 'string') return report(analyticsError('invalid_arguments', 'load: a writeKey is required'));
    if (options.debug) debugOn = true;
    const r = resolve(options);
    if (r.ignored.length) report(analyticsError('invalid_arguments', `load: integrations ${r.ignored} ignored: the API takes true or false`));
    const owner = uuid();
    // Another tab's lock was released (that tab is gone): its records are orphans, adopted now.
    const tabs = createTabs(owner, () => adopt().then(scheduler.notify));
    let fellBack = false;
    const queue = createQueue(owner, r.bounds, {
      expired: (ids) => report(analyticsError('expired', `${ids.length} queued message(s) older than queue.maxAgeMs dropped`, ids)),
      fallback: (e) => {
        if (!fellBack) log('IndexedDB unusable; queue kept in memory', e);
        fellBack = true;
      },
    });
    const scheduler = createScheduler({ ...r, queue, tabs, transport: createTransport(), writeKey, report, emit: emitter.emit, log });
    const identity = createIdentity({ storage: options.storage, cookie: options.cookie });
    const env = readEnvironment();
    tabs.enter();
    // Under the tabs' lock, so two tabs never adopt the same orphan, and only after ORPHAN_GRACE_MS (see
    // `queue.adopt`). Without Web Locks nothing tells us when a tab dies: look again when the oldest record left to
    // another tab comes to the end of its lease, and at least every half lease (a tab that closes later leaves
    // records this one has not seen yet).
    let adoptTimer: ReturnType<typeof setTimeout> | undefined;
    const adopt = (): Promise<void> =>
      tabs
        .exclusive(() => tabs.orphans().then((isOrphan) => queue.adopt(isOrphan, ORPHAN_GRACE_MS)))
        .then(({ left, due }) => {
          clearTimeout(adoptTimer);
          const now = Date.now();
          let at = due || Infinity;
          if (tabs.leased()) at = Math.min(at, now + LEASE_MS / 2, left ? left + LEASE_MS : Infinity);
          if (at < Infinity) adoptTimer = setTimeout(() => adopt().then(scheduler.notify), at - now);
        })
        .catch((e) => void log('could not read the stored queue', e));
    const ready = adopt().then(() => {
      log('ready');
      emitter.emit('ready');
      scheduler.notify();
    });
    api.initialized = true;
    core = { identity, scheduler, env, integrations: r.integrations, owner, queue, ready };
    if (options.highEntropyHints) highEntropyHints().then((h) => (env.hints = h));
    listenLifecycle({
      exit(how) {
        scheduler.exit(how);
        if (how != 'hidden') tabs.leave();
      },
      resume(restored) {
        identity.reload();
        scheduler.shown();
        if (restored) tabs.enter();
        (restored ? queue.reconcile() : Promise.resolve()).then(adopt).then(scheduler.notify);
      },
      online: () => scheduler.flush(),
    });
    // After the snippet's recorded calls have been replayed (synchronously, right after load), so order holds.
    if (options.trackPageViews)
      Promise.resolve().then(() => {
        trackPageViews((page) => void (page[0] != pagedUrl && invoke('page', [], page)));
      });
    waitingForLoad.splice(0).forEach((f) => f());
  }

  const track: TrackFn = (event, props, options, cb) => invoke('track', [event, props, options, cb]);
  const userId = () => core?.identity.userId() ?? null;
  const api = {
    load,
    reset: () => whenLoaded((c) => (c.identity.reset(), emitter.emit('reset'))),
    setAnonymousId: (id: string) => whenLoaded((c) => id && c.identity.setAnonymousId(String(id))),
    user: () => ({
      id: userId,
      anonymousId: () => core?.identity.anonymousId() ?? '',
      traits: () => core?.identity.traits() ?? {},
    }),
    ready: (cb) =>
      new Promise<void>((res) => whenLoaded((c) => c.ready.then(res))).then(() => safely(cb)),
    flush: () => new Promise<void>((res) => whenLoaded((c) => c.ready.then(() => c.scheduler.flush()).then(res))),
    on: emitter.on,
    off: emitter.off,
    debug: (on = true) => void (debugOn = !!on),
    ecommerce: createEcommerce({
      track,
      isDebug: () => debugOn,
      warn: (t) => console.warn(TAG, t),
    }),
    semantic: createSemantic({ track, userId, report, call: safely }),
    initialized: false,
    VERSION: '__VERSION__',
  } as Analytics; // the six call methods are added below, from EVENT_ARGS
  /** Replays a call the snippet recorded (`ecommerce.orderCompleted` style names included) with its page and time. */
  function replay(method: string, args: unknown[], page?: RecordedPage, time?: number) {
    recorded = { page, time };
    try {
      const [ns, name] = method.split('.');
      const target = name ? (api as any)[ns] : api;
      const fn = target && target[name || ns];
      if (typeof fn == 'function') return fn.apply(target, args);
    } catch (e) {
      log('could not replay', method, e);
    } finally {
      recorded = undefined;
    }
  }
  for (const type of Object.keys(EVENT_ARGS) as MessageType[]) api[type] = (...a: unknown[]) => invoke(type, a);
  return { api, replay };
}

/** The npm entry: `AnalyticsBrowser.load({ writeKey }, options)` returns the API, usable before it is ready. */
export const AnalyticsBrowser = {
  load(settings: BrowserSettings, options?: LoadOptions): Analytics {
    const { api } = createAnalytics();
    // On a server (SSR) `load` does nothing and touches no browser global; calls are refused with `not_loaded`.
    api.load(settings && settings.writeKey, options);
    return api;
  },
};

// The message fields analytics.js passes to `on(type)` handlers, in order.
const EVENT_ARGS: Record<MessageType, (keyof Message)[]> = {
  track: ['event', 'properties'],
  page: ['category', 'name', 'properties'],
  screen: ['category', 'name', 'properties'],
  identify: ['userId', 'traits'],
  group: ['groupId', 'traits'],
  alias: ['userId', 'previousId'],
};
