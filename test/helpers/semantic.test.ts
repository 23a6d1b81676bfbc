import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSemantic } from '../../src/helpers/semantic';
import type { AnalyticsError } from '../../src/message/errors';
import type { CallResult } from '../../src/types';
import { refused } from '../../src/message/errors';

// The instance's one refusal path, as src/api/guard.ts builds it: report, the callback, a rejection the page may ignore.
const refusal =
  (report?: (e: AnalyticsError) => void) =>
  (e: AnalyticsError, callback?: (e: AnalyticsError) => void) => {
    report?.(e);
    callback?.(e);
    return refused<never>(e);
  };

const RESULT = { event: { type: 'track' } } as unknown as CallResult;

// The core's track as a helper sees it: the helper's check runs when the call does (here at once: loaded), and
// what it refuses takes the refusal path; `sent` hears of the calls that went on.
function setup(userId: string | null = 'u1') {
  const report = vi.fn();
  const refuse = refusal(report);
  const sent = vi.fn();
  const track = vi.fn((...args: unknown[]) => {
    const error = (args[5] as (() => AnalyticsError | undefined) | undefined)?.();
    if (error) return refuse(error, args[3] as (e: AnalyticsError) => void);
    sent(...args.slice(0, 5));
    return Promise.resolve(RESULT);
  });
  const helpers = createSemantic({ _track: track, _userId: () => userId }) as unknown as Record<
    string,
    (...args: unknown[]) => Promise<CallResult>
  >;
  return { helpers, track: sent, report };
}

// Spec 000 section 2.6: helper, event, valid properties, whether a userId is required.
const EVENTS: [string, string, object | undefined, boolean][] = [
  ['userDeleted', 'User Deleted', undefined, true],
  ['deviceCreatedOrUpdated', 'Device Created or Updated', { device: { token: 't', type: 'ios' } }, true],
  ['deviceDeleted', 'Device Deleted', undefined, true],
  ['relationshipDeleted', 'Relationship Deleted', { objectId: 'o1' }, true],
  ['objectDeleted', 'Object Deleted', { objectId: 'o1', objectTypeId: '2' }, false],
  ['userSuppressed', 'User Suppressed', undefined, true],
  ['userUnsuppressed', 'User Unsuppressed', undefined, true],
  ['reportDeliveryEvent', 'Report Delivery Event', { deliveryId: 'd1', metric: 'opened' }, false],
  ['experimentViewed', 'Experiment Viewed', undefined, false],
];

// Any unhandled rejection during a test fails it.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

async function expectRefused(promise: Promise<unknown>, message: string) {
  const error = (await promise.then(
    () => undefined,
    (e: AnalyticsError) => e,
  )) as AnalyticsError;
  expect(error).toBeInstanceOf(Error);
  expect(error.code).toBe('invalid_arguments');
  expect(error.message).toBe(message);
  return error;
}

describe('createSemantic', () => {
  it('has exactly the helpers of the semantic events', () => {
    const { helpers } = setup();
    expect(Object.keys(helpers).sort()).toEqual(EVENTS.map(([name]) => name).sort());
  });

  it.each(EVENTS)('%s sends %j with an identified user', async (name, event, properties) => {
    const { helpers, track } = setup('u1');
    const options = { timestamp: '2024-01-01T00:00:00.000Z' };
    const callback = vi.fn();
    await expect(helpers[name](properties, options, callback)).resolves.toBe(RESULT);
    expect(track).toHaveBeenCalledWith(event, properties, options, callback, undefined);
  });

  it.each(EVENTS.filter(([, , , needsUser]) => needsUser))(
    '%s is refused without an identified user',
    async (name, event, properties) => {
      const { helpers, track, report } = setup(null);
      const callback = vi.fn();
      const error = await expectRefused(
        helpers[name](properties, undefined, callback),
        `${event}: userId is required (identify the user first)`,
      );
      expect(callback).toHaveBeenCalledWith(error);
      expect(report).toHaveBeenCalledWith(error);
      expect(track).not.toHaveBeenCalled();
    },
  );

  it.each(EVENTS.filter(([, , , needsUser]) => !needsUser))('%s is sent without a user', async (name, event, properties) => {
    const { helpers, track } = setup(null);
    await helpers[name](properties);
    expect(track).toHaveBeenCalledWith(event, properties, undefined, undefined, undefined);
  });

  it.each([
    ['deviceCreatedOrUpdated', undefined, 'Device Created or Updated: properties.device.token is required (string)'],
    ['deviceCreatedOrUpdated', { device: { type: 'ios' } }, 'Device Created or Updated: properties.device.token is required (string)'],
    ['deviceCreatedOrUpdated', { device: { token: 't' } }, 'Device Created or Updated: properties.device.type is required (string)'],
    ['deviceCreatedOrUpdated', { device: { token: 1, type: 'ios' } }, 'Device Created or Updated: properties.device.token is required (string)'],
    ['deviceCreatedOrUpdated', { device: { token: '', type: 'ios' } }, 'Device Created or Updated: properties.device.token is required (string)'],
    ['relationshipDeleted', {}, 'Relationship Deleted: properties.objectId is required (string)'],
    ['objectDeleted', { objectTypeId: '1' }, 'Object Deleted: properties.objectId is required (string)'],
    ['objectDeleted', null, 'Object Deleted: properties.objectId is required (string)'],
    ['reportDeliveryEvent', { metric: 'opened' }, 'Report Delivery Event: properties.deliveryId is required (string)'],
    ['reportDeliveryEvent', { deliveryId: 'd1' }, 'Report Delivery Event: properties.metric is required (string)'],
  ])('%s refuses %j', async (name, properties, message) => {
    const { helpers, track, report } = setup('u1');
    const callback = vi.fn();
    const error = await expectRefused(helpers[name](properties, undefined, callback), message);
    expect(callback).toHaveBeenCalledTimes(1);
    expect(callback).toHaveBeenCalledWith(error);
    expect(report).toHaveBeenCalledWith(error);
    expect(track).not.toHaveBeenCalled();
  });

  it('accepts a custom metric and optional delivery fields', async () => {
    const { helpers, track } = setup(null);
    const properties = { deliveryId: 'd1', metric: 'converted', recipient: 'a@b.c', actionValue: 'x', href: 'https://e.x' };
    await helpers.reportDeliveryEvent(properties);
    expect(track).toHaveBeenCalledWith('Report Delivery Event', properties, undefined, undefined, undefined);
  });

  it('causes no unhandled rejection when the refused promise is ignored', async () => {
    const { helpers } = setup(null);
    void helpers.userDeleted();
    void helpers.objectDeleted({});
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
  });

  it('works with a refusal that reports nothing', async () => {
    const { helpers } = setup(null);
    await expect(helpers.userSuppressed()).rejects.toMatchObject({ code: 'invalid_arguments' });
  });
});
