import { describe, expect, it, vi } from 'vitest';
import { createDebugMode } from '../../src/debug/debug-mode';
import { createDebugTools, type DebugTools } from '../../src/debug/debug';

const tools = (): DebugTools => ({ log: vi.fn(), checkEcommerce: vi.fn() });
const settle = () => new Promise((r) => setTimeout(r));

describe('createDebugMode', () => {
  it('loads nothing and runs nothing while off', async () => {
    const load = vi.fn(async () => tools());
    const mode = createDebugMode(load);
    const fn = vi.fn();
    mode.use(fn);
    await settle();
    expect(load).not.toHaveBeenCalled();
    expect(fn).not.toHaveBeenCalled();
  });

  it('tells of a debug chunk that cannot load, once, and goes on with plain console lines (CONTRACT section 1; found by review 8)', async () => {
    const failed = vi.fn();
    const mode = createDebugMode(() => Promise.reject(new Error('blocked')), failed);
    mode.set(true);
    const got: DebugTools[] = [];
    mode.use((t) => got.push(t));
    mode.use((t) => got.push(t));
    await settle();
    expect(failed).toHaveBeenCalledTimes(1);
    expect(String(failed.mock.calls[0][0])).toContain('blocked');
    expect(got).toHaveLength(2);
    expect(typeof got[0].log).toBe('function');
    // no loader at all (an inlined bundle: no file beside it): plain lines, nothing to tell
    const quiet = vi.fn();
    const plainOnly = createDebugMode(undefined, quiet);
    plainOnly.set(true);
    await settle();
    expect(quiet).not.toHaveBeenCalled();
  });

  it('loads the tools once when switched on, and runs uses in call order', async () => {
    const t = tools();
    const load = vi.fn(async () => t);
    const mode = createDebugMode(load);
    mode.set(true);
    const order: number[] = [];
    mode.use(() => order.push(1));
    mode.use((got) => order.push(got === t ? 2 : -2));
    await settle();
    mode.use(() => order.push(3));
    await settle();
    expect(order).toEqual([1, 2, 3]);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('drops uses pending when it is switched off before the tools arrive', async () => {
    let arrive!: (t: DebugTools) => void;
    const mode = createDebugMode(() => new Promise((r) => (arrive = r)));
    mode.set(true);
    const fn = vi.fn();
    mode.use(fn);
    mode.set(false);
    arrive(tools());
    await settle();
    expect(fn).not.toHaveBeenCalled();
  });

  it('falls back to plain console lines when the tools cannot be loaded (a blocked script), or there is no loader', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    for (const mode of [createDebugMode(() => Promise.reject(new Error('blocked'))), createDebugMode()]) {
      mode.set(true);
      let got: DebugTools | undefined;
      expect(() => mode.use((t) => (got = t))).not.toThrow();
      await settle();
      got!.log('track', ['Bought']);
      expect(() => got!.checkEcommerce('Product Added', { price: 'x' })).not.toThrow();
    }
    expect(log.mock.calls).toEqual([
      ['[svc-analytics]', 'track', 'Bought'],
      ['[svc-analytics]', 'track', 'Bought'],
    ]);
    log.mockRestore();
  });

  it('never lets a use that throws (or a page getter the tools read) become an unhandled rejection; later uses still run', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      for (const t of [tools(), createDebugTools()]) {
        const mode = createDebugMode(async () => t);
        mode.set(true);
        mode.use(() => {
          throw new Error('the page replaced console.log with one that throws');
        });
        // A page's properties object with a getter that throws, read by the real tools' checkEcommerce.
        const properties = {
          get price(): number {
            throw new Error('getter threw');
          },
        };
        mode.use((got) => got.checkEcommerce('Product Added', properties));
        const later = vi.fn();
        mode.use(later);
        await settle();
        mode.use(later);
        await settle();
        expect(later).toHaveBeenCalledTimes(2);
      }
      await settle();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
      warn.mockRestore();
    }
  });
});
