/**
 * A subject's history: availability and latency over the last 24 h, 7 d and 30 d, and per bucket of one of those
 * windows (with the score in force at each bucket's end) for a chart. Pure: the serve store reads the samples and the
 * stored score changes, this adds them up.
 *
 * - A signal counts at its consensus time (the ledger's, which no publisher can move); a window is (now − span, now].
 * - A signal with status `missing` measured nothing: it counts nowhere.
 * - Availability: reachable probes / probes, as the score's `reachable-share` counts them.
 * - Latency: nearest-rank p50/p95 (score/window.ts `percentile`) of the latency signal the scoring configuration names
 *   (`latency.signal`, the availability probe by default), only the measured ones (a reachable probe; an eval with
 *   status ok): an unreachable probe's time is a timeout, not a response time. The rule of the score's own p50/p95.
 */
import { percentile, type LatencySummary } from './window.js';

export const HISTORY_WINDOWS = ['24h', '7d', '30d'] as const;
export type HistoryWindow = (typeof HISTORY_WINDOWS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Each window's span and the bucket size of its series: hourly for 24 h and 7 d, daily for 30 d. */
export const WINDOW_SPANS: Readonly<Record<HistoryWindow, { spanMs: number; bucketMs: number }>> = {
  '24h': { spanMs: DAY_MS, bucketMs: HOUR_MS },
  '7d': { spanMs: 7 * DAY_MS, bucketMs: HOUR_MS },
  '30d': { spanMs: 30 * DAY_MS, bucketMs: DAY_MS },
};

/** The longest window: how far back a history reads. */
export const HISTORY_SPAN_MS = WINDOW_SPANS['30d'].spanMs;

/** One signal as the history counts it. */
export interface HistorySample {
  /** Consensus time, ms. */
  ms: number;
  /** For an availability probe that measured something: whether it reached the subject; otherwise null. */
  reachable: boolean | null;
  /** The latency when it counts (a measured signal of the latency signal id), else null. */
  latencyMs: number | null;
}

/** A stored score change. */
export interface ScoreChange {
  ms: number;
  total: number;
  confidence: number;
}

export interface WindowSummary {
  window: HistoryWindow;
  from: string;
  to: string;
  probes: number;
  reachable: number;
  /** reachable / probes (0–1), or null without probes. */
  availability: number | null;
  latency: LatencySummary | null;
}

export interface HistoryBucket {
  /** The bucket is (start, end]. */
  start: string;
  end: string;
  probes: number;
  reachable: number;
  availability: number | null;
  latency: LatencySummary | null;
  /** The stored score at the bucket's end (its newest change at or before it), or null before the first. */
  total: number | null;
  confidence: number | null;
}

export interface HistorySeries {
  window: HistoryWindow;
  bucketSeconds: number;
  buckets: HistoryBucket[];
}

export interface SubjectHistory {
  topic: string;
  subject: string;
  /** Where every window ends. */
  now: string;
  /** The signal id whose latency counts. */
  latencySignal: string;
  /** 24 h, 7 d and 30 d, in that order. */
  windows: WindowSummary[];
  series: HistorySeries;
}

/** Counts of one stretch of time. */
class Tally {
  probes = 0;
  reachable = 0;
  readonly latencies: number[] = [];

  add(s: HistorySample): void {
    if (s.reachable !== null) {
      this.probes++;
      if (s.reachable) this.reachable++;
    }
    if (s.latencyMs !== null) this.latencies.push(s.latencyMs);
  }

  availability(): number | null {
    return this.probes === 0 ? null : this.reachable / this.probes;
  }

  latency(): LatencySummary | null {
    if (this.latencies.length === 0) return null;
    const sorted = this.latencies.sort((a, b) => a - b);
    return { p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95), samples: sorted.length };
  }
}

/**
 * The history at `nowMs` from the samples (any order; those outside the 30-day window are ignored) and the score
 * changes (ascending time; the newest at or before the series' start gives its first value).
 */
export function summarizeHistory(
  samples: readonly HistorySample[],
  changes: readonly ScoreChange[],
  options: { topic: string; subject: string; nowMs: number; window: HistoryWindow; latencySignal: string },
): SubjectHistory {
  const { nowMs } = options;
  const iso = (ms: number) => new Date(ms).toISOString();
  const windows = HISTORY_WINDOWS.map((w) => {
    const fromMs = nowMs - WINDOW_SPANS[w].spanMs;
    const tally = new Tally();
    for (const s of samples) if (s.ms > fromMs && s.ms <= nowMs) tally.add(s);
    return {
      window: w,
      from: iso(fromMs),
      to: iso(nowMs),
      probes: tally.probes,
      reachable: tally.reachable,
      availability: tally.availability(),
      latency: tally.latency(),
    } satisfies WindowSummary;
  });

  const { spanMs, bucketMs } = WINDOW_SPANS[options.window];
  const fromMs = nowMs - spanMs;
  const count = spanMs / bucketMs;
  const tallies = Array.from({ length: count }, () => new Tally());
  for (const s of samples) {
    if (!(s.ms > fromMs && s.ms <= nowMs)) continue;
    // Bucket k is (from + k·size, from + (k+1)·size].
    tallies[Math.ceil((s.ms - fromMs) / bucketMs) - 1]!.add(s);
  }
  let next = 0;
  let score: ScoreChange | null = null;
  const buckets = tallies.map((tally, k): HistoryBucket => {
    const endMs = fromMs + (k + 1) * bucketMs;
    while (next < changes.length && changes[next]!.ms <= endMs) score = changes[next++]!;
    return {
      start: iso(endMs - bucketMs),
      end: iso(endMs),
      probes: tally.probes,
      reachable: tally.reachable,
      availability: tally.availability(),
      latency: tally.latency(),
      total: score?.total ?? null,
      confidence: score?.confidence ?? null,
    };
  });
  return {
    topic: options.topic,
    subject: options.subject,
    now: iso(nowMs),
    latencySignal: options.latencySignal,
    windows,
    series: { window: options.window, bucketSeconds: bucketMs / 1000, buckets },
  };
}
