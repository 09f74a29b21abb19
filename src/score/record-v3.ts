/**
 * A computed score as a format-3 score record (format/score-v3.ts): the one mapping, used by the publisher and by the
 * verifier that recomputes a published record from its evidence.
 */
import type { ScoreRecordV3Input } from '../format/score-v3.js';
import type { ScoreReport, SubjectScore } from './scores.js';

/** What every record of a publication cites: where its signals were read, and which payers were accepted. */
export interface ScoreEvidenceSource {
  topic: string;
  /** [first, last] sequence numbers of the signals read. */
  seq: [number, number];
  /** The allow-list applied; absent or empty: any payer. */
  publishers?: readonly string[];
}

/** The evidence source of a score report (undefined when it read no signal, and so has no subject to publish). */
export function evidenceSourceOf(report: ScoreReport): ScoreEvidenceSource | undefined {
  if (!report.topic || !report.seq) return undefined;
  const { accounts } = report.publishers;
  return { topic: report.topic, seq: report.seq, ...(accounts.length > 0 ? { publishers: accounts } : {}) };
}

/**
 * A computed score as a format-3 record: the reference's fields and breakdown (every applicable adapter; a component's
 * value as it entered the total, after m_stale; non-scorable ones that were unavailable under `unavailable`), and
 * the evidence a verifier recomputes it from.
 */
export function scoreRecordV3For(s: SubjectScore, source: ScoreEvidenceSource): ScoreRecordV3Input {
  const components = Object.entries(s.components);
  const publishers = source.publishers ?? [];
  return {
    subject: s.subject,
    trustScore: s.trustScores.total,
    trustScores: { total: s.trustScores.total },
    trustScoreConfigVersion: s.trustScoreConfigVersion,
    trustScoreUpdatedAt: s.trustScoreUpdatedAt,
    trustConfidence: s.trustConfidence,
    breakdown: {
      adapters: s.adapters
        .filter((a) => a.applicable)
        .map((a) => {
          const own = components.filter(([, c]) => c.adapterId === a.adapterId);
          const unavailable = own.filter(([, c]) => c.omitted).map(([key]) => key);
          return {
            adapterId: a.adapterId,
            contributionMode: a.contributionMode,
            inDenominator: a.inDenominator,
            weight: a.weight,
            total: a.total ?? 0,
            components: own
              .filter(([, c]) => !c.omitted)
              .map(([key, c]) => ({ key, value: c.value, status: c.status })),
            ...(unavailable.length > 0 ? { unavailable } : {}),
          };
        }),
    },
    evidence: {
      topic: source.topic,
      seq: source.seq,
      runs: s.evidence.runs,
      ...(publishers.length > 0 ? { publishers: [...publishers] } : {}),
      config: s.trustScoreConfigDigest,
      ...(s.staleMultiplier !== 1 ? { staleMultiplier: s.staleMultiplier } : {}),
    },
  };
}
