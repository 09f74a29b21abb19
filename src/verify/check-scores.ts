/**
 * Check published scores (`hcs25 scores --check-published`, and the score part of `hcs25 verify`): a format-3 record
 * is recomputed from its evidence, the cited signals scored again with the cited config (score-evidence.ts); a v1/v2
 * record from its own Score Explanation (HCS-25 v1.1: internal consistency only), and compared with the scoring
 * configuration the caller uses. Records are read through the reader like any consumer: allow-listed, every format.
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
import { checkRecordsAgainstEvidence, evidenceVerdict } from './score-evidence.js';

export interface CheckScoresParameters {
  /** The topic holding the score records (a score topic, or the signal topic itself). */
  topic: string;
  publishers?: readonly string[];
  /**
   * The configuration the records should have been computed with (default: the built-in one): its digest and version
   * are compared with each v1/v2 record's. `null` compares neither (internal consistency only). A format-3 record is
   * recomputed with the built-in config or this one, whichever its evidence names.
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
  const checked = await checkScoreRecordsWithEvidence(client, records, {
    configs: scoring ? [scoring] : [],
    ...(config ? { configDigest: config.digest, configVersion: config.version } : {}),
  });
  return { topic: parameters.topic, ...checked, ...(config ? { config } : {}) };
}

const isV3 = (r: ReadRecord) => r.v === 3;

/**
 * Every score record among what the reader read, checked, with where it was read: format 3 against its evidence
 * (read from the mirror node), v1/v2 against their explanations. The built-in config is always held; `configs` adds.
 */
export async function checkScoreRecordsWithEvidence(
  client: Hcs25Client,
  records: readonly ReadRecord[],
  options: CheckScoreOptions & { configs?: readonly ScoringConfig[] },
): Promise<Pick<CheckScoresReturnType, 'counts' | 'results'>> {
  const { configs = [], ...compare } = options;
  const scores = records.filter((r) => r.kind === 'score' && r.validated);
  const v3 = await checkRecordsAgainstEvidence(
    client,
    scores.filter(isV3).map((r) => r.message as Parameters<typeof checkRecordsAgainstEvidence>[1][number]),
    { configs: [DEFAULT_SCORING_CONFIG, ...configs] },
  );
  const older = checkPublishedScores(
    scores.filter((r) => !isV3(r)).map((r) => r.message as unknown as ScoreRecordLike),
    compare,
  ).results;
  let i = 0;
  let j = 0;
  return located(
    scores,
    scores.map((r) => (isV3(r) ? v3[i++]! : older[j++]!)),
  );
}

/**
 * The score records among what the reader read, each checked, with where it was read; counts by status. Without a
 * client nothing is read: a format-3 record is not checkable here (`evidence-not-read`; see the function above).
 */
export function checkScoreRecords(
  records: readonly ReadRecord[],
  options: CheckScoreOptions = {},
): Pick<CheckScoresReturnType, 'counts' | 'results'> {
  const scores = records.filter((r) => r.kind === 'score' && r.validated);
  const { results } = checkPublishedScores(
    scores.map((r) => r.message as unknown as ScoreRecordLike),
    options,
  );
  const total = (r: ReadRecord) => (r.message.trustScores as { total: number }).total;
  const notRead = { reason: 'evidence-not-read', detail: 'the cited signals were not read' };
  // checkPublishedScores keeps the records' order.
  return located(
    scores,
    results.map((check, i) => (isV3(scores[i]!) ? evidenceVerdict(notRead, total(scores[i]!)) : check)),
  );
}

function located(
  scores: readonly ReadRecord[],
  checks: readonly ScoreCheck[],
): Pick<CheckScoresReturnType, 'counts' | 'results'> {
  const results = checks.map((check, i) => ({
    ...check,
    ...(typeof scores[i]!.message.subject === 'string' ? { subject: scores[i]!.message.subject as string } : {}),
    sequenceNumber: scores[i]!.sequenceNumber,
    index: scores[i]!.index,
    consensusAt: scores[i]!.consensusAt,
  }));
  const count = (status: ScoreCheck['status']) => results.filter((r) => r.status === status).length;
  return {
    counts: { verified: count('verified'), mismatch: count('mismatch'), unverifiable: count('unverifiable') },
    results,
  };
}
