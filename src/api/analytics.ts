import type {
  AnalyticsError,
  AnalyticsEvents,
  Properties,
  Callback,
  CallOptions,
  CallResult,
  EventName,
  JSONObject,
  JSONValue,
  LoadOptions,
  Message,
  MessageContext,
  MessageType,
  PageContext,
  User,
} from '../message/types';
import { analyticsError, createEpisodes, describe, refused } from '../message/errors';
import { normalise } from '../message/call';
import { monotonicUlid } from '../message/ulid';
import { buildContext, freeze, pageContext, type Environment, type Hints } from '../message/context';
import { buildMessage, checkMessage, type BuiltMessage } from '../message/message';
import { byteLength, copyJSON, MESSAGE_LIMIT, stringify } from '../message/validate';
import { readEnvironment, connectionType, highEntropyHints } from '../message/environment';
import { createIdentity, KEYS, uuid, type Identity } from '../identity/identity';
import { clearStored, type QueueBounds } from '../delivery/queue';
import { startDelivery, type Delivery } from '../delivery/start';
import { NOTE_KEY } from '../delivery/handoff';
import { decide, preferencesOf, type Gate, type Preferences } from '../privacy/consent';
import { createEmitter, createGuard } from './emitter';
import { resolve } from './config';
import type { EcommerceHelpers, TrackFn } from '../helpers/ecommerce';
import type { SemanticHelpers } from '../helpers/semantic';
import { trackPageViews } from '../extend/pageviews';
import { createDebugMode, type DebugTools } from '../debug/debug-mode';
import { createTransforms, DEFAULT_MIDDLEWARE_TIMEOUT, type Plugin, type PluginContext, type SourceMiddleware } from '../extend/plugins';
import { createAutotrack, type Elements, type OfElement } from '../extend/autotrack';

declare const __BUFFER_KEY__: string;

const isFunction = (v: unknown) => typeof v == 'function';

/** A page snapshot as the snippet records it: `[url, title, referrer]`. */
export type RecordedPage = [string, string, string];

/**
 * The public API without the helper namespaces: what `svc-analytics/core` returns (its helpers tree-shake away).
 * Methods that return the instance return the type they were called on.
 */
export interface CoreAnalytics {
  load(writeKey: string, options?: LoadOptions): void;
  // The analytics.js shapes of each call: leading strings, then properties or traits, then options; a callback last
  // (or in place of any trailing argument).
  /** `identify(userId?, traits?, options?, callback?)`, also `identify(traits, options?, callback?)`. */
  identify(userId?: string | null, traits?: Properties | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  identify(userId: string | null, traits: Properties | null | undefined, callback: Callback): Promise<CallResult>;
  identify(userId: string | null, callback: Callback): Promise<CallResult>;
  identify(traits: Properties, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  identify(traits: Properties, callback: Callback): Promise<CallResult>;
  identify(callback: Callback): Promise<CallResult>;
  /** `track(event, properties?, options?, callback?)`. */
  track(event: string, properties?: Properties | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  track(event: string, properties: Properties | null | undefined, callback: Callback): Promise<CallResult>;
  track(event: string, callback: Callback): Promise<CallResult>;
  /** `page(category?, name?, properties?, options?, callback?)`, also `page(name, ...)` and `page(properties, ...)`. */
  page(category: string | null, name: string | null, properties?: Properties | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  page(name?: string | null, properties?: Properties | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  page(name: string | null, properties: Properties | null | undefined, callback: Callback): Promise<CallResult>;
  page(name: string | null, callback: Callback): Promise<CallResult>;
  page(properties: Properties, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  page(properties: Properties, callback: Callback): Promise<CallResult>;
  page(callback: Callback): Promise<CallResult>;
  /** `screen(category?, name?, properties?, options?, callback?)`, the same shapes as `page`. */
  screen(category: string | null, name: string | null, properties?: Properties | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  screen(name?: string | null, properties?: Properties | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  screen(name: string | null, properties: Properties | null | undefined, callback: Callback): Promise<CallResult>;
  screen(name: string | null, callback: Callback): Promise<CallResult>;
  screen(properties: Properties, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  screen(callback: Callback): Promise<CallResult>;
  /** With no arguments: the group of the last `group` call (it persists like the user). */
  group(): Group;
  /** `group(groupId, traits?, options?, callback?)`. */
  group(groupId: string, traits?: Properties | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  group(groupId: string, traits: Properties | null | undefined, callback: Callback): Promise<CallResult>;
  group(groupId: string, callback: Callback): Promise<CallResult>;
  /** `alias(userId, previousId?, options?, callback?)`. */
  alias(userId: string, previousId?: string | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  alias(userId: string, previousId: string | null | undefined, callback: Callback): Promise<CallResult>;
  alias(userId: string, callback: Callback): Promise<CallResult>;
  reset(): void;
  user(): User;
  setAnonymousId(id: string): void;
  ready(callback?: () => void): Promise<void>;
  flush(): Promise<void>;
  /** Listens to an event; the handler's arguments are typed by the event (`AnalyticsEvents`). */
  on<K extends EventName>(name: K, handler: (...args: AnalyticsEvents[K]) => void): this;
  off<K extends EventName>(name: K, handler: (...args: AnalyticsEvents[K]) => void): this;
  debug(on?: boolean): this;
  /** `on` for one call. */
  once<K extends EventName>(name: K, handler: (...args: AnalyticsEvents[K]) => void): this;
  /** `page` with `properties.path` = `url`, as analytics.js. */
  pageview(url: string): Promise<CallResult>;
  /** Tracks clicks on links (or any element): `event` and `properties` may be functions of the element. */
  trackLink(elements: Elements, event: OfElement<string>, properties?: OfElement<JSONObject>, options?: CallOptions): this;
  trackClick(elements: Elements, event: OfElement<string>, properties?: OfElement<JSONObject>, options?: CallOptions): this;
  /** Tracks form submissions, by the visitor or by script. */
  trackForm(elements: Elements, event: OfElement<string>, properties?: OfElement<JSONObject>, options?: CallOptions): this;
  trackSubmit(elements: Elements, event: OfElement<string>, properties?: OfElement<JSONObject>, options?: CallOptions): this;
  /** analytics.js source middleware: runs for every message, in the order added, before it is checked and queued. */
  addSourceMiddleware(fn: SourceMiddleware): this;
  /** Accepted for analytics.js parity; there are no device-mode destinations, so it never runs. */
  addDestinationMiddleware(integration: string, ...fns: unknown[]): this;
  /** Accepted for analytics.js parity; there are no device-mode destinations, so it never runs. */
  addIntegrationMiddleware(fn: unknown): this;
  /** The visitor's consent decision: category names to booleans (see the `consent` load option). */
  consent(preferences: Record<string, boolean>): void;
  /** The visitor opts out: the queue and the stored identity are removed, later calls refused (`opted_out`). */
  optOut(): void;
  /** Reverses `optOut`, with a new anonymous id. */
  optIn(): void;
  /** analytics.js plugins (`before`, `enrichment`, `after`, `utility`). */
  register(...plugins: Plugin[]): Promise<PluginContext>;
  /** True once `load` has run. */
  initialized: boolean;
  readonly VERSION: string;
}

/** The public API (CONTRACT section 2): the core and the helper namespaces (src/helpers.ts). */
export interface Analytics extends CoreAnalytics {
  /** One helper per ecommerce event of spec 000 section 2.7. */
  ecommerce: EcommerceHelpers;
  /** The semantic events of spec 000 section 2.6 a browser sends. */
  semantic: SemanticHelpers;
}

/** The handle `group()` returns. */
export interface Group {
  id(): string | null;
  traits(): JSONObject;
}

/** Where and when a call was made: its page and time (as the snippet recorded them, or read at the call). */
export interface CallSite {
  page: RecordedPage;
  time: number;
}

// The parts of an instance that exist once `load` ran.
interface Core {
  identity: Identity;
  env: Environment;
  integrations: JSONObject;
  owner: string;
  /** Resolves once the stored queue was read (at once while nothing may be stored: consent pending, opt-out). */
  ready: Promise<void>;
  hints?: Hints;
  /** Storage and delivery: started once storing is allowed (at load, or when consent is granted). */
  delivery?: Delivery;
  /** Starts `delivery` (once) and persists the identity. */
  open(): Delivery;
  /** The consent categories of the `consent` load option. */
  categories?: string[];
  /** The queue's bounds (held messages count too). */
  bounds: QueueBounds;
  /** Bytes a held message keeps free for the consent decision it carries when sent. */
  consentRoom: number;
}


/**
 * Creates an instance: usable at once (calls before `load` wait for it), wired call → message (context, validation)
 * → queue → scheduler (batch, deliver, retry) → transport, with the hand-off at page exit. `load` takes, besides the
 * public arguments, the calls recorded before it (they run before automatic page views start); `replay` runs a
 * recorded call with its page and time.
 */
export function createAnalytics(loadDebug?: () => Promise<DebugTools>) {
  const debugMode = createDebugMode(loadDebug);
  // A function of the page that throws is reported as an `'error'` (a throwing `'error'` handler only in debug mode).
  const pageThrew = (e: unknown, name?: string) => {
    const error = analyticsError('callback_error', `a callback or handler of the page threw: ${describe(e)}`);
    name == 'error' ? debugMode.use((tools) => tools.log('error', [error])) : report(error);
  };
  const emitter = createEmitter(pageThrew, (name, args) => debugMode.use((tools) => tools.log(name, args)));
  const safely = createGuard(pageThrew);
  const report = (e: AnalyticsError) => emitter.emit('error', e);
  // Calls refused while the queue is full are reported once per episode, with all their ids.
  const full = createEpisodes('queue_full', (n) => `${n} call(s) refused: the queue is full`, report);
  const waitingForLoad: (() => void)[] = [];
  // Source middleware and plugins: usable before `load` (a snippet's calls may add them first), which sets these.
  const transformSettings = { integrations: {} as JSONObject, timeout: DEFAULT_MIDDLEWARE_TIMEOUT };
  const transforms = createTransforms(transformSettings, report);
  // Set when a call goes on after `invoke` returned (it waits for `load`, or a middleware or plugin has it): trackLink
  // and trackForm then hold the navigation. Otherwise the call is done with when `invoke` returns: queued, held for
  // consent (waiting would not keep it), or refused.
  let deferred = false;
  // Messages that a middleware or plugin still has, and the turn of the last of them: messages are queued in call order.
  let transforming = 0;
  let inOrder: Promise<unknown> = Promise.resolve();
  // Consent and opt-out (src/consent.ts): the state, the site's last decision, and the messages held meanwhile.
  let gate: Gate = 'open';
  let preferences: Preferences | undefined;
  let held: BuiltMessage[] = [];
  let heldBytes = 0;
  // How many times what was stored was erased (opt-out, denial, withdrawal): a message a middleware had meanwhile goes.
  let erasures = 0;
  let erasedBy: 'opted_out' | 'consent_denied' = 'opted_out';
  // Whether the `ready` event was said (at load when nothing may be stored, else once the stored queue was read).
  let readySaid = false;
  // The snippet's recorded calls still to take from storage (consent pending at load: replayed from memory only).
  let takeOverLater: ((storage: boolean) => void) | undefined;
  const nextId = monotonicUlid();
  let core: Core | undefined;
  // URL of the last page message queued, so an automatic page view never repeats a page() the site made itself.
  let pagedUrl: string | undefined;
  // The snippet's recorded calls, until a `load` succeeds (see `load`).
  let recordedCalls: ((storage: boolean) => void) | undefined;
  // The context of the last call's page: most calls of a page share it.
  let lastContext:
    | {
        recorded: RecordedPage;
        connection?: string;
        hints?: Hints;
        consent?: Preferences;
        page: PageContext;
        context: MessageContext;
        contextBytes: number;
      }
    | undefined;

  const contextAt = (instance: Core, recorded: RecordedPage) => {
    const connection = connectionType(); // the network can change during a visit
    const last = lastContext;
    if (
      !last ||
      last.recorded[0] != recorded[0] ||
      last.recorded[1] != recorded[1] ||
      last.recorded[2] != recorded[2] ||
      last.connection != connection ||
      last.hints != instance.hints ||
      last.consent != preferences
    ) {
      const page = pageContext(recorded[0], recorded[1], recorded[2]);
      const built = buildContext({ env: instance.env, page, connectionType: connection, hints: instance.hints });
      // Once the site made a decision, every message carries it.
      if (preferences) built.consent = { categoryPreferences: preferences };
      // Shared by the messages of this page: frozen, so that no message (nor a handler given one) changes another.
      const context = freeze(built);
      return (lastContext = {
        recorded,
        connection,
        hints: instance.hints,
        consent: preferences,
        page,
        context,
        contextBytes: byteLength(stringify(context as JSONValue)),
      });
    }
    return last;
  };

  // A promise the page may ignore: a rejection it never looks at is no unhandled rejection (`await` still throws).
  const handled = <T>(p: Promise<T>) => (p.catch(() => {}), p);

  const refuse = (error: AnalyticsError, callback?: Callback) => {
    report(error);
    safely(callback, error);
    return refused<CallResult>(error);
  };

  function invoke(type: MessageType, args: unknown[], site?: CallSite): Promise<CallResult> {
    // Found before normalise runs, so arguments it refuses still reach the callback (normalise finds the same one).
    const callback = args.find(isFunction) as Callback | undefined;
    if (!core && typeof window == 'undefined') return refuse(analyticsError('not_loaded', 'svc-analytics runs in a browser only'), callback);
    // The page and time of the call itself, also for a call that waits for `load`.
    const at = site || { page: [location.href, document.title, document.referrer] as RecordedPage, time: Date.now() };
    if (!core) return (deferred = true), handled(new Promise((res, rej) => waitingForLoad.push(() => invoke(type, args, at).then(res, rej))));
    const instance = core;
    // Refused before anything is built: nothing of it is kept.
    const closed = shut(type, callback);
    if (closed) return closed;
    let built: BuiltMessage | AnalyticsError;
    try {
      const { page, context, contextBytes } = contextAt(instance, at.page);
      const id = instance.identity;
      built = buildMessage({
        type,
        call: normalise(type, args),
        visitor: { anonymousId: id.anonymousId(), userId: id.userId(), traits: id.traits(), groupId: id.groupId(), groupTraits: id.groupTraits() },
        page,
        context,
        contextBytes,
        integrations: instance.integrations,
        messageId: nextId(at.time),
        time: at.time,
      });
    } catch (e) {
      built = (e as AnalyticsError).code ? (e as AnalyticsError) : analyticsError('invalid_arguments', String(e));
    }
    if (built instanceof Error) return refuse(built, callback);
    const { message } = built;
    if (type == 'page') pagedUrl = message.properties!.url;
    // What persists is the call's sanitised data (a cycle or a function never reaches storage), before source
    // middleware and plugins change what is sent, as analytics.js.
    if (type == 'identify') instance.identity.identify(message.userId, message.traits!);
    if (type == 'group') instance.identity.group(message.groupId!, message.traits!);
    if (!transforms.active()) return store(instance, type, built, callback);
    // Source middleware and plugins see the message first; what they pass on is checked again, then queued, unless
    // what was stored was erased meanwhile (an opt-out, a denial: even if reversed since, this message goes too).
    const erasure = erasures;
    const finish = (out: Message | AnalyticsError) => {
      const checked = out instanceof Error ? out : checkMessage(message, out);
      if (erasure != erasures) return refused<CallResult>(safelyRefused(analyticsError(erasedBy, `${type}: discarded by an opt-out or a denial of consent`, [message.messageId]), callback));
      // (built before a decision that came meanwhile: it carries it)
      if (!(checked instanceof Error)) return store(instance, type, withDecision(checked), callback);
      // (a middleware or plugin that threw was reported where it ran; one that dropped the message is not an error)
      if (!(out instanceof Error)) report(checked);
      return refused<CallResult>(safelyRefused(checked, callback));
    };
    let out: Message | AnalyticsError | Promise<Message | AnalyticsError>;
    try {
      out = transforms.run(message);
    } catch (e) {
      // (a page object read outside its function: a getter of a payload that throws)
      out = analyticsError('middleware_error', `a source middleware or plugin passed on what cannot be read: ${describe(e)}`, [message.messageId]);
      report(out);
    }
    // Every step answered at once, and no earlier message is still on its way: queued now.
    if (!(out instanceof Promise) && !transforming) return finish(out);
    // Otherwise queued in call order, after every earlier message that a middleware or plugin still has.
    deferred = true;
    transforming++;
    const turn = inOrder.then(() => out);
    const result = handled(turn.then(finish));
    // (runs after `finish`: the next message's turn comes once this one is queued)
    const done = () => void transforming--;
    inOrder = turn.then(done, done);
    return result;
  }

  // A refusal's callback, guarded; returns the error.
  const safelyRefused = (error: AnalyticsError, callback?: Callback) => (safely(callback, error), error);
  // The refusal of a call made while the visitor opted out or denied consent (not reported: it is what they asked).
  const shut = (type: MessageType, callback?: Callback) =>
    gate == 'out' || gate == 'denied'
      ? refused<CallResult>(safelyRefused(gate == 'out' ? analyticsError('opted_out', `${type}: the visitor opted out`) : analyticsError('consent_denied', `${type}: consent was denied`), callback))
      : undefined;

  // Puts a message in the queue: an AnalyticsError (queue_full), or a promise that resolves once it is stored.
  function enqueue(instance: Core, { message, bytes }: BuiltMessage) {
    const delivery = instance.delivery!;
    const stored = delivery.queue.add({ id: message.messageId, message, bytes, queuedAt: Date.now(), attempts: 0, owner: instance.owner });
    if (stored instanceof Error) full.add(stored.messageIds);
    // The scheduler hears of it at once: a request may leave while IndexedDB still writes (a message leaves the
    // queue only after a 2xx, and one delivered before its write is never written: see queue.ts `removed`).
    else delivery.scheduler.notify();
    return stored;
  }

  // Holds a message for consent, within the queue's bounds, and with room left for the decision it will carry.
  function hold(instance: Core, built: BuiltMessage): Promise<void> | AnalyticsError {
    const { bounds, consentRoom } = instance;
    const id = built.message.messageId;
    if (built.bytes + consentRoom > MESSAGE_LIMIT) {
      const error = analyticsError('message_too_large', `message is ${built.bytes} bytes and needs room for its consent decision, over the ${MESSAGE_LIMIT} limit`, [id]);
      report(error);
      return error;
    }
    if (held.length >= bounds.maxCount || heldBytes + built.bytes > bounds.maxBytes) {
      full.add([id]);
      return analyticsError('queue_full', 'the queue is full', [id]);
    }
    held.push(built);
    heldBytes += built.bytes;
    return Promise.resolve();
  }

  // (the gate was checked by `invoke`; an opt-out or denial while a middleware had the message, by `finish`)
  function store(instance: Core, type: MessageType, built: BuiltMessage, callback?: Callback): Promise<CallResult> {
    // Consent pending: held in memory (the promise resolves now), queued when consent is granted.
    const stored = gate == 'pending' ? hold(instance, built) : enqueue(instance, built);
    if (stored instanceof Error) return refused(safelyRefused(stored, callback));
    const { message } = built;
    // (never rejects: a queue that cannot store keeps the message in memory)
    return stored.then(() => {
      // The page gets a copy: what it does with it never changes what is stored and sent (or its measured size).
      const event = copyJSON(message);
      const result: CallResult = { event };
      safely(callback, result);
      emitter.emit(type, ...EVENT_ARGS[type].map((k) => event[k]), result);
      transforms.after(event);
      return result;
    });
  }

  // Calls that change state or read it wait for `load` like the others, keeping their order.
  // On a server (no window) nothing ever loads: `server` runs at once instead (ready/flush settle), else nothing waits.
  const whenLoaded = (fn: (instance: Core) => void, server?: () => void) =>
    core ? fn(core) : typeof window == 'undefined' ? server?.() : waitingForLoad.push(() => fn(core!));

  /**
   * Starts the instance (never throws into the page: a failure to start is reported like any other error). `recorded`
   * runs the calls made before the bundle came (the snippet's), right after the instance is up and before automatic
   * page views start, so that they keep their order; a `load` that fails keeps them for the next one.
   */
  function load(writeKey: string, options?: LoadOptions, recorded?: (storage: boolean) => void) {
    if (recorded) recordedCalls = recorded;
    try {
      if (core || typeof window == 'undefined') return; // once only
      if (!writeKey || typeof writeKey != 'string') return report(analyticsError('invalid_arguments', 'load: a writeKey is required'));
      options = options || {};
      if (options.debug) debugMode.set(true);
      core = start(writeKey, options);
    } catch (e) {
      return report(analyticsError('invalid_arguments', `load failed: ${describe(e)}`));
    }
    api.initialized = true;
    const replayRecorded = recordedCalls;
    recordedCalls = undefined;
    // While nothing may be stored, this page's recorded calls run from memory; other pages' stored ones wait for a grant.
    if (gate != 'open') takeOverLater = replayRecorded;
    try {
      replayRecorded?.(gate == 'open');
    } catch {
      // each recorded call is guarded where it runs; the take-over itself never throws into the page
    }
    waitingForLoad.splice(0).forEach((f) => f());
    if (options.trackPageViews) trackPageViews((page) => void (page[0] != pagedUrl && invoke('page', [], { page, time: Date.now() })));
  }

  // Creates the stages and wires them.
  function start(writeKey: string, options: LoadOptions): Core {
    // The testing kit's override (svc-analytics/playwright), read once here: it points every page of a test at the
    // kit's collector, whatever `apiHost` the page names. Test-only; set before the page's scripts run.
    const test = (window as any).__svcAnalyticsTest;
    const settings = resolve(test && typeof test.apiHost == 'string' ? { ...options, apiHost: test.apiHost } : options);
    // The kit flushes every instance of the page before a `.not` check (an npm app keeps its own).
    try {
      if (test && typeof test == 'object') Array.isArray((test.instances ||= [])) && test.instances.push(api);
    } catch {
      // not the kit's object (an element the page's HTML named so): ignored
    }
    // A path is on the page's own origin, whatever a <base href> says (fetch and sendBeacon resolve against it).
    if (settings.url[0] == '/') settings.url = location.origin + settings.url;
    transformSettings.integrations = freeze(settings.integrations);
    transformSettings.timeout = settings.middlewareTimeout;
    if (settings.ignored.length) report(analyticsError('invalid_arguments', `load: integrations ${settings.ignored} ignored: the API takes true or false`));
    const owner = uuid();
    // Nothing is written before the gate opens: the identity is read, and kept in memory.
    const identity = createIdentity({ storage: options.storage, cookie: options.cookie, persist: false });
    const consent = options.consent;
    const categories = consent && Array.isArray(consent.categories) ? consent.categories.map(String) : undefined;
    const stored = identity.optedOut();
    // GPC counts as an opt-out unless the visitor opted in on this site (https://privacycg.github.io/gpc-spec/)
    gate = stored ?? (options.respectGPC === true && (navigator as any).globalPrivacyControl === true) ? 'out' : categories ? 'pending' : 'open';
    const instance: Core = {
      identity,
      env: readEnvironment(),
      integrations: transformSettings.integrations,
      owner,
      ready: Promise.resolve(),
      categories,
      bounds: settings.bounds,
      // `,"consent":{"categoryPreferences":{...}}` with every listed category, and 200 bytes for others
      consentRoom: 240 + byteLength(stringify((categories || []).map((c) => [c, false]) as unknown as JSONValue)),
      open: () => instance.delivery || (instance.delivery = deliver(instance, writeKey, settings)),
    };
    if (options.highEntropyHints) highEntropyHints().then((hints) => (instance.hints = hints));
    // An opt-out (or opt-in) in another tab of the site applies here at once: localStorage tells every other page
    // (https://html.spec.whatwg.org/multipage/webstorage.html#the-storage-event).
    addEventListener('storage', (e) => {
      if (e.key != KEYS.optOut) return;
      const out = identity.optedOut();
      if (out && gate != 'out') enter(instance, 'out');
      if (out === false && gate == 'out') {
        identity.restore(); // the new anonymous id that tab made
        gate = 'pending';
        enter(instance, decide(categories, preferences, 'pending'));
      }
    });
    if (gate == 'open') instance.open();
    else {
      if (gate == 'out') eraseStored(instance);
      readySaid = true;
      setTimeout(() => emitter.emit('ready'));
    }
    return instance;
  }

  // Storage and delivery (src/delivery/start.ts); `ready` once the stored queue was read.
  function deliver(instance: Core, writeKey: string, settings: ReturnType<typeof resolve>): Delivery {
    const delivery = startDelivery({ ...settings, owner: instance.owner, writeKey, identity: instance.identity, open: () => gate == 'open', report, emit: emitter.emit });
    instance.ready = delivery.ready.then(() => {
      // (a page that was consent pending said `ready` at load)
      if (!readySaid) emitter.emit('ready');
      readySaid = true;
      delivery.scheduler.notify();
    });
    return delivery;
  }

  // Removes what the library stored: the queue (this tab's and the store), the stored identity, the stub's buffer
  // and the hand-off note. Memory keeps the identity for this page.
  function eraseStored(instance: Core, by: typeof erasedBy = 'opted_out') {
    held = [];
    heldBytes = 0;
    erasures++;
    erasedBy = by;
    instance.identity.forget();
    if (instance.delivery) instance.delivery.queue.clear(), instance.delivery.scheduler.erased();
    else clearStored();
    for (const key of [__BUFFER_KEY__, NOTE_KEY])
      try {
        localStorage.removeItem(key);
      } catch {
        // storage blocked: nothing there
      }
  }

  // The visitor opts back in (nothing to do, and nothing written, unless opted out: by optOut() or GPC).
  function optIn(instance: Core) {
    if (gate != 'out') return;
    instance.identity.setOptOut(false);
    instance.identity.reset();
    gate = 'pending';
    enter(instance, decide(instance.categories, preferences, 'pending'));
  }

  // Moves to a new consent or opt-out state (src/consent.ts), doing what it asks.
  function enter(instance: Core, next: Gate) {
    const before = gate;
    gate = next;
    // A denial on this page is a withdrawal of any grant an earlier page stored (decisions are not remembered
    // across pages): what was stored goes, and what the held calls did to the identity in memory is undone.
    if (next == 'out' || next == 'denied' || (next == 'pending' && before == 'open')) eraseStored(instance, next == 'out' ? 'opted_out' : 'consent_denied');
    if (next == 'denied') instance.identity.restore();
    if (next != 'open') return;
    instance.open();
    instance.identity.persist();
    // The held messages go in call order, with the decision in their context, before the stub's recorded calls
    // still to take from storage (a recorded consent() that granted came after the held ones).
    const release = held;
    held = [];
    heldBytes = 0;
    for (const built of release) enqueue(instance, withDecision(built));
    const later = takeOverLater;
    takeOverLater = undefined;
    later?.(true);
  }

  // A message with the current decision in its context (it was built before it). Held messages kept room for the
  // listed categories: a decision too big for that is narrowed to them, so a call whose promise resolved is sent.
  function withDecision(built: BuiltMessage): BuiltMessage {
    const { message } = built;
    if (!preferences || (message.context.consent as { categoryPreferences?: unknown } | undefined)?.categoryPreferences == preferences) return built;
    const listed = core?.categories;
    for (const categoryPreferences of [preferences, listed ? Object.fromEntries(listed.map((c) => [c, preferences![c] === true])) : {}]) {
      const changed = { ...message, context: { ...message.context, consent: { categoryPreferences } } as MessageContext } as Message;
      const bytes = byteLength(stringify(changed as unknown as JSONValue));
      if (bytes <= MESSAGE_LIMIT) return { message: changed, bytes };
    }
    return built;
  }

  // The helpers' calls: a recorded one passes its page and time on.
  const track: TrackFn = (event, props, options, cb, site) => invoke('track', [event, props, options, cb], site as CallSite | undefined);
  const userId = () => core?.identity.userId() ?? null;
  const groupHandle = {
    id: () => core?.identity.groupId() ?? null,
    traits: () => core?.identity.groupTraits() ?? {},
  };
  const autotrack = createAutotrack({
    track(event, properties, options) {
      deferred = false;
      const done = invoke('track', [event, properties, options]);
      return { queued: !deferred, done };
    },
    report,
    timeout: () => transformSettings.timeout,
  });
  // analytics.js methods that return the instance.
  const chain =
    <A extends unknown[]>(fn: (...args: A) => unknown) =>
    (...args: A) => (fn(...args), api);
  const api = {
    load: (writeKey: string, options?: LoadOptions) => load(writeKey, options),
    reset: () => whenLoaded((instance) => (instance.identity.reset(), emitter.emit('reset'))),
    setAnonymousId: (id: string) => whenLoaded((instance) => id && instance.identity.setAnonymousId(String(id))),
    user: () => ({
      id: userId,
      anonymousId: () => core?.identity.anonymousId() ?? '',
      traits: () => core?.identity.traits() ?? {},
    }),
    ready: (cb?: () => void) =>
      new Promise<void>((res) => whenLoaded((instance) => instance.ready.then(res), res)).then(() => safely(cb)),
    flush: () => new Promise<void>((res) => whenLoaded((instance) => instance.ready.then(() => instance.delivery?.scheduler.flush()).then(res), res)),
    consent: (value: unknown) =>
      whenLoaded((instance) => {
        const decision = preferencesOf(value);
        if (!decision) return report(analyticsError('invalid_arguments', 'consent: an object of category names to booleans is required'));
        preferences = freeze(decision);
        if (gate != 'out') enter(instance, decide(instance.categories, preferences, gate));
      }),
    optOut: () =>
      whenLoaded((instance) => {
        instance.identity.setOptOut(true);
        enter(instance, 'out');
      }),
    optIn: () => whenLoaded(optIn),
    on: chain(emitter.on),
    off: chain(emitter.off),
    once: chain((name: EventName, handler: (...args: any[]) => void) => {
      const once = (...args: unknown[]) => (emitter.off(name, once), handler(...args));
      emitter.on(name, once);
    }),
    debug: chain((on = true) => debugMode.set(!!on)),
    pageview: (url: string) => invoke('page', [{ path: url }]),
    trackLink: chain(autotrack.trackLink),
    trackClick: chain(autotrack.trackLink),
    trackForm: chain(autotrack.trackForm),
    trackSubmit: chain(autotrack.trackForm),
    addSourceMiddleware: chain(transforms.use),
    addDestinationMiddleware: chain(() => {}),
    addIntegrationMiddleware: chain(() => {}),
    register: (...plugins: Plugin[]) => transforms.register(plugins, api),
    initialized: false,
    VERSION: '__VERSION__',
  } as unknown as CoreAnalytics; // the six call methods are added below, from EVENT_ARGS
  for (const type of Object.keys(EVENT_ARGS) as MessageType[]) (api as any)[type] = (...a: unknown[]) => invoke(type, a);
  // group() with no arguments reads the group, as analytics.js.
  api.group = ((...a: unknown[]) => (a.length ? invoke('group', a) : groupHandle)) as CoreAnalytics['group'];

  /** Runs a call the snippet recorded (`ecommerce.orderCompleted` style names included) with its page and time. */
  function replay(method: string, args: unknown[], page: RecordedPage, time: number) {
    const site = { page, time };
    try {
      if (method in EVENT_ARGS && (args.length || method != 'group')) return invoke(method as MessageType, args, site);
      if (method == 'pageview') return invoke('page', [{ path: args[0] }], site);
      const [space, name] = method.split('.');
      const target = name ? (api as any)[space] : api;
      const fn = target && target[name || space];
      // A helper takes the call's site after its three arguments.
      if (typeof fn == 'function') return name ? fn(args[0], args[1], args[2], site) : fn.apply(api, args);
    } catch {
      // a call that cannot be replayed is dropped, as the page's own call would have failed
    }
  }
  // What the helper namespaces need of this instance (src/helpers.ts adds them: the bundle and the npm entry do,
  // `svc-analytics/core` does not).
  const helperDeps: HelperDeps = {
    track,
    userId,
    report,
    call: safely,
    check: (event, properties) => debugMode.use((tools) => tools.checkEcommerce(event, properties)),
  };
  return { api, load, replay, helperDeps };
}

/** What the ecommerce and semantic helpers use of an instance: its `track`, user, error report and guard. */
export interface HelperDeps {
  /** The core's `track`: a helper's call settles exactly like `track`, and a recorded one keeps its page and time. */
  track: TrackFn;
  userId(): string | null;
  report(error: AnalyticsError): void;
  /** Calls a function of the page through the library's guard (it never throws into the page). */
  call(fn: Callback | undefined, ...args: unknown[]): void;
  /** Hears of every ecommerce call first: in debug mode it checks the properties against the spec. */
  check(event: string, properties: unknown): void;
}

// The message fields analytics.js passes to `on(type)` handlers, in order.
const EVENT_ARGS: Record<MessageType, (keyof Message)[]> = {
  track: ['event', 'properties'],
  page: ['category', 'name', 'properties'],
  screen: ['category', 'name', 'properties'],
  identify: ['userId', 'traits'],
  group: ['groupId', 'traits'],
  alias: ['userId', 'previousId'],
};
