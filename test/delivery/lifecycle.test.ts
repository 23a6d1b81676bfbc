import { afterEach, describe, expect, it, vi } from 'vitest';
import { listenLifecycle, wasDiscarded, type LifecycleHandlers } from '../../src/delivery/lifecycle';

const handlers = () => ({ _exit: vi.fn(), _resume: vi.fn(), _online: vi.fn() }) satisfies LifecycleHandlers;

afterEach(() => {
  delete (document as any).wasDiscarded;
  vi.restoreAllMocks();
});

describe('listenLifecycle', () => {
  it('treats a freeze as a hide: waiting messages leave before the page stops running script', () => {
    const h = handlers();
    const stop = listenLifecycle(h);
    document.dispatchEvent(new Event('freeze'));
    expect(h._exit).toHaveBeenCalledWith('hidden');
    stop();
    document.dispatchEvent(new Event('freeze'));
    expect(h._exit).toHaveBeenCalledTimes(1);
  });

  it('tells pagehide into the back/forward cache from a page that goes for good, and a restore', () => {
    const h = handlers();
    const stop = listenLifecycle(h);
    dispatchEvent(Object.assign(new Event('pagehide'), { persisted: true }));
    dispatchEvent(Object.assign(new Event('pagehide'), { persisted: false }));
    dispatchEvent(Object.assign(new Event('pageshow'), { persisted: true }));
    expect(h._exit.mock.calls).toEqual([['cached'], ['discarded']]);
    expect(h._resume).toHaveBeenCalledWith(true);
    stop();
  });
});

describe('wasDiscarded', () => {
  it('says whether the browser discarded the page this one replaces', () => {
    expect(wasDiscarded()).toBe(false);
    (document as any).wasDiscarded = true;
    expect(wasDiscarded()).toBe(true);
  });
});
