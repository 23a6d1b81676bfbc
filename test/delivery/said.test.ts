import { describe, expect, it, vi } from 'vitest';
import { sayOnce } from '../../src/delivery/said';
import type { Message } from '../../src/message/types';

const m = (id: string) => ({ messageId: id, type: 'track', event: 'E' }) as unknown as Message;

// 'delivered' is said once per message, whichever way it left (src/delivery/said.ts, issue 27).
describe("the page's one word on delivery", () => {
  it('says each message delivered once: a second way that carried it (the deferred request, a request) says nothing again', () => {
    const emit = vi.fn();
    const say = sayOnce(emit);
    say('delivered', [m('a'), m('b')]);
    // the deferred request the browser sent at its deadline carried b and c
    say('delivered', [m('b'), m('c')]);
    say('delivered', [m('a')]);
    expect(emit.mock.calls).toEqual([
      ['delivered', [m('a'), m('b')]],
      ['delivered', [m('c')]],
    ]);
  });

  it('passes every other event through as it is', () => {
    const emit = vi.fn();
    const say = sayOnce(emit);
    say('retry', 3, 'x');
    say('retry', 3, 'x');
    expect(emit.mock.calls).toEqual([
      ['retry', 3, 'x'],
      ['retry', 3, 'x'],
    ]);
  });

  it('keeps at most about 10,000 ids: a long visit does not grow it for good', () => {
    const emit = vi.fn();
    const say = sayOnce(emit);
    for (let i = 0; i <= 10_001; i++) say('delivered', [m(String(i))]);
    expect(emit).toHaveBeenCalledTimes(10_002);
  });
});
