import { beforeEach, describe, expect, it } from 'vitest';
import { createGate, type GateDeps } from '../../src/privacy/gate';
import { createIdentity } from '../../src/identity/identity';
import type { BuiltMessage } from '../../src/message/message';
import type { AnalyticsError, Message } from '../../src/message/types';

// The consent and opt-out gate on its own (src/privacy/gate.ts): what it holds while consent is pending, and what
// it releases, refuses and erases.
const built = (id: string, bytes = 100): BuiltMessage => ({
  message: { type: 'track', event: 'E', messageId: id, timestamp: '2026-01-01T00:00:00.000Z', anonymousId: 'a', integrations: {}, context: {} } as unknown as Message,
  bytes,
});

function setup(over: Partial<GateDeps> = {}) {
  const opened: BuiltMessage[][] = [];
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
    _erase: () => erased++,
    ...over,
  });
  return { gate, opened, reported, full, erased: () => erased };
}

describe('the consent gate', () => {
  beforeEach(() => localStorage.clear());

  it('holds messages while consent is pending, within the bounds, and releases them in call order with the decision', async () => {
    const { gate, opened, full } = setup();
    expect(gate._state()).toBe('pending');
    await gate._hold(built('1'));
    await gate._hold(built('2'));
    const refused = gate._hold(built('3'));
    expect((refused as AnalyticsError).code).toBe('queue_full');
    expect(full).toEqual([['3']]);
    expect(gate._consent({ C0002: true })).toBe(true);
    expect(gate._state()).toBe('open');
    expect(opened).toHaveLength(1);
    expect(opened[0].map((b) => b.message.messageId)).toEqual(['1', '2']);
    for (const b of opened[0]) expect(b.message.context.consent).toEqual({ categoryPreferences: { C0002: true } });
  });

  it('refuses a message that leaves no room for its consent decision, reported', () => {
    const { gate, reported } = setup();
    const out = gate._hold(built('big', 32_000));
    expect((out as AnalyticsError).code).toBe('message_too_large');
    expect(reported.map((e) => e.code)).toEqual(['message_too_large']);
  });

  it('a denial drops what is held, erases what was stored, and shuts later calls (quietly: what the visitor chose)', async () => {
    const { gate, opened, erased } = setup();
    await gate._hold(built('1'));
    const mark = gate._mark();
    expect(gate._consent({ C0002: false })).toBe(true);
    expect(gate._state()).toBe('denied');
    expect(opened).toEqual([]);
    expect(erased()).toBe(1);
    expect(gate._shut('track')?.code).toBe('consent_denied');
    expect(gate._erasedSince(mark, 'track', 'x')?.code).toBe('consent_denied');
    // the held message is gone: a later grant releases nothing of it
    gate._consent({ C0002: true });
    expect(opened).toEqual([[]]);
  });

  it('an opt-out shuts calls, and an opt-in decides again from pending', () => {
    const { gate } = setup();
    gate._optOut();
    expect(gate._state()).toBe('out');
    expect(gate._shut('page')?.code).toBe('opted_out');
    gate._optIn();
    expect(gate._state()).toBe('pending');
    expect(gate._consent('not an object')).toBe(false);
  });
});
