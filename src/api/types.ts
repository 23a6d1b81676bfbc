import type { JSONObject } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import type { AnalyticsEvents, Callback, CallOptions, CallResult, EventName, LoadOptions, Properties, User } from '../types';
import type { DestinationMiddleware, Elements, OfElement, Plugin, PluginContext, SourceMiddleware } from '../extend/types';

// The public API's types (CONTRACT section 2) and what the stages that plug into it share; a leaf: types only.

declare global {
  /**
   * A tracking plan's types (CONTRACT section 7): empty, unless the project includes the declaration file that
   * `svc-analytics plan types` writes, which fills it. Then `track`, `identify` and `group` are typed by the plan.
   */
  // (global, not a module's: one file types `svc-analytics`, `svc-analytics/core` and `window.analytics` alike)
  interface SvcAnalyticsTrackingPlan {}
}

type Plan = SvcAnalyticsTrackingPlan;
/** The event names `track` takes: any string; with a plan's types, the plan's (any string if it allows unplanned events). */
export type TrackEventName = Plan extends { events: infer E }
  ? Plan extends { unplannedEvents: 'allow' }
    ? Extract<keyof E, string> | (string & {})
    : Extract<keyof E, string>
  : string;
/** The properties of the `track` of event `E`: any object; with a plan's types, the plan's for that event. */
export type TrackProperties<E extends string> = Plan extends { events: infer M } ? (E extends keyof M ? M[E] : Properties) : Properties;
/** The traits of `identify`: any object; with a plan's types, the plan's. */
export type IdentifyTraits = Plan extends { identify: infer T } ? T : Properties;
/** The traits of `group`: any object; with a plan's types, the plan's. */
export type GroupTraits = Plan extends { group: infer T } ? T : Properties;
// What follows the event: the analytics.js shapes, with the properties required when the plan requires any.
type TrackArgs<P> = {} extends P
  ? [properties?: P | null, options?: CallOptions | null, callback?: Callback] | [properties: P | null | undefined, callback: Callback] | [callback: Callback]
  : [properties: P, options?: CallOptions | null, callback?: Callback] | [properties: P, callback: Callback];

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
  identify(userId?: string | null, traits?: IdentifyTraits | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  identify(userId: string | null, traits: IdentifyTraits | null | undefined, callback: Callback): Promise<CallResult>;
  identify(userId: string | null, callback: Callback): Promise<CallResult>;
  identify(traits: IdentifyTraits, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  identify(traits: IdentifyTraits, callback: Callback): Promise<CallResult>;
  identify(callback: Callback): Promise<CallResult>;
  /** `track(event, properties?, options?, callback?)`; typed by the tracking plan when its types are included. */
  track<E extends TrackEventName>(event: E, ...args: TrackArgs<TrackProperties<E>>): Promise<CallResult>;
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
  group(groupId: string, traits?: GroupTraits | null, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  group(groupId: string, traits: GroupTraits | null | undefined, callback: Callback): Promise<CallResult>;
  group(groupId: string, callback: Callback): Promise<CallResult>;
  /** `group(traits, options?, callback?)`: the stored group's traits (refused when there is no stored group). */
  group(groupId: null | undefined, traits: GroupTraits, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
  group(traits: GroupTraits, options?: CallOptions | null, callback?: Callback): Promise<CallResult>;
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
  addDestinationMiddleware(integrationName: string, ...middlewares: DestinationMiddleware[]): this;
  /** Accepted for analytics.js parity; there are no device-mode destinations, so it never runs. */
  addIntegrationMiddleware(middleware: SourceMiddleware): this;
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

/**
 * The `track` a helper calls: the core's own, so helpers settle exactly like `track`. `site` is the page and time of
 * a call the snippet recorded (a helper passes on what it got after its own three arguments).
 */
export type TrackFn = (
  event: string,
  properties: object | undefined,
  options?: CallOptions,
  callback?: Callback,
  site?: CallSite,
  check?: CallCheck,
) => Promise<CallResult>;

/** A check of a call made when it runs (after `load`): the error that refuses it, or undefined. */
export type CallCheck = () => AnalyticsError | undefined;

/** What the ecommerce and semantic helpers use of an instance: its `track`, user id, refusal path and checker. */
export interface HelperDeps {
  /** The core's `track`: a helper's call settles exactly like `track`, and a recorded one keeps its page and time. */
  _track: TrackFn;
  _userId(): string | null;
  /** Hears of every ecommerce call first: in debug mode it checks the properties against the spec. */
  _check(event: string, properties: unknown): void;
}

