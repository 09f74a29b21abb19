/**
 * The one rate limiter: a token bucket per key. A key's bucket holds at most `capacity` tokens (its largest burst)
 * and refills fully in `refillMs`. `serve` limits requests per client address with it, `watch` asks per agent host.
 *
 * A bucket that has refilled to full is the same as no bucket, so full buckets are dropped from time to time: memory
 * follows the keys active lately, not every key ever seen.
 */
export interface RateLimitOptions {
  /** Tokens a bucket holds at most: the largest burst a key may spend at once. 0 (or less) turns the limit off. */
  capacity: number;
  /** Time for an empty bucket to refill fully, ms. */
  refillMs: number;
  /**
   * Buckets kept at most (default: no bound but the pruning). Past it, after dropping the full ones, all are
   * forgotten: that only makes the limit more lenient for a moment, and bounds memory under a flood of new keys.
   */
  maxKeys?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Takes between two passes over the buckets that drop the full ones. */
const PRUNE_EVERY = 1024;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;
  private takes = 0;

  constructor(private readonly options: RateLimitOptions) {
    if (!(options.refillMs > 0)) throw new RangeError('a rate limit needs a refill time above 0 ms');
    this.now = options.now ?? Date.now;
  }

  /**
   * Takes `tokens` (default 1) from `key`'s bucket when it holds them and returns 0; otherwise takes nothing and
   * returns the ms until it will. Asking for more than `capacity` waits for a full bucket and takes it all, so a key
   * never bursts past `capacity`.
   */
  take(key: string, tokens = 1): number {
    if (!(this.options.capacity > 0)) return 0;
    const need = Math.min(tokens, this.options.capacity);
    const now = this.now();
    if (++this.takes % PRUNE_EVERY === 0) this.prune(now);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.options.maxKeys !== undefined && this.buckets.size >= this.options.maxKeys) {
        this.prune(now);
        if (this.buckets.size >= this.options.maxKeys) this.buckets.clear();
      }
      bucket = { tokens: this.options.capacity, at: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = this.level(bucket, now);
    bucket.at = now;
    if (bucket.tokens >= need) {
      bucket.tokens -= need;
      return 0;
    }
    return Math.ceil(((need - bucket.tokens) * this.options.refillMs) / this.options.capacity);
  }

  /** True when `key` may spend one token now (and it is spent). */
  allow(key: string): boolean {
    return this.take(key) === 0;
  }

  /** Keys with a bucket below full (as of the last pass that dropped the full ones). */
  get size(): number {
    return this.buckets.size;
  }

  private level(bucket: Bucket, now: number): number {
    const { capacity, refillMs } = this.options;
    return Math.min(capacity, bucket.tokens + ((now - bucket.at) * capacity) / refillMs);
  }

  private prune(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (this.level(bucket, now) >= this.options.capacity) this.buckets.delete(key);
    }
  }
}
