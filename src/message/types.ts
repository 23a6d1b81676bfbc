/** Any JSON value a message may carry after sanitising. */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };
/** A free-form object of properties or traits. */
export type JSONObject = Record<string, any>;

/** The six call types of the Data Pipelines API. */
export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/** Page facts recorded at call time (by the snippet or the bundle). */
export interface PageContext {
  path: string;
  referrer: string;
  search: string;
  title: string;
  url: string;
}

/** The automatic `context` of every message (spec 000 section 2.4); callers may override any of it. */
export interface MessageContext {
  library: { name: string; version: string };
  page: PageContext;
  userAgent: string;
  locale: string;
  timezone?: string;
  channel: 'browser';
  campaign?: Record<string, string>;
  screen: { width: number; height: number; density: number };
  [key: string]: any;
}

/** One message as it goes on the wire inside `{ batch: [...] }`. */
export interface Message {
  type: MessageType;
  messageId: string;
  timestamp: string;
  anonymousId: string;
  userId?: string;
  integrations: Record<string, boolean>;
  context: MessageContext;
  event?: string;
  name?: string;
  category?: string;
  properties?: JSONObject;
  traits?: JSONObject;
  groupId?: string;
  objectTypeId?: string;
  previousId?: string;
  [key: string]: any;
}
