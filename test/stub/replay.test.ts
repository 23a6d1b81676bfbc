import { describe, expect, it, vi } from 'vitest';
import { createReplay } from '../../src/stub/replay';
import type { CoreAnalytics, RecordedPage } from '../../src/api/types';

// The stub's replay on its own (src/stub/replay.ts): a recorded call runs with its page and time; the calls still to
// take from storage wait for a load and for storing to be allowed.
const PAGE: RecordedPage = ['https://shop.example/', 'Shop', ''];

function setup() {
  const invoke = vi.fn(() => Promise.resolve({ event: {} as any }));
  const productViewed = vi.fn();
  const on = vi.fn();
  const api = { on, ecommerce: { productViewed } } as unknown as CoreAnalytics;
  return { replay: createReplay(() => api, invoke), invoke, productViewed, on, api };
}

describe('the stub replay', () => {
  it('runs a recorded message call with its page and time; pageview as a page of that path; group() with no argument is not replayed', () => {
    const { replay, invoke } = setup();
    replay.run('track', ['Clicked', { a: 1 }], PAGE, 42);
    replay.run('pageview', ['/p'], PAGE, 43);
    replay.run('group', [], PAGE, 44);
    expect(invoke.mock.calls).toEqual([
      ['track', ['Clicked', { a: 1 }], { page: PAGE, time: 42 }],
      ['page', [{ path: '/p' }], { page: PAGE, time: 43 }],
    ]);
  });

  it('runs a helper (ecommerce.productViewed) with the call site after its three arguments, and other methods on the API', () => {
    const { replay, productViewed, on, api } = setup();
    replay.run('ecommerce.productViewed', [{ product_id: 'p' }], PAGE, 7);
    expect(productViewed).toHaveBeenCalledWith({ product_id: 'p' }, undefined, undefined, { page: PAGE, time: 7 });
    const handler = () => {};
    replay.run('on', ['track', handler], PAGE, 8);
    expect(on).toHaveBeenCalledWith('track', handler);
    expect(on.mock.contexts[0]).toBe(api);
  });

  it('drops what cannot be replayed, and never throws (unknown methods, a prototype name, a helper that throws)', () => {
    const { replay, productViewed } = setup();
    productViewed.mockImplementation(() => {
      throw new Error('bad');
    });
    expect(() => replay.run('nope', [], PAGE, 1)).not.toThrow();
    expect(() => replay.run('constructor', [], PAGE, 1)).not.toThrow();
    expect(() => replay.run('toString', [], PAGE, 1)).not.toThrow();
    expect(() => replay.run('ecommerce.productViewed', [{}], PAGE, 1)).not.toThrow();
  });

  it('keeps the recorded calls until storing is allowed: from memory meanwhile (still kept), from storage once open (then taken)', () => {
    const { replay } = setup();
    const recorded = vi.fn();
    replay.take(true); // nothing kept yet: nothing runs
    replay.keep(recorded);
    replay.take(false);
    expect(recorded.mock.calls).toEqual([[false]]);
    replay.take(true);
    replay.take(true);
    expect(recorded.mock.calls).toEqual([[false], [true]]);
  });

  it("runs only the API's own methods: a name from the buffer never reaches a prototype's", () => {
    const inherited = vi.fn();
    const api = Object.assign(Object.create({ inherited, ecommerce: { productViewed: inherited } }), { ecommerce: Object.create({ productViewed: inherited }) });
    const replay = createReplay(() => api, vi.fn());
    for (const m of ['inherited', 'ecommerce.productViewed', 'constructor', 'hasOwnProperty']) replay.run(m, [], PAGE, 1);
    expect(inherited).not.toHaveBeenCalled();
  });

  it('a take-over that throws never throws into the page', () => {
    const { replay } = setup();
    replay.keep(() => {
      throw new Error('storage broke');
    });
    expect(() => replay.take(true)).not.toThrow();
  });
});
