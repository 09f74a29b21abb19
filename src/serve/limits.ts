/**
 * What one client may ask of `hcs25 serve`: URL length, event-stream clients, a per-address request rate, and page
 * sizes. Every list the API returns is a bounded page, so no request does unbounded work.
 */
export interface ServeLimits {
  /** Longest request target (path and query) accepted; longer gets 414. */
  maxUrlLength: number;
  /** Concurrent `/v1/events` clients; more get 503. */
  maxEventClients: number;
  /** Requests per second per client address (token bucket, burst twice that); 0 turns the limit off. */
  requestsPerSecond: number;
  /** Page size when `limit` is not given, and the largest `limit` accepted. */
  defaultPageSize: number;
  maxPageSize: number;
}

export const DEFAULT_LIMITS: ServeLimits = Object.freeze({
  maxUrlLength: 2048,
  maxEventClients: 100,
  requestsPerSecond: 200,
  defaultPageSize: 50,
  maxPageSize: 500,
});

/** A token bucket per client address. Idle buckets are dropped so the map cannot grow without bound. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly burst: number;

  constructor(private readonly perSecond: number) {
    this.burst = perSecond * 2;
  }

  /** True when `address` may make one more request now. */
  take(address: string, now = Date.now()): boolean {
    if (this.perSecond <= 0) return true;
    const b = this.buckets.get(address);
    if (!b) {
      if (this.buckets.size >= 10_000) this.sweep(now);
      this.buckets.set(address, { tokens: this.burst - 1, at: now });
      return true;
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private sweep(now: number): void {
    const full = (this.burst / this.perSecond) * 1000;
    for (const [address, b] of this.buckets) if (now - b.at >= full) this.buckets.delete(address);
    // Still full: many distinct addresses at once; forgetting the oldest only makes the limit more lenient.
    if (this.buckets.size >= 10_000) this.buckets.clear();
  }
}
