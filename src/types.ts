// The public API's types (what `svc-analytics` exports besides the API itself, src/api/types.ts): call options and
// results, load options, the error shape, the events `on()` hears. Every room imports them from here; the message's
// own shape is message/types.ts.
import type { JSONObject, Message } from './message/types';
import type { AnalyticsError } from './message/errors';

/** Options accepted by every call (CONTRACT section 2). */
export interface CallOptions {
  /** The message's `timestamp`. @default the time of the call */
  timestamp?: Date | string;
  /** Merged over the load-time `integrations`. @default {} */
  integrations?: Record<string, boolean>;
  /** Deep-merged over the automatic context; the caller wins. */
  context?: JSONObject;
  /** Overrides the anonymous id for this call only. */
  anonymousId?: string;
  /** `group` only: the object type, a string holding an integer. @default absent (the service assumes "1") */
  objectTypeId?: string;
}

/** What a call's promise resolves with (and its callback receives), as in analytics.js. */
export interface CallResult {
  /** The message exactly as it was queued (a copy: changing it changes nothing stored or sent). */
  event: Message;
}

/** Called once the call is durably queued (with a CallResult) or refused (with an AnalyticsError). */
export type Callback = (result: CallResult | AnalyticsError) => void;

/** Where identity (anonymous id, user id, traits) persists. */
export type IdentityStorage = 'cookie' | 'localStorage' | 'memory';

/** Options of `analytics.load(writeKey, options)` and `AnalyticsBrowser.load`. */
export interface LoadOptions {
  /** Base URL of the Data Pipelines API, or a path on the page's own origin (`/ingest`, a first-party proxy); no scheme means https, a trailing `/v1` is not doubled. @default the US (or EU) host */
  apiHost?: string;
  /** `'us'` or `'eu'`; ignored when `apiHost` is given. @default 'us' */
  region?: 'us' | 'eu';
  /** Where the snippet loads the bundle from (snippet only). @default the CDN URL */
  cdnUrl?: string;
  /**
   * Flush when this many messages wait. When nothing is in flight and nothing was sent in the last `flushInterval`
   * ms, a stored message goes at once instead. @default 20
   */
  flushAt?: number;
  /** Flush this many ms after the oldest waiting message was queued (and the quiet spell before one goes at once). @default 1000 */
  flushInterval?: number;
  /** Send `page()` at load and on every same-document URL change. @default false */
  trackPageViews?: boolean;
  /** Default `integrations` of every message. @default {} */
  integrations?: Record<string, boolean>;
  /** Where identity persists: a first-party cookie mirrored to localStorage, localStorage only, or memory only. @default 'cookie' */
  storage?: IdentityStorage;
  /** Cookie settings when `storage` is `'cookie'`. */
  cookie?: {
    /** Cookie domain. @default the top registrable domain, found by probing */
    domain?: string;
    /** Lifetime in days. @default 365 */
    maxage?: number;
  };
  /** Queue bounds: a call that would pass `maxCount` or `maxBytes` is refused with `queue_full`; queued messages older than `maxAgeMs` are dropped (reported once with `expired`). */
  queue?: {
    /** @default 10000 messages */
    maxCount?: number;
    /** @default 5000000 bytes (serialised) */
    maxBytes?: number;
    /** @default 604800000 (7 days) */
    maxAgeMs?: number;
  };
  /** @deprecated Ignored: the context carries what CONTRACT section 4 lists, and no client hints. */
  highEntropyHints?: boolean;
  /** Log each call, batch and error to the console. @default false */
  debug?: boolean;
  /**
   * How long one source middleware, plugin hook or plugin `load` may take (ms); one that takes longer drops the
   * message (reported). A held trackLink/trackForm navigation waits at most this long too. @default 1000
   */
  middlewareTimeout?: number;
  /**
   * Consent-pending mode: calls are accepted and held in memory; nothing is written to cookies, localStorage or
   * IndexedDB and no request is made until `consent()` grants every category listed here.
   */
  consent?: { categories: string[] };
  /** Treat `navigator.globalPrivacyControl === true` as an opt-out. @default false */
  respectGPC?: boolean;
  /**
   * Host names of the site's other domains (a host name covers its subdomains): links and forms to them carry the
   * anonymous id for 2 minutes, in this browser only; a page loaded through such a link adopts it. @default none
   */
  linkDomains?: string[];
  /** With a first-party `apiHost` path: the site's server sets the identity cookies (`POST {apiHost}/v1/cookies`), past Safari's 7-day cap on script cookies. @default false */
  serverCookies?: boolean;
  /**
   * A tracking plan (CONTRACT section 7): the plan object, or the URL of a plan file on the page's own origin. Every
   * call is checked against it and each violation is reported as an `'error'` with code `plan_violation`; the call
   * still resolves and its message is sent. The checker is a chunk of its own, loaded only when this is given.
   * @default none: nothing is checked
   */
  plan?: object | string;
}

/** Settings of the npm entry's `AnalyticsBrowser.load(settings, options)`. */
export interface BrowserSettings {
  writeKey: string;
  /** Ignored by the npm entry (the code is already bundled); accepted for parity with the snippet. */
  cdnUrl?: string;
  /** analytics.js plugins, registered before any call runs (see `register`). */
  plugins?: unknown[];
}

/** The user handle of `analytics.user()`. */
export interface User {
  id(): string | null;
  anonymousId(): string;
  traits(): JSONObject;
}

/** Properties or traits of a call: any object (values are sanitised to JSON; see the README). */
export type Properties = Record<string, unknown>;

/** What each event of `on`/`off`/`once` passes its handler (as analytics.js for the call types). */
/** The last argument of a call's event: the call's options, as analytics.js passes them, and its message (`event`). */
export type CallEventOptions = CallOptions & CallResult;

export interface AnalyticsEvents {
  track: [event: string, properties: JSONObject, options: CallEventOptions];
  page: [category: string | undefined, name: string | undefined, properties: JSONObject, options: CallEventOptions];
  screen: [category: string | undefined, name: string | undefined, properties: JSONObject, options: CallEventOptions];
  identify: [userId: string | undefined, traits: JSONObject, options: CallEventOptions];
  group: [groupId: string, traits: JSONObject, options: CallEventOptions];
  alias: [userId: string, previousId: string, options: CallEventOptions];
  reset: [];
  ready: [];
  error: [error: AnalyticsError];
  /** Messages delivered: after a 2xx answer, or a beacon the browser accepted. */
  delivered: [messages: Message[]];
  /** A request failed and will be retried. */
  retry: [info: { status: number; delay: number; messageIds: string[] }];
}

/** Events of `on`/`off`: the call types, `'error'`, and delivery events. */
export type EventName = keyof AnalyticsEvents;
