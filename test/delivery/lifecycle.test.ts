import { afterEach, describe, expect, it, vi } from 'vitest';
import { listenLifecycle, wasDiscarded, type LifecycleHandlers } from '../../src/delivery/lifecycle';

const handlers = () => ({ _exit: vi.fn(), _resume: vi.fn(), _online: vi.fn(), _erased: vi.fn() }) satisfies LifecycleHandlers;

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

describe('listenLifecycle: an erasure in another page', () => {
  it("hears another page's erasure (exit-note.ts tellErased) by its storage event, with its time, and no other key", () => {
    const h = handlers();
    const stop = listenLifecycle(h);
    const storage = (key: string, newValue: string | null) => dispatchEvent(Object.assign(new Event('storage'), { key, newValue }));
    storage('svc_sent', '1234');
    storage('svc_erased', null);
    storage('svc_erased', '1234');
    expect(h._erased.mock.calls).toEqual([[1234]]);
    stop();
    storage('svc_erased', '5678');
    expect(h._erased).toHaveBeenCalledTimes(1);
  });
});

describe('wasDiscarded', () => {
  it('says whether the browser discarded the page this one replaces', () => {
    expect(wasDiscarded()).toBe(false);
    (document as any).wasDiscarded = true;
    expect(wasDiscarded()).toBe(true);
  });
});
