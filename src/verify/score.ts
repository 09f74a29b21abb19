/**
 * Recomputes a published score record from its Score Explanation (HCS-25 v1.1) with the same aggregation the
 * publisher used (score/aggregate.ts), and reports where the record drifts from what its explanation gives.
 */
import { aggregateTrustScore, type AdapterInput } from '../score/aggregate.js';
import type { ExplanationAdapter, ScoreExplanation, ScoreMessageV2 } from '../format/schema-v2.js';

/** An explanation in one form, whether the record carried ours (`explanation`) or the reference's (`breakdown`). */
export interface NormalizedExplanation {
  staleMultiplier: number;
  adapters: ExplanationAdapter[];
  configDigest?: string;
}

/** A score record as far as checking it goes: a parsed v2 record, or anything shaped like one. */
export type ScoreRecordLike = Pick<ScoreMessageV2, 'trustScores' | 'trustScoreConfigVersion'> &
  Partial<Pick<ScoreMessageV2, 'trustScore' | 'explanation' | 'breakdown' | 'subject'>> & {
    /** A format-3 record's evidence: `config` names the scoring configuration's digest. */
    evidence?: { config?: string };
  };

export function explanationOf(record: ScoreRecordLike): NormalizedExplanation | undefined {
  if (record.explanation) return fromOurs(record.explanation);
  if (!record.breakdown) return undefined;
  // A breakdown's stale values are already multiplied (the reference's form): recomputed as they stand.
  return {
    staleMultiplier: 1,
    ...(record.evidence?.config !== undefined && { configDigest: record.evidence.config }),
    adapters: record.breakdown.adapters
      .filter((a) => a.applicable !== false)
      .map((a) => ({
        id: a.adapterId,
        mode: a.contributionMode,
        w: a.weight,
        in: a.inDenominator,
        t: a.total,
        c: [
          ...a.components.map((c) => ({ k: c.key, v: c.value, s: c.status })),
          ...(a.unavailable ?? []).map((u) => ({
            k: typeof u === 'string' ? u : u.key,
            v: null,
            s: 'missing' as const,
          })),
        ],
      })),
  };
}

function fromOurs(e: ScoreExplanation): NormalizedExplanation {
  return { staleMultiplier: e.staleMultiplier ?? 1, adapters: e.adapters, configDigest: e.configDigest };
}

export interface Recomputed {
  total: number;
  /** Per adapter id: its recomputed total and whether it entered the denominator. */
  adapters: Map<string, { total: number; inDenominator: boolean }>;
}

/**
 * Applies HCS-25 to an explanation: every listed adapter is applicable; a component with `v: null` is non-scorable and
 * unavailable. Deterministic, and the same code path that computed the published score.
 */
export function recomputeScore(explanation: NormalizedExplanation): Recomputed {
  const adapters: AdapterInput[] = explanation.adapters.map((a) => ({
    adapterId: a.id,
    contributionMode: a.mode,
    weight: a.w,
    components: a.c.map((c) => ({
      key: c.k,
      value: c.v ?? 0,
      status: c.s,
      ...(c.v === null ? { nonScorable: true } : {}),
    })),
  }));
  const result = aggregateTrustScore({
    subject: { id: 'recompute' },
    trustScoreConfigVersion: 1,
    staleMultiplier: explanation.staleMultiplier,
    adapters,
    now: new Date(0),
  });
  const inDenominator = new Set(result.denominator.map((d) => d.adapterId));
  const out = new Map<string, { total: number; inDenominator: boolean }>();
  // An adapter that produced nothing has total 0 (HCS-25 Adapter Total).
  for (const a of explanation.adapters)
    out.set(a.id, { total: result.trustScores[a.id] ?? 0, inDenominator: inDenominator.has(a.id) });
  return { total: result.trustScores.total, adapters: out };
}

export interface ScoreDrift {
  /** Path of the published field that disagrees, e.g. `trustScores.total`, `explanation.adapters[1].t`. */
  field: string;
  expected: number | boolean | string | null;
  actual: number | boolean | string | null;
}

export interface ScoreCheck {
  /** verified: the record recomputes exactly; mismatch: see `drifts`; unverifiable: see `reason`. */
  status: 'verified' | 'mismatch' | 'unverifiable';
  /**
   * What it was recomputed from: `evidence` (format 3: the cited signals, scored again with the cited config) or
   * `explanation` (v1/v2: the record's own explanation, internal consistency only).
   */
  basis: 'evidence' | 'explanation';
  /** Why it is not checkable: `no-explanation`, `config-unknown`, `evidence-unreadable`, `evidence-not-read`. */
  reason?: string;
  ok: boolean;
  /** The first drift (or, when verified, the total), for one-line reports. */
  field: string;
  expected: number | boolean | string | null;
  actual: number | boolean | string | null;
  drifts: ScoreDrift[];
}

export interface CheckScoreOptions {
  /** The digest of the scoring config the caller expects (score/scoring-config.ts `scoringConfigDigest`). */
  configDigest?: string;
  /** The config version the caller expects. */
  configVersion?: number;
}

/**
 * Recomputes a published score record from its explanation and compares: the composite (`trustScores.total` and
 * `trustScore`), each adapter's total and denominator membership, and each component value mirrored in
 * `trustScores`; optionally the config digest and version. For `hcs25 scores --check-published` and `hcs25 verify`.
 */
export function checkPublishedScore(record: ScoreRecordLike, options: CheckScoreOptions = {}): ScoreCheck {
  const actualTotal = record.trustScores.total;
  const explanation = explanationOf(record);
  if (!explanation) {
    return {
      status: 'unverifiable',
      basis: 'explanation',
      reason: 'no-explanation',
      ok: false,
      field: 'explanation',
      expected: null,
      actual: null,
      drifts: [],
    };
  }
  const recomputed = recomputeScore(explanation);
  const drifts: ScoreDrift[] = [];
  const compare = (field: string, expected: ScoreDrift['expected'], actual: ScoreDrift['actual']) => {
    if (expected !== actual) drifts.push({ field, expected, actual });
  };

  compare('trustScores.total', recomputed.total, actualTotal);
  if (record.trustScore !== undefined) compare('trustScore', actualTotal, record.trustScore);
  const where = record.explanation ? 'explanation.adapters' : 'breakdown.adapters';
  explanation.adapters.forEach((a, i) => {
    const r = recomputed.adapters.get(a.id)!;
    compare(`${where}[${i}].t`, r.total, a.t);
    compare(`${where}[${i}].in`, r.inDenominator, a.in);
    for (const c of a.c) {
      if (c.v === null) continue;
      const published = record.trustScores[c.k];
      // A v1-shaped record keys trustScores by adapter id; only mirrored components are compared.
      if (published !== undefined) compare(`trustScores.${c.k}`, c.v, published);
    }
  });
  if (options.configDigest !== undefined)
    compare('explanation.configDigest', options.configDigest, explanation.configDigest ?? null);
  if (options.configVersion !== undefined)
    compare('trustScoreConfigVersion', options.configVersion, record.trustScoreConfigVersion);

  const first = drifts[0];
  if (first) return { status: 'mismatch', basis: 'explanation', ok: false, ...first, drifts };
  return {
    status: 'verified',
    basis: 'explanation',
    ok: true,
    field: 'trustScores.total',
    expected: recomputed.total,
    actual: actualTotal,
    drifts,
  };
}

export interface ScoreChecks {
  counts: { verified: number; mismatch: number; unverifiable: number };
  results: Array<ScoreCheck & { subject?: string }>;
}

/** `checkPublishedScore` over many records (e.g. a score topic), with counts by status, in the records' order. */
export function checkPublishedScores(records: Iterable<ScoreRecordLike>, options: CheckScoreOptions = {}): ScoreChecks {
  const results = [...records].map((r) => ({
    ...checkPublishedScore(r, options),
    ...(r.subject ? { subject: r.subject } : {}),
  }));
  const count = (status: ScoreCheck['status']) => results.filter((r) => r.status === status).length;
  return {
    counts: { verified: count('verified'), mismatch: count('mismatch'), unverifiable: count('unverifiable') },
    results,
  };
}
