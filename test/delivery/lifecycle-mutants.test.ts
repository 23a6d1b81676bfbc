// More of the page lifecycle listener's contract (found missing by mutation testing, `npm run mutate`).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listenLifecycle, type LifecycleHandlers } from '../../src/delivery/lifecycle';

const handlers = () => ({ _exit: vi.fn(), _resume: vi.fn(), _online: vi.fn(), _erased: vi.fn() }) satisfies LifecycleHandlers;
const visibility = (state: 'hidden' | 'visible') => {
  vi.spyOn(document, 'visibilityState', 'get').mockReturnValue(state);
  document.dispatchEvent(new Event('visibilitychange'));
};

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe('listenLifecycle', () => {
  it('a hide is an exit (hidden), and the page shown again resumes (not restored from the back/forward cache)', () => {
    const h = handlers();
    const stop = listenLifecycle(h);
    visibility('hidden');
    expect(h._exit.mock.calls).toEqual([['hidden']]);
    expect(h._resume).not.toHaveBeenCalled();
    visibility('visible');
    expect(h._resume.mock.calls).toEqual([[false]]);
    expect(h._exit).toHaveBeenCalledTimes(1);
    stop();
    visibility('hidden');
    expect(h._exit).toHaveBeenCalledTimes(1);
  });

  it('the network coming back is told, until the listener is stopped', () => {
    const h = handlers();
    const stop = listenLifecycle(h);
    dispatchEvent(new Event('online'));
    expect(h._online).toHaveBeenCalledTimes(1);
    stop();
    dispatchEvent(new Event('online'));
    expect(h._online).toHaveBeenCalledTimes(1);
  });

  it('a pageshow that is no restore from the back/forward cache (a first load) resumes nothing', () => {
    const h = handlers();
    const stop = listenLifecycle(h);
    dispatchEvent(Object.assign(new Event('pageshow'), { persisted: false }));
    expect(h._resume).not.toHaveBeenCalled();
    stop();
  });

  it('where there is no document (a worker) it listens to the network only, and never throws', () => {
    vi.stubGlobal('document', undefined);
    const h = handlers();
    let stop!: () => void;
    expect(() => (stop = listenLifecycle(h))).not.toThrow();
    dispatchEvent(new Event('online'));
    expect(h._online).toHaveBeenCalledTimes(1);
    expect(() => stop()).not.toThrow();
    dispatchEvent(new Event('online'));
    expect(h._online).toHaveBeenCalledTimes(1);
  });
});
