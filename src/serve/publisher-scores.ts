/**
 * Scores over chosen publishers' signals: the one scorer (computeScores, as `hcs25 scores` and the rescoring use it)
 * over one subject's stored signals, filtered by payer. Used by the API (`publishers=`, `/publishers`) and the live
 * page's per-publisher table.
 */
import { computeScores, type SubjectScore } from '../score/scores.js';
import type { ScoringConfig } from '../score/scoring-config.js';
import type { ReadSignal } from '../read/types.js';

export interface PublisherRow {
  /** The paying account. */
  publisher: string;
  signals: number;
  /** Consensus times of its first and last signal about the subject (ISO). */
  firstAt: string;
  lastAt: string;
  /** The score from its signals alone; null when none of them counts yet (all after `now`). */
  score: SubjectScore | null;
}

export interface ScoreAt {
  scoring: ScoringConfig;
  now: Date;
  topic: string;
}

/** The subject's score from `signals` (one subject's), counted as the allow-list `publishers` would. */
export function subjectScoreOf(
  signals: readonly ReadSignal[],
  at: ScoreAt,
  publishers: readonly string[] = [],
): SubjectScore | null {
  return computeScores(signals, at.scoring, { now: at.now, topic: at.topic, publishers }).subjects[0] ?? null;
}

/** Each payer of the subject's signals, the most signals first (then by account). */
export function publisherBreakdown(signals: readonly ReadSignal[], at: ScoreAt): PublisherRow[] {
  const byPayer = new Map<string, ReadSignal[]>();
  for (const s of signals) {
    const list = byPayer.get(s.payerAccountId) ?? [];
    byPayer.set(s.payerAccountId, list);
    list.push(s);
  }
  const rows = [...byPayer].map(([publisher, own]): PublisherRow => {
    const times = own.map((s) => s.consensusAt).sort();
    return {
      publisher,
      signals: own.length,
      firstAt: times[0]!,
      lastAt: times.at(-1)!,
      score: subjectScoreOf(own, at, [publisher]),
    };
  });
  return rows.sort((a, b) => b.signals - a.signals || (a.publisher < b.publisher ? -1 : 1));
}
