/**
 * Check published scores: every score record on a topic recomputed from its Score Explanation (HCS-25 v1.1), and
 * compared with what it publishes and with the scoring configuration the caller uses (`hcs25 scores
 * --check-published`). Records are read through the reader like any consumer: allow-listed, v1 and v2.
 */
import type { Hcs25Client } from '../client.js';
import { DEFAULT_SCORING_CONFIG, scoringConfigDigest, type ScoringConfig } from '../score/scoring-config.js';
import type { ReadRecord } from '../read/types.js';
import {
  checkPublishedScores,
  type CheckScoreOptions,
  type ScoreCheck,
  type ScoreChecks,
  type ScoreRecordLike,
} from './score.js';
import { collectSignals } from '../read/read-signals.js';

export interface CheckScoresParameters {
  /** The topic holding the score records (a score topic, or the signal topic itself). */
  topic: string;
  publishers?: readonly string[];
  /**
   * The configuration the records should have been computed with (default: the built-in one): its digest and version
   * are compared with each record's. `null` compares neither (internal consistency only).
   */
  scoring?: ScoringConfig | null;
}

export type PublishedScoreCheck = ScoreCheck & {
  subject?: string;
  sequenceNumber: number;
  index: number;
  consensusAt: string;
};

export interface CheckScoresReturnType {
  topic: string;
  counts: ScoreChecks['counts'];
  results: PublishedScoreCheck[];
  /** What the records were compared with, when a configuration was. */
  config?: { digest: string; version: number };
}

export async function checkScores(
  client: Hcs25Client,
  parameters: CheckScoresParameters,
): Promise<CheckScoresReturnType> {
  const scoring = parameters.scoring === undefined ? DEFAULT_SCORING_CONFIG : parameters.scoring;
  const config = scoring
    ? { digest: scoringConfigDigest(scoring), version: scoring.trustScoreConfigVersion }
    : undefined;
  const { records } = await collectSignals(client, {
    topic: parameters.topic,
    ...(parameters.publishers ? { publishers: parameters.publishers } : {}),
  });
  const checked = checkScoreRecords(
    records,
    config ? { configDigest: config.digest, configVersion: config.version } : {},
  );
  return { topic: parameters.topic, ...checked, ...(config ? { config } : {}) };
}

/** The score records among what the reader read, each checked, with where it was read; counts by status. */
export function checkScoreRecords(
  records: readonly ReadRecord[],
  options: CheckScoreOptions = {},
): Pick<CheckScoresReturnType, 'counts' | 'results'> {
  const scores = records.filter((r) => r.kind === 'score' && r.validated);
  const { counts, results } = checkPublishedScores(
    scores.map((r) => r.message as unknown as ScoreRecordLike),
    options,
  );
  // checkPublishedScores keeps the records' order.
  return {
    counts,
    results: results.map((check, i) => ({
      ...check,
      sequenceNumber: scores[i]!.sequenceNumber,
      index: scores[i]!.index,
      consensusAt: scores[i]!.consensusAt,
    })),
  };
}
