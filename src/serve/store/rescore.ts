/**
 * Score upkeep in the SQL store. A stored batch puts the subjects it touched in `pending_subjects` (migration 011);
 * rescoreDirty takes a round of them, scores each from all its stored signals with the one scorer (computeScores,
 * as `hcs25 scores` does) and stores the scores; markStale puts back the subjects whose score changed with time alone
 * (a component passed the freshness window, `stale_at`).
 */
import { computeScores, type SubjectScore } from '../../score/scores.js';
import type { ScoringConfig } from '../../score/scoring-config.js';
import type { ReadSignal } from '../../read/types.js';
import { recordScoreChanges } from './history.js';
import { bump, hash32, type SignalRow, type SqlContext, toReadSignal } from './context.js';
import type { RescoreResult, ServeStore, SqlExecutor } from './types.js';

export type SqlRescorer = Pick<ServeStore, 'rescoreDirty' | 'markStale'>;

/** Subjects markStale puts back into the rescoring per call, at most. */
const STALE_CHUNK = 1000;

/** One subject of a rescoring round. */
type Dirty = {
  tid: number;
  topic: string;
  subject: string;
};

/** A round: the subjects first in line, and whether more wait. */
interface Round {
  subjects: Dirty[];
  more: boolean;
}

export function createRescorer(ctx: SqlContext): SqlRescorer {
  const { driver, scoring } = ctx;
  /** Sole writer: `writes` when rescoreDirty last found nothing to do (-1: not known). */
  let cleanAt = -1;
  /** Sole writer: the earliest stale_at (ms; null: none), as of `writes` = staleKnownAt (-1: not known). */
  let nextStaleMs: number | null = null;
  let staleKnownAt = -1;

  return {
    async rescoreDirty({ limit = 200, now = new Date() } = {}): Promise<RescoreResult> {
      if (ctx.sole && cleanAt === ctx.writes) return { subjects: 0, more: false };
      const before = ctx.writes;
      let wrote = false;
      const result = await driver
        .transaction(async (tx): Promise<RescoreResult> => {
          const [waiting] = await tx.query('SELECT 1 FROM pending_subjects LIMIT 1');
          if (!waiting) return { subjects: 0, more: false };
          wrote = true;
          // Before the round is read: its lock on serve_meta orders revisions by commit (changesSince), and every
          // writer takes it first, so the round sees each batch whole and no batch waits on a row the round holds.
          const revision = await bump(tx);
          const round = await takeRound(tx, limit);
          const signals = await tx.query<SignalRow>(SIGNALS_OF_SUBJECTS, [
            round.subjects.map((d) => d.tid),
            round.subjects.map((d) => d.subject),
            round.subjects.map((d) => hash32(d.subject)),
          ]);
          await storeScores(
            tx,
            round,
            scoreRound(round.subjects, signals, scoring, now),
            revision,
            scoring.freshnessSeconds,
            now,
          );
          return { subjects: round.subjects.length, more: round.more };
        })
        .finally(() => {
          if (wrote) ctx.writes++;
        });
      // Nothing to do, and no write ended meanwhile.
      if (!wrote && ctx.writes === before) cleanAt = ctx.writes;
      return result;
    },

    async markStale({ now = new Date(), limit = STALE_CHUNK } = {}) {
      if (ctx.sole && staleKnownAt === ctx.writes && (nextStaleMs === null || now.getTime() < nextStaleMs)) return 0;
      const before = ctx.writes;
      // Each subject once: its stale_at is cleared here and set again by the rescoring. The earliest due first, a
      // bounded number per call: many subjects turn stale together (72 h after the run that published them), and
      // one statement over all of them would hold the database (and PGlite's event loop) for seconds. The wait
      // starts after the topic's cursor (no signal is missing from the score); a subject already waiting stays as is.
      const [row] = await driver.query<{ n: number }>(
        `WITH due AS (
           UPDATE subject_scores s SET stale_at = NULL
           FROM (SELECT tid, subject FROM subject_scores WHERE stale_at <= $1 ORDER BY stale_at LIMIT $2) p
           WHERE s.tid = p.tid AND s.subject = p.subject
           RETURNING s.tid, s.subject),
         queued AS (
           INSERT INTO pending_subjects (tid, subject, after_seq)
             SELECT d.tid, d.subject, t.last_sequence FROM due d JOIN topics t USING (tid)
           ON CONFLICT (tid, subject) DO NOTHING)
         SELECT count(*)::int AS n FROM due`,
        [now.toISOString(), Math.max(1, Math.min(limit, STALE_CHUNK))],
      );
      const marked = row?.n ?? 0;
      if (marked > 0) {
        ctx.writes++;
        return marked;
      }
      if (ctx.sole && ctx.writes === before) {
        const [next] = await driver.query<{ ms: number | null }>(
          `SELECT (extract(epoch FROM min(stale_at)) * 1000)::float8 AS ms
           FROM subject_scores WHERE stale_at IS NOT NULL`,
        );
        if (ctx.writes === before) {
          nextStaleMs = next?.ms ?? null;
          staleKnownAt = ctx.writes;
        }
      }
      return 0;
    },
  };
}

/** The `limit` subjects first in line (one more is read to learn whether it is the last). */
async function takeRound(tx: SqlExecutor, limit: number): Promise<Round> {
  const rows = await tx.query<Dirty>(
    `SELECT p.tid, t.topic, p.subject FROM pending_subjects p JOIN topics t USING (tid) ORDER BY p.queued LIMIT $1`,
    [limit + 1],
  );
  return { subjects: rows.slice(0, limit), more: rows.length > limit };
}

/** A subject's new score and the payers of its signals, by `${tid}\0${subject}`; a subject without signals has none. */
type RoundScores = Map<string, { score: SubjectScore; publishers: string[] }>;

/** Scores each topic's subjects of the round from their stored signals. */
function scoreRound(
  subjects: readonly Dirty[],
  rows: readonly SignalRow[],
  scoring: ScoringConfig,
  now: Date,
): RoundScores {
  const byTopic = new Map<number, ReadSignal[]>();
  const payers = new Map<string, Set<string>>();
  for (const r of rows) {
    const key = `${r.tid}\u0000${r.message.subject}`;
    const set = payers.get(key) ?? new Set<string>();
    payers.set(key, set.add(r.payer));
    const signals = byTopic.get(r.tid) ?? [];
    byTopic.set(r.tid, signals);
    signals.push(toReadSignal(r));
  }
  const scores: RoundScores = new Map();
  for (const [tid, signals] of byTopic) {
    const topic = subjects.find((d) => d.tid === tid)!.topic;
    for (const score of computeScores(signals, scoring, { now, topic }).subjects) {
      const key = `${tid}\u0000${score.subject}`;
      scores.set(key, { score, publishers: [...(payers.get(key) ?? [])] });
    }
  }
  return scores;
}

/** Stores the round's scores at `revision`, removes the subjects left without any, and ends the subjects' wait. */
async function storeScores(
  tx: SqlExecutor,
  round: Round,
  scores: RoundScores,
  revision: number,
  freshnessSeconds: number,
  now: Date,
): Promise<void> {
  const rows = round.subjects.map((d) => {
    const found = scores.get(`${d.tid}\u0000${d.subject}`);
    const s = found?.score;
    return {
      tid: d.tid,
      subject: d.subject,
      total: s?.trustScores.total ?? null,
      confidence: s?.trustConfidence ?? null,
      protocol: s?.protocol ?? null,
      registry: s?.registry ?? null,
      signals: s?.counts.signals ?? null,
      last_at: s?.counts.lastAt ?? null,
      publishers: found?.publishers ?? [],
      score: s ?? null,
      stale_at: s ? staleAt(s, freshnessSeconds) : null,
      updated_at: s?.trustScoreUpdatedAt ?? null,
      // The ranking's tie-break and the evidence filters (migration 007).
      eval_observations: s?.evidenceStrength.evalObservations ?? 0,
      basis: s?.evidenceStrength.basis ?? null,
      low_evidence: s?.evidenceStrength.lowEvidence ?? null,
    };
  });
  await tx.query(
    `INSERT INTO subject_scores
       (tid, subject, total, confidence, protocol, registry, signals, last_at, publishers, score, rev, stale_at,
        updated_at, eval_observations, basis, low_evidence)
     SELECT tid, subject, total, confidence, protocol, registry, signals, last_at,
       ARRAY(SELECT json_array_elements_text(publishers)), score, $2::bigint, stale_at,
       updated_at, eval_observations, basis, low_evidence
     FROM json_to_recordset($1::json) AS u(tid int, subject text, total float8, confidence float8, protocol text,
       registry text, signals bigint, last_at timestamptz, publishers json, score json, stale_at timestamptz,
       updated_at timestamptz, eval_observations int, basis text, low_evidence boolean)
     ON CONFLICT (tid, subject) DO UPDATE SET total = excluded.total, confidence = excluded.confidence,
       protocol = excluded.protocol, registry = excluded.registry, signals = excluded.signals,
       last_at = excluded.last_at, publishers = excluded.publishers, score = excluded.score, rev = excluded.rev,
       stale_at = excluded.stale_at, updated_at = excluded.updated_at, eval_observations = excluded.eval_observations,
       basis = excluded.basis, low_evidence = excluded.low_evidence`,
    [JSON.stringify(rows), revision],
  );
  await recordScoreChanges(tx, rows, now);
  // A subject left without signals (its topic indexed again under another allow-list) has no score: it goes.
  const gone = round.subjects.filter((d) => !scores.has(`${d.tid}\u0000${d.subject}`));
  if (gone.length > 0) {
    await tx.query(
      `DELETE FROM subject_scores s USING unnest($1::int[], $2::text[]) AS u(tid, subject)
       WHERE s.tid = u.tid AND s.subject = u.subject`,
      [gone.map((d) => d.tid), gone.map((d) => d.subject)],
    );
  }
  await tx.query(
    `DELETE FROM pending_subjects p USING unnest($1::int[], $2::text[]) AS u(tid, subject)
     WHERE p.tid = u.tid AND p.subject = u.subject`,
    [round.subjects.map((d) => d.tid), round.subjects.map((d) => d.subject)],
  );
}

/**
 * When `score` next changes with time alone: the first of its `ok` components to pass the freshness window (it
 * turns `stale`), or null when none can. The batch after it starts after the topic's cursor (markStale): no signal
 * is missing from the score meanwhile, only the time.
 */
function staleAt(score: SubjectScore, freshnessSeconds: number): string | null {
  let first = Number.POSITIVE_INFINITY;
  for (const c of Object.values(score.components)) {
    if (c.status !== 'ok' || c.newestAt === null) continue;
    const at = Date.parse(c.newestAt) + freshnessSeconds * 1000;
    if (at < first) first = at;
  }
  return Number.isFinite(first) ? new Date(first).toISOString() : null;
}

/** Signals of (tid, subject) pairs given as $1 int[], $2 text[] and their hash32 $3 int[]. */
const SIGNALS_OF_SUBJECTS = `
SELECT s.tid, s.seq::float8 AS seq, s.idx, s.consensus, s.payer, s.message FROM signals s
JOIN unnest($1::int[], $2::text[], $3::int[]) AS d(tid, subject, sh)
  ON s.sh = d.sh AND s.tid = d.tid AND s.message ->> 'subject' = d.subject
ORDER BY s.tid, s.seq, s.idx`;
