import type { Message } from '../message/types';

/**
 * The page's one word on delivery (issue 27): `'delivered'` is said here, once per message, whichever way the message
 * left (an answer to a request, an exit hand-off the browser took, a deferred request the browser sent): a message two
 * of them carried (a deferred request sent at its deadline while a request carried it too) is said once. Other events
 * pass through. (It forgets what it said after 10,000 messages: a message is carried twice only within moments.)
 */
export function sayOnce(emit: (name: string, ...args: unknown[]) => void) {
  const said = new Set<string>();
  return (name: string, ...args: unknown[]) => {
    if (name != 'delivered') return emit(name, ...args);
    if (said.size > 1e4) said.clear();
    const fresh = (args[0] as Message[]).filter((m) => !said.has(m.messageId) && !!said.add(m.messageId));
    if (fresh.length) emit(name, fresh);
  };
}
