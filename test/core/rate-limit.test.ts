/**
 * The token bucket (fake clock): at most a burst of `capacity` and `capacity` per refill period on average, each key
 * on its own; it says how long to wait, forgets keys whose bucket is full again, and 0 turns it off.
 */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/core/rate-limit.js';

describe('RateLimiter (fake clock)', () => {
  it('allows at most N per key in any period, each key on its own', () => {
    let now = 0;
    const limiter = new RateLimiter({ capacity: 6, refillMs: 60_000, now: () => now });
    const asked: number[] = [];
    // Try to start a 3-ask evaluation every second for 5 minutes.
    for (now = 0; now < 300_000; now += 1_000) if (limiter.take('a.example', 3) === 0) asked.push(now);
    // A token bucket: at most a full bucket's burst plus one minute's refill in any 60 s window, N per minute on
    // average.
    for (const t of asked) expect(asked.filter((u) => u >= t && u < t + 60_000).length * 3).toBeLessThanOrEqual(2 * 6);
    expect(asked.length * 3).toBeLessThanOrEqual(6 + 6 * 5);
    expect(asked.length).toBeGreaterThanOrEqual(10);
    expect(limiter.take('b.example', 3)).toBe(0);
  });

  it('says how long to wait, and forgets keys whose bucket is full again', () => {
    let now = 0;
    const limiter = new RateLimiter({ capacity: 6, refillMs: 60_000, now: () => now });
    expect(limiter.take('a', 6)).toBe(0);
    expect(limiter.take('a', 3)).toBe(30_000);
    now = 30_000;
    expect(limiter.take('a', 3)).toBe(0);
    for (let i = 0; i < 2000; i++) limiter.take(`h${i}`, 1);
    now = 10 * 60_000;
    for (let i = 0; i < 1024; i++) limiter.take('z', 0);
    expect(limiter.size).toBeLessThanOrEqual(2);
  });

  it('never bursts past its capacity: a larger take waits for a full bucket and empties it', () => {
    let now = 0;
    const limiter = new RateLimiter({ capacity: 4, refillMs: 1000, now: () => now });
    expect(limiter.take('a', 1)).toBe(0);
    expect(limiter.take('a', 10)).toBe(250);
    now = 250;
    expect(limiter.take('a', 10)).toBe(0);
    expect(limiter.allow('a')).toBe(false);
  });

  it('allows a burst of its capacity per key, then one per refill share (requests per second)', () => {
    let now = 1_000_000;
    // 5 per second with a burst of two seconds' worth, as serve configures it.
    const limiter = new RateLimiter({ capacity: 10, refillMs: 2000, now: () => now });
    const burst = Array.from({ length: 12 }, () => limiter.allow('10.0.0.1'));
    expect(burst.filter(Boolean)).toHaveLength(10);
    expect(limiter.allow('10.0.0.2')).toBe(true);
    now += 200;
    expect(limiter.allow('10.0.0.1')).toBe(true);
    expect(limiter.allow('10.0.0.1')).toBe(false);
  });

  it('bounds its keys: past maxKeys it forgets them (more lenient for a moment, never more strict)', () => {
    const now = 0;
    const limiter = new RateLimiter({ capacity: 1, refillMs: 60_000, maxKeys: 100, now: () => now });
    for (let i = 0; i < 100; i++) expect(limiter.allow(`k${i}`)).toBe(true);
    expect(limiter.allow('k0')).toBe(false);
    expect(limiter.size).toBe(100);
    expect(limiter.allow('k100')).toBe(true);
    expect(limiter.size).toBeLessThanOrEqual(100);
  });

  it('does not limit at capacity 0', () => {
    const limiter = new RateLimiter({ capacity: 0, refillMs: 1000, now: () => 0 });
    for (let i = 0; i < 1000; i++) expect(limiter.allow('a')).toBe(true);
    expect(limiter.size).toBe(0);
  });
});
