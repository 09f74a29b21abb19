import { hash, randomBytes } from 'node:crypto';

/**
 * A small seeded PRNG for question selection. Not for secrets: run keys and anything an agent must not
 * predict come from node:crypto. The seed is a string so a run can record it and `--seed` can replay it.
 */
export interface Rng {
  readonly seed: string;
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher–Yates); the input is left as it is. */
  shuffle<T>(items: readonly T[]): T[];
}

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): 128-bit state, passes PractRand, and is
 * plain 32-bit integer arithmetic, so the same seed yields the same questions on every platform.
 * The state comes from SHA-256 of the seed so that similar seeds ("1", "2") give unrelated streams.
 */
export function createRng(seed: string): Rng {
  // One-shot: a Hash object per question was a visible share of the evaluation's CPU at registry scale.
  const digest = hash('sha256', seed, 'buffer');
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);

  const nextUint32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  // Warm-up rounds recommended for sfc32, so the first outputs do not mirror the seed bytes.
  for (let i = 0; i < 12; i++) nextUint32();

  const next = (): number => nextUint32() / 4294967296;
  const int = (min: number, max: number): number => {
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) {
      throw new RangeError(`rng.int needs integers with min <= max, got ${min}..${max}`);
    }
    return min + Math.floor(next() * (max - min + 1));
  };

  return {
    seed,
    next,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError('rng.pick needs a non-empty array');
      return items[int(0, items.length - 1)] as T;
    },
    shuffle<T>(items: readonly T[]): T[] {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        const tmp = out[i] as T;
        out[i] = out[j] as T;
        out[j] = tmp;
      }
      return out;
    },
  };
}

/** A fresh seed for a run without `--seed`: 64 random bits as 16 hex characters, recorded in the journal. */
export function randomSeed(): string {
  return randomBytes(8).toString('hex');
}
