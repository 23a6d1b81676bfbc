import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { adoptWaiting, clearWaiting, endWaiting, keepWaiting, readWaiting, stillWaiting, WAIT_STALE_MS } from '../../src/extend/waiting';
import type { Message } from '../../src/message/types';

const msg = (id: string) => ({ type: 'track', event: 'E', messageId: id, timestamp: '2026-01-01T00:00:00.000Z', properties: {} }) as unknown as Message;
const B = 'wk https://api.test/v1/batch';

beforeEach(() => localStorage.clear());
afterEach(() => {
  localStorage.clear();
  vi.restoreAllMocks();
});

describe('messages waiting for middleware, kept for a later page (waiting.ts)', () => {
  it('keeps a message synchronously, and ends its wait', () => {
    expect(keepWaiting(msg('m1'), B, 'p1')).toBe(true);
    expect(readWaiting()!.map((e) => e[0].messageId)).toEqual(['m1']);
    expect(stillWaiting('m1', 'p1')).toBe(true);
    endWaiting('m1', 'p1');
    expect(localStorage.getItem('svc_wait')).toBeNull();
    // gone (ended, or storage cleared by the site): queued where it was made, never lost
    expect(stillWaiting('m1', 'p1')).toBe(true);
  });

  it('another page adopts only what a page of its binding left (gone) or let go stale, oldest first', () => {
    keepWaiting(msg('m1'), B, 'p1');
    keepWaiting(msg('m2'), 'wk https://elsewhere.test/v1/batch', 'p1');
    // p1 lives on: nothing is another's to take
    expect(adoptWaiting(B, 'p2')).toEqual([]);
    dispatchEvent(new Event('pagehide'));
    expect(adoptWaiting(B, 'p2').map((m) => m.messageId)).toEqual(['m1']);
    // adopted: now p2's, and no longer p1's to queue
    expect(stillWaiting('m1', 'p1')).toBe(false);
    expect(stillWaiting('m1', 'p2')).toBe(true);
    // another binding's is not taken
    expect(adoptWaiting('wk other', 'p3')).toEqual([]);
    expect(readWaiting()!.map((e) => [e[0].messageId, e[2]])).toEqual([
      ['m1', 'p2'],
      ['m2', 'p1'],
    ]);
  });

  it('a restored page takes back what it marked left', () => {
    keepWaiting(msg('m1'), B, 'p1');
    dispatchEvent(new Event('pagehide'));
    const shown = new Event('pageshow') as PageTransitionEvent;
    Object.defineProperty(shown, 'persisted', { value: true });
    dispatchEvent(shown);
    expect(adoptWaiting(B, 'p2')).toEqual([]);
    expect(adoptWaiting(B, 'p2', Date.now() + WAIT_STALE_MS + 1).map((m) => m.messageId)).toEqual(['m1']);
  });

  it('says it kept nothing when storage refuses the write, and lets the page queue it itself', () => {
    const set = vi.spyOn(localStorage, 'setItem').mockImplementation(() => {
      throw new DOMException('full', 'QuotaExceededError');
    });
    expect(keepWaiting(msg('m1'), B, 'p1')).toBe(false);
    const get = vi.spyOn(localStorage, 'getItem').mockImplementation(() => {
      throw new DOMException('blocked', 'SecurityError');
    });
    expect(stillWaiting('m1', 'p1')).toBe(true);
    expect(adoptWaiting(B, 'p2')).toEqual([]);
    set.mockRestore();
    get.mockRestore();
  });

  it('ignores what is not an entry, and forgets everything on an erasure', () => {
    localStorage.setItem('svc_wait', JSON.stringify([1, ['x'], [msg('m1'), B, 'p1', 5]]));
    expect(readWaiting()!.map((e) => e[0].messageId)).toEqual(['m1']);
    clearWaiting();
    expect(localStorage.getItem('svc_wait')).toBeNull();
  });
});
