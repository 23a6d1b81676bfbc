import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPlanCheck } from '../../src/plan/browser-check';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

const PLAN = { events: { 'Signed Up': { properties: { type: 'object', properties: { seats: { type: 'integer' } } } } } };
const message = (m: Partial<Message>) => ({ messageId: 'id-1', type: 'track', ...m }) as Message;

describe('createPlanCheck', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('reports each violation as a plan_violation error with the message id, the pointer and the expectation', async () => {
    const errors: AnalyticsError[] = [];
    const check = await createPlanCheck(PLAN, (e) => errors.push(e));
    check(message({ event: 'Signed Up', properties: { seats: '3' } }));
    check(message({ event: 'Signed Up', properties: { seats: 3 } }));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'plan_violation', messageIds: ['id-1'], violation: { pointer: '/properties/seats', expected: 'an integer, got "3"', event: 'Signed Up' } });
    expect(errors[0].message).toBe('track "Signed Up" (id-1): /properties/seats: expected an integer, got "3"');
  });

  it('fetches a plan of the page own origin, and refuses one of another origin', async () => {
    const fetched: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => (fetched.push(url), { ok: true, status: 200, json: async () => PLAN }));
    const errors: AnalyticsError[] = [];
    const check = await createPlanCheck('/tracking-plan.json', (e) => errors.push(e));
    check(message({ event: 'Other' }));
    expect(fetched).toEqual([new URL('/tracking-plan.json', location.href).href]);
    expect(errors[0].violation?.pointer).toBe('/event');
    await expect(createPlanCheck('https://elsewhere.example/plan.json', () => {})).rejects.toThrow(/not of the page's own origin/);
  });

  it('rejects, naming the place, a plan that is not valid', async () => {
    await expect(createPlanCheck({ events: { A: { properties: { type: 'numbr' } } } }, () => {})).rejects.toThrow('tracking plan: /events/A/properties/type');
  });
});
