/**
 * Score: a signal topic → HCS-25 trust scores per subject, and optionally the scores published back as format-3 score
 * records, each naming its evidence. Signals are folded into the scores as the reader yields them (`ScoreAccumulator`), so memory follows what
 * scoring keeps of each signal, not the signals. Rendering (table, CSV, HTML) is the caller's choice of view over the
 * same report.
 */
import type { Hcs25Client } from '../client.js';
import { ScoreAccumulator, type ScoreReport, type SubjectScore } from './scores.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from './scoring-config.js';
import type { SignalSink } from '../read/reader.js';
import type { ReadSignal } from '../read/types.js';
import type { PublishScoresOptions, PublishScoresResult } from './publish-scores.js';
import { readSignals, type ReadSignalsParameters } from '../read/read-signals.js';
import {
  RegistryCitations,
  resolveNames,
  type ResolveNamesParameters,
  type ResolveNamesReturnType,
} from '../read/resolve-names.js';

export interface ScoreSignalsParameters extends Omit<ReadSignalsParameters, 'follow' | 'into'> {
  /** Default: the built-in configuration (the spec's example adapters). */
  scoring?: ScoringConfig;
  /** Score as of this instant (default now): freshness is measured from it, later signals are ignored. */
  now?: Date;
  /** Display names by subject (local knowledge; names are not on-chain). */
  labels?: Readonly<Record<string, string>>;
  /** Also name the subjects without a label: from a names file and the registries their signals cite (resolve-names.ts). */
  resolveNames?: Omit<ResolveNamesParameters, 'signals'>;
  /** Also return the signals (the HTML report draws them); by default none is kept. */
  keepSignals?: boolean;
}

export interface ScoreSignalsReturnType {
  report: ScoreReport;
  /** With `keepSignals`: the signals the scores were computed from, in topic order. */
  signals?: ReadSignal[];
  /** Messages the reader rejected (counted by reason in the report). */
  rejected: number;
  /** What name resolution found and which registries failed, when `resolveNames` was given. */
  names?: ResolveNamesReturnType;
}

export async function scoreSignals(
  client: Hcs25Client,
  parameters: ScoreSignalsParameters,
): Promise<ScoreSignalsReturnType> {
  const {
    scoring = DEFAULT_SCORING_CONFIG,
    now = new Date(),
    labels: given,
    resolveNames: naming,
    keepSignals = false,
    ...read
  } = parameters;
  const scores = new ScoreAccumulator(scoring, now);
  const citations = naming && new RegistryCitations();
  const kept: ReadSignal[] | undefined = keepSignals ? [] : undefined;
  const rejected: Record<string, number> = {};
  const unknown: Record<string, number> = {};
  let rejectedCount = 0;
  // Unless the signals are kept, the reader folds each one into the scores as it reads it: no ReadSignal is built.
  const into: SignalSink | undefined = kept
    ? undefined
    : citations
      ? {
          addSignal: (message, ...origin) => {
            scores.addSignal(message, ...origin);
            citations.addMessage(message);
          },
        }
      : scores;
  for await (const event of readSignals(client, { ...read, ...(into && { into }) })) {
    if (event.type === 'signal') {
      scores.add(event.signal);
      citations?.add(event.signal);
      kept?.push(event.signal);
    } else if (event.type === 'rejected') {
      rejected[event.rejected.reason] = (rejected[event.rejected.reason] ?? 0) + 1;
      rejectedCount++;
    } else if (event.type === 'unknown') {
      const key = `${event.unknown.kind}:${event.unknown.name}`;
      unknown[key] = (unknown[key] ?? 0) + 1;
    }
  }
  const names = naming && citations && (await resolveNames(client, { ...naming, signals: citations }));
  const labels = names ? { ...names.labels, ...given } : given;
  const report = scores.finish({
    ...(read.publishers && { publishers: read.publishers }),
    topic: read.topic,
    rejected,
    unknown,
    ...(labels && { labels }),
  });
  return { report, ...(kept && { signals: kept }), rejected: rejectedCount, ...(names && { names }) };
}

export interface PublishScoresParameters {
  scoreTopic: string;
  subjects: readonly SubjectScore[];
  /** Finish this earlier, interrupted publication (the id it printed) instead of publishing `subjects`. */
  resume?: string;
  /** `json` (default: readable op "scores" batches, as many as fit), `dense` (the same as op "zlib"), `subject`/`none` (one op "score" record per message). */
  pack?: PublishScoresOptions['pack'];
  /** What every record cites: the signal topic, the range read and the allow-list (`evidenceSourceOf(report)`). */
  evidence?: PublishScoresOptions['evidence'];
  /** Tests and benches: submitter tuning. */
  submitter?: PublishScoresOptions['submitter'];
}

/**
 * Submits a score record per subject to the score topic (transaction memo `hcs25-tool/3:score`), packed as `pack` says:
 * each message journaled, then pipelined through the submitter under pre-set transaction ids, so a resumed
 * publication never sends one twice.
 */
export async function publishScoreRecords(
  client: Hcs25Client,
  parameters: PublishScoresParameters,
): Promise<PublishScoresResult> {
  client.requireOperator();
  const { publishScores } = await import('./publish-scores.js');
  const { scoreTopic, subjects, resume, pack, evidence, submitter } = parameters;
  return publishScores(client, scoreTopic, subjects, {
    ...(resume && { resume }),
    ...(pack && { pack }),
    ...(evidence && { evidence }),
    ...(submitter && { submitter }),
  });
}
