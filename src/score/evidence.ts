/**
 * Evidence strength of a score: how many observations back each component, the 95% Wilson score interval of its
 * success rate, a "low evidence" mark below LOW_EVIDENCE_COUNT observations, and what the score rests on (`basis`).
 *
 * A component's observations are the signals in its window that carried a measurement (`samples`, as scoring counts
 * them); its success rate is its value before m_stale read as a proportion (value / 100). For the signals hcs25
 * publishes (an eval scores 100 correct or 0 otherwise; timeouts and errors score 0; a probe 100 reachable or 0) that
 * is exactly the share of correct answers (or reachable probes); for a publisher's partial scores it is the mean score,
 * so the interval is always around the number the score used. Evals are the config's `mean-score` components,
 * availability its `reachable-share` ones. Pure: the same components and config give the same object.
 */
import type { ScoringConfig } from './scoring-config.js';
import { canonicalSignalId } from '../format/schema-v2.js';

/** What the evidence of a component is read from: the fields of scores.ts's ComponentBreakdown it uses. */
export interface ComponentSamples {
  value: number;
  samples: number;
  omitted?: true;
  beforeStale?: number;
}

/** Fewer observations than this behind a component mark it (and its subject) "low evidence". */
export const LOW_EVIDENCE_COUNT = 5;

/** The standard normal quantile for a two-sided 95% interval. */
export const Z_95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

export interface SignalEvidence {
  /** The component key the signal feeds. */
  component: string;
  /** Measured signals in the component's window (timeouts and errors included: they score 0). */
  observations: number;
  /** observations × success rate (the value before m_stale / 100), to 2 decimals: a count for 0/100 scores. */
  successes: number;
  /** successes / observations, or null without observations. */
  rate: number | null;
  /** 95% Wilson score interval of the rate ([0, 1] without observations), to 4 decimals. */
  interval: Interval;
  /** observations < LOW_EVIDENCE_COUNT. */
  lowEvidence: boolean;
}

export type EvidenceBasis = 'evals' | 'availability-only' | 'none';

export interface EvidenceStrength {
  /** `evals`: some eval observation backs the score; `availability-only`: only probes do; `none`: nothing measured. */
  basis: EvidenceBasis;
  /** Nothing measured, or some component in the score has fewer than `lowEvidenceBelow` observations. */
  lowEvidence: boolean;
  /** LOW_EVIDENCE_COUNT. */
  lowEvidenceBelow: number;
  /** Observations over every eval in the score: the ranking's tie-break after the total (more first). */
  evalObservations: number;
  /** Per eval signal id (the catalog id) that counts in the score. */
  evals: Record<string, SignalEvidence>;
  /** Per availability signal id that counts in the score. */
  availability: Record<string, SignalEvidence>;
}

/**
 * The 95% Wilson score interval for `successes` out of `n` (successes may be fractional, a mean score × n):
 * (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n). Unlike p ± z·√(p(1−p)/n) it stays inside [0, 1] and does not
 * collapse to a point at 0/n or n/n, which is what small samples need. n = 0 gives [0, 1]: nothing is known.
 */
export function wilsonInterval(successes: number, n: number, z = Z_95): Interval {
  if (n <= 0) return { low: 0, high: 1 };
  const p = Math.min(1, Math.max(0, successes / n));
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: round4(Math.max(0, center - half)), high: round4(Math.min(1, center + half)) };
}

/** The evidence behind a subject's score, from its components (SubjectScore.components) and the config that made them. */
export function evidenceStrength(
  components: Readonly<Record<string, ComponentSamples>>,
  config: ScoringConfig,
): EvidenceStrength {
  const evals: Record<string, SignalEvidence> = {};
  const availability: Record<string, SignalEvidence> = {};
  for (const adapter of config.adapters) {
    for (const c of adapter.components) {
      const component = components[c.key];
      // Not in the score: the adapter does not apply, or a non-scorable component was left out.
      if (component === undefined || component.omitted) continue;
      const into = c.method === 'mean-score' ? evals : availability;
      into[canonicalSignalId(c.signal)] = signalEvidence(c.key, component);
    }
  }
  const all = [...Object.values(evals), ...Object.values(availability)];
  const evalObservations = Object.values(evals).reduce((sum, e) => sum + e.observations, 0);
  const probeObservations = Object.values(availability).reduce((sum, e) => sum + e.observations, 0);
  const basis: EvidenceBasis = evalObservations > 0 ? 'evals' : probeObservations > 0 ? 'availability-only' : 'none';
  return {
    basis,
    lowEvidence: basis === 'none' || all.some((e) => e.lowEvidence),
    lowEvidenceBelow: LOW_EVIDENCE_COUNT,
    evalObservations,
    evals: sortedRecord(evals),
    availability: sortedRecord(availability),
  };
}

function signalEvidence(key: string, c: ComponentSamples): SignalEvidence {
  const n = c.samples;
  // The value before m_stale is the measured rate; a stale one keeps it in beforeStale.
  const value = c.beforeStale ?? c.value;
  const successes = n === 0 ? 0 : round2((Math.min(100, Math.max(0, value)) / 100) * n);
  return {
    component: key,
    observations: n,
    successes,
    rate: n === 0 ? null : round4(successes / n),
    interval: wilsonInterval(successes, n),
    lowEvidence: n < LOW_EVIDENCE_COUNT,
  };
}

/**
 * Ranking order among equal totals: more eval observations first (so an availability-only subject comes after any
 * with evals). Negative when `a` comes first.
 */
export function byEvidence(a: Pick<EvidenceStrength, 'evalObservations'>, b: typeof a): number {
  return b.evalObservations - a.evalObservations;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

function sortedRecord<V>(record: Record<string, V>): Record<string, V> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
