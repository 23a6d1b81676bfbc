// What an identify does to the visitor (found by review 6): another user than the stored one starts a new anonymous
// id, as analytics.js does; and an identify or group the API would refuse changes nothing stored.
import { start, sent } from '../harness';
import { describe, expect, it } from 'vitest';

describe('identify of another user', () => {
  it('starts a new anonymous id, which the identify and later calls carry and which persists', async () => {
    const { api } = start();
    const first = api.user().anonymousId();
    await api.identify('u1', { a: 1 });
    expect(api.user().anonymousId()).toBe(first);
    const { event } = await api.identify('u2', { b: 2 });
    const second = api.user().anonymousId();
    expect(second).not.toBe(first);
    expect(event.anonymousId).toBe(second);
    expect(event.traits).toEqual({ b: 2 });
    const { event: later } = await api.track('After');
    expect(later).toMatchObject({ userId: 'u2', anonymousId: second });
    expect(localStorage.getItem('svc_anonymous_id')).toBe(JSON.stringify(second));
    await api.flush();
    expect(sent().map((m) => [m.type, m.userId, m.anonymousId == first])).toEqual([
      ['identify', 'u1', true],
      ['identify', 'u2', false],
      ['track', 'u2', false],
    ]);
  });

  it('keeps the anonymous id for the same user, for traits alone, and from anonymous to identified', async () => {
    const { api } = start();
    const anon = api.user().anonymousId();
    await api.identify('u1');
    await api.identify('u1', { plan: 'pro' });
    await api.identify({ more: 1 });
    expect(api.user().anonymousId()).toBe(anon);
  });

  it("an identify's own options.anonymousId stays on its message", async () => {
    const { api } = start();
    await api.identify('u1');
    const { event } = await api.identify('u2', {}, { anonymousId: 'given' });
    expect(event.anonymousId).toBe('given');
    expect(api.user().anonymousId()).not.toBe('given');
  });
});

describe('a refused identify or group', () => {
  it('changes no stored traits (a refusal that merged them in would refuse every later identify of that user)', async () => {
    const { api } = start();
    await api.identify('u1', { a: 'x'.repeat(20000) });
    await expect(api.identify('u1', { b: 'y'.repeat(20000) })).rejects.toMatchObject({ code: 'message_too_large' });
    expect(Object.keys(api.user().traits())).toEqual(['a']);
    await expect(api.identify('u1', { plan: 'pro' })).resolves.toBeTruthy();
    await api.group('g1', { a: 'x'.repeat(20000) });
    await expect(api.group('g1', { b: 'y'.repeat(20000) })).rejects.toMatchObject({ code: 'message_too_large' });
    expect(Object.keys(api.group().traits())).toEqual(['a']);
  });

  it('a refused identify of another user starts no new anonymous id', async () => {
    const { api } = start();
    await api.identify('u1');
    const anon = api.user().anonymousId();
    await expect(api.identify('u2', { big: 'z'.repeat(40000) })).rejects.toMatchObject({ code: 'message_too_large' });
    expect(api.user().anonymousId()).toBe(anon);
    expect(api.user().id()).toBe('u1');
  });
});
