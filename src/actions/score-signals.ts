/**
 * Score: a signal topic → HCS-25 trust scores per subject (collect → compute), and optionally the scores published
 * back as `op: "score"` records. Rendering (table, CSV, HTML) is the caller's choice of view over the same report.
 */
import type { Hcs25Client } from '../client.js';
import { countReasons } from '../consumer/reader.js';
import { computeScores, type ScoreReport, type SubjectScore } from '../consumer/scores.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from '../consumer/scoring-config.js';
import type { ReadSignal } from '../consumer/types.js';
import type { PublishedScore } from '../consumer/publish-scores.js';
import { collectSignals, type ReadSignalsParameters } from './read-signals.js';

export interface ScoreSignalsParameters extends Omit<ReadSignalsParameters, 'follow'> {
  /** Default: the built-in configuration (the spec's example adapters). */
  scoring?: ScoringConfig;
  /** Score as of this instant (default now): freshness is measured from it, later signals are ignored. */
  now?: Date;
  /** Display names by subject (local knowledge; names are not on-chain). */
  labels?: Readonly<Record<string, string>>;
}

export interface ScoreSignalsReturnType {
  report: ScoreReport;
  /** The signals the scores were computed from (the HTML report draws them). */
  signals: ReadSignal[];
  /** Messages the reader rejected (counted by reason in the report). */
  rejected: number;
}

export async function scoreSignals(client: Hcs25Client, parameters: ScoreSignalsParameters): Promise<ScoreSignalsReturnType> {
  const { scoring = DEFAULT_SCORING_CONFIG, now = new Date(), labels, ...read } = parameters;
  const collected = await collectSignals(client, read);
  const report = computeScores(collected.signals, scoring, {
    now,
    ...(read.publishers && { publishers: read.publishers }),
    topic: read.topic,
    rejected: countReasons(collected.rejected),
    ...(labels && { labels }),
  });
  return { report, signals: collected.signals, rejected: collected.rejected.length };
}

export interface PublishScoresParameters {
  scoreTopic: string;
  subjects: readonly SubjectScore[];
}

/** Submits one `op: "score"` record per subject to the score topic (transaction memo `hcs-25:op:1`). */
export async function publishScoreRecords(client: Hcs25Client, parameters: PublishScoresParameters): Promise<PublishedScore[]> {
  client.requireOperator();
  const { publishScores } = await import('../consumer/publish-scores.js');
  return publishScores(await client.connect(), parameters.scoreTopic, parameters.subjects);
}
