import { describe, expect, it, vi } from 'vitest';
import { createPageGuard } from '../../src/api/guard';
import { createDebugMode } from '../../src/debug/debug-mode';
import { analyticsError } from '../../src/message/errors';
import type { AnalyticsError } from '../../src/message/errors';

// The one guard at the page boundary (src/api/guard.ts): the page's functions through `safely`, errors through
// 'error', and the one refusal path.
function setup() {
  const guard = createPageGuard(createDebugMode());
  const errors: AnalyticsError[] = [];
  guard.emitter.on('error', (e) => errors.push(e as AnalyticsError));
  return { guard, errors };
}

describe('the page guard', () => {
  it('refuse: reports the error, gives it to the callback, and rejects the promise with it (a rejection the page may ignore)', async () => {
    const { guard, errors } = setup();
    const callback = vi.fn();
    const error = analyticsError('invalid_arguments', 'track: an event name is required');
    const p = guard.refuse(error, callback);
    expect(errors).toEqual([error]);
    expect(callback).toHaveBeenCalledWith(error);
    await expect(p).rejects.toBe(error);
  });

  it('refuse quietly (what the visitor asked for: an opt-out): not reported, still given to the callback and the promise', async () => {
    const { guard, errors } = setup();
    const callback = vi.fn();
    const error = analyticsError('opted_out', 'track: the visitor opted out');
    await expect(guard.refuse(error, callback, true)).rejects.toBe(error);
    expect(errors).toEqual([]);
    expect(callback).toHaveBeenCalledWith(error);
  });

  it("safely: a callback or handler of the page that throws never throws into the library; it is reported as callback_error", () => {
    const { guard, errors } = setup();
    expect(() =>
      guard.safely(() => {
        throw new Error('page bug');
      }),
    ).not.toThrow();
    expect(errors.map((e) => [e.code, e.message])).toEqual([['callback_error', 'a callback or handler of the page threw: page bug']]);
    guard.emitter.on('track', () => {
      throw new Error('handler bug');
    });
    expect(() => guard.emitter.emit('track', 'x')).not.toThrow();
    expect(errors.map((e) => e.code)).toEqual(['callback_error', 'callback_error']);
  });

  it("an 'error' handler that throws is not reported again through 'error' (no loop)", () => {
    const { guard, errors } = setup();
    guard.emitter.on('error', () => {
      throw new Error('error handler bug');
    });
    expect(() => guard.report(analyticsError('invalid_payload', 'x'))).not.toThrow();
    expect(errors.map((e) => e.code)).toEqual(['invalid_payload']);
  });

  it('full: calls refused while the queue is full are reported once per episode, with every id', async () => {
    const { guard, errors } = setup();
    guard.full.add(['a']);
    guard.full.add(['b', 'c']);
    expect(errors).toEqual([]);
    await new Promise((r) => setTimeout(r, 0));
    expect(errors.map((e) => [e.code, e.messageIds])).toEqual([['queue_full', ['a', 'b', 'c']]]);
  });
});
