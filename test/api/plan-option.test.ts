import { net, sent, QUIET } from '../harness';
import { describe, expect, it, vi } from 'vitest';
import { createAnalytics } from '../../src/api/analytics';
import { createTransforms } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';
import { createPlanCheck } from '../../src/plan/browser-check';
import type { AnalyticsError } from '../../src/message/errors';
import type { LoadOptions } from '../../src/types';

const PLAN = { events: { 'Signed Up': { properties: { type: 'object', properties: { seats: { type: 'integer' } } } } } };

function start(plan: (p: unknown, report: (e: AnalyticsError) => void) => Promise<any>, options: LoadOptions) {
  const stage = vi.fn(plan);
  const { api } = createAnalytics({ transforms: (s, r) => createTransforms(s, r, () => Promise.resolve(pluginRunner)), plan: stage });
  const errors: AnalyticsError[] = [];
  api.on('error', (e) => errors.push(e));
  api.load('wk_test', { ...QUIET, ...options });
  return { api, errors, stage };
}

describe('the plan load option', () => {
  it('is not loaded without a plan', async () => {
    const { api, stage } = start(createPlanCheck, {});
    await api.track('Anything', { seats: '3' });
    expect(stage).not.toHaveBeenCalled();
  });

  it('reports each violation after the call resolved; the message is sent as it was', async () => {
    const { api, errors, stage } = start(createPlanCheck, { plan: PLAN });
    const { event } = await api.track('Signed Up', { seats: '3' });
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(stage).toHaveBeenCalledTimes(1);
    expect(errors[0]).toMatchObject({ code: 'plan_violation', messageIds: [event.messageId], violation: { pointer: '/properties/seats' } });
    await api.flush();
    expect(sent().map((m) => [m.messageId, m.properties])).toEqual([[event.messageId, { seats: '3' }]]);
    expect(net.fetch).toHaveBeenCalledTimes(1);
  });

  it('holds no call for a checker that never comes, and reports one that fails once', async () => {
    const never = start(() => new Promise(() => {}), { plan: PLAN });
    await never.api.track('Signed Up', { seats: '3' });
    await never.api.flush();
    expect(sent()).toHaveLength(1);
    const failing = start(() => Promise.reject(new Error('the script failed to load')), { plan: PLAN });
    await Promise.all([failing.api.track('A'), failing.api.track('B')]);
    await vi.waitFor(() => expect(failing.errors.map((e) => [e.code, e.message])).toEqual([['plan_unavailable', 'plan: the script failed to load']]));
  });
});
