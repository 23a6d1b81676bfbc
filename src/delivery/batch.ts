import { BATCH_LIMIT, isoDate, quote, stringify } from '../message/validate';
import type { JSONValue, Message } from '../message/types';

/** Bytes of `{"batch":[],"sentAt":"2026-01-01T00:00:00.000Z","writeKey":""}` around the messages, plus slack. */
export const BODY_OVERHEAD = 80;

/**
 * Splits sized items, in order, into as few groups as the byte limit allows: each group's request body
 * (`overhead` + the items + one comma between each two) stays at or under `limit`; pure.
 */
export function planBatches<T extends { bytes: number }>(items: readonly T[], limit = BATCH_LIMIT, overhead = BODY_OVERHEAD): T[][] {
  const out: T[][] = [];
  let group: T[] = [];
  let size = overhead;
  for (const item of items) {
    const add = item.bytes + (group.length ? 1 : 0);
    if (group.length && size + add > limit) {
      out.push(group);
      group = [];
      size = overhead;
    }
    group.push(item);
    size += item.bytes + (group.length > 1 ? 1 : 0);
  }
  if (group.length) out.push(group);
  return out;
}

/**
 * The JSON request body for a group of messages, serialised by `stringify` (never by a page's JSON); `writeKey` goes
 * in the body only for headerless (page-exit and deferred) requests. `sentAt` is when the library hands the request
 * over (CONTRACT section 4's body); for a deferred one the browser may send it later (see deferral.ts).
 */
export function body(messages: Message[], sentAt: Date, writeKey?: string): string {
  return (
    '{"batch":[' +
    messages.map((m) => stringify(m as JSONValue)).join(',') +
    '],"sentAt":' +
    quote(isoDate(sentAt)!) +
    (writeKey ? ',"writeKey":' + quote(writeKey) : '') +
    '}'
  );
}
