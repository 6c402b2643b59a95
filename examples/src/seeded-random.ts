// A small seeded PRNG (mulberry32) and the weighted picks the demo dataset needs. Math.random
// cannot be seeded, and the demo warehouse must be byte-for-byte reproducible from its seed so a
// dataset version names one exact content.

/** A deterministic source of uniform numbers in [0, 1). */
export interface SeededRandom {
  /** Next uniform number in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** Picks an index with probability proportional to `weights[i]` (weights ≥ 0, sum > 0). */
  weightedIndex(weights: readonly number[]): number;
}

/** Creates a mulberry32 generator; the same seed always yields the same sequence. */
export function createSeededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int(min, max) {
      return min + Math.floor(next() * (max - min + 1));
    },
    weightedIndex(weights) {
      let total = 0;
      for (const w of weights) total += w;
      let r = next() * total;
      for (let i = 0; i < weights.length; i++) {
        r -= weights[i]!;
        if (r < 0) return i;
      }
      // Float rounding can leave r at exactly 0 after the last weight: take the last positive one.
      for (let i = weights.length - 1; i >= 0; i--) if (weights[i]! > 0) return i;
      return 0;
    },
  };
}
