import type { JSONObject, MessageType } from './types';
import type { Callback, CallOptions } from '../types';
import { analyticsError } from './errors';
import { sanitize } from './validate';
import { isFunction, isObject, ownOptions } from './boundary';

/** A call's arguments sorted into message fields, options and callback; pure. */
export interface NormalisedCall {
  fields: JSONObject;
  options: CallOptions;
  callback?: Callback;
}

// How many leading string arguments each call takes, analytics.js-style:
// page(category?, name?, ...), screen(category?, name?, ...), alias(userId, previousId?, ...).
const SLOTS: Record<MessageType, number> = { track: 1, identify: 1, group: 1, alias: 2, page: 2, screen: 2 };

const NO_OPTIONS: CallOptions = Object.freeze(Object.create(null));
const OPTION_OBJECTS = ['integrations', 'context'] as const;
const refuse = (type: MessageType, what: string): never => {
  throw analyticsError('invalid_arguments', `${type}: ${what}`);
};
const isStr = (v: unknown) => typeof v == 'string' || typeof v == 'number';

/**
 * Sorts `args` of call `type` into fields, options and callback, the way analytics.js does:
 * `page('Docs')`, `page({title})`, `page('Cat', 'Name', props)`, `track('x', props, cb)`, `identify(traits)`.
 * Throws an AnalyticsError (`invalid_arguments`) for arguments it cannot read; the caller catches.
 */
export function normalise(type: MessageType, args: unknown[]): NormalisedCall {
  const fn = args.findIndex(isFunction);
  const callback = fn < 0 ? undefined : (args[fn] as Callback);
  const rest = fn < 0 ? args.slice() : args.slice(0, fn);
  const strings: (string | undefined)[] = [];
  // Leading strings (or null placeholders followed by more arguments) fill the string slots.
  while (strings.length < SLOTS[type] && rest.length && (isStr(rest[0]) || (rest[0] == null && rest.length > 1))) {
    const s = rest.shift();
    strings.push(s == null ? undefined : String(s));
    // page('Docs', null, properties, options): one string is the name, and the null stands for nothing, as
    // analytics.js reads them (only a leading null stands for a missing category).
    if (s == null && strings[0] != null && type != 'alias') {
      strings.pop();
      break;
    }
  }
  const [props, options] = rest;
  const bad: (what: string) => never = (what) => refuse(type, what);
  // A Date (or anything whose toJSON is not an object) would not be an object on the wire.
  if (props != null && (!isObject(props) || (typeof props.toJSON == 'function' && !isObject(sanitize(props))))) bad(`expected an object of ${type == 'alias' ? 'options' : type == 'track' || type == 'page' || type == 'screen' ? 'properties' : 'traits'}, got ${typeof props}`);
  if (options != null && !isObject(options)) bad(`expected an options object, got ${typeof options}`);
  // alias(userId, previousId?, options?): the second "object" slot is options.
  const given = type == 'alias' ? props : options;
  // (the caller's own options only: nothing on Object.prototype, a polluted `timestamp` or `integrations`, is one)
  const opts: CallOptions = given ? ownOptions(given as CallOptions) : NO_OPTIONS;
  for (const k of OPTION_OBJECTS)
    if (opts[k] != null && !isObject(opts[k])) bad(`options.${k} must be an object`);
  if (opts.anonymousId != null && !isStr(opts.anonymousId)) bad('options.anonymousId must be a string');
  const p: JSONObject = props || {};
  let fields: JSONObject;
  if (type == 'track') {
    const event = strings[0];
    if (!event || !event.trim()) bad('a non-empty event name is required');
    fields = { event, properties: p };
  } else if (type == 'page' || type == 'screen') {
    const [category, name] = strings.length > 1 ? strings : [undefined, strings[0]];
    fields = { properties: p };
    if (name != null) fields.name = name;
    if (category != null) fields.category = category;
  } else if (type == 'identify') {
    fields = { traits: p };
    if (strings[0]) fields.userId = strings[0];
  } else if (type == 'group') {
    // (without a groupId, as analytics.js: the stored group's, filled in by `draft`, which refuses when there is none)
    fields = { groupId: strings[0], traits: p };
    if (opts.objectTypeId != null) {
      if (!/^\d+$/.test(String(opts.objectTypeId))) bad('options.objectTypeId must hold an integer');
      fields.objectTypeId = String(opts.objectTypeId);
    }
  } else {
    if (!strings[0]) bad('a userId (string) is required');
    fields = { userId: strings[0] };
    if (strings[1]) fields.previousId = strings[1];
  }
  return { fields, options: opts, callback };
}
