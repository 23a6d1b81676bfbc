import { describe, expect, it } from 'vitest';
import { body, BODY_OVERHEAD, planBatches } from '../../src/delivery/batch';
import { BATCH_LIMIT, byteLength } from '../../src/message/validate';
import { patched } from '../patched';

interface Item {
  bytes: number;
  message: { messageId: string; pad: string };
}

// A small seeded PRNG (mulberry32), so a failure can be replayed.
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A message of about `size` serialised bytes, with multi-byte characters now and then; `bytes` is exact.
function item(i: number, size: number, multibyte = false): Item {
  const message = { messageId: 'm' + String(i).padStart(6, '0'), pad: '' };
  const fixed = JSON.stringify(message).length;
  message.pad = multibyte ? 'é'.repeat(Math.max(0, Math.floor((size - fixed) / 2))) : 'x'.repeat(Math.max(0, size - fixed));
  return { bytes: byteLength(JSON.stringify(message)), message };
}

const SENT_AT = new Date('2026-01-01T00:00:00.000Z');
const bodyBytes = (group: Item[], writeKey?: string) => byteLength(body(group.map((g) => g.message), SENT_AT, writeKey));

describe('planBatches', () => {
  it('keeps all items in their order', () => {
    const items = Array.from({ length: 50 }, (_, i) => item(i, 100 + i * 37));
    const groups = planBatches(items, 2000);
    expect(groups.flat()).toEqual(items);
    expect(groups.every((g) => g.length > 0)).toBe(true);
  });

  it('returns no groups for no items', () => {
    expect(planBatches([])).toEqual([]);
  });

  it('puts everything in one group when it fits', () => {
    const items = Array.from({ length: 20 }, (_, i) => item(i, 1000));
    expect(planBatches(items)).toEqual([items]);
  });

  it('uses the 500,000-byte limit by default', () => {
    expect(BATCH_LIMIT).toBe(500000);
    const items = Array.from({ length: 40 }, (_, i) => item(i, 30000));
    const groups = planBatches(items);
    expect(groups.length).toBeGreaterThan(1);
    for (const g of groups) expect(bodyBytes(g)).toBeLessThanOrEqual(500000);
  });

  it('never builds a body over the limit, in as few groups as a greedy split allows (random sizes)', () => {
    const random = prng(20260101);
    for (let round = 0; round < 300; round++) {
      const limit = 200 + Math.floor(random() * 5000);
      const count = Math.floor(random() * 40);
      const max = Math.max(60, Math.floor(limit * (0.05 + random())));
      const items = Array.from({ length: count }, (_, i) => item(i, 40 + Math.floor(random() * max), random() < 0.3));
      const withKey = random() < 0.5 ? 'wk_' + 'k'.repeat(Math.floor(random() * 10)) : undefined;
      const groups = planBatches(items, limit);
      const ctx = `round ${round}, limit ${limit}, sizes ${items.map((x) => x.bytes).join(',')}`;

      expect(groups.flat(), ctx).toEqual(items);
      for (const g of groups) {
        expect(g.length, ctx).toBeGreaterThan(0);
        // Only a group of one item may be over the limit (nothing can make that item smaller).
        if (g.length > 1) expect(bodyBytes(g, withKey), ctx).toBeLessThanOrEqual(limit);
      }
      // Greedy and minimal: the next group's first item would not have fitted in the group before it
      // (counting the documented overhead, which covers the body's envelope and a short write key).
      for (let i = 0; i + 1 < groups.length; i++) {
        const joined = [...groups[i], groups[i + 1][0]];
        expect(BODY_OVERHEAD + joined.reduce((n, x) => n + x.bytes, 0) + joined.length - 1, ctx).toBeGreaterThan(limit);
      }
    }
  });

  it('splits into the minimal number of groups for known sizes', () => {
    // overhead 80, limit 300: two items of 100 (80 + 100 + 1 + 100 = 281) fit together, a third does not.
    const items = [100, 100, 100, 100, 100].map((bytes) => ({ bytes }));
    expect(planBatches(items, 300).map((g) => g.length)).toEqual([2, 2, 1]);
    // exactly at the limit still fits: 80 + 109 + 1 + 110 = 300
    expect(planBatches([{ bytes: 109 }, { bytes: 110 }], 300).map((g) => g.length)).toEqual([2]);
    expect(planBatches([{ bytes: 110 }, { bytes: 110 }], 300).map((g) => g.length)).toEqual([1, 1]);
  });

  it('gives an item larger than the limit a group of its own', () => {
    const items = [{ bytes: 10 }, { bytes: 1000 }, { bytes: 10 }, { bytes: 10 }];
    expect(planBatches(items, 300)).toEqual([[items[0]], [items[1]], [items[2], items[3]]]);
    expect(planBatches([{ bytes: 1000 }], 300)).toEqual([[{ bytes: 1000 }]]);
  });

  it('has an overhead that covers the body envelope with a short write key', () => {
    expect(BODY_OVERHEAD).toBeGreaterThanOrEqual(byteLength(body([], SENT_AT, 'k'.repeat(16))) - 2);
  });

  it('counts the overhead it is given', () => {
    const items = [{ bytes: 100 }, { bytes: 100 }];
    expect(planBatches(items, 300, 80)).toHaveLength(1);
    expect(planBatches(items, 300, 100)).toHaveLength(2);
  });
});


describe('body', () => {
  it('is {batch, sentAt} JSON without writeKey by default', () => {
    const text = body([{ a: 1 }], SENT_AT);
    expect(JSON.parse(text)).toEqual({ batch: [{ a: 1 }], sentAt: '2026-01-01T00:00:00.000Z' });
    expect(text).not.toContain('writeKey');
  });

  it('carries writeKey when given', () => {
    expect(JSON.parse(body([{ a: 1 }], SENT_AT, 'k1'))).toEqual({
      batch: [{ a: 1 }],
      sentAt: '2026-01-01T00:00:00.000Z',
      writeKey: 'k1',
    });
  });

  it('has no sentAt when none is given (a deferred request: when the browser sends it is not known)', () => {
    expect(body([{ a: 1 }] as any, undefined, 'k1')).toBe('{"batch":[{"a":1}],"writeKey":"k1"}');
  });

  it('has the messages serialised as they are, so body size = overhead + items + commas', () => {
    const items = [item(1, 500), item(2, 700, true), item(3, 300)];
    const empty = byteLength(body([], SENT_AT));
    expect(bodyBytes(items)).toBe(empty + items.reduce((n, x) => n + x.bytes, 0) + items.length - 1);
  });

  it('is the text JSON.stringify would give for the same body', () => {
    const messages = [{ messageId: 'm1', properties: { list: [1, 'é', null], s: 'a"b\\c\n😀' } }, { messageId: 'm2' }];
    expect(body(messages as any, SENT_AT, 'wk"1')).toBe(JSON.stringify({ batch: messages, sentAt: '2026-01-01T00:00:00.000Z', writeKey: 'wk"1' }));
    expect(body(messages as any, SENT_AT)).toBe(JSON.stringify({ batch: messages, sentAt: '2026-01-01T00:00:00.000Z' }));
  });

  it("is unaffected by a page's JSON.stringify, Array.prototype.toJSON and Date.prototype.toISOString", () => {
    const messages = [{ messageId: 'm1', properties: { list: [1, [2]] } }];
    let text = '';
    patched(JSON, 'stringify', () => 'page', () =>
      patched(Array.prototype as any, 'toJSON', () => 'array', () =>
        patched(Date.prototype, 'toISOString', () => 'page date', () => (text = body(messages as any, SENT_AT, 'k1'))),
      ),
    );
    expect(JSON.parse(text)).toEqual({ batch: messages, sentAt: '2026-01-01T00:00:00.000Z', writeKey: 'k1' });
  });
});
