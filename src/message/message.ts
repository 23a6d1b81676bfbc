import type { JSONObject, JSONValue, Message, MessageContext, MessageType, PageContext } from './types';
import type { AnalyticsError } from './errors';
import type { NormalisedCall } from './call';
import { analyticsError, describe } from './errors';
import { merge, wireUrl } from './context';
import { BATCH_LIMIT, byteLength, MESSAGE_LIMIT, ownKeys, sanitize, stringify, timestamp, tooLarge } from './validate';
import { isObject } from './boundary';

/** The visitor as stored when the call is made. */
export interface Visitor {
  anonymousId: string;
  userId: string | null;
  traits: JSONObject;
  /** The group of the last group call, if any. */
  groupId?: string | null;
  groupTraits?: JSONObject;
}

/** Everything a message is made of, each read at call time. */
export interface MessageParts {
  type: MessageType;
  call: NormalisedCall;
  visitor: Visitor;
  /** The page of the call (recorded by the snippet, or read by the bundle). */
  page: PageContext;
  /** The automatic context for that page (see `buildContext`); not changed here. */
  context: MessageContext;
  /** Serialised bytes of `context`, when known (most calls of a page share one context: measured once). */
  contextBytes?: number;
  /** The load-time default `integrations`. */
  integrations: JSONObject;
  messageId: string;
  /** ms since epoch: the time of the call. */
  time: number;
  /**
   * A source middleware or plugin sees the message first (CONTRACT section 2: before it is validated): `integrations`
   * and the size are checked after it (`checkMessage`), and the copy stops at the body limit rather than 32 KB.
   */
  lenient?: boolean;
}

/** A message ready to queue, with its serialised size in bytes. */
export interface BuiltMessage {
  message: Message;
  bytes: number;
}

const OBJECTS = ['properties', 'traits'];

// `url` and `referrer` of page properties or `context.page` as they go on the wire (CONTRACT section 4: see `wireUrl`).
const wireUrls = (o: JSONObject | undefined) => {
  for (const k of ['url', 'referrer']) if (o && typeof o[k] == 'string' && wireUrl(o[k]) != o[k]) o[k] = wireUrl(o[k]);
};

/** Whether `sanitize` stopped for a copy over the message limit (anything else thrown is the page's data failing). */
export const over = (e: unknown) => (e as AnalyticsError | undefined)?.code == 'message_too_large';

/**
 * The traits an identify call leaves, as analytics.js does: merged over the stored ones for the same (or no new)
 * user, replacing them for another user.
 */
export function identifyTraits(visitor: Visitor, userId: string | undefined, traits: JSONObject): JSONObject {
  return !userId || visitor.userId == null || visitor.userId == userId ? { ...visitor.traits, ...traits } : traits;
}

/** The traits a group call leaves, as analytics.js does: merged over the stored ones of the same group, else its own. */
export function groupTraits(stored: { groupId?: string | null; groupTraits?: JSONObject }, groupId: string, traits: JSONObject): JSONObject {
  return stored.groupId == groupId ? { ...stored.groupTraits, ...traits } : traits;
}

/**
 * A message built but not yet measured (see `measure`): `contextBytes` when its context is the shared automatic one,
 * measured once.
 */
export interface Draft {
  message: Message;
  contextBytes?: number;
}

/** `draft` then `measure`: the message, measured, or why the API would refuse it. */
export function buildMessage(parts: MessageParts): BuiltMessage | AnalyticsError {
  const d = draft(parts);
  return d instanceof Error ? d : measure(d);
}

/**
 * Turns a normalised call into the message the API receives (to be measured by `measure`); pure. The caller's data is copied as plain JSON data
 * (a snapshot: changing the objects after the call changes nothing) and checked against what the API accepts
 * (spec 000 sections 2.3-2.5 and 8): `properties`, `traits` and `context` are objects, `integrations` maps names to
 * booleans, the timestamp is an ISO 8601 date-time, and the whole is at most 32 KB. Returns the error instead of
 * throwing (a getter or `toJSON` of the page that throws becomes `invalid_payload`).
 */
export function draft(parts: MessageParts): Draft | AnalyticsError {
  const { type, visitor, page } = parts;
  const { fields, options } = parts.call;
  let ts: string | undefined, clean: JSONObject, callContext: JSONValue | undefined, callIntegrations: JSONValue | undefined;
  try {
    ts = timestamp(options.timestamp == null ? parts.time : options.timestamp);
  } catch {
    // an object without a primitive value, a Symbol: no date either
  }
  if (!ts) return analyticsError('invalid_arguments', `${type}: options.timestamp must be a Date or an ISO 8601 date-time (years 0000-9999)`);
  const max = parts.lenient ? BATCH_LIMIT : MESSAGE_LIMIT;
  try {
    clean = sanitize(fields, max) as JSONObject;
    callContext = options.context == null ? undefined : sanitize(options.context, max);
    callIntegrations = options.integrations == null ? undefined : sanitize(options.integrations, max);
  } catch (e) {
    return over(e) ? tooLarge([parts.messageId]) : analyticsError('invalid_payload', `could not read the call's data: ${describe(e)}`);
  }
  for (const k of OBJECTS) if (k in fields && !isObject(clean[k])) return analyticsError('invalid_payload', `${k} must be an object`);
  if (callContext !== undefined && !isObject(callContext)) return analyticsError('invalid_payload', 'context must be an object');
  // (without the call's own, the load-time defaults as they are: the caller freezes them)
  const integrations = callIntegrations === undefined ? parts.integrations : { ...parts.integrations, ...(callIntegrations as JSONObject) };
  for (const k of ownKeys(integrations))
    if (typeof integrations[k] != 'boolean' && !parts.lenient) return analyticsError('invalid_payload', `integrations.${k} must be true or false (spec 000 section 2.3)`);

  let automatic = parts.context;
  if (type == 'page') {
    // page() properties carry the page facts, and the properties the caller gives replace them in `context.page`
    // too (the caller's `options.context`, merged below, wins over both)
    clean.properties = { ...page, ...(clean.name && { name: clean.name }), ...(clean.category && { category: clean.category }), ...clean.properties };
    // (URLs the caller gives go on the wire as the page's own do: without a fragment that carries parameters)
    wireUrls(clean.properties);
    let pageFacts: PageContext | undefined;
    for (const k of ownKeys(page))
      if (typeof clean.properties[k] == 'string' && clean.properties[k] != page[k]) (pageFacts ||= { ...automatic.page })[k] = clean.properties[k];
    if (pageFacts) automatic = { ...automatic, page: pageFacts };
  } else if (type == 'screen' && clean.name) clean.properties = { name: clean.name, ...clean.properties };
  else if (type == 'identify') clean.traits = identifyTraits(visitor, clean.userId, clean.traits);
  else if (type == 'group') {
    if (!(clean.groupId ||= visitor.groupId)) return analyticsError('invalid_arguments', 'group: a groupId (string) is required');
    clean.traits = groupTraits(visitor, clean.groupId, clean.traits);
  }
  else if (type == 'alias' && !clean.previousId) clean.previousId = visitor.userId || visitor.anonymousId;
  const userId = type == 'identify' ? clean.userId || visitor.userId : visitor.userId;
  const rest = {
    type,
    ...clean,
    messageId: parts.messageId,
    timestamp: ts,
    anonymousId: options.anonymousId ? String(options.anonymousId) : visitor.anonymousId,
    ...(userId && type != 'alias' && { userId }),
    integrations,
  };
  // Without a context of the call's own, messages share the automatic context, which the caller freezes (see
  // `freeze`: none can change another's).
  const context = merge(automatic, callContext);
  // (the automatic page facts are clean already, and frozen: only what the caller gave changes)
  if (context != automatic) wireUrls(context.page);
  const message = rest as Message;
  message.context = context;
  return { message, contextBytes: context == parts.context ? parts.contextBytes : undefined };
}

/**
 * A drafted message with its serialised size in bytes, or `message_too_large` over the 32 KB limit. `context` comes
 * last: serialised, the message is the rest with `,"context":{...}` before its closing brace, so a context measured
 * once is not serialised again (the rest is measured with `context` undefined, which JSON leaves out).
 */
export function measure({ message, contextBytes }: Draft): BuiltMessage | AnalyticsError {
  let bytes: number;
  if (contextBytes == null) bytes = byteLength(stringify(message));
  else {
    const { context } = message;
    message.context = undefined!;
    bytes = byteLength(stringify(message)) + 11 + contextBytes;
    message.context = context;
  }
  if (bytes > MESSAGE_LIMIT) return tooLarge([message.messageId], bytes);
  return { message, bytes };
}
