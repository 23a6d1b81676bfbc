// A seeded PRNG (mulberry32): every choice of a run comes from it, so a seed replays the run exactly.
export function createRng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer in [lo, hi]. */
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p: number) => next() < p,
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)],
    /** Picks a key by weight. */
    weighted: <K extends string>(w: Record<K, number>): K => {
      const keys = Object.keys(w) as K[];
      let r = next() * keys.reduce((a, k) => a + w[k], 0);
      for (const k of keys) if ((r -= w[k]) < 0) return k;
      return keys[keys.length - 1];
    },
  };
}
export type Rng = ReturnType<typeof createRng>;
