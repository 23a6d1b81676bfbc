import { stringify } from '../message/validate';
import type { NoteStorage } from './platform';
import { ERASED_KEY } from './lifecycle';

// The exit note (the platform's `_storage`: localStorage in a page): ids handed to the browser as a page went away,
// written synchronously; the next load (or this page, if it is restored) deletes their records from IndexedDB (see
// `finishHandoffs`). This file owns its schema: a JSON list of message ids under NOTE_KEY, read by other tabs and by
// older versions of the library. `s` undefined: the page's own localStorage.
export const NOTE_KEY = 'svc_sent';
// Taken when the bundle runs (a page may replace JSON later).
const parse = JSON.parse;
// (inside a try: reading `localStorage` throws where storage is blocked, and where there is none)
const storage = (s?: NoteStorage) => s || localStorage;

/** The ids noted (by this page or another), or none when the note is missing, unreadable or not a list. */
export const noted = (s?: NoteStorage): string[] => {
  try {
    const ids = parse(storage(s).getItem(NOTE_KEY) || '[]');
    return Array.isArray(ids) ? ids : [];
  } catch {
    return [];
  }
};
// False when no note could be written (no localStorage).
const setNote = (ids: string[], s?: NoteStorage): boolean => {
  try {
    ids.length ? storage(s).setItem(NOTE_KEY, stringify(ids)) : storage(s).removeItem(NOTE_KEY);
    return true;
  } catch {
    return false;
  }
};
/** Adds these ids to what this page or another noted before; false when no note could be written. */
export const note = (ids: string[], s?: NoteStorage) => setNote([...new Set(noted(s).concat(ids))], s);
/** Takes these ids out of the note, leaving those other pages noted. */
export const unnote = (ids: string[], s?: NoteStorage) => setNote(noted(s).filter((id) => ids.indexOf(id) < 0), s);
/**
 * What was stored is erased (consent withdrawn or denied, opt-out): tells the site's other pages when, by a storage
 * event of ERASED_KEY (https://html.spec.whatwg.org/multipage/webstorage.html#the-storage-event): they drop what they
 * hold of the records stored before (lifecycle.ts, delivery/start.ts). Nothing of it stays written. (The note's ids
 * leave it once the store's clear committed: start.ts `eraseDelivery`.)
 */
export const tellErased = (s?: NoteStorage) => {
  try {
    storage(s).setItem(ERASED_KEY, '' + Date.now());
    storage(s).removeItem(ERASED_KEY);
  } catch {
    // no localStorage: no other page to tell
  }
};

/**
 * What a load must finish of the hand-offs of earlier pages (or of this one, restored): `forget` deletes the noted
 * records from the store, and only then are their ids taken out of the note (cut off in between, the next load
 * deletes them again). Ids another page notes meanwhile stay noted, and all of them when the delete failed. Runs before the store is read for adoption (see
 * delivery/start.ts).
 */
export function finishHandoffs(forget: (ids: string[]) => Promise<unknown>, s?: NoteStorage): Promise<unknown> | undefined {
  const ids = noted(s);
  // (a delete that failed keeps the note: sim seed 669, where a page whose IndexedDB never opened took the ids of a
  // keepalive request off it, and another tab adopted and sent them again)
  if (ids.length) return forget(ids).then((done) => done && unnote(ids, s));
}
