import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLedger, next as nextOf, MOVES, TABLE, S, K, N, R, M, D } from '../../src/delivery/ledger';
import type { Message } from '../../src/message/types';

// States by name: the marks a record holds ('' for queued, or gone: no entry in the ledger).
const MARKS: Record<string, number> = { S, K, N, R, M, D };
const state = (name: string) => [...name].reduce((s, c) => s | MARKS[c], 0);
const name = (s: number | undefined) => (s === undefined ? 'refused' : Object.keys(MARKS).filter((c) => s & MARKS[c]).join(''));
// (moves by name: MOVES)
type Move = string;
const next = (s: number, m: Move) => nextOf(s, MOVES.indexOf(m));
const move = (m: Move) => MOVES.indexOf(m);
const msg = (id: string) => ({ messageId: id }) as unknown as Message;
const note = () => JSON.parse(localStorage.getItem('svc_sent') || 'null') as string[] | null;

afterEach(() => localStorage.clear());

describe('the ledger: its transition table', () => {
  // [from, move, to ('refused': the table does not allow it)]
  const table: [string, Move, string][] = [
    ['', 'send', 'S'],
    ['', 'keep', 'K'],
    ['N', 'send', 'SN'],
    ['N', 'keep', 'KN'],
    ['S', 'send', 'refused'],
    ['K', 'keep', 'refused'],
    ['S', 'keep', 'refused'],
    ['R', 'send', 'refused'],
    ['RM', 'keep', 'refused'],
    ['K', 'unkeep', 'S'],
    ['KN', 'unkeep', 'SN'],
    ['S', 'unkeep', 'refused'],
    ['', 'unkeep', 'refused'],
    ['S', 'end', ''],
    ['K', 'end', ''],
    ['KN', 'end', 'N'],
    ['SN', 'end', 'N'],
    ['KR', 'end', 'R'],
    ['', 'end', 'refused'],
    ['N', 'end', 'refused'],
    ['K', 'kept', 'KN'],
    ['KN', 'kept', 'KN'],
    ['S', 'kept', 'refused'],
    ['', 'kept', 'refused'],
    ['', 'handed', 'N'],
    ['S', 'handed', 'SN'],
    ['N', 'handed', 'N'],
    ['K', 'handed', 'refused'],
    ['R', 'handed', 'refused'],
    ['N', 'unhand', ''],
    ['KN', 'unhand', 'K'],
    ['', 'unhand', 'refused'],
    ['K', 'unhand', 'refused'],
    ['', 'remove', 'R'],
    ['S', 'remove', 'SR'],
    ['RM', 'remove', 'RM'],
    ['', 'removeNoted', 'RM'],
    ['KN', 'removeNoted', 'KNRM'],
    ['R', 'noteRemoving', 'RM'],
    ['RM', 'noteRemoving', 'RM'],
    ['', 'noteRemoving', 'refused'],
    ['N', 'noteRemoving', 'refused'],
    ['RM', 'removed', ''],
    ['SR', 'removed', 'S'],
    ['', 'removed', ''],
    ['KNRM', 'erase', 'K'],
    ['SN', 'erase', 'S'],
    ['', 'erase', ''],
    ['', 'cover', 'D'],
    ['S', 'cover', 'SD'],
    ['N', 'cover', 'ND'],
    ['K', 'cover', 'refused'],
    ['R', 'cover', 'refused'],
    ['SD', 'uncover', 'S'],
    ['D', 'uncover', ''],
    ['', 'uncover', 'refused'],
    ['SD', 'end', 'D'],
    ['D', 'keep', 'refused'],
    ['D', 'send', 'SD'],
    ['D', 'remove', 'RD'],
  ];
  it.each(table)('%s, %s: %s', (from, move, to) => {
    expect(name(next(state(from), move))).toBe(to);
  });

  it('names every move in the table, and each move is tested from a state it allows and one it refuses (where there is one)', () => {
    expect(MOVES.length).toBe(TABLE.length);
    for (const m of MOVES) {
      expect(table.some(([from, move, to]) => move == m && to != 'refused' && name(next(state(from), m)) == to)).toBe(true);
      const [any, none] = TABLE[move(m)];
      if (any || none) expect(table.some(([, move, to]) => move == m && to == 'refused')).toBe(true);
    }
  });

  it('reaches from a queued record exactly these states, and no other (a record is never removed and sent, nor in flight twice)', () => {
    const seen = new Set([0]);
    const todo = [0];
    while (todo.length) {
      const s = todo.pop()!;
      for (const m of MOVES) {
        const t = next(s, m);
        if (t !== undefined && !seen.has(t)) seen.add(t), todo.push(t);
      }
    }
    const names = [...seen].map(name).sort();
    // (each of these, and each with D: carried by the deferred request, but never with K)
    const base = ['', 'K', 'KN', 'KNR', 'KNRM', 'KR', 'KRM', 'N', 'NR', 'NRM', 'R', 'RM', 'S', 'SN', 'SNR', 'SNRM', 'SR', 'SRM'];
    expect(names).toEqual([...base, ...base.filter((n) => !n.includes('K')).map((n) => n + 'D')].sort());
    // never in flight both ways at once, noted as being removed only while being removed, never in a keepalive
    // request and the deferred one
    for (const s of seen) expect([!!(s & S && s & K), !!(s & M && !(s & R)), !!(s & K && s & D)]).toEqual([false, false, false]);
  });
});

describe('the ledger: moves, the note and what the page hears', () => {
  it('applies a move to every id, and refuses one the table does not allow: the state stays, and `illegal` hears it', () => {
    const illegal = vi.fn();
    const ledger = createLedger(vi.fn(), undefined, illegal);
    ledger._move(['a', 'b'], move('keep'));
    expect(ledger._state('a')).toBe(K);
    ledger._move(['a'], move('send'));
    expect(illegal).toHaveBeenCalledWith('a', K, move('send'));
    expect(ledger._state('a')).toBe(K);
    ledger._move(['a', 'b'], move('end'));
    expect(ledger._state('a')).toBe(0);
    expect(ledger._marked(S | K | N | R | M)).toEqual([]);
    expect(illegal).toHaveBeenCalledTimes(1);
  });

  it('lists the ids that hold any of the marks asked for, and says each state', () => {
    const ledger = createLedger(vi.fn());
    ledger._move(['a'], move('keep'));
    ledger._move(['b'], move('send'));
    ledger._move(['c'], move('handed'));
    expect([ledger._marked(S | K), ledger._marked(K), ledger._marked(N), ledger._marked(R)]).toEqual([['a', 'b'], ['a'], ['c'], []]);
    expect(['a', 'b', 'c', 'x'].map(ledger._state)).toEqual([K, S, N, 0]);
    // in flight: a and b, counted as they move (a refused move counts nothing)
    expect(ledger._flying()).toBe(2);
    ledger._move(['a', 'c'], move('send'));
    ledger._move(['a'], move('unkeep'));
    expect(ledger._flying()).toBe(3);
    ledger._move(['a', 'b', 'x'], move('end'));
    expect(ledger._flying()).toBe(1);
    ledger._move(['c'], move('remove'));
    ledger._move(['c'], move('end'));
    expect([ledger._flying(), ledger._state('c')]).toEqual([0, N | R]);
  });

  it("says 'delivered' once per message, whichever way it left", () => {
    const emit = vi.fn();
    const ledger = createLedger(emit);
    ledger._delivered([msg('a'), msg('b')]);
    ledger._delivered([msg('b'), msg('c')]);
    ledger._delivered([msg('a')]);
    expect(emit.mock.calls).toEqual([
      ['delivered', [msg('a'), msg('b')]],
      ['delivered', [msg('c')]],
    ]);
  });

  it('keeps at most about 10,000 ids: a long visit does not grow it for good', () => {
    const emit = vi.fn();
    const ledger = createLedger(emit);
    for (let i = 0; i < 10_000; i++) ledger._delivered([msg(String(i))]);
    // 10,000 remembered: said already
    ledger._delivered([msg('9999')]);
    expect(emit).toHaveBeenCalledTimes(10_000);
    ledger._delivered([msg('10000')]);
    // over 10,000: forgotten, so said again
    ledger._delivered([msg('0')]);
    expect(emit).toHaveBeenLastCalledWith('delivered', [msg('0')]);
    expect(emit).toHaveBeenCalledTimes(10_002);
  });

  it('at a page exit notes what was handed over and what is being removed, the removals as noted from then on', () => {
    const ledger = createLedger(vi.fn());
    expect(ledger._noteAll()).toBe(true);
    expect(note()).toBeNull();
    ledger._move(['h'], move('handed'));
    ledger._move(['d'], move('remove'));
    ledger._move(['q'], move('send'));
    expect(ledger._noteAll()).toBe(true);
    expect(note()).toEqual(['h', 'd']);
    expect(ledger._state('d')).toBe(R | M);
    expect(ledger._state('q')).toBe(S);
  });

  it('after an erasure notes nothing it handed over or was removing, and counts its requests in flight as without keepalive', () => {
    const ledger = createLedger(vi.fn());
    ledger._move(['k', 'kn'], move('keep'));
    ledger._move(['kn'], move('kept'));
    ledger._move(['s'], move('send'));
    ledger._move(['h'], move('handed'));
    ledger._move(['d'], move('removeNoted'));
    ledger._erased();
    expect(['k', 'kn', 's', 'h', 'd'].map((id) => name(ledger._state(id)))).toEqual(['S', 'S', 'S', '', '']);
    expect(ledger._noteAll()).toBe(true);
    expect(note()).toBeNull();
  });

  it('takes a removal out of the note once its delete committed, and keeps it noted when the delete failed', () => {
    const ledger = createLedger(vi.fn());
    localStorage.setItem('svc_sent', JSON.stringify(['other']));
    ledger._move(['a', 'b', 'c'], move('remove'));
    ledger._noteAll();
    ledger._move(['u'], move('remove'));
    expect(note()).toEqual(['other', 'a', 'b', 'c']);
    ledger._removed(['a', 'u'], true);
    expect(note()).toEqual(['other', 'b', 'c']);
    ledger._removed(['b'], false);
    expect(note()).toEqual(['other', 'b', 'c']);
    expect([ledger._state('a'), ledger._state('b'), ledger._state('u'), ledger._state('c')]).toEqual([0, 0, 0, R | M]);
  });

  it('notes and takes out of the note what it is told, in the store it was given; false when no note can be written', () => {
    const kept = new Map<string, string>();
    const store = { getItem: (k: string) => kept.get(k) ?? null, setItem: (k: string, v: string) => void kept.set(k, v), removeItem: (k: string) => void kept.delete(k) };
    const ledger = createLedger(vi.fn(), store);
    expect(ledger._note(['a', 'b'])).toBe(true);
    ledger._unnote(['a']);
    expect(JSON.parse(kept.get('svc_sent')!)).toEqual(['b']);
    ledger._unnote([]);
    expect(JSON.parse(kept.get('svc_sent')!)).toEqual(['b']);
    const broken = { ...store, setItem: () => { throw new Error('full'); } };
    expect(createLedger(vi.fn(), broken)._note(['x'])).toBe(false);
    const none = createLedger(vi.fn(), broken);
    none._move(['y'], move('handed'));
    expect(none._noteAll()).toBe(false);
    expect(localStorage.length).toBe(0);
  });
});
