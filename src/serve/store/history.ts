/**
 * A subject's history in the SQL store: the 30 days of its probe and latency signals (through the index of
 * migration 008, by consensus second) and its stored score changes, added up by score/history.ts; and the writing of
 * those score changes, which the rescoring calls in its transaction.
 */
import { consensusMs } from '../../core/consensus-time.js';
import { canonicalSignalId, SIGNAL_IDS_V2 } from '../../format/schema-v2.js';
import type { ReadSignal } from '../../read/types.js';
import {
  HISTORY_SPAN_MS,
  summarizeHistory,
  type HistorySample,
  type ScoreChange,
  WINDOW_SPANS,
} from '../../score/history.js';
import { hash32, type SqlContext } from './context.js';
import type { ServeStore, SqlExecutor } from './types.js';

export type SqlHistory = Pick<ServeStore, 'subjectHistory'>;

const AVAILABILITY = SIGNAL_IDS_V2.availability;

/**
 * The subject's signals in whole seconds [from, to], through signals_subject_time (migration 008). The messages are
 * read whole and picked apart here: extracting fields in SQL parses each stored json again per field, which costs
 * more than the transfer.
 */
export const HISTORY_SIGNALS = `SELECT s.consensus, s.message FROM signals s
WHERE s.sh = $1 AND s.tid = (SELECT tid FROM topics WHERE topic = $2)
  AND split_part(s.consensus, '.', 1)::bigint >= $3 AND split_part(s.consensus, '.', 1)::bigint <= $4`;

export function createHistoryReader(ctx: SqlContext): SqlHistory {
  const { driver } = ctx;
  const latencySignal = canonicalSignalId(ctx.scoring.latency.signal);

  async function known(topic: string, subject: string, sh: number): Promise<boolean> {
    const rows = await driver.query(
      `SELECT 1 FROM topics t WHERE t.topic = $1 AND (
         EXISTS (SELECT 1 FROM subject_scores s WHERE s.tid = t.tid AND s.subject = $2)
         OR EXISTS (SELECT 1 FROM signals g WHERE g.sh = $3 AND g.tid = t.tid AND g.message ->> 'subject' = $2))`,
      [topic, subject, sh],
    );
    return rows.length > 0;
  }

  return {
    async subjectHistory(subject, { topic, window, now = new Date() }) {
      const nowMs = now.getTime();
      const fromMs = nowMs - HISTORY_SPAN_MS;
      const sh = hash32(subject);
      // Whole seconds select through the index; the exact bounds (milliseconds) are applied when adding up.
      const rows = await driver.query<{ consensus: string; message: ReadSignal['message'] }>(HISTORY_SIGNALS, [
        sh,
        topic,
        Math.floor(fromMs / 1000),
        Math.floor(nowMs / 1000),
      ]);
      const samples: HistorySample[] = [];
      for (const { consensus, message: m } of rows) {
        // Another subject with the same 4-byte hash.
        if (m.subject !== subject) continue;
        const id = canonicalSignalId(m.signal);
        if (id !== AVAILABILITY && id !== latencySignal) continue;
        // A signal with status `missing` measured nothing. Otherwise as the scorer counts them: a probe counts for
        // availability; a latency when its signal measured (a reachable probe, an eval with status ok).
        if (m.status === 'missing') continue;
        const reachable = 'reachable' in m.data ? m.data.reachable === true : null;
        const measured = reachable ?? m.status === 'ok';
        samples.push({
          ms: consensusMs(consensus),
          reachable: id === AVAILABILITY ? reachable : null,
          latencyMs: id === latencySignal && measured ? m.data.latencyMs : null,
        });
      }
      const changes = await driver.query<ScoreChange & Record<string, unknown>>(
        `(SELECT (extract(epoch FROM at) * 1000)::float8 AS ms, total, confidence FROM score_history
           WHERE tid = (SELECT tid FROM topics WHERE topic = $1) AND subject = $2 AND at <= $3 ORDER BY at DESC LIMIT 1)
         UNION ALL
         (SELECT (extract(epoch FROM at) * 1000)::float8, total, confidence FROM score_history
           WHERE tid = (SELECT tid FROM topics WHERE topic = $1) AND subject = $2 AND at > $3 AND at <= $4 ORDER BY at)
         ORDER BY ms`,
        [topic, subject, new Date(nowMs - WINDOW_SPANS[window].spanMs), now],
      );
      // Nothing in the window: whether the topic knows the subject at all (a score, or signals before the window). Asked
      // only then: docs/performance.md, "A subject's history in two queries".
      if (samples.length === 0 && changes.length === 0 && !(await known(topic, subject, sh))) return null;
      return summarizeHistory(samples, changes, { topic, subject, nowMs, window, latencySignal });
    },
  };
}

/** A subject's new score, as the rescoring stored it (null total: it has none). */
export interface RescoredRow {
  tid: number;
  subject: string;
  total: number | null;
  confidence: number | null;
}

/**
 * In the rescoring's transaction: a score change row for each subject whose total or confidence differs from its
 * newest one, at `now`; then the subjects' rows older than 30 days go, except the newest of those (the score in force
 * when a 30-day window starts). Subjects left without a score lose their history.
 */
export async function recordScoreChanges(tx: SqlExecutor, rows: readonly RescoredRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  // Only what the statements read: the rescoring's rows also carry whole scores.
  const json = JSON.stringify(rows.map(({ tid, subject, total, confidence }) => ({ tid, subject, total, confidence })));
  await tx.query(
    `INSERT INTO score_history (tid, subject, at, total, confidence)
     SELECT u.tid, u.subject, $2, u.total, u.confidence
     FROM json_to_recordset($1::json) AS u(tid int, subject text, total float8, confidence float8)
     WHERE u.total IS NOT NULL AND u.confidence IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM (SELECT h.total, h.confidence FROM score_history h WHERE h.tid = u.tid AND h.subject = u.subject
         ORDER BY h.at DESC LIMIT 1) l WHERE l.total = u.total AND l.confidence = u.confidence)
     ON CONFLICT (tid, subject, at) DO UPDATE SET total = excluded.total, confidence = excluded.confidence`,
    [json, now],
  );
  await tx.query(
    `DELETE FROM score_history h USING json_to_recordset($1::json) AS u(tid int, subject text, total float8)
     WHERE h.tid = u.tid AND h.subject = u.subject AND (u.total IS NULL OR (h.at < $2 AND EXISTS (
       SELECT 1 FROM score_history n WHERE n.tid = h.tid AND n.subject = h.subject AND n.at > h.at AND n.at <= $2)))`,
    [json, new Date(now.getTime() - HISTORY_SPAN_MS)],
  );
}
