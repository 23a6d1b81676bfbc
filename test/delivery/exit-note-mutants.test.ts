// The exit note's reading and clearing (found missing by mutation testing, `npm run mutate`).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { note, noted, unnote } from '../../src/delivery/exit-note';

beforeEach(() => localStorage.clear());
afterEach(() => localStorage.clear());

describe('exit note', () => {
  it('an unreadable note (damaged, or written by something else) counts as none, and a new note replaces it', () => {
    localStorage.setItem('svc_sent', '{not json');
    expect(noted()).toEqual([]);
    expect(note(['m1'])).toBe(true);
    expect(JSON.parse(localStorage.getItem('svc_sent')!)).toEqual(['m1']);
  });

  it('a note that is no list counts as none', () => {
    localStorage.setItem('svc_sent', '{"m1":true}');
    expect(noted()).toEqual([]);
  });

  it('taking every id out of the note removes it (what was stored is erased: start.ts `eraseDelivery`)', () => {
    note(['m1', 'm2']);
    unnote(['m2', 'm1']);
    expect(localStorage.getItem('svc_sent')).toBeNull();
    expect(noted()).toEqual([]);
  });
});
