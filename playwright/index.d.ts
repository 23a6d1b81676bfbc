// Types of svc-analytics/playwright (index.mjs): the testing kit of CONTRACT section 5.
import type {
  Expect,
  ExpectMatcherState,
  MatcherReturnType,
  PlaywrightTestArgs,
  PlaywrightTestOptions,
  PlaywrightWorkerArgs,
  PlaywrightWorkerOptions,
  TestType,
} from '@playwright/test';

/**
 * A value to match: the value itself, or an asymmetric matcher such as `expect.any(String)` or
 * `expect.stringMatching(/^FG-/)` (typed by Playwright as `Record<string, any>`).
 */
export type Matchable<T> = T | ReturnType<Expect['any']>;

/** A message as the collector received it (CONTRACT section 4). */
export interface AnalyticsMessage {
  type: 'track' | 'page' | 'screen' | 'identify' | 'group' | 'alias';
  messageId: string;
  timestamp: string;
  anonymousId?: string;
  userId?: string;
  event?: string;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
  properties?: Record<string, any>;
  traits?: Record<string, any>;
  context: Record<string, any>;
  integrations?: Record<string, boolean>;
  [field: string]: any;
}

/**
 * Which messages: strings match exactly (or an asymmetric matcher), `properties`, `traits` and `context` partially
 * and deeply (arrays in them exactly). An unknown key is an error.
 */
export interface MessageFilter {
  type?: Matchable<AnalyticsMessage['type']>;
  event?: Matchable<string>;
  name?: Matchable<string>;
  userId?: Matchable<string>;
  anonymousId?: Matchable<string>;
  groupId?: Matchable<string>;
  messageId?: Matchable<string>;
  previousId?: Matchable<string>;
  properties?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  context?: Record<string, unknown>;
}

/** One request the collector received (see collector/server.mjs, GET /_/requests). */
export interface CollectorRequest {
  id: number;
  at: number;
  method: string;
  path: string;
  status: number | null;
  bytes: number;
  contentType: string | null;
  auth: 'basic' | 'body' | 'none';
  origin: string | null;
  overLimit: false | 'batch' | 'message';
  fault: null | 'slow' | 'status' | 'poison';
  error: string | null;
  violation: null | { kind: 'over-limit' | 'auth' | 'malformed'; reason: string };
  messageIds: string[];
  retryOf: string[];
  [field: string]: any;
}

/** A message received that does not follow the tracking plan (`analyticsPlan`; CONTRACT section 7). */
export interface PlanViolationEntry {
  kind: 'plan';
  /** The id of the request that carried the message. */
  requestId: number;
  at: number;
  messageId: string;
  type: string;
  event?: string;
  /** Where in the message, as a JSON pointer: `/properties/seats`. */
  pointer: string;
  /** What the plan expected there, and what it got. */
  expected: string;
  violation: { kind: 'plan'; reason: string };
}

/** The `analytics` fixture: the test's own collector. Its methods are synchronous; awaiting them is harmless. */
export interface AnalyticsCollector {
  /** The collector's base URL, `http://127.0.0.1:<port>` (what the override points the library at). */
  readonly url: string;
  /**
   * Messages received so far, in arrival order (copies). Messages of a request answered with an error status do not
   * count until they arrive in a 2xx-answered request.
   */
  messages(filter?: MessageFilter): AnalyticsMessage[];
  /** Forgets what was received (violations are kept for the after-test check). */
  clear(): void;
  /**
   * The next `count` ingestion requests are answered with `status` (400-599) and `headers` (such as
   * `{ 'Retry-After': '1' }`), their messages not received. Replaces a failNext not yet used up.
   */
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /**
   * Requests over the size limits, with a missing or wrong write key, or with malformed messages; then, with
   * `analyticsPlan`, the messages that do not follow the tracking plan (`kind: 'plan'`).
   */
  violations(): (CollectorRequest | PlanViolationEntry)[];
  /** Every ingestion request so far, oldest first. */
  requests(): CollectorRequest[];
  /** Asks the library on every page of the context to send what it holds; resolves when they did (or after `timeoutMs`). */
  flush(timeoutMs?: number): Promise<void>;
}

/** `test.use({ analyticsOptions: { ... } })`. */
export interface AnalyticsOptions {
  /** Fail the test after it ends when `analytics.violations()` is not empty. Default `true`. */
  violations?: boolean;
  /** Accept only this write key (others are `auth` violations). Default: any key. */
  writeKey?: string | null;
}

export interface AnalyticsFixtures {
  analytics: AnalyticsCollector;
  analyticsOptions: AnalyticsOptions;
  /**
   * A tracking plan (CONTRACT section 7): a file path (from the Playwright config's directory) or the plan object.
   * Messages off the plan are violations: the test fails after it (unless `analyticsOptions.violations` is false),
   * with a message naming the event, the property and what the plan expected. Default: none.
   */
  analyticsPlan: string | object | undefined;
}

export declare const test: TestType<
  PlaywrightTestArgs & PlaywrightTestOptions & AnalyticsFixtures,
  PlaywrightWorkerArgs & PlaywrightWorkerOptions
>;

type Matcher<Args extends unknown[]> = (this: ExpectMatcherState, receiver: AnalyticsCollector, ...args: Args) => Promise<MatcherReturnType>;

/** Each polls until Playwright's expect timeout; `.not` first flushes every page, then checks. */
export interface AnalyticsMatchers {
  /** A `track` with this event and (partially, deeply) these properties. */
  toHaveTracked: Matcher<[event: Matchable<string>, properties?: Record<string, unknown>]>;
  /** A `page`: any, one whose `properties.path` is this path, or one with (partially) these properties. */
  toHavePaged: Matcher<[pathOrProperties?: Matchable<string> | Record<string, unknown>]>;
  /** An `identify`, of this user and with (partially) these traits; `toHaveIdentified({ plan: 'pro' })` checks traits only. */
  toHaveIdentified: Matcher<[userIdOrTraits?: Matchable<string> | Record<string, unknown>, traits?: Record<string, unknown>]>;
  /** A `group`, of this group and with (partially) these traits; `toHaveGrouped({ plan: 'pro' })` checks traits only. */
  toHaveGrouped: Matcher<[groupIdOrTraits?: Matchable<string> | Record<string, unknown>, traits?: Record<string, unknown>]>;
}

export declare const expect: Expect<AnalyticsMatchers>;
