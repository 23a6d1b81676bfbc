import { beforeEach, describe, expect, it } from 'vitest';
import { createGate, type GateDeps } from '../../src/privacy/gate';
import { createIdentity } from '../../src/identity/identity';
import type { BuiltMessage } from '../../src/message/message';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

// The consent and opt-out gate on its own (src/privacy/gate.ts): what it holds while consent is pending, and what
// it releases, refuses and erases.
const built = (id: string, bytes = 100): BuiltMessage => ({
  message: { type: 'track', event: 'E', messageId: id, timestamp: '2026-01-01T00:00:00.000Z', anonymousId: 'a', integrations: {}, context: {} } as unknown as Message,
  bytes,
});

function setup(over: Partial<GateDeps> = {}) {
  const opened: BuiltMessage[][] = [];
  const queued: BuiltMessage[] = [];
  const reported: AnalyticsError[] = [];
  const full: string[][] = [];
  let erased = 0;
  const gate = createGate({
    identity: createIdentity({ persist: false }),
    _categories: ['C0002'],
    _overBounds: (count) => count >= 2, // (the count held before this one)
    report: (e) => reported.push(e),
    _full: (ids) => full.push(ids),
    _opened: (held) => opened.push(held),
    _queue: (b) => (queued.push(b), Promise.resolve()),
    _erase: () => erased++,
    ...over,
  });
    // A call through the gate's two entries: admitted, then committed as built.
  const call = (b: BuiltMessage) => {
    const ticket = gate._admit('track');
    return ticket instanceof Error ? ticket : gate._commit(ticket, 'track', b);
  };
  const settled = (out: ReturnType<typeof call>) => (out instanceof Error ? out : out[0]);
  return { gate, opened, queued, reported, full, erased: () => erased, call, settled };
}

describe('the consent gate', () => {
  beforeEach(() => localStorage.clear());

  it('holds messages while consent is pending, within the bounds, and releases them in call order with the decision', async () => {
    const { gate, opened, queued, full, call, settled } = setup();
    expect(gate._state()).toBe('pending');
    await settled(call(built('1')));
    await settled(call(built('2')));
    const refused = call(built('3'));
    expect((refused as AnalyticsError).code).toBe('queue_full');
    expect(full).toEqual([['3']]);
    expect(gate._consent({ C0002: true })).toBe(true);
    expect(gate._state()).toBe('open');
    expect(opened).toHaveLength(1);
    expect(opened[0].map((b) => b.message.messageId)).toEqual(['1', '2']);
    for (const b of opened[0]) expect(b.message.context.consent).toEqual({ categoryPreferences: { C0002: true } });
    // open: a call is queued at once, with the decision, and its message is the one taken
    expect(queued).toEqual([]);
    const taken = call(built('4'));
    expect(taken).not.toBeInstanceOf(Error);
    expect(queued.map((b) => b.message.messageId)).toEqual(['4']);
    expect(queued[0].message.context.consent).toEqual({ categoryPreferences: { C0002: true } });
    expect((taken as [Promise<void>, Message])[1]).toBe(queued[0].message);
  });

  it('a refusal found after admission (by middleware) is returned as it is; an erasure since admission wins over it', () => {
    const { gate, queued } = setup({ _categories: undefined });
    const dropped = Object.assign(new Error('dropped'), { code: 'dropped', messageIds: ['m'] }) as AnalyticsError;
    const first = gate._admit('track');
    expect(first).not.toBeInstanceOf(Error);
    expect(gate._commit(first as Exclude<typeof first, AnalyticsError>, 'track', dropped)).toBe(dropped);
    const second = gate._admit('track') as Exclude<typeof first, AnalyticsError>;
    gate._optOut();
    gate._optIn();
    // (open again, but what was admitted before the opt-out goes)
    expect(gate._state()).toBe('open');
    expect((gate._commit(second, 'track', dropped) as AnalyticsError).code).toBe('opted_out');
    expect((gate._commit(second, 'track', built('x')) as AnalyticsError).messageIds).toEqual(['x']);
    expect(queued).toEqual([]);
  });

  it('refuses a message that leaves no room for its consent decision, reported', () => {
    const { reported, call } = setup();
    const out = call(built('big', 32_000));
    expect((out as AnalyticsError).code).toBe('message_too_large');
    expect(reported.map((e) => e.code)).toEqual(['message_too_large']);
  });

  it('a denial drops what is held, erases what was stored, and shuts later calls (quietly: what the visitor chose)', async () => {
    const { gate, opened, erased, call, settled } = setup();
    await settled(call(built('1')));
    const ticket = gate._admit('track') as Exclude<ReturnType<typeof gate._admit>, AnalyticsError>;
    expect(gate._consent({ C0002: false })).toBe(true);
    expect(gate._state()).toBe('denied');
    expect(opened).toEqual([]);
    expect(erased()).toBe(1);
    expect((gate._admit('track') as AnalyticsError).code).toBe('consent_denied');
    expect((gate._commit(ticket, 'track', built('x')) as AnalyticsError).code).toBe('consent_denied');
    // the held message is gone: a later grant releases nothing of it
    gate._consent({ C0002: true });
    expect(opened).toEqual([[]]);
  });

  it('an opt-out shuts calls, and an opt-in decides again from pending', () => {
    const { gate } = setup();
    gate._optOut();
    expect(gate._state()).toBe('out');
    expect((gate._admit('page') as AnalyticsError).code).toBe('opted_out');
    gate._optIn();
    expect(gate._state()).toBe('pending');
    expect(gate._consent('not an object')).toBe(false);
  });
});
