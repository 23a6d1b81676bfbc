import { describe, expect, it } from 'vitest';
import { planFlush, staleClaims, stillQueued } from '../../src/delivery/flush-plan';
import { BODY_OVERHEAD } from '../../src/delivery/batch';
import { LEASE_MS, type QueueRecord } from '../../src/delivery/records';
import { BATCH_LIMIT } from '../../src/message/validate';
import type { Message } from '../../src/message/types';

const NOW = 1_800_000_000_000;
// A record of `bytes` serialised bytes queued `age` ms before NOW.
const rec = (id: string, bytes = 100, age = 0): QueueRecord => ({
  id,
  message: { messageId: id } as unknown as Message,
  bytes,
  queuedAt: NOW - age,
  attempts: 0,
  owner: 'me',
});
const ids = (groups: QueueRecord[][]) => groups.map((g) => g.map((r) => r.id).join(''));
// Bytes of which two fit one request and three do not.
const THIRD = Math.floor((BATCH_LIMIT - BODY_OVERHEAD) / 3) + 10;

describe('planFlush', () => {
  // [case, records queued, the requests planned]
  const table: [string, QueueRecord[], string[]][] = [
    ['nothing queued: nothing to send', [], []],
    ['everything that fits goes in one request, in order', [rec('a'), rec('b'), rec('c')], ['abc']],
    ['over the 500 KB limit: as few requests as fit, in order', [rec('a', THIRD), rec('b', THIRD), rec('c', THIRD), rec('d')], ['ab', 'cd']],
    ['one message alone over half the limit goes alone', [rec('a', BATCH_LIMIT - BODY_OVERHEAD - 50), rec('b', 100)], ['a', 'b']],
    ['an old record is planned like any other (its claim is checked per request: staleClaims)', [rec('a', 100, LEASE_MS + 1), rec('b')], ['ab']],
  ];
  it.each(table)('%s', (_, list, want) => {
    expect(ids(planFlush(list))).toEqual(want);
  });

  it('never puts a record in two requests nor leaves one out, and keeps every request within the limit', () => {
    const list = Array.from({ length: 40 }, (_, i) => rec(String.fromCharCode(65 + i), 1000 + ((i * 7919) % 60000)));
    const batches = planFlush(list);
    expect(batches.flat()).toEqual(list);
    for (const b of batches) expect(b.reduce((n, r) => n + r.bytes + 1, BODY_OVERHEAD - 1)).toBeLessThanOrEqual(BATCH_LIMIT);
  });
});

describe('staleClaims', () => {
  // [case, records of the request, leased tabs, reconcile first]
  const table: [string, QueueRecord[], boolean, boolean][] = [
    ['Web Locks (not leased): never', [rec('a', 100, LEASE_MS * 2)], false, false],
    ['leased, every record queued within half a lease: no', [rec('a', 100, LEASE_MS / 2), rec('b')], true, false],
    ['leased, one record queued over half a lease ago: yes', [rec('a', 100, LEASE_MS / 2 + 1), rec('b')], true, true],
    ['leased, nothing: no', [], true, false],
  ];
  it.each(table)('%s', (_, planned, leased, want) => {
    expect(staleClaims(planned, NOW, leased)).toBe(want);
  });
});

describe('stillQueued', () => {
  const [a, b, c] = [rec('a'), rec('b'), rec('c')];
  const table: [string, QueueRecord[], QueueRecord[], string][] = [
    ['all still queued', [a, b, c], [a, b, c], 'abc'],
    ['some handed to the browser by an exit since: left out', [a, b, c], [b], 'b'],
    ['none left', [a, b], [c], ''],
    ['queued records not planned are not added', [a], [a, b, c], 'a'],
    ['the same record, not an equal one: a record put back is planned again by the next pass', [a], [rec('a')], ''],
  ];
  it.each(table)('%s', (_, planned, queued, want) => {
    expect(ids([stillQueued(planned, queued)])).toEqual([want]);
  });
});
