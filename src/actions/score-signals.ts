/**
 * Score: a signal topic → HCS-25 trust scores per subject (collect → compute), and optionally the scores published
 * back as `op: "score"` records. Rendering (table, CSV, HTML) is the caller's choice of view over the same report.
 */
import type { Hcs25Client } from '../client.js';
import { countReasons } from '../consumer/reader.js';
import { computeScores, type ScoreReport, type SubjectScore } from '../consumer/scores.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from '../consumer/scoring-config.js';
import type { ReadSignal } from '../consumer/types.js';
import type { PublishScoresOptions, PublishScoresResult } from '../consumer/publish-scores.js';
import { collectSignals, type ReadSignalsParameters } from './read-signals.js';
import { resolveNames, type ResolveNamesParameters, type ResolveNamesReturnType } from './resolve-names.js';

export interface ScoreSignalsParameters extends Omit<ReadSignalsParameters, 'follow'> {
  /** Default: the built-in configuration (the spec's example adapters). */
  scoring?: ScoringConfig;
  /** Score as of this instant (default now): freshness is measured from it, later signals are ignored. */
  now?: Date;
  /** Display names by subject (local knowledge; names are not on-chain). */
  labels?: Readonly<Record<string, string>>;
  /** Also name the subjects without a label: from a names file and the registries their signals cite (resolve-names.ts). */
  resolveNames?: Omit<ResolveNamesParameters, 'signals'>;
}

export interface ScoreSignalsReturnType {
  report: ScoreReport;
  /** The signals the scores were computed from (the HTML report draws them). */
  signals: ReadSignal[];
  /** Messages the reader rejected (counted by reason in the report). */
  rejected: number;
  /** What name resolution found and which registries failed, when `resolveNames` was given. */
  names?: ResolveNamesReturnType;
}

export async function scoreSignals(client: Hcs25Client, parameters: ScoreSignalsParameters): Promise<ScoreSignalsReturnType> {
  const { scoring = DEFAULT_SCORING_CONFIG, now = new Date(), labels: given, resolveNames: naming, ...read } = parameters;
  const collected = await collectSignals(client, read);
  const names = naming && (await resolveNames(client, { ...naming, signals: collected.signals }));
  const labels = names ? { ...names.labels, ...given } : given;
  const report = computeScores(collected.signals, scoring, {
    now,
    ...(read.publishers && { publishers: read.publishers }),
    topic: read.topic,
    rejected: countReasons(collected.rejected),
    ...(labels && { labels }),
  });
  return { report, signals: collected.signals, rejected: collected.rejected.length, ...(names && { names }) };
}

export interface PublishScoresParameters {
  scoreTopic: string;
  subjects: readonly SubjectScore[];
  /** Finish this earlier, interrupted publication (the id it printed) instead of publishing `subjects`. */
  resume?: string;
  /** `dense` (default: many records per `op: "scores"` zlib message), `subject` (JSON batches) or `none` (one `op: "score"` record per message). */
  pack?: PublishScoresOptions['pack'];
  /** Tests and benches: submitter tuning. */
  submitter?: PublishScoresOptions['submitter'];
}

/**
 * Submits a score record per subject to the score topic (transaction memo `hcs-25:op:1`), packed as `pack` says:
 * each message journaled, then pipelined through the submitter under pre-set transaction ids, so a resumed
 * publication never sends one twice.
 */
export async function publishScoreRecords(client: Hcs25Client, parameters: PublishScoresParameters): Promise<PublishScoresResult> {
  client.requireOperator();
  const { publishScores } = await import('../consumer/publish-scores.js');
  const { scoreTopic, subjects, resume, pack, submitter } = parameters;
  return publishScores(client, scoreTopic, subjects, { ...(resume && { resume }), ...(pack && { pack }), ...(submitter && { submitter }) });
}
