/**
 * At most N asks per endpoint host per minute: one token bucket per host (capacity N, refilled N per minute).
 * A bucket that has refilled to full is the same as no bucket, so full buckets are dropped: memory follows the hosts
 * being asked now, not every host ever seen.
 */
export interface HostLimiterOptions {
  perMinute: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const MINUTE_MS = 60_000;

export class HostLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly rate: number;
  private readonly now: () => number;
  private takes = 0;

  constructor(private readonly options: HostLimiterOptions) {
    this.rate = options.perMinute / MINUTE_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Takes `asks` tokens from `host`'s bucket when it holds them and returns 0; otherwise takes nothing and returns
   * the ms until it will. An evaluation asking more than N questions waits for a full bucket, so it never bursts past N.
   */
  take(host: string, asks: number): number {
    const need = Math.min(asks, this.options.perMinute);
    const now = this.now();
    if (++this.takes % 1024 === 0) this.prune(now);
    const bucket = this.refill(host, now);
    if (bucket.tokens >= need) {
      bucket.tokens -= need;
      return 0;
    }
    return Math.ceil((need - bucket.tokens) / this.rate);
  }

  /** Hosts with a bucket below full. */
  get size(): number {
    return this.buckets.size;
  }

  private refill(host: string, now: number): Bucket {
    let bucket = this.buckets.get(host);
    if (!bucket) this.buckets.set(host, (bucket = { tokens: this.options.perMinute, at: now }));
    bucket.tokens = Math.min(this.options.perMinute, bucket.tokens + (now - bucket.at) * this.rate);
    bucket.at = now;
    return bucket;
  }

  private prune(now: number): void {
    for (const [host, b] of this.buckets) if (b.tokens + (now - b.at) * this.rate >= this.options.perMinute) this.buckets.delete(host);
  }
}

/** The host an agent is asked at: its endpoint's host, or for HCS-10 its inbound topic (asks are HCS messages). */
export function askHost(agent: { endpoint?: string; inboundTopicId?: string; accountId?: string; subject: string }): string {
  if (agent.endpoint) {
    try {
      return new URL(agent.endpoint).hostname.toLowerCase();
    } catch {
      // Not a URL: fall through to the agent's own identity.
    }
  }
  return agent.inboundTopicId ?? agent.accountId ?? agent.subject;
}
