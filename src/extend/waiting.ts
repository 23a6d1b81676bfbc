import type { Message } from '../message/types';
import { stringify } from '../message/validate';

// Messages that wait for source middleware or plugins (their chunk still loading, or a middleware that answers
// later), kept where a later page of the site finds them (CONTRACT section 1: "what waits is kept where a later page
// of the site finds it (as the stub keeps its calls), so a page that ends first loses nothing"): in localStorage,
// written synchronously as the call is made, as the stub's buffer is. An entry leaves once its message is queued (or
// a middleware dropped it, or it was refused). A page that goes away marks its entries left; a later page of the same
// binding (write key and batch URL: CONTRACT section 6) takes them, under their own message ids and times, as it
// loads; so does one that finds an entry older than WAIT_STALE_MS (its page crashed, or its chunk never came). A page
// whose entry was taken meanwhile does not queue it (it went out from the other page).

const KEY = 'svc_wait';
// Taken when the bundle runs (a page may replace JSON later).
const parse = JSON.parse;
/** An entry is taken by another page of its binding once this old, even from a page that did not say it left. */
export const WAIT_STALE_MS = 600000;
/** `[message, binding, owner (the page's instance), written at, 1 once its page went away]` */
export type WaitEntry = [Message, string, string, number, (0 | 1)?];

const isEntry = (e: unknown): e is WaitEntry =>
  Array.isArray(e) && !!e[0] && typeof e[0].messageId == 'string' && typeof e[1] == 'string' && typeof e[2] == 'string' && typeof e[3] == 'number';

/** What is kept; undefined when storage is unusable. */
export function readWaiting(): WaitEntry[] | undefined {
  try {
    const list = parse(localStorage.getItem(KEY) || '[]');
    return Array.isArray(list) ? list.filter(isEntry) : [];
  } catch {
    // (undefined)
  }
}

// False when storage refused it (blocked, full): the message waits in this page's memory only.
function write(list: WaitEntry[]): boolean {
  try {
    if (list.length) localStorage.setItem(KEY, stringify(list as any));
    else localStorage.removeItem(KEY);
    return true;
  } catch {
    return false;
  }
}

/** Forgets every kept message (an opt-out, a denial of consent: nothing of the visitor's is kept). */
export const clearWaiting = () => write([]);

// The instances of this page with entries: marked left (`1`) as the page goes away, back (`0`) if it is restored.
let owners: Set<string> | undefined;
const mark = (left: 0 | 1) => {
  const list = readWaiting();
  if (list?.some((e) => owners!.has(e[2]))) write(list.map((e) => (owners!.has(e[2]) ? [e[0], e[1], e[2], e[3], left] : e)));
};

/** Keeps `message`, waiting on this page (`owner`) for its binding: false when storage refused it. */
export function keepWaiting(message: Message, binding: string, owner: string): boolean {
  const list = readWaiting();
  return !!list && write([...list, [message, binding, owner, Date.now()]]) && own(owner);
}

function own(owner: string) {
  if (!owners) {
    owners = new Set();
    addEventListener('pagehide', () => mark(1));
    addEventListener('pageshow', (e) => (e as PageTransitionEvent).persisted && mark(0));
  }
  return !!owners.add(owner);
}

const is = (id: string, owner: string) => (e: WaitEntry) => e[0].messageId == id && e[2] == owner;

/**
 * Whether message `id` (kept by `keepWaiting`) is still `owner`'s to queue: false only when another page adopted it
 * meanwhile (it goes out from there). A kept message that is gone (storage cleared by the site, or erased) is queued
 * here, through the checks every message passes.
 */
export const stillWaiting = (id: string, owner: string): boolean => !readWaiting()?.some((e) => e[0].messageId == id && e[2] != owner);

/** Ends the wait of message `id` of `owner`: queued (stored), dropped by a middleware, or refused. */
export function endWaiting(id: string, owner: string) {
  const list = readWaiting();
  if (list?.some(is(id, owner))) write(list.filter((e) => !is(id, owner)(e)));
}

/**
 * Adopts what other pages of `binding` left waiting (gone, or stale at `now`): their entries become this page's
 * (`owner`), and their messages are returned, oldest first, to queue (ending each wait with `endWaiting`).
 */
export function adoptWaiting(binding: string, owner: string, now = Date.now()): Message[] {
  const list = readWaiting() || [];
  const left = (e: WaitEntry) => e[1] == binding && e[2] != owner && (e[4] == 1 || now - e[3] > WAIT_STALE_MS);
  const taken = list.filter(left);
  if (!taken.length || !write(list.map((e) => (left(e) ? [e[0], e[1], owner, now] : e)))) return [];
  own(owner);
  return taken.sort((a, b) => a[3] - b[3]).map((e) => e[0]);
}
