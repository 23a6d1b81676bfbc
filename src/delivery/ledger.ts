import type { Message } from '../message/types';
import type { NoteStorage } from './platform';
import { note, unnote } from './exit-note';

/**
 * The ledger (issue 27): the one owner of what this page's delivery knows of each record beyond "queued" (in the
 * queue's memory and store, no entry here) and "gone" (no longer anywhere, no entry here). A record's state is a set
 * of these marks, changed only by `_move` through TABLE (a move the table does not allow is refused, the state left
 * as it was, and told to `illegal`: the simulator fails a run on it, sim/check.ts). Marks, not one name per state:
 * they combine (a keepalive request noted at an exit whose delete began when another page erased it is K|N|R); the
 * table test lists the 36 states reachable from "queued" (test/delivery/ledger.test.ts). The queue keeps the records
 * themselves (and which of them a pending write must skip); the deferral keeps the browser's handle of its request;
 * the requests, the hand-off and the deferral move records here and plan from what it says. It also writes the exit
 * note (what a later page reads of this one: exit-note.ts is its schema) and says `'delivered'`.
 */
export const S = 1; // in flight without keepalive: dies with the page
export const K = 2; // in flight with keepalive: outlives the page (https://fetch.spec.whatwg.org/#concept-fetch-group-terminate)
export const N = 4; // handed to the browser at a page exit, and noted (the exit note in localStorage: exit-note.ts)
export const R = 8; // removed for good (delivered, refused, handed over): its delete from IndexedDB not committed yet
export const M = 16; // removing, and named by the exit note (the next load deletes it if the delete is cut off)
export const D = 32; // carried by the deferred request with the browser (deferral.ts), which sends it if the page dies

/** What happens to a record: an index into TABLE (numbers: they cost the bundle nothing; MOVES names them). */
export type Move = number;
// A request takes the record (a queued one, or one handed at an exit that only hid the page, whose request failed
// without an answer): request.ts; `KEEP`: with keepalive (the deferred request was taken back first: a record is never
// both in a keepalive request and in the deferred one, which share the page's 64 KiB).
export const SEND = 0;
export const KEEP = 1;
// The browser refused the keepalive request (its budget), or what was stored was erased: it goes without keepalive.
export const UNKEEP = 2;
// Its request ended (an answer, or none: a network error).
export const END = 3;
// A page exit: the keepalive request in flight is the browser's now, and noted (handoff.ts `_exit`).
export const KEPT = 4;
// A page exit handed it to the browser by beacon or deferred request, and noted it (handoff.ts `_exit`).
export const HANDED = 5;
// This page saw the outcome after all (an answer, or its keepalive request failed while the page lives on): the note
// of it is taken back.
export const UNHAND = 6;
// Delivered, refused or handed over: its delete begins; `REMOVE_NOTED`: named by the exit note already.
export const REMOVE = 7;
export const REMOVE_NOTED = 8;
// A page exit notes what is being removed (handoff.ts `_exit`).
export const NOTE_REMOVING = 9;
// Its delete is over (committed, or failed: a failed one keeps the note, see `_removed`).
export const REMOVED = 10;
// What was stored was erased (consent withdrawn, opt-out): nothing of it is noted or removed any more.
export const ERASE = 11;
// The deferred request carries it now (a record waiting, or in flight without keepalive: deferral.ts `covered`), or
// no longer (taken back, or sent by the browser).
export const COVER = 12;
export const UNCOVER = 13;
/** The moves' names, by index (for tests and the simulator's reports). */
export const MOVES = ['send', 'keep', 'unkeep', 'end', 'kept', 'handed', 'unhand', 'remove', 'removeNoted', 'noteRemoving', 'removed', 'erase', 'cover', 'uncover'];

/**
 * The transition table: for each move, `[any, none, set, clear]`: the state must hold at least one mark of `any` (0:
 * no condition) and none of `none`; the move sets `set`, then clears `clear`. Every state change of a record is one
 * of these rows.
 */
export const TABLE: readonly (readonly [number, number, number, number])[] = [
  /* SEND */ [0, S | K | R, S, 0],
  /* KEEP */ [0, S | K | R | D, K, 0],
  /* UNKEEP */ [K, 0, S, K],
  /* END */ [S | K, 0, 0, S | K],
  /* KEPT */ [K, 0, N, 0],
  /* HANDED */ [0, K | R, N, 0],
  /* UNHAND */ [N, 0, 0, N],
  /* REMOVE */ [0, 0, R, 0],
  /* REMOVE_NOTED */ [0, 0, R | M, 0],
  /* NOTE_REMOVING */ [R, 0, M, 0],
  /* REMOVED */ [0, 0, 0, R | M],
  /* ERASE */ [0, 0, 0, N | R | M],
  /* COVER */ [0, K | R, D, 0],
  /* UNCOVER */ [D, 0, 0, D],
];

/** The state after `move` from `state`, or undefined when the table does not allow it. Pure. */
export function next(state: number, move: Move): number | undefined {
  const [any, none, set, clear] = TABLE[move];
  if ((any && !(state & any)) || state & none) return;
  return (state | set) & ~clear;
}

/**
 * A page's ledger. `emit` hears `'delivered'` (once per message), `store` is where the exit note lives (the
 * platform's `_storage`), `illegal` hears of a move the table refused (its index: MOVES names it).
 */
export function createLedger(emit: (name: 'delivered', messages: Message[]) => void, store?: NoteStorage, illegal?: (id: string, state: number, move: Move) => void) {
  const states = new Map<string, number>();
  // The messages said delivered (forgotten after 10,000: a message is carried twice only within moments).
  const said = new Set<string>();
  // How many records are in flight (S or K): the scheduler asks after every call.
  let flying = 0;
  const marked = (mark: number) => [...states.keys()].filter((id) => states.get(id)! & mark);
  const move = (ids: readonly string[], m: Move) => {
    for (const id of ids) {
      const state = states.get(id) || 0;
      const to = next(state, m);
      if (to === undefined) {
        illegal?.(id, state, m);
        continue;
      }
      flying += +!!(to & (S | K)) - +!!(state & (S | K));
      if (to) states.set(id, to);
      else states.delete(id);
    }
  };

  return {
    _move: move,
    /** The state of `id` (0: queued, or gone). */
    _state: (id: string) => states.get(id) || 0,
    /** The ids that hold any of these marks. */
    _marked: marked,
    /** How many records are in flight (`_marked(S | K).length`, in constant time). */
    _flying: () => flying,
    /**
     * `'delivered'` for these messages: the one place the page hears it from (issue 27), once per message, whichever
     * way it left (an answer to a request, an exit hand-off the browser took, a deferred request the browser sent): a
     * message two of them carried (a deferred request sent at its deadline while a request carried it too) is said once.
     */
    _delivered(messages: Message[]) {
      if (said.size > 1e4) said.clear();
      const fresh = messages.filter((m) => !said.has(m.messageId) && !!said.add(m.messageId));
      if (fresh.length) emit('delivered', fresh);
    },
    /**
     * A page exit: what is being removed is noted too, and the note names every record handed to the browser or being
     * removed (written again: an earlier write may have been cut off). False when no note could be written.
     */
    _noteAll() {
      move(marked(R), NOTE_REMOVING);
      const ids = [...new Set([...marked(N), ...marked(R)])];
      return !ids.length || note(ids, store);
    },
    /**
     * What was stored was erased (consent withdrawn, opt-out): an exit notes nothing more of what this page sent
     * before, and its requests in flight count as without keepalive (none is noted at an exit).
     */
    _erased() {
      move(marked(K), UNKEEP);
      move(marked(N | R), ERASE);
    },
    /** Notes these ids (handed to the browser at an exit): false when no note could be written. */
    _note: (ids: string[]) => note(ids, store),
    /** Takes these ids out of the note. */
    _unnote: (ids: string[]) => void (ids.length && unnote(ids, store)),
    /**
     * The deletes of these records are over (`done`: committed): those named by the note leave it, once committed.
     */
    _removed(ids: string[], done: unknown) {
      const notedIds = ids.filter((id) => states.get(id)! & M);
      move(ids, REMOVED);
      if (done && notedIds.length) unnote(notedIds, store);
    },
  };
}

/** A page's ledger. */
export type Ledger = ReturnType<typeof createLedger>;
