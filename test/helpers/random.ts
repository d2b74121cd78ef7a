// A seeded pseudo-random source for generated requests: the same seed makes the same run, so a
// failure found by one reproduces from the seed in its test's name.

export interface Random {
  /** A number in [0, 1). */
  next: () => number;
  /** An integer in [0, n). */
  int: (n: number) => number;
  /** True with probability p. */
  chance: (p: number) => boolean;
  pick: <T>(items: readonly T[]) => T;
  /** A copy of `items` in a random order. */
  shuffle: <T>(items: readonly T[]) => T[];
}

/** mulberry32: a 32-bit state is enough to make every run the same; not for secrets. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => items[int(items.length)]!,
    shuffle: (items) => {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(i + 1);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
}

/** A seed from `variable` (decimal or 0x hex) when set, else `fallback`. */
export function seedFrom(variable: string, fallback: number): number {
  const text = process.env[variable];
  return text ? Number(text) >>> 0 : fallback;
}

export const seedHex = (seed: number): string => `0x${seed.toString(16).padStart(8, '0')}`;
