import type { Message, MessageType } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import type { BuiltMessage } from '../message/message';
import type { Identity } from '../identity/identity';
import { analyticsError } from '../message/errors';
import { byteLength, MESSAGE_LIMIT, stringify } from '../message/validate';
import { freeze } from '../message/context';
import { KEYS } from '../identity/identity';
import { decide, preferencesOf, type Gate, type Preferences } from './consent';

/** What the gate needs: the visitor, the site's consent categories, and what to do when storing opens or is erased. */
export interface GateDeps {
  identity: Identity;
  /** The consent categories of the `consent` load option (none: no consent gating). */
  _categories?: string[];
  /** The `respectGPC` load option. */
  _respectGPC?: boolean;
  /** Whether `count` messages of `bytes` pass the queue's bounds (delivery/records.ts): held ones count against them too. */
  _overBounds(count: number, bytes: number): boolean;
  report(error: AnalyticsError): void;
  /** Hears of each call refused because the queue (here: what is held) is full. */
  _full(ids: string[]): void;
  /** Storing is allowed (again): start delivery, persist the identity, and queue `held`, in call order. */
  _opened(held: BuiltMessage[]): void;
  /** Queues a message (storing is allowed): a promise that resolves once it is stored, or its refusal (queue_full). */
  _queue(built: BuiltMessage): Promise<void> | AnalyticsError;
  /** Remove what the library stored (the queue, memory and store; the stub's buffer; the exit note). */
  _erase(): void;
}

/**
 * What a call was admitted with (see `_admit`): how many erasures had happened then, and the site's consent decision
 * its message is built with.
 */
export type Ticket = [erasures: number, preferences: Preferences | undefined];

/** The messages held while consent is pending, in call order, and their bytes. */
function createHeld() {
  let list: BuiltMessage[] = [];
  let bytes = 0;
  return {
    _count: () => list.length,
    _bytes: () => bytes,
    _push: (built: BuiltMessage) => void (list.push(built), (bytes += built.bytes)),
    /** Empties what is held, and returns it. */
    _release() {
      const out = list;
      list = [];
      bytes = 0;
      return out;
    },
  };
}

/**
 * The consent and opt-out gate (CONTRACT sections 2-3): its state (`decide` in consent.ts is the pure transition),
 * the site's last decision, the messages held while consent is pending, and the erasures. It starts in the state the
 * stored opt-out, GPC and the consent option give, follows an opt-out or opt-in made in another tab of the site, and
 * erases what was stored when the visitor opts out or consent is denied or withdrawn.
 */
export function createGate(d: GateDeps) {
  const { identity, _categories: categories } = d;
  let preferences: Preferences | undefined;
  const held = createHeld();
  // How many times what was stored was erased, and why the last time: a message a middleware had meanwhile goes.
  const erased: { _count: number; _by: 'opted_out' | 'consent_denied' } = { _count: 0, _by: 'opted_out' };
  // GPC counts as an opt-out unless the visitor opted in on this site (https://privacycg.github.io/gpc-spec/)
  const gpc = d._respectGPC === true && navigator.globalPrivacyControl === true;
  let state: Gate = identity._optedOut() ?? gpc ? 'out' : categories ? 'pending' : 'open';
  // Bytes a held message keeps free for the decision it will carry: `,"consent":{"categoryPreferences":{...}}` with
  // every listed category, and 200 bytes for others.
  const consentRoom = 240 + byteLength(stringify((categories || []).map((c) => [c, false])));

  const release = held._release;
  const erase = (by: typeof erased._by) => {
    release();
    erased._count++;
    erased._by = by;
    identity._forget();
    d._erase();
  };

  // Moves to a new state, doing what it asks.
  const enter = (next: Gate) => {
    const before = state;
    state = next;
    // A denial on this page is a withdrawal of any grant an earlier page stored (decisions are not remembered
    // across pages): what was stored goes, and what the held calls did to the identity in memory is undone.
    if (next == 'out' || next == 'denied' || (next == 'pending' && before == 'open')) erase(next == 'out' ? 'opted_out' : 'consent_denied');
    if (next == 'denied') identity._restore();
    if (next != 'open') return;
    // The held messages go in call order, with the decision in their context.
    d._opened(release().map(withDecision));
  };

  // A message with the current decision in its context (it was built before it). Held messages kept room for the
  // listed categories: a decision too big for that is narrowed to them, so a call whose promise resolved is sent.
  const withDecision = (built: BuiltMessage): BuiltMessage => {
    const { message } = built;
    const decision = preferences;
    if (!decision || message.context.consent?.categoryPreferences == decision) return built;
    const listed = categories ? Object.fromEntries(categories.map((c) => [c, decision[c] === true])) : {};
    for (const categoryPreferences of [decision, listed]) {
      const changed: Message = { ...message, context: { ...message.context, consent: { categoryPreferences } } };
      const bytes = byteLength(stringify(changed));
      if (bytes <= MESSAGE_LIMIT) return { message: changed, bytes };
    }
    return built;
  };

  // Holds a message for consent, within the queue's bounds, with room left for the decision it will carry.
  const hold = (built: BuiltMessage): Promise<void> | AnalyticsError => {
    const id = built.message.messageId;
    if (built.bytes + consentRoom > MESSAGE_LIMIT) {
      const error = analyticsError('message_too_large', `message is ${built.bytes} bytes and needs room for its consent decision, over the ${MESSAGE_LIMIT} limit`, [id]);
      d.report(error);
      return error;
    }
    if (d._overBounds(held._count(), held._bytes() + built.bytes)) {
      d._full([id]);
      return analyticsError('queue_full', 'the queue is full', [id]);
    }
    held._push(built);
    return Promise.resolve();
  };

  // The visitor opted in (here, or in another tab: this page follows): the state is decided again, from pending.
  const rejoin = () => {
    state = 'pending';
    enter(decide(categories, preferences, 'pending'));
  };
  // An opt-out (or opt-in) in another tab of the site applies here at once: localStorage tells every other page
  // (https://html.spec.whatwg.org/multipage/webstorage.html#the-storage-event).
  addEventListener('storage', (e) => {
    if (e.key != KEYS.optOut) return;
    const out = identity._optedOut();
    if (out && state != 'out') enter('out');
    // (with the new anonymous id that tab made)
    if (out === false && state == 'out') identity._restore(), rejoin();
  });
  if (state == 'out') erase('opted_out');
  // An opt-out another page of the site stored applies here as soon as it is seen (before each call and each request),
  // before its storage event comes: a page frozen meanwhile may run an overdue timer first, and a page of another
  // subdomain (another origin's localStorage) never gets one, only the shared cookie.
  // Before each request and exit; before a task's first call only (`looked`: a read of the stored choice reads
  // document.cookie, which waits on the browser, and a page may call track() in a loop): a later call of that task is
  // queued, and the next request's look erases it before anything is sent.
  let looked: unknown;
  const follow = (call?: 1) => {
    if (call) {
      if (looked) return;
      // (a page that broke setTimeout: every call looks)
      try {
        looked = setTimeout(() => (looked = 0));
      } catch {}
    }
    state == 'open' && identity._optedOut() && enter('out');
  };

  return {
    /** The state now: `open` stores and sends; `pending` holds; `denied` and `out` refuse. */
    _state: () => state,
    /** Whether storing and sending are allowed now, asked before each request and page exit (delivery's `open`). */
    _open: () => (follow(), state == 'open'),
    /**
     * The gate's first word on a call, before anything is built: its refusal while the visitor opted out or denied
     * consent (not reported: it is what they asked), or its ticket (see `Ticket`).
     */
    _admit: (type: MessageType): AnalyticsError | Ticket =>
      (follow(1), state == 'out') ? analyticsError('opted_out', `${type}: the visitor opted out`) : state == 'denied' ? analyticsError('consent_denied', `${type}: consent was denied`) : [erased._count, preferences],
    /**
     * The gate's last word on a call admitted with `ticket`, once its message is built and past middleware and plugins
     * (`checked`: the message, or why it was refused there, returned as it is): refused if what was stored was erased
     * since (an opt-out or a denial, even if reversed since); else held while consent is pending (within the queue's
     * bounds, with room left for the decision it will carry; resolves at once), or queued with the decision now. Taken:
     * the promise (it never rejects) and the message as taken.
     */
    _commit(ticket: Ticket, type: MessageType, checked: BuiltMessage | AnalyticsError): [Promise<void>, Message] | AnalyticsError {
      if (ticket[0] != erased._count)
        return analyticsError(erased._by, `${type}: discarded by an opt-out or a denial of consent`, checked instanceof Error ? checked.messageIds : [checked.message.messageId]);
      if (checked instanceof Error) return checked;
      const built = withDecision(checked);
      const stored = state == 'pending' ? hold(built) : d._queue(built);
      return stored instanceof Error ? stored : [stored, built.message];
    },
    /** `consent(preferences)`: the site's decision; false when it is not an object of category names to booleans. */
    _consent(value: unknown): boolean {
      const decision = preferencesOf(value);
      if (!decision) return false;
      preferences = freeze(decision);
      if (state != 'out') enter(decide(categories, preferences, state));
      return true;
    },
    _optOut() {
      identity._setOptOut(true);
      enter('out');
    },
    /** The visitor opts back in (nothing to do, and nothing written, unless opted out: by optOut() or GPC). */
    _optIn() {
      if (state != 'out') return;
      identity._setOptOut(false);
      identity._reset();
      rejoin();
    },
  };
}

export type PrivacyGate = ReturnType<typeof createGate>;
