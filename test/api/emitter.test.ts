import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGuard, createEmitter } from '../../src/api/emitter';

afterEach(() => {
  vi.useRealTimers();
});

describe('createEmitter', () => {
  it('calls the handlers of an event with its arguments, in the order they were added', () => {
    const e = createEmitter(() => {});
    const order: string[] = [];
    const a = vi.fn(() => order.push('a'));
    const b = vi.fn(() => order.push('b'));
    e.on('track', a);
    e.on('track', b);
    e.emit('track', 'Signed Up', { plan: 'pro' });
    expect(a).toHaveBeenCalledWith('Signed Up', { plan: 'pro' });
    expect(b).toHaveBeenCalledWith('Signed Up', { plan: 'pro' });
    expect(order).toEqual(['a', 'b']);
  });

  it('calls only the handlers of the event emitted', () => {
    const e = createEmitter(() => {});
    const h = vi.fn();
    e.on('page', h);
    e.emit('track', 'x');
    expect(h).not.toHaveBeenCalled();
  });

  it('does nothing for an event without handlers', () => {
    const e = createEmitter(() => {});
    expect(() => e.emit('nothing', 1)).not.toThrow();
  });

  it('stops calling a handler after off', () => {
    const e = createEmitter(() => {});
    const h = vi.fn();
    const other = vi.fn();
    e.on('error', h);
    e.on('error', other);
    e.off('error', h);
    e.emit('error', new Error('x'));
    expect(h).not.toHaveBeenCalled();
    expect(other).toHaveBeenCalledTimes(1);
  });

  it('ignores off for a handler that was never added', () => {
    const e = createEmitter(() => {});
    expect(() => e.off('error', () => {})).not.toThrow();
  });

  it('keeps calling the other handlers when one throws, and does not throw to the caller', () => {
    vi.useFakeTimers();
    const e = createEmitter(() => {});
    const after = vi.fn();
    e.on('track', () => {
      throw new Error('handler failed');
    });
    e.on('track', after);
    expect(() => e.emit('track', 'x')).not.toThrow();
    expect(after).toHaveBeenCalledWith('x');
  });

  it('hands a handler error to `thrown` with the event name, never to the page', () => {
    const thrown = vi.fn();
    const e = createEmitter(thrown);
    const boom = new Error('handler failed');
    e.on('track', () => {
      throw boom;
    });
    expect(() => e.emit('track')).not.toThrow();
    expect(thrown).toHaveBeenCalledWith(boom, 'track');
  });
});

describe('createGuard', () => {
  it('calls the function with the arguments, and hands what it throws to `thrown`', () => {
    const thrown = vi.fn();
    const guard = createGuard(thrown);
    const fn = vi.fn();
    guard(fn, 1, 'a');
    expect(fn).toHaveBeenCalledWith(1, 'a');
    guard(() => {
      throw 'text';
    });
    expect(thrown).toHaveBeenCalledWith('text');
    expect(() => guard(undefined)).not.toThrow();
  });
});
