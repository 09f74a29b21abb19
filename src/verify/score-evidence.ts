/**
 * A format-3 score record checked against its evidence: the cited topic range is read again (only the cited
 * publishers), the subject's signals in it are scored again with the config whose digest the record names, as of its
 * `trustScoreUpdatedAt`, and the record that gives is compared with the published one field by field: the total, each
 * adapter's total, membership and weight, each component's value and status, the runs, the confidence. A record is
 * thereby tied to the signals it claims: a self-consistent record that inflates a score is a mismatch. A record whose
 * config the verifier does not hold is not checkable (`config-unknown`), never verified.
 */
import type { Hcs25Client } from '../client.js';
import { buildScoreMessageV3, withScoreDefaultsV3, type ScoreEvidenceV3 } from '../format/score-v3.js';
import type { ReadSignal } from '../read/types.js';
import { collectSignals } from '../read/read-signals.js';
import { scoreRecordV3For } from '../score/record-v3.js';
import { ScoreAccumulator } from '../score/scores.js';
import { scoringConfigDigest, type ScoringConfig } from '../score/scoring-config.js';
import type { ScoreCheck, ScoreDrift } from './score.js';

/** A read format-3 score record (the reader put its defaults back). */
type RecordV3 = Record<string, unknown> & {
  subject: string;
  trustScoreUpdatedAt: string;
  evidence: ScoreEvidenceV3;
};

type Value = ScoreDrift['expected'];
type Adapter = {
  adapterId: string;
  contributionMode: string;
  inDenominator: boolean;
  weight: number;
  total: number;
  components: Array<{ key: string; value: number; status: string }>;
  unavailable: string[];
};

/**
 * Recomputes `record` from `signals` (those the cited range holds, read with the cited publishers) with `config`, and
 * lists every difference. Pure: the same inputs give the same drifts.
 */
export function recomputeFromEvidence(
  record: RecordV3,
  signals: Iterable<ReadSignal>,
  config: ScoringConfig,
): ScoreDrift[] {
  const [first, last] = record.evidence.seq;
  const scoring = new ScoreAccumulator(config, new Date(record.trustScoreUpdatedAt));
  for (const s of signals)
    if (s.message.subject === record.subject && s.sequenceNumber >= first && s.sequenceNumber <= last) scoring.add(s);
  const scored = scoring.finish().subjects[0];
  if (!scored) {
    const total = (record.trustScores as { total?: unknown } | undefined)?.total;
    const expected = 'no score (no signal of the subject in the cited range)';
    return [{ field: 'evidence', expected, actual: typeof total === 'number' ? total : null }];
  }
  const { topic, seq, publishers } = record.evidence;
  const input = scoreRecordV3For(scored, { topic, seq, ...(publishers ? { publishers } : {}) });
  const expected = withScoreDefaultsV3(JSON.parse(buildScoreMessageV3(input).json));

  const drifts: ScoreDrift[] = [];
  const compare = (field: string, want: Value, got: unknown) => {
    const actual = typeof got === 'number' || typeof got === 'boolean' || typeof got === 'string' ? got : null;
    if (want !== actual) drifts.push({ field, expected: want, actual });
  };
  const totals = (r: Record<string, unknown>) => r.trustScores as { total: number };
  compare('trustScores.total', totals(expected).total, totals(record).total);
  compare('trustScore', expected.trustScore as number, record.trustScore);
  compare('trustScoreConfigVersion', expected.trustScoreConfigVersion as number, record.trustScoreConfigVersion);
  compare('trustConfidence', expected.trustConfidence as number, record.trustConfidence);
  compareAdapters(adaptersOf(expected), adaptersOf(record), compare);
  // Runs a record left out (they did not fit) are not compared; runs it names must be exactly those used.
  if (record.evidence.runs)
    compare('evidence.runs', input.evidence.runs?.join(',') ?? '', record.evidence.runs.join(','));
  compare('evidence.staleMultiplier', config.staleMultiplier, record.evidence.staleMultiplier ?? 1);
  return drifts;
}

function adaptersOf(record: Record<string, unknown>): Map<string, Adapter> {
  const adapters = (record.breakdown as { adapters: Adapter[] }).adapters;
  return new Map(adapters.map((a) => [a.adapterId, a]));
}

function compareAdapters(
  expected: Map<string, Adapter>,
  actual: Map<string, Adapter>,
  compare: (field: string, want: Value, got: unknown) => void,
): void {
  for (const id of new Set([...expected.keys(), ...actual.keys()])) {
    const want = expected.get(id);
    const got = actual.get(id);
    const at = `breakdown.${id}`;
    if (!want || !got) {
      compare(at, want ? 'listed' : 'not applicable', got ? 'listed' : 'missing');
      continue;
    }
    compare(`${at}.total`, want.total, got.total);
    compare(`${at}.inDenominator`, want.inDenominator, got.inDenominator);
    compare(`${at}.weight`, want.weight, got.weight);
    compare(`${at}.contributionMode`, want.contributionMode, got.contributionMode);
    compare(`${at}.unavailable`, want.unavailable.join(','), got.unavailable.join(','));
    const published = new Map(got.components.map((c) => [c.key, c]));
    for (const c of want.components) {
      const p = published.get(c.key);
      compare(`${at}.${c.key}`, c.value, p?.value);
      if (p) compare(`${at}.${c.key}.status`, c.status, p.status);
      published.delete(c.key);
    }
    for (const key of published.keys()) compare(`${at}.${key}`, null, published.get(key)!.value);
  }
}

/** The verdict on one record, from its drifts, or not checkable with a reason. */
export function evidenceVerdict(drifts: ScoreDrift[] | { reason: string; detail: string }, total: number): ScoreCheck {
  if (!Array.isArray(drifts)) {
    const { reason, detail } = drifts;
    return {
      status: 'unverifiable',
      basis: 'evidence',
      reason,
      ok: false,
      field: 'evidence',
      expected: null,
      actual: detail,
      drifts: [],
    };
  }
  const first = drifts[0];
  if (first) return { status: 'mismatch', basis: 'evidence', ok: false, ...first, drifts };
  return {
    status: 'verified',
    basis: 'evidence',
    ok: true,
    field: 'trustScores.total',
    expected: total,
    actual: total,
    drifts,
  };
}

export interface EvidenceCheckOptions {
  /** The scoring configs the verifier holds (the built-in one, and one given with --scoring-config). */
  configs: readonly ScoringConfig[];
}

/**
 * Checks format-3 score records against their evidence, in their order. Each distinct cited range (topic, publishers,
 * first sequence number) is read once; a range that cannot be read makes its records not checkable.
 */
export async function checkRecordsAgainstEvidence(
  client: Hcs25Client,
  records: readonly RecordV3[],
  options: EvidenceCheckOptions,
): Promise<ScoreCheck[]> {
  const byDigest = new Map(options.configs.map((c) => [scoringConfigDigest(c), c]));
  const ranges = new Map<string, Promise<ReadSignal[]>>();
  const read = (e: ScoreEvidenceV3): Promise<ReadSignal[]> => {
    const publishers = e.publishers ?? [];
    const key = `${e.topic} ${publishers.join(',')} ${e.seq[0]}`;
    let signals = ranges.get(key);
    if (!signals) {
      signals = collectSignals(client, {
        topic: e.topic,
        ...(publishers.length > 0 ? { publishers } : {}),
        ...(e.seq[0] > 0 ? { afterSequence: e.seq[0] - 1 } : {}),
      }).then((c) => c.signals);
      ranges.set(key, signals);
    }
    return signals;
  };
  const out: ScoreCheck[] = [];
  for (const record of records) {
    const total = (record.trustScores as { total: number }).total;
    const config = byDigest.get(record.evidence.config);
    if (!config) {
      const detail = `scoring config ${record.evidence.config} is not held (pass it with --scoring-config FILE)`;
      out.push(evidenceVerdict({ reason: 'config-unknown', detail }, total));
      continue;
    }
    let signals: ReadSignal[];
    try {
      signals = await read(record.evidence);
    } catch (err) {
      const detail = `topic ${record.evidence.topic}: ${err instanceof Error ? err.message : 'unreadable'}`;
      out.push(evidenceVerdict({ reason: 'evidence-unreadable', detail }, total));
      continue;
    }
    out.push(evidenceVerdict(recomputeFromEvidence(record, signals, config), total));
  }
  return out;
}
