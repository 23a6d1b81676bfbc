import type { JSONObject, Message, MessageType } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import type { Callback, CallOptions, CallResult } from '../types';
import type { Identity } from '../identity/identity';
import type { Delivery } from '../delivery/start';
import type { PrivacyGate } from '../privacy/gate';
import type { Preferences } from '../privacy/consent';
import type { Checked, Transforms } from '../extend/transforms';
import { handled, type PageGuard } from './guard';
import { readPage, type PageFacts } from './page-context';
import type { PlanCheck } from '../plan/browser-check';
import type { CallCheck, CallSite, RecordedPage } from './types';
import { analyticsError, describe } from '../message/errors';
import { normalise } from '../message/call';
import { monotonicUlid } from '../message/ulid';
import { draft, measure, type BuiltMessage, type Draft } from '../message/message';
import { copyJSON } from '../message/validate';
import { uuid } from '../identity/identity';
import { isFunction } from '../message/boundary';
import { noBrowser } from '../offline/scope';
import { adoptWaiting, endWaiting, keepWaiting, stillWaiting } from '../extend/waiting';

/** The parts of an instance that exist once `load` ran: what a call is made of and where it goes. */
export interface Instance {
  identity: Identity;
  /** The load-time default `integrations` (frozen). */
  integrations: JSONObject;
  /** This tab's id: the owner of the records it queues. */
  owner: string;
  /** Where its messages go: `writeKey batchURL` (CONTRACT section 6). */
  binding: string;
  gate: PrivacyGate;
  /** The automatic context of a call's page (see page-context.ts). */
  context(page: RecordedPage, consent: Preferences | undefined): PageFacts;
  /** Storage and delivery: started once storing is allowed (at load, or when consent is granted). */
  delivery(): Delivery | undefined;
  /** With a `plan` load option: the checker, once loaded (void: it could not be; reported once). */
  plan?: Promise<PlanCheck | void>;
}

/** A call's outcome, and whether it goes on after the call returned (it waits for `load`, or a middleware has it). */
export type Started = [done: Promise<CallResult>, later: boolean];

// The message fields analytics.js passes to `on(type)` handlers, in order.
export const EVENT_ARGS: Record<MessageType, (keyof Message)[]> = {
  track: ['event', 'properties'],
  page: ['category', 'name', 'properties'],
  screen: ['category', 'name', 'properties'],
  identify: ['userId', 'traits'],
  group: ['groupId', 'traits'],
  alias: ['userId', 'previousId'],
};

const isAnalyticsError = (e: unknown): e is AnalyticsError => e instanceof Error && !!(e as Partial<AnalyticsError>).code;

const resolved = Promise.resolve();

/**
 * The call pipeline: call → message (context, validation) → source middleware and plugins, in call order → the
 * gate's store (held for consent, or queued). Calls made before `load` wait for it, keeping their order.
 */
export function createCalls(d: { guard: PageGuard; transforms: Transforms; instance(): Instance | undefined; emit(name: string, ...args: unknown[]): void }) {
  const { guard, transforms } = d;
  const nextId = monotonicUlid();
  const waitingForLoad: (() => void)[] = [];
  // Messages that a middleware or plugin still has, and the turn of the last of them: messages are queued in call order.
  let transforming = 0;
  let inOrder: Promise<unknown> = Promise.resolve();
  // URL of the last page message queued, so an automatic page view never repeats a page() the site made itself.
  let pagedUrl: string | undefined;
  // Calls whose message waits for the end of the page's current script (see `start`).
  let deferred = 0;
  // Why this instance will never load (see `unloadable`): calls are refused with it rather than wait.
  let unloadable: AnalyticsError | undefined;

  /**
   * Runs a call, one straight pipeline: admit (loaded? the gate's first word) → build (message/, pure) → transform
   * (source middleware and plugins, in call order) → commit (the gate's last word: hold, queue or refuse; then the
   * callback and the events). Returns its outcome, and whether it goes on after this returns (see `Started`).
   */
  function start(type: MessageType, args: unknown[], site?: CallSite, check?: CallCheck): Started {
    // Found before normalise runs, so arguments it refuses still reach the callback (normalise finds the same one).
    const callback = args.find(isFunction);
    const instance = d.instance();
    // (on a server nothing loads, and nothing failed to: `unloadable` is the npm entry's failed load)
    if (!instance && (noBrowser() || unloadable)) return [guard.refuse(noBrowser() ? analyticsError('not_loaded', 'svc-analytics runs in a browser only') : unloadable!, callback, !!unloadable), false];
    // The page and time of the call itself, also for a call that waits for `load`.
    // (read only for a call made now: a replayed call brings its own)
    const at: CallSite = site || { page: readPage(), time: Date.now() };
    if (!instance) return [handled(new Promise((res, rej) => waitingForLoad.push(() => invoke(type, args, at, check).then(res, rej)))), true];
    const { gate, identity } = instance;
    // Admit: refused before anything is built, nothing of it is kept.
    const ticket = gate._admit(type);
    if (ticket instanceof Error) return [guard.refuse(ticket, callback, true), false];
    const invalid = check?.();
    if (invalid) return [guard.refuse(invalid, callback), false];
    // Whether source middleware or plugins see the message (the one look at them: a middleware added after this call
    // does not see its message).
    const via = transforms.active();
    // Build.
    let drafted: Draft | AnalyticsError;
    let options: CallOptions | undefined;
    try {
      const { page, context, contextBytes } = instance.context(at.page, ticket[1]);
      const call = normalise(type, args);
      options = call.options;
      drafted = draft({
        type,
        call,
        visitor: { anonymousId: identity._anonymousId(), userId: identity._userId(), traits: identity._traits(), groupId: identity._groupId(), groupTraits: identity._groupTraits() },
        page,
        context,
        contextBytes,
        integrations: instance.integrations,
        messageId: nextId(at.time),
        time: at.time,
        lenient: via,
      });
    } catch (e) {
      drafted = isAnalyticsError(e) ? e : analyticsError('invalid_arguments', String(e));
    }
    if (drafted instanceof Error) return [guard.refuse(drafted, callback), false];
    const { message } = drafted;
    if (type == 'page') pagedUrl = message.properties!.url;
    // As analytics.js, identifying another user than the stored one starts a new anonymous id: two people on one
    // browser are never joined (the identify carries it, unless the call gives its own).
    const fresh = type == 'identify' && identity._userId() != null && message.userId != identity._userId() ? uuid() : undefined;
    if (fresh && message.anonymousId == identity._anonymousId()) message.anonymousId = fresh;
    // An identify or a group changes the visitor only if the API takes its message: measured now (few calls are).
    // (With source middleware or plugins, which see it first, as it was called.)
    const early = (type == 'identify' || type == 'group') && !via ? measure(drafted) : undefined;
    if (early instanceof Error) return [guard.refuse(early, callback), false];
    // The identity is applied as the call is made, so the calls after it carry it even while a middleware still has
    // this one: what persists is the call's sanitised data (a cycle or a function never reaches storage), before
    // source middleware and plugins change what is sent, as analytics.js.
    if (fresh) identity._setAnonymousId(fresh);
    if (type == 'identify') identity._identify(message.userId, message.traits!);
    if (type == 'group') identity._group(message.groupId!, message.traits!);
    // Commit (the gate's last word, then the callback and the events): `passed` is what middleware and plugins passed on,
    // checked (a refusal reported where it was found: by the middleware stage, or below); none: the message as built,
    // measured now (a call without them, in its microtask: see below).
    const commit = (passed?: Checked | void, reported?: boolean): Promise<CallResult> => {
      const checked = passed || (deferred--, early || measure(drafted as Draft));
      const out = gate._commit(ticket, type, checked);
      return out instanceof Error ? guard.refuse(out, callback, out != checked || reported) : committed(instance, type, out, options, callback);
    };
    // Transform: with source middleware or plugins (or a message drafted for them), they see it first (before it is
    // validated, as CONTRACT section 2 says) and the stage checks what they pass on.
    const transform = (): Started => {
      let out: Checked | Promise<Checked>;
      try {
        out = transforms.run(message);
      } catch (e) {
        // (a page object read outside its function: a getter of a payload that throws)
        out = analyticsError('middleware_error', `a source middleware or plugin passed on what cannot be read: ${describe(e)}`, [message.messageId]);
        guard.report(out);
      }
      // Every step answered at once, and no earlier message is still on its way: committed now.
      if (!(out instanceof Promise) && !transforming) return [commit(out, true), false];
      // Otherwise committed in call order, after every earlier message that a middleware or plugin still has; kept
      // meanwhile where a later page of the site finds it (extend/waiting.ts), while storing is allowed.
      const kept = gate._state() == 'open' && keepWaiting(message, instance.binding, instance.owner);
      transforming++;
      const turn = inOrder.then(() => out);
      // (runs after `commit`: the next message's turn comes once this one is queued)
      const done = () => void transforming--;
      inOrder = turn.then(done, done);
      return [handled(turn.then((c) => (kept ? waited(instance.owner, message, () => commit(c, true), true) : commit(c, true)))), true];
    };
    // With middleware or plugins, at once (one that answers at once queues the message before the call returns). Without,
    // once the page's current script is done (a microtask: the page's code goes on sooner, and the message is queued
    // before any other task runs, so before the page could end), and so is every call after it until then (call order).
    // (Without them, the microtask is `commit` itself: one step from the call to the gate.)
    if (via && !deferred) return transform();
    deferred++;
    return [handled(resolved.then(via ? () => (deferred--, transform()[0]) : commit)), false];
  }

  // A message the gate took (`stored`: held while consent is pending, or queued; never rejects, a queue that cannot
  // store keeps it in memory): the call's callback, its handlers and the after-plugins hear of it once it is stored.
  function committed(instance: Instance, type: MessageType, [stored, message]: [Promise<void>, Message], options: CallOptions | undefined, callback?: Callback): Promise<CallResult> {
    return stored.then(() => {
      // (checked as queued, once the plan's checker is there: nothing waits for it)
      instance.plan?.then((check) => check && check(message));
      // The page gets a copy: what it does with it never changes what is stored and sent (or its measured size).
      const event = copyJSON(message);
      const result: CallResult = { event };
      guard.safely(callback, result);
      // (handlers get the call's options, as analytics.js passes them, with the message as `event`)
      d.emit(type, ...EVENT_ARGS[type].map((k) => event[k]), { ...options, event });
      transforms.after(event);
      return result;
    });
  }

  // Puts a message in the queue of `delivery` (started by `open`: storing is allowed): an AnalyticsError (queue_full), or
  // a promise that resolves once it is stored. The gate's `_queue`: the step after its `_commit`.
  const queueTo = (open: () => Delivery, owner: string) => ({ message, bytes }: BuiltMessage) => {
    const delivery = open();
    const stored = delivery._queue._add({ id: message.messageId, message, bytes, queuedAt: Date.now(), attempts: 0, owner });
    if (stored instanceof Error) guard.full.add(stored.messageIds);
    // The scheduler hears of it at once: a request may leave while IndexedDB still writes (a message leaves the
    // queue only after a 2xx, and one delivered before its write is never written: see queue.ts `removed`).
    else delivery._scheduler._notify();
    return stored;
  };

  const invoke = (type: MessageType, args: unknown[], site?: CallSite, check?: CallCheck): Promise<CallResult> => start(type, args, site, check)[0];

  return {
    start,
    invoke,
    queueTo,
    /** Queues what other pages of this binding left waiting (see `resumeWaiting`), once storing is allowed. */
    resume: (instance: Instance) => instance.gate._state() == 'open' && resumeWaiting(instance, transforms, guard, committed),
    /** URL of the last page message built. */
    pagedUrl: () => pagedUrl,
    /**
     * Runs `fn` once loaded: calls that change state or read it wait for `load` like the others, keeping their order.
     * On a server (no window) nothing ever loads: `server` runs at once instead (ready/flush settle).
     */
    whenLoaded(fn: (instance: Instance) => void, server?: () => void) {
      // (what `fn` throws reading the page's argument, a getter or a Proxy's trap, is reported: never thrown into the
      // page, nor, run by `load`, does it stop the calls that waited after it)
      const run = (instance: Instance) => {
        try {
          fn(instance);
        } catch (e) {
          guard.report(analyticsError('invalid_payload', `could not read the call's data: ${describe(e)}`));
        }
      };
      const instance = d.instance();
      if (instance) run(instance);
      else if (noBrowser() || unloadable) server?.();
      else waitingForLoad.push(() => (d.instance() ? run(d.instance()!) : server?.()));
    },
    /** `load` succeeded: what waited for it runs now, in call order. */
    loaded: () => waitingForLoad.splice(0).forEach((f) => f()),
    /**
     * This instance will never load (the npm entry's one `load` failed: no write key): what waits for it, and every
     * later call, is refused with `error` (calls) or settles as on a server (`ready`, `flush`), instead of waiting.
     */
    unloadable(error: AnalyticsError) {
      unloadable = error;
      waitingForLoad.splice(0).forEach((f) => f());
    },
  };
}

export type Calls = ReturnType<typeof createCalls>;

// A message that waited for middleware or plugins, kept meanwhile (waiting.ts): queued by `queue`, and its wait ended
// once it is stored, unless another page took it while this one was gone (then it goes out from there). `queued`:
// `queue` puts it in the queue's memory before it returns, where this page's exit hands it over, so the wait ends
// then (ended once stored, a page that went away meanwhile left it to the next page too, which sent it again:
// e2e/chunk-wait.spec.ts, 3 of 8 runs).
function waited(owner: string, message: Message, queue: () => Promise<CallResult>, queued?: boolean): Promise<CallResult> {
  const id = message.messageId;
  if (!stillWaiting(id, owner)) return Promise.resolve({ event: copyJSON(message) });
  const result = queue();
  const end = () => endWaiting(id, owner);
  queued ? end() : result.then(end, end);
  return result;
}

/**
 * Queues what other pages of this binding left waiting for their middleware or plugins as they went away
 * (waiting.ts): with their own message ids and times, through this page's middleware and plugins, if any.
 */
function resumeWaiting(instance: Instance, transforms: Transforms, guard: PageGuard, committed: (i: Instance, t: MessageType, taken: [Promise<void>, Message], o: undefined) => Promise<CallResult>) {
  const { gate } = instance;
  for (const message of adoptWaiting(instance.binding, instance.owner)) {
    const type = message.type as MessageType;
    const ticket = gate._admit(type);
    let out: Checked | Promise<Checked>;
    try {
      out = transforms.active() ? transforms.run(message) : measure({ message });
    } catch (e) {
      out = analyticsError('middleware_error', describe(e), [message.messageId]);
    }
    const commit = (c: Checked) => {
      const stored = ticket instanceof Error ? ticket : gate._commit(ticket, type, c);
      return stored instanceof Error ? guard.refuse(stored, undefined, true) : committed(instance, type, stored, undefined);
    };
    handled(waited(instance.owner, message, () => Promise.resolve(out).then(commit)));
  }
}
