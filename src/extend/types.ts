import type { JSONObject, Message } from '../message/types';

// The public types of the extension points: source middleware, plugins, and the elements trackLink/trackForm take.

/** What an analytics.js source middleware receives. */
export interface MiddlewareParams {
  /** The message (`payload.obj`), with analytics.js's facade getters (`payload.type()`, `payload.event()`, ...). */
  payload: Payload;
  /** The load-time default `integrations`. */
  integrations: JSONObject;
  /** Passes the message on (`next(payload)`); a middleware that does not call it drops the message. */
  next: (payload?: Payload | null) => void;
}
export type SourceMiddleware = (params: MiddlewareParams) => unknown;

/** `payload` of a source middleware: `obj` is the message. */
export interface Payload {
  obj: Message;
  rawEvent(): Message;
  [getter: string]: unknown;
}

/** The context a plugin hook receives and returns: `event` is the message. */
export interface PluginContext {
  id: string;
  event: Message;
  /** Sets the value at a dotted path of the message (`'properties.plan'`), as analytics.js. */
  updateEvent(path: string, value: unknown): Message;
  /** Cancels the message: it is not queued (from a `before` or `enrichment` hook). */
  cancel(error?: unknown): never;
  log(level?: string, message?: string, extras?: unknown): void;
  stats: { increment(...args: unknown[]): void; gauge(...args: unknown[]): void };
}

/** A plugin's hook for one message type. */
export type Hook = (ctx: PluginContext) => unknown;

/** An analytics.js plugin. `destination` plugins are accepted and never run: there are no device-mode destinations. */
export interface Plugin {
  name: string;
  type: 'before' | 'enrichment' | 'after' | 'utility' | 'destination';
  version?: string;
  isLoaded?: () => boolean;
  load?: (ctx: PluginContext, analytics: unknown) => unknown;
  track?: Hook;
  page?: Hook;
  identify?: Hook;
  group?: Hook;
  alias?: Hook;
  screen?: Hook;
}

/** What an analytics.js destination middleware receives (accepted for parity: there are no device-mode destinations). */
export interface DestinationMiddlewareParams {
  payload: Payload;
  /** The destination's name. */
  integration: string;
  next: (payload: Payload | null) => void;
}
/** An analytics.js destination middleware (`addDestinationMiddleware(name, ...fns)`). */
export type DestinationMiddleware = (params: DestinationMiddlewareParams) => unknown;

/** What trackLink/trackForm take: an element, an array, a NodeList, or a jQuery object. */
export type Elements = Element | ArrayLike<Element> | { toArray(): Element[] } | null | undefined;
/** A value, or a function of the element that gives it. */
export type OfElement<T> = T | ((element: Element) => T);

