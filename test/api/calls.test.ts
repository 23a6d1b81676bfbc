import { beforeEach, describe, expect, it } from 'vitest';
import { createCalls, type Instance } from '../../src/api/calls';
import { createPageGuard } from '../../src/api/guard';
import { createContextCache } from '../../src/api/page-context';
import { createDebugMode } from '../../src/debug/debug-mode';
import { createTransforms } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';
import { createIdentity } from '../../src/identity/identity';
import { createGate } from '../../src/privacy/gate';
import type { Delivery } from '../../src/delivery/start';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

// The call pipeline on its own (src/api/calls.ts): admit (not loaded, refused, shut) -> build -> transform -> commit,
// with a queue that records what it is given.
function setup() {
  const guard = createPageGuard(createDebugMode());
  const errors: AnalyticsError[] = [];
  guard.emitter.on('error', (e) => errors.push(e as AnalyticsError));
  const queued: Message[] = [];
  const delivery = {
    _queue: { _add: (r: { message: Message }) => (queued.push(r.message), Promise.resolve()) },
    _scheduler: { _notify: () => {} },
  } as unknown as Delivery;
  const identity = createIdentity({ persist: false });
  // (as the wiring does: the gate queues what it takes through the pipeline's queueTo)
  const gate = createGate({ identity, _overBounds: () => false, report: guard.report, _full: () => {}, _opened: () => {}, _queue: (built) => calls.queueTo(() => delivery, 'tab')(built), _erase: () => {} });
  const transforms = createTransforms({ integrations: {}, timeout: 1000 }, guard.report, () => Promise.resolve(pluginRunner));
  const instance: Instance = { identity, integrations: {}, owner: 'tab', gate, context: createContextCache({ userAgent: 'UA', locale: 'en', screen: { width: 1, height: 1, density: 1 } }), delivery: () => delivery };
  let loaded: Instance | undefined;
  const calls = createCalls({ guard, transforms, instance: () => loaded, emit: guard.emitter.emit });
  const load = () => ((loaded = instance), calls.loaded());
  return { calls, load, queued, errors, transforms, gate };
}

describe('the call pipeline', () => {
  beforeEach(() => localStorage.clear());

  it('calls made before load wait for it and keep their order; then each is built and queued once', async () => {
    const { calls, load, queued } = setup();
    const a = calls.invoke('track', ['A']);
    const b = calls.invoke('page', []);
    const c = calls.invoke('identify', ['u1']);
    expect(queued).toEqual([]);
    load();
    await Promise.all([a, b, c]);
    expect(queued.map((m) => m.type)).toEqual(['track', 'page', 'identify']);
    expect(queued[2].userId).toBe('u1');
    expect(new Set(queued.map((m) => m.messageId)).size).toBe(3);
  });

  it('refuses at the door what the API would refuse (reported), and what the visitor shut (quiet)', async () => {
    const { calls, load, queued, errors, gate } = setup();
    load();
    await expect(calls.invoke('track', [''])).rejects.toMatchObject({ code: 'invalid_arguments' });
    expect(errors.map((e) => e.code)).toEqual(['invalid_arguments']);
    gate._optOut();
    await expect(calls.invoke('track', ['After'])).rejects.toMatchObject({ code: 'opted_out' });
    expect(errors).toHaveLength(1);
    expect(queued).toEqual([]);
    gate._optIn(); // (the opt-out is stored: the next test starts opted in)
  });

  it('an instance that will never load refuses what waits and every later call', async () => {
    const { calls } = setup();
    const waiting = calls.invoke('track', ['A']);
    calls.unloadable(new Error('no write key') as AnalyticsError);
    await expect(waiting).rejects.toThrow('no write key');
    await expect(calls.invoke('track', ['B'])).rejects.toThrow('no write key');
  });

  it('messages a slow middleware has are queued in call order, after the ones before them', async () => {
    const { calls, load, queued, transforms } = setup();
    load();
    transforms.use(({ payload, next }) => (payload.obj.event == 'Slow' ? setTimeout(() => next(payload), 20) : next(payload)));
    const slow = calls.invoke('track', ['Slow']);
    const fast = calls.invoke('track', ['Fast']);
    await Promise.all([slow, fast]);
    expect(queued.map((m) => m.event)).toEqual(['Slow', 'Fast']);
  });

  it('a message passes the middleware added before its call, not one added after it (one look at the stage per call)', async () => {
    const { calls, load, queued, transforms } = setup();
    load();
    const before = calls.invoke('track', ['Before']);
    transforms.use(({ payload, next }) => ((payload.obj.properties = { ...payload.obj.properties, seen: true }), next(payload)));
    const after = calls.invoke('track', ['After']);
    const [b, a] = await Promise.all([before, after]);
    expect(queued.map((m) => [m.event, m.properties?.seen])).toEqual([['Before', undefined], ['After', true]]);
    expect(b.event.properties?.seen).toBeUndefined();
    expect(a.event.properties?.seen).toBe(true);
  });

  it('without middleware a call is queued once the current script is done (its microtask commits it); after that, a middleware that answers at once queues before its call returns', async () => {
    const { calls, load, queued, transforms } = setup();
    load();
    const a = calls.invoke('track', ['A']);
    expect(queued).toEqual([]);
    await a;
    expect(queued.map((m) => m.event)).toEqual(['A']);
    transforms.use(({ payload, next }) => next(payload));
    const b = calls.invoke('track', ['B']);
    // (the microtask that committed A is done: nothing earlier waits, so B does not wait for one)
    expect(queued.map((m) => m.event)).toEqual(['A', 'B']);
    await b;
  });

  it("the promise resolves with the message as the gate took it: after middleware, with the site's consent decision", async () => {
    const { calls, load, queued, transforms } = setup();
    load();
    transforms.use(({ payload, next }) => ((payload.obj.event = 'Renamed'), next(payload)));
    const result = await calls.invoke('track', ['Original']);
    expect(queued.map((m) => m.event)).toEqual(['Renamed']);
    expect(result.event.event).toBe('Renamed');
    expect(result.event).not.toBe(queued[0]);
  });
});
