import type { Message, MessageType } from './types';
import type { AnalyticsError } from './errors';
import { analyticsError, describe } from './errors';
import { over, type BuiltMessage } from './message';
import { isObject } from './boundary';
import { byteLength, MESSAGE_LIMIT, ownKeys, sanitize, stringify, timestamp, tooLarge } from './validate';

// (only what source middleware and plugins pass on is checked here: in the CDN build, this file comes with them, in
// the middleware chunk, dist/analytics.extend.min.js)

// What each type needs, besides an anonymousId or a userId (spec 000 section 2).
const REQUIRED: Partial<Record<MessageType, string>> = { track: 'event', group: 'groupId', alias: 'userId' };
const STRINGS = ['type', 'event', 'name', 'category', 'userId', 'anonymousId', 'groupId', 'previousId', 'objectTypeId'];

/**
 * Checks a message that a source middleware or a plugin passed on, as `buildMessage` checks a call; pure. Its data
 * is copied as plain JSON (see `sanitize`); it keeps the original's `messageId` and type; what the API would refuse
 * (spec 000 sections 2.3-2.5 and 8) is refused here: a missing id, event, groupId or userId, non-object
 * `properties`/`traits`/`context`, non-boolean `integrations`, an invalid timestamp, more than 32 KB.
 */
export function checkMessage(original: Message, changed: unknown): BuiltMessage | AnalyticsError {
  const ids = [original.messageId];
  const bad = (what: string) => analyticsError('invalid_payload', `${original.type}: ${what} (after source middleware and plugins)`, ids);
  let m: any;
  try {
    m = sanitize(changed);
  } catch (e) {
    return over(e) ? tooLarge(ids) : bad(`could not read the message: ${describe(e)}`);
  }
  if (!isObject(m)) return bad('the message must be an object');
  m.type = original.type;
  m.messageId = original.messageId;
  for (const k of STRINGS) if (m[k] != null && typeof m[k] != 'string') return bad(`${k} must be a string`);
  const required = REQUIRED[original.type];
  if (required && !(m[required] && m[required].trim())) return bad(`${required} is required`);
  if (!m.anonymousId && !m.userId) return bad('an anonymousId or a userId is required');
  const ts = m.timestamp == null ? original.timestamp : timestamp(m.timestamp);
  if (!ts) return bad('timestamp must be an ISO 8601 date-time');
  m.timestamp = ts;
  // Objects a middleware emptied (null) are empty objects: the API takes no null there.
  for (const k of ['properties', 'traits', 'context', 'integrations']) {
    if (m[k] === null || (m[k] === undefined && (k in original || k == 'context' || k == 'integrations'))) m[k] = {};
    if (m[k] !== undefined && !isObject(m[k])) return bad(`${k} must be an object`);
  }
  for (const k of ownKeys(m.integrations)) if (typeof m.integrations[k] != 'boolean') return bad(`integrations.${k} must be true or false`);
  const bytes = byteLength(stringify(m));
  if (bytes > MESSAGE_LIMIT) return tooLarge(ids, bytes);
  return { message: m as Message, bytes };
}
