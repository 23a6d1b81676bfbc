// The browser's platform (found missing by mutation testing, `npm run mutate`).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { browserPlatform } from '../../src/delivery/platform';

afterEach(() => {
  delete (globalThis as any).fetchLater;
  delete (navigator as any).locks;
  vi.useRealTimers();
  vi.restoreAllMocks();
});

// `fetchLater` whose source (Function.prototype.toString) reads `source`.
function fetchLaterReading(source: string) {
  const fn = function fetchLater() {
    return { activated: false };
  };
  const toString = Function.prototype.toString;
  vi.spyOn(Function.prototype, 'toString').mockImplementation(function (this: unknown) {
    return this === fn ? source : toString.call(this);
  });
  (globalThis as any).fetchLater = fn;
  return fn;
}

describe('browserPlatform', () => {
  it("takes the browser's own fetchLater as each engine prints it (Firefox: on several lines)", () => {
    const fn = fetchLaterReading('function fetchLater() {\n    [native code]\n}');
    expect(browserPlatform()._fetchLater).toBe(fn);
  });

  it("never takes a page's fetchLater that only mentions native code in its source", () => {
    fetchLaterReading('function fetchLater(u, i) { /* { [native code] } */ return fetch(u, i); }');
    expect(browserPlatform()._fetchLater).toBeUndefined();
  });

  it("takes the browser's lock manager", () => {
    const locks = { request: vi.fn(), query: vi.fn() };
    Object.defineProperty(navigator, 'locks', { configurable: true, get: () => locks });
    expect(browserPlatform()._locks).toBe(locks);
  });

  it("takes the page's localStorage for the exit note", () => {
    expect(browserPlatform()._storage).toBe(localStorage);
  });

  it('clears a timer it set', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const p = browserPlatform();
    const fired = vi.fn();
    const handle = p._setTimeout(fired, 100);
    p._clearTimeout(handle);
    vi.advanceTimersByTime(200);
    expect(fired).not.toHaveBeenCalled();
  });
});
