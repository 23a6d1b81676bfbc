import type { AnalyticsError, Callback, CallOptions, CallResult, JSONObject, Message, MessageType } from '../message/types';
import type { Identity } from '../identity/identity';
import type { Delivery } from '../delivery/start';
import type { PrivacyGate } from '../privacy/gate';
import type { Checked, Transforms } from '../extend/transforms';
import type { PageGuard } from './guard';
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
  context(page: RecordedPage, consent: ReturnType<PrivacyGate['_preferences']>): PageFacts;
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

// A promise the page may ignore: a rejection it never looks at is no unhandled rejection (`await` still throws).
const handled = <T>(p: Promise<T>) => (p.catch(() => {}), p);
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

  /** Runs a call: its outcome, and whether it goes on after this returns (see `Started`). */
  function start(type: MessageType, args: unknown[], site?: CallSite, check?: CallCheck): Started {
    // Found before normalise runs, so arguments it refuses still reach the callback (normalise finds the same one).
    const callback = args.find(isFunction);
    const instance = d.instance();
    if (!instance && noBrowser()) return [guard.refuse(analyticsError('not_loaded', 'svc-analytics runs in a browser only'), callback), false];
    if (!instance && unloadable) return [guard.refuse(unloadable, callback, true), false];
    // The page and time of the call itself, also for a call that waits for `load`.
    // (read only for a call made now: a replayed call brings its own)
    const at: CallSite = site || { page: readPage(), time: Date.now() };
    if (!instance) return [handled(new Promise((res, rej) => waitingForLoad.push(() => invoke(type, args, at, check).then(res, rej)))), true];
    const { gate, identity } = instance;
    // Refused before anything is built: nothing of it is kept.
    const closed = gate._shut(type);
    if (closed) return [guard.refuse(closed, callback, true), false];
    const invalid = check?.();
    if (invalid) return [guard.refuse(invalid, callback), false];
    let drafted: Draft | AnalyticsError;
    let options: CallOptions | undefined;
    const lenient = transforms.active();
    try {
      const { page, context, contextBytes } = instance.context(at.page, gate._preferences());
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
        lenient,
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
    const early = (type == 'identify' || type == 'group') && !lenient ? measure(drafted) : undefined;
    if (early instanceof Error) return [guard.refuse(early, callback), false];
    // What persists is the call's sanitised data (a cycle or a function never reaches storage), before source
    // middleware and plugins change what is sent, as analytics.js.
    if (fresh) identity._setAnonymousId(fresh);
    if (type == 'identify') identity._identify(message.userId, message.traits!);
    if (type == 'group') identity._group(message.groupId!, message.traits!);
    // What is stored was erased meanwhile (an opt-out, a denial: even if reversed since)? Then this message is not
    // stored either (see `finish`).
    const mark = gate._mark();
    // `checked`: the message measured, or what middleware and plugins passed on, checked (a refusal reported where it
    // was found: by the middleware stage, or below).
    const finish = (checked: Checked, reported: boolean) => {
      const erased = gate._erasedSince(mark, type, message.messageId);
      if (erased) return guard.refuse(erased, callback, true);
      // (built before a decision that came meanwhile: it carries it)
      if (!(checked instanceof Error)) return store(instance, type, gate._withDecision(checked), options, callback);
      // (a middleware or plugin that threw was reported where it ran; one that dropped the message is not an error)
      return guard.refuse(checked, callback, reported);
    };
    // The message is measured, or, with source middleware or plugins (or a message drafted for them), they see it
    // first (before it is validated, as CONTRACT section 2 says) and the stage checks what they pass on; then it is
    // stored.
    const rest = (): Started => {
      if (!lenient && !transforms.active()) {
        const built = early || measure(drafted);
        return [built instanceof Error ? guard.refuse(built, callback) : finish(built, false), false];
      }
      let out: Checked | Promise<Checked>;
      try {
        out = transforms.run(message);
      } catch (e) {
        // (a page object read outside its function: a getter of a payload that throws)
        out = analyticsError('middleware_error', `a source middleware or plugin passed on what cannot be read: ${describe(e)}`, [message.messageId]);
        guard.report(out);
      }
      // Every step answered at once, and no earlier message is still on its way: queued now.
      if (!(out instanceof Promise) && !transforming) return [finish(out, true), false];
      // Otherwise queued in call order, after every earlier message that a middleware or plugin still has; kept
      // meanwhile where a later page of the site finds it (waiting.ts), unless nothing may be stored yet.
      const kept = instance.gate._state() == 'open' && keepWaiting(message, instance.binding, instance.owner);
      transforming++;
      const turn = inOrder.then(() => out);
      // (runs after `finish`: the next message's turn comes once this one is queued)
      const done = () => void transforming--;
      inOrder = turn.then(done, done);
      return [handled(turn.then((c) => (kept ? waited(instance.owner, message, () => finish(c, true), true) : finish(c, true)))), true];
    };
    // With middleware or plugins, at once (one that answers at once queues the message before the call returns). Without,
    // once the page's current script is done (a microtask: the page's code goes on sooner, and the message is queued
    // before any other task runs, so before the page could end), and so is every call after it until then (call order).
    if (transforms.active() && !deferred) return rest();
    deferred++;
    return [
      handled(
        resolved.then(() => {
          deferred--;
          return rest()[0];
        }),
      ),
      false,
    ];
  }

  // Stores a message (the gate was checked by `start`; an opt-out or denial while a middleware had it, by `finish`):
  // held in memory while consent is pending (the promise resolves now), else queued.
  function store(instance: Instance, type: MessageType, built: BuiltMessage, options: CallOptions | undefined, callback?: Callback): Promise<CallResult> {
    const stored = instance.gate._state() == 'pending' ? instance.gate._hold(built) : enqueue(instance, built);
    if (stored instanceof Error) return guard.refuse(stored, callback, true);
    const { message } = built;
    // (never rejects: a queue that cannot store keeps the message in memory)
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

  // Puts a message in the queue: an AnalyticsError (queue_full), or a promise that resolves once it is stored.
  function enqueue(instance: Instance, { message, bytes }: BuiltMessage) {
    const delivery = instance.delivery()!;
    const stored = delivery._queue._add({ id: message.messageId, message, bytes, queuedAt: Date.now(), attempts: 0, owner: instance.owner });
    if (stored instanceof Error) guard.full.add(stored.messageIds);
    // The scheduler hears of it at once: a request may leave while IndexedDB still writes (a message leaves the
    // queue only after a 2xx, and one delivered before its write is never written: see queue.ts `removed`).
    else delivery._scheduler._notify();
    return stored;
  }

  const invoke = (type: MessageType, args: unknown[], site?: CallSite, check?: CallCheck): Promise<CallResult> => start(type, args, site, check)[0];

  return {
    start,
    invoke,
    enqueue,
    /** Queues what other pages of this binding left waiting (see `resumeWaiting`), once storing is allowed. */
    resume: (instance: Instance) => instance.gate._state() == 'open' && resumeWaiting(instance, transforms, guard, store),
    /** URL of the last page message built. */
    pagedUrl: () => pagedUrl,
    /**
     * Runs `fn` once loaded: calls that change state or read it wait for `load` like the others, keeping their order.
     * On a server (no window) nothing ever loads: `server` runs at once instead (ready/flush settle).
     */
    whenLoaded(fn: (instance: Instance) => void, server?: () => void) {
      const instance = d.instance();
      if (instance) fn(instance);
      else if (noBrowser() || unloadable) server?.();
      else waitingForLoad.push(() => (d.instance() ? fn(d.instance()!) : server?.()));
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
function resumeWaiting(instance: Instance, transforms: Transforms, guard: PageGuard, store: (i: Instance, t: MessageType, b: BuiltMessage, o: undefined) => Promise<CallResult>) {
  for (const message of adoptWaiting(instance.binding, instance.owner)) {
    let out: Checked | Promise<Checked>;
    try {
      out = transforms.active() ? transforms.run(message) : measure({ message });
    } catch (e) {
      out = analyticsError('middleware_error', describe(e), [message.messageId]);
    }
    const commit = (c: Checked) => (c instanceof Error ? guard.refuse(c, undefined, true) : store(instance, message.type as MessageType, instance.gate._withDecision(c), undefined));
    handled(waited(instance.owner, message, () => Promise.resolve(out).then(commit)));
  }
}
