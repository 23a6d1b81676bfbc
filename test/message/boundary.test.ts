import { describe, expect, it, vi } from 'vitest';
import { isNative } from '../../src/message/boundary';

describe('isNative (src/message/boundary.ts)', () => {
  it("tells the engine's own functions from the page's", () => {
    expect(isNative(JSON.stringify)).toBe(true);
    expect(isNative(() => 1)).toBe(false);
    expect(isNative(function stringify() {})).toBe(false);
    expect(isNative(undefined)).toBe(false);
    expect(isNative({ toString: () => 'function () { [native code] }' })).toBe(false);
  });

  it('message/validate.ts starts on a page that broke Function.prototype.toString (it threw into the page at load), and serialises with its own code', async () => {
    vi.resetModules();
    const saved = Object.getOwnPropertyDescriptor(Function.prototype, 'toString')!;
    let validate: typeof import('../../src/message/validate') | undefined;
    let threw: unknown;
    Object.defineProperty(Function.prototype, 'toString', {
      configurable: true,
      writable: true,
      value() {
        throw new Error('toString is broken on this page');
      },
    });
    try {
      validate = await import('../../src/message/validate');
    } catch (e) {
      threw = e;
    } finally {
      Object.defineProperty(Function.prototype, 'toString', saved);
    }
    expect(threw).toBeUndefined();
    expect(validate!.stringify({ a: [1, 'x'], b: null })).toBe('{"a":[1,"x"],"b":null}');
  });
});
