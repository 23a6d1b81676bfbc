import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tellErased, finishHandoffs } from '../../src/delivery/exit-note';

// The note the next load reads (localStorage), or null when there is none.
const note = () => JSON.parse(localStorage.getItem('svc_sent') || 'null') as string[] | null;

beforeEach(() => localStorage.clear());
afterEach(() => localStorage.clear());

describe('finishHandoffs', () => {
  it('deletes what the note names, then takes those ids out of the note', async () => {
    localStorage.setItem('svc_sent', JSON.stringify(['x1', 'x2']));
    let deleted!: () => void;
    const forget = vi.fn((_ids: string[]) => new Promise<boolean>((r) => (deleted = () => r(true))));
    const done = finishHandoffs(forget);
    expect(forget).toHaveBeenCalledWith(['x1', 'x2']);
    // Cut off before the delete committed: the next load deletes again.
    expect(note()).toEqual(['x1', 'x2']);
    // Another page notes its own hand-off meanwhile.
    localStorage.setItem('svc_sent', JSON.stringify(['x1', 'x2', 'y1']));
    deleted();
    await done;
    expect(note()).toEqual(['y1']);
  });

  it('keeps the note when the delete failed (a page whose IndexedDB never opened: sim seed 669)', async () => {
    localStorage.setItem('svc_sent', JSON.stringify(['x1', 'x2']));
    await finishHandoffs(async () => undefined);
    expect(note()).toEqual(['x1', 'x2']);
  });

  it('does nothing without a note', async () => {
    const forget = vi.fn(async () => {});
    await finishHandoffs(forget);
    expect(forget).not.toHaveBeenCalled();
  });

  it('reads the note with the JSON.parse of load time (a page may have replaced it since)', async () => {
    localStorage.setItem('svc_sent', JSON.stringify(['x1']));
    const forget = vi.fn(async () => {});
    const original = JSON.parse;
    JSON.parse = () => {
      throw new Error('replaced by the page');
    };
    try {
      await finishHandoffs(forget);
    } finally {
      JSON.parse = original;
    }
    expect(forget).toHaveBeenCalledWith(['x1']);
  });
});

describe('tellErased', () => {
  it("tells the site's other pages when it erased (a storage event) without leaving anything written; the note is eraseDelivery's", () => {
    localStorage.setItem('svc_sent', JSON.stringify(['x1']));
    const writes: [string, string | null][] = [];
    const s = {
      getItem: (k: string) => localStorage.getItem(k),
      setItem: (k: string, v: string) => (writes.push([k, v]), localStorage.setItem(k, v)),
      removeItem: (k: string) => (writes.push([k, null]), localStorage.removeItem(k)),
    };
    vi.spyOn(Date, 'now').mockReturnValue(1234);
    tellErased(s);
    expect(writes).toEqual([['svc_erased', '1234'], ['svc_erased', null]]);
    expect({ ...localStorage }).toEqual({ svc_sent: '["x1"]' });
  });
});
