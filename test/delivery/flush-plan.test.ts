import { describe, expect, it } from 'vitest';
import { planFlush, stillQueued } from '../../src/delivery/flush-plan';
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
  // [case, records queued, leased tabs, the requests planned (undefined: reconcile first)]
  const table: [string, QueueRecord[], boolean, string[] | undefined][] = [
    ['nothing queued: nothing to send', [], false, []],
    ['nothing queued, leased tabs', [], true, []],
    ['everything that fits goes in one request, in order', [rec('a'), rec('b'), rec('c')], false, ['abc']],
    ['over the 500 KB limit: as few requests as fit, in order', [rec('a', THIRD), rec('b', THIRD), rec('c', THIRD), rec('d')], false, ['ab', 'cd']],
    ['one message alone over half the limit goes alone', [rec('a', BATCH_LIMIT - BODY_OVERHEAD - 50), rec('b', 100)], false, ['a', 'b']],
    ['leased tabs, records younger than the lease: sent', [rec('a', 100, LEASE_MS), rec('b')], true, ['ab']],
    ['leased tabs, a record older than the lease: reconcile first, send nothing yet', [rec('a', 100, LEASE_MS + 1), rec('b')], true, undefined],
    ['Web Locks (not leased): an old record is sent, no reconcile', [rec('a', 100, LEASE_MS + 1), rec('b')], false, ['ab']],
  ];
  it.each(table)('%s', (_, list, leased, want) => {
    const planned = planFlush(list, NOW, leased);
    expect(planned && ids(planned)).toEqual(want);
  });

  it('never puts a record in two requests nor leaves one out, and keeps every request within the limit', () => {
    const list = Array.from({ length: 40 }, (_, i) => rec(String.fromCharCode(65 + i), 1000 + ((i * 7919) % 60000)));
    const batches = planFlush(list, NOW, false);
    expect(batches.flat()).toEqual(list);
    for (const b of batches) expect(b.reduce((n, r) => n + r.bytes + 1, BODY_OVERHEAD - 1)).toBeLessThanOrEqual(BATCH_LIMIT);
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
