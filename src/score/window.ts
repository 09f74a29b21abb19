/** Which signals of a series enter a component (the config's window), and latency percentiles over a window. */
import type { WindowConfig } from './scoring-config.js';

export interface LatencySummary {
  p50Ms: number;
  p95Ms: number;
  samples: number;
}

/** What a window needs of an observation. */
interface Timed {
  observedMs: number;
}

/** `latest`: the last `count` signals by sequence number; `time`: those observed within `seconds` of the newest. */
export function applyWindow<T extends Timed>(list: T[], window: WindowConfig): T[] {
  if (window.kind === 'latest') return list.length <= window.count ? list : list.slice(list.length - window.count);
  let newest = Number.NEGATIVE_INFINITY;
  for (const o of list) if (o.observedMs > newest) newest = o.observedMs;
  const from = newest - window.seconds * 1000;
  return list.filter((o) => o.observedMs >= from);
}

export function latency(
  list: Array<Timed & { measured: boolean; latencyMs: number }>,
  window: WindowConfig,
): LatencySummary | null {
  const values = applyWindow(list, window)
    .filter((o) => o.measured)
    .map((o) => o.latencyMs)
    .sort((a, b) => a - b);
  if (values.length === 0) return null;
  return { p50Ms: percentile(values, 50), p95Ms: percentile(values, 95), samples: values.length };
}

/** Nearest-rank percentile of ascending values: always one of the values, so integer ms stay integers. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of no values');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}
