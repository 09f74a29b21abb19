/**
 * The ServeStore over any Postgres dialect driver: both engines (PGlite, pg) run exactly these statements, so they
 * cannot drift. Engines supply a driver (query, transaction, close) and the indexer lock.
 */
import { hash as oneShotHash } from 'node:crypto';
import { z } from 'zod';
import { Hcs25Error } from '../../core/errors.js';
import { consensusIso, consensusMs, dedupeKey } from '../../consumer/reader.js';
import { ScoreAccumulator, type SubjectScore } from '../../consumer/scores.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from '../../consumer/scoring-config.js';
import type { ReadRecord, ReadSignal } from '../../consumer/types.js';
import { revealOf, verifiableSignal } from '../../verify/read.js';
import { responseHashV2 } from '../../signals/hashing.js';
import { verifySignals, type VerifyReport } from '../../verify/signals.js';
import { migrate } from './migrate.js';
import {
  DEFAULT_PAGE,
  MAX_PAGE,
  type ApplyResult,
  type IndexBatch,
  type Page,
  type PageOptions,
  type RescoreResult,
  type RunRow,
  type SqlDriver,
  type SqlExecutor,
  type RunVerification,
  type ServeStore,
  type StoredScore,
  type SubjectFilter,
  type SubjectRow,
  type TopicCursor,
  type TopicState,
  type TopicStatus,
} from './types.js';

type Row = Record<string, unknown>;

export interface SqlStoreOptions {
  engine: ServeStore['engine'];
  driver: SqlDriver;
  tryIndexerLock: () => Promise<boolean>;
  /** Runs after the driver closes (the lock connection). */
  onClose?: () => Promise<void>;
  scoring?: ScoringConfig;
  /**
   * One process owns the database (PGlite): only this store's writes change it, so the periodic questions (has the
   * revision moved, is anything to rescore, is a score due to turn stale) are answered without a query while this
   * store wrote nothing since they were last asked. On PGlite a query runs on the event loop (about 1–5 ms each).
   */
  soleWriter?: boolean;
}

/** Subjects markStale puts back into the rescoring per call, at most (one dirty row each: a round reads it whole). */
const STALE_CHUNK = 1000;

/** `seconds.nanos` → seconds as a SQL timestamptz. */
const TS = (col: string) => `to_timestamp(split_part(${col}, '.', 1)::float8 + ('0.' || split_part(${col}, '.', 2))::float8)`;

export function createSqlStore(options: SqlStoreOptions): ServeStore {
  const sole = options.soleWriter === true;
  const { driver } = options;
  /** Writes of this store that ended (committed or not): what the sole writer's shortcuts compare. */
  let writes = 0;
  const written = <T,>(write: Promise<T>): Promise<T> => write.finally(() => void writes++);
  /** Sole writer: `writes` when rescoreDirty last found nothing to do (-1: not known). */
  let cleanAt = -1;
  /** Sole writer: the earliest stale_at (ms; null: none), as of `writes` = staleKnownAt (-1: not known). */
  let nextStaleMs: number | null = null;
  let staleKnownAt = -1;
  const scoring = options.scoring ?? DEFAULT_SCORING_CONFIG;
  const tids = new Map<string, number>();
  let closed = false;

  async function tidOf(db: SqlExecutor, topic: string): Promise<number> {
    const known = tids.get(topic);
    if (known !== undefined) return known;
    await db.query('INSERT INTO topics (topic) VALUES ($1) ON CONFLICT (topic) DO NOTHING', [topic]);
    const [row] = await db.query<{ tid: number }>('SELECT tid FROM topics WHERE topic = $1', [topic]);
    tids.set(topic, row!.tid);
    return row!.tid;
  }

  /**
   * Called first in a writing transaction: the row lock it takes on serve_meta is held until commit, so revisions
   * commit in order, and every row the transaction marks with the new revision is visible once that revision is.
   */
  async function bump(db: SqlExecutor): Promise<number> {
    const [row] = await db.query<{ value: number }>("UPDATE serve_meta SET value = value + 1 WHERE key = 'revision' RETURNING value::float8 AS value");
    return row!.value;
  }

  const queues = new Map<string, Promise<ApplyResult>>();
  /** Topics with a failed batch: applyBatch refuses them until cursor() is read (the caller resumes from it). */
  const failed = new Set<string>();

  async function writeBatch(topic: string, batch: IndexBatch, prepared: PreparedBatch): Promise<ApplyResult> {
    // Outside the transaction: a topic row is harmless on its own, and a rolled-back one must not stay cached.
    const tid = await tidOf(driver, topic);
    return written(driver.transaction(async (tx): Promise<ApplyResult> => {
      // The row lock orders concurrent writers (two indexers after a lock takeover race): the cursor guard below
      // then sees the other's batch, so nothing is stored twice whatever the advisory lock did.
      const [cur] = await tx.query<{ seq: number }>('SELECT last_sequence::float8 AS seq FROM topics WHERE tid = $1 FOR UPDATE', [tid]);
      const last = cur!.seq;
      if (batch.cursor.sequence <= last) return { signals: 0, duplicates: 0, applied: false, revision: await currentRevision(tx) };
      const revision = await bump(tx);
      const after = <T extends { sequenceNumber: number }>(list: readonly T[]) => list.filter((x) => x.sequenceNumber > last);
      const records = after(batch.records);

      const fresh = after(batch.signals);
      const rows = fresh.length === batch.signals.length ? prepared.signals : prepared.signals.filter((_, i) => batch.signals[i]!.sequenceNumber > last);
      const stored = fresh.length > 0 ? await insertSignals(tx, tid, fresh, rows) : [];
      const inserted = stored.length;
      if (inserted > 0) {
        await tx.query(INSERT_RUNS, [tid, ...runsOf(stored)]);
        await tx.query('INSERT INTO dirty_batches (tid, after_seq, subjects, rev) VALUES ($1, $2, $3::text[], $4)', [tid, last, [...new Set(stored.map((x) => x.message.subject))], revision]);
      }
      if (records.length > 0) await tx.query(INSERT_RECORDS, [tid, prepared.records, last]);

      const duplicates = fresh.length - inserted;
      const counts = new Map<string, number>();
      const count = (category: string, name: string, n = 1) => {
        const key = `${category}\u0000${name}`;
        counts.set(key, (counts.get(key) ?? 0) + n);
      };
      for (const r of records) count('record', r.kind);
      for (const u of after(batch.unknown)) count('unknown', `${u.kind}:${u.name}`);
      for (const r of after(batch.rejected)) count('rejected', r.reason);
      if (duplicates > 0) count('rejected', 'duplicate', duplicates);
      if (counts.size > 0) {
        const keys = [...counts.keys()].map((k) => k.split('\u0000'));
        await tx.query(
          `INSERT INTO topic_counts (tid, category, name, n)
           SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[])
           ON CONFLICT (tid, category, name) DO UPDATE SET n = topic_counts.n + excluded.n`,
          [tid, keys.map((k) => k[0]), keys.map((k) => k[1]), [...counts.values()]],
        );
      }
      const ts = batch.cursor.consensusTimestamp;
      await tx.query(
        `UPDATE topics SET last_sequence = $2, last_consensus = COALESCE($3, last_consensus),
           last_consensus_at = COALESCE(${TS('$3::text')}, last_consensus_at),
           signals = signals + $4, source = $5, updated_at = now() WHERE tid = $1`,
        [tid, batch.cursor.sequence, ts, inserted, batch.source],
      );
      return { signals: inserted, duplicates, applied: true, revision };
    }));
  }

  const store: ServeStore = {
    engine: options.engine,

    async migrate() {
      await migrate(driver);
    },

    async close() {
      if (closed) return;
      closed = true;
      await driver.close();
      await options.onClose?.();
    },

    tryIndexerLock: () => options.tryIndexerLock(),

    async useAllowList(topic, publishers) {
      const want = publishers && publishers.length > 0 ? [...new Set(publishers)].sort() : null;
      const tid = await tidOf(driver, topic);
      return written(driver.transaction(async (tx) => {
        const [row] = await tx.query<{ publishers: string[] | null; known: boolean; seq: number }>(
          'SELECT publishers, publishers_known AS known, last_sequence::float8 AS seq FROM topics WHERE tid = $1 FOR UPDATE',
          [tid],
        );
        const had = row!.publishers === null ? null : [...row!.publishers].sort();
        const same = had === null || want === null ? had === want : had.length === want.length && had.every((p, i) => p === want[i]);
        const reset = row!.known && !same && row!.seq > 0;
        if (reset) {
          // Every answer of the topic changes: its subjects are marked at a new revision (caches drop them) and
          // rescored once the topic is indexed again.
          const revision = await bump(tx);
          await tx.query('DELETE FROM dirty_batches WHERE tid = $1', [tid]);
          await tx.query(
            `INSERT INTO dirty_batches (tid, after_seq, subjects, rev)
               SELECT tid, 0, array_agg(subject ORDER BY subject), $2 FROM subject_scores WHERE tid = $1 GROUP BY tid`,
            [tid, revision],
          );
          await tx.query(
            `UPDATE subject_scores SET total = NULL, confidence = NULL, signals = 0, last_at = NULL, publishers = '{}', score = NULL,
               stale_at = NULL, rev = $2 WHERE tid = $1`,
            [tid, revision],
          );
          for (const table of ['signals', 'records', 'runs', 'topic_counts']) await tx.query(`DELETE FROM ${table} WHERE tid = $1`, [tid]);
          await tx.query(
            `UPDATE topics SET last_sequence = 0, last_consensus = NULL, last_consensus_at = NULL, signals = 0, behind = NULL,
               note = 'indexed again from the start: the publisher allow-list changed' WHERE tid = $1`,
            [tid],
          );
        }
        await tx.query('UPDATE topics SET publishers = $2::text[], publishers_known = true WHERE tid = $1', [tid, want]);
        return reset;
      }));
    },

    async cursor(topic) {
      // Wait for the topic's queued batches, so the cursor read is after them; a failure among them is the caller's
      // to learn from applyBatch: here it only ends the wait.
      await queues.get(topic)?.catch(() => {});
      failed.delete(topic);
      const [row] = await driver.query<{ seq: number; consensus: string | null }>(
        'SELECT last_sequence::float8 AS seq, last_consensus AS consensus FROM topics WHERE topic = $1',
        [topic],
      );
      return row && row.seq > 0 ? { sequence: row.seq, consensusTimestamp: row.consensus } : null;
    },

    applyBatch(topic, batch) {
      // The JSON is built now, while an earlier batch of the topic may still be writing: the caller's CPU work
      // overlaps the database's. The writes themselves run one at a time per topic, in call order, and none after a
      // failed one (its successors fail with it; the next call after them starts afresh).
      if (failed.has(topic)) {
        return Promise.reject(
          new Hcs25Error('DATABASE_UNAVAILABLE', `an earlier batch of topic ${topic} failed; resume from the stored cursor`, {
            hint: 'read cursor(topic) and apply what comes after it',
          }),
        );
      }
      const prepared = prepareBatch(batch);
      const previous = queues.get(topic) ?? Promise.resolve();
      const run = previous.then(() => writeBatch(topic, batch, prepared));
      queues.set(topic, run);
      run.then(
        () => {
          if (queues.get(topic) === run) queues.delete(topic);
        },
        () => {
          // Until the caller reads the cursor again, later batches would skip what this one held.
          failed.add(topic);
          if (queues.get(topic) === run) queues.delete(topic);
        },
      );
      return run;
    },

    async setTopicState(topic, state: TopicState) {
      const tid = await tidOf(driver, topic);
      await driver.query(
        `UPDATE topics SET source = COALESCE($2, source),
           behind = CASE WHEN $3 THEN $4::bigint ELSE behind END,
           note = CASE WHEN $5 THEN $6::text ELSE note END, updated_at = now() WHERE tid = $1`,
        [tid, state.source ?? null, state.behind !== undefined, state.behind ?? null, state.note !== undefined, state.note ?? null],
      );
    },

    async rescoreDirty({ limit = 200, now = new Date() } = {}): Promise<RescoreResult> {
      if (sole && cleanAt === writes) return { subjects: 0, more: false };
      const before = writes;
      let wrote = false;
      const result = await driver.transaction(async (tx): Promise<RescoreResult> => {
        // Locked for the round: a second rescorer (an instance that just lost the indexer lock) skips these rows
        // rather than take the same part of a row twice.
        const pending = await tx.query<{ id: string; tid: number; topic: string; subjects: string[] }>(
          `SELECT d.id::text AS id, d.tid, t.topic, d.subjects FROM dirty_batches d JOIN topics t USING (tid)
           ORDER BY d.id LIMIT $1 FOR UPDATE OF d SKIP LOCKED`,
          [limit + 1],
        );
        const batch: { tid: number; topic: string; subject: string }[] = [];
        const taken = new Set<string>();
        const done: string[] = [];
        let rest: { id: string; subjects: string[] } | undefined;
        for (const row of pending) {
          let i = 0;
          for (; i < row.subjects.length; i++) {
            const subject = row.subjects[i]!;
            const key = `${row.tid}\u0000${subject}`;
            if (taken.has(key)) continue;
            if (batch.length >= limit) break;
            taken.add(key);
            batch.push({ tid: row.tid, topic: row.topic, subject });
          }
          if (i < row.subjects.length) {
            rest = { id: row.id, subjects: row.subjects.slice(i) };
            break;
          }
          done.push(row.id);
        }
        if (batch.length === 0 && done.length === 0) return { subjects: 0, more: false };
        wrote = true;
        // Before any write: its lock on serve_meta orders revisions by commit (changesSince).
        const revision = await bump(tx);
        const more = rest !== undefined || pending.length > limit;
        const rows = await tx.query<SignalRow>(SIGNALS_OF_SUBJECTS, [batch.map((d) => d.tid), batch.map((d) => d.subject), batch.map((d) => hash32(d.subject))]);
        // Each row is folded into its topic's scores as read (the compact form: no ReadSignal per row).
        const byTopic = new Map<number, ScoreAccumulator>();
        const payers = new Map<string, Set<string>>();
        for (const r of rows) {
          const key = `${r.tid}\u0000${r.message.subject}`;
          let set = payers.get(key);
          if (!set) payers.set(key, (set = new Set()));
          set.add(r.payer);
          let topicScores = byTopic.get(r.tid);
          if (!topicScores) byTopic.set(r.tid, (topicScores = new ScoreAccumulator(scoring, now)));
          topicScores.addSignal(r.message, r.seq, consensusMs(r.consensus), r.payer);
        }
        const scores = new Map<string, SubjectScore>();
        for (const [tid, topicScores] of byTopic) {
          const topic = batch.find((d) => d.tid === tid)!.topic;
          for (const s of topicScores.finish({ topic }).subjects) scores.set(`${tid}\u0000${s.subject}`, s);
        }
        const score = (d: (typeof batch)[number]) => scores.get(`${d.tid}\u0000${d.subject}`);
        await tx.query(
          `INSERT INTO subject_scores (tid, subject, total, confidence, protocol, registry, signals, last_at, publishers, score, rev, stale_at)
           SELECT tid, subject, total, confidence, protocol, registry, signals, last_at,
             ARRAY(SELECT json_array_elements_text(publishers)), score, $2::bigint, stale_at
           FROM json_to_recordset($1::json) AS u(tid int, subject text, total float8, confidence float8, protocol text,
             registry text, signals bigint, last_at timestamptz, publishers json, score json, stale_at timestamptz)
           ON CONFLICT (tid, subject) DO UPDATE SET total = excluded.total, confidence = excluded.confidence,
             protocol = excluded.protocol, registry = excluded.registry, signals = excluded.signals, last_at = excluded.last_at,
             publishers = excluded.publishers, score = excluded.score, rev = excluded.rev, stale_at = excluded.stale_at`,
          [
            JSON.stringify(
              batch.map((d) => {
                const s = score(d);
                return {
                  tid: d.tid,
                  subject: d.subject,
                  total: s?.trustScores.total ?? null,
                  confidence: s?.trustConfidence ?? null,
                  protocol: s?.protocol ?? null,
                  registry: s?.registry ?? null,
                  signals: s?.counts.signals ?? null,
                  last_at: s?.counts.lastAt ?? null,
                  publishers: [...(payers.get(`${d.tid}\u0000${d.subject}`) ?? [])],
                  score: s ?? null,
                  stale_at: s ? staleAt(s, scoring.freshnessSeconds) : null,
                };
              }),
            ),
            revision,
          ],
        );
        // A subject left without signals (its topic indexed again under another allow-list) has no score: it goes.
        const gone = batch.filter((d) => !score(d));
        if (gone.length > 0) {
          await tx.query('DELETE FROM subject_scores s USING unnest($1::int[], $2::text[]) AS u(tid, subject) WHERE s.tid = u.tid AND s.subject = u.subject', [
            gone.map((d) => d.tid),
            gone.map((d) => d.subject),
          ]);
        }
        if (done.length > 0) await tx.query('DELETE FROM dirty_batches WHERE id = ANY ($1::bigint[])', [done]);
        if (rest) await tx.query('UPDATE dirty_batches SET subjects = $2::text[] WHERE id = $1::bigint', [rest.id, rest.subjects]);
        return { subjects: batch.length, more };
      }).finally(() => {
        if (wrote) writes++;
      });
      // Nothing to do, and no write ended meanwhile.
      if (!wrote && writes === before) cleanAt = writes;
      return result;
    },

    async markStale({ now = new Date(), limit = STALE_CHUNK } = {}) {
      if (sole && staleKnownAt === writes && (nextStaleMs === null || now.getTime() < nextStaleMs)) return 0;
      const before = writes;
      // Each subject once: its stale_at is cleared here and set again by the rescoring. The earliest due first, a
      // bounded number per call: many subjects turn stale together (72 h after the run that published them), and
      // one statement over all of them, or one dirty row that every rescoring round reads whole, would hold the
      // database (and PGlite's event loop) for seconds.
      const rows = await driver.query<{ n: number }>(
        `WITH due AS (
           UPDATE subject_scores s SET stale_at = NULL
           FROM (SELECT tid, subject FROM subject_scores WHERE stale_at <= $1 ORDER BY stale_at LIMIT $2) p
           WHERE s.tid = p.tid AND s.subject = p.subject
           RETURNING s.tid, s.subject)
         INSERT INTO dirty_batches (tid, after_seq, subjects)
           SELECT d.tid, t.last_sequence, array_agg(d.subject ORDER BY d.subject) FROM due d JOIN topics t USING (tid)
           GROUP BY d.tid, t.last_sequence
         RETURNING cardinality(subjects) AS n`,
        [now.toISOString(), Math.max(1, Math.min(limit, STALE_CHUNK))],
      );
      const marked = rows.reduce((n, r) => n + r.n, 0);
      if (marked > 0) {
        writes++;
        return marked;
      }
      if (sole && writes === before) {
        const [next] = await driver.query<{ ms: number | null }>(
          'SELECT (extract(epoch FROM min(stale_at)) * 1000)::float8 AS ms FROM subject_scores WHERE stale_at IS NOT NULL',
        );
        if (writes === before) {
          nextStaleMs = next?.ms ?? null;
          staleKnownAt = writes;
        }
      }
      return 0;
    },

    async subjectScore(subject, { topic } = {}) {
      // Fresh unless a pending dirty batch of the topic starts before the subject's newest signal; that signal is
      // only looked up while the topic has pending batches at all.
      const [row] = await driver.query<{ topic: string; fresh: boolean; score: SubjectScore | null }>(
        `SELECT t.topic, s.score,
           CASE WHEN NOT EXISTS (SELECT 1 FROM dirty_batches d WHERE d.tid = t.tid) THEN true
             ELSE NOT EXISTS (SELECT 1 FROM dirty_batches d WHERE d.tid = t.tid AND d.after_seq < (
               SELECT g.seq FROM signals g WHERE g.sh = $3 AND g.tid = t.tid AND g.message ->> 'subject' = $1
               ORDER BY g.sh DESC, g.tid DESC, g.seq DESC, g.idx DESC LIMIT 1)) END AS fresh
         FROM topics t LEFT JOIN subject_scores s ON s.tid = t.tid AND s.subject = $1
         WHERE (s.subject IS NOT NULL OR EXISTS (SELECT 1 FROM signals g WHERE g.sh = $3 AND g.tid = t.tid AND g.message ->> 'subject' = $1))
           AND ($2::text IS NULL OR t.topic = $2) ORDER BY t.tid LIMIT 1`,
        [subject, topic ?? null, hash32(subject)],
      );
      return row ? ({ topic: row.topic, subject, fresh: row.fresh, score: row.score } satisfies StoredScore) : null;
    },

    async storedScores(page: PageOptions = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.number().int(), z.string()]));
      const rows = await driver.query<{ tid: number; topic: string; subject: string; fresh: boolean; score: SubjectScore }>(
        `SELECT s.tid, t.topic, s.subject, s.score,
           NOT EXISTS (SELECT 1 FROM dirty_batches d WHERE d.tid = s.tid AND s.subject = ANY (d.subjects)) AS fresh
         FROM subject_scores s JOIN topics t USING (tid)
         WHERE s.score IS NOT NULL AND ($1::int IS NULL OR (s.tid, s.subject) > ($1::int, $2::text))
         ORDER BY s.tid, s.subject LIMIT $3`,
        [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
      );
      return paged(rows, limit, (r): StoredScore => ({ topic: r.topic, subject: r.subject, fresh: r.fresh, score: r.score }), (r) => [r.tid, r.subject]);
    },

    async subjectSignals(subject, { topic, order = 'desc', ...page } = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.number().int(), z.number(), z.number().int()]));
      const cmp = order === 'asc' ? '>' : '<';
      const dir = order === 'asc' ? 'ASC' : 'DESC';
      const rows = await driver.query<SignalRow & { topic: string }>(
        `SELECT s.tid, t.topic, s.seq::float8 AS seq, s.idx, s.consensus, s.payer, s.message
         FROM signals s JOIN topics t USING (tid)
         WHERE s.sh = $7 AND s.message ->> 'subject' = $1 AND ($2::text IS NULL OR t.topic = $2)
           AND ($3::int IS NULL OR (s.tid, s.seq, s.idx) ${cmp} ($3::int, $4::bigint, $5::int))
         ORDER BY s.sh ${dir}, s.tid ${dir}, s.seq ${dir}, s.idx ${dir} LIMIT $6`,
        [subject, topic ?? null, after?.[0] ?? null, after?.[1] ?? null, after?.[2] ?? null, limit + 1, hash32(subject)],
      );
      return paged(rows, limit, (r) => ({ topic: r.topic, ...toReadSignal(r) }), (r) => [r.tid, r.seq, r.idx]);
    },

    async listSubjects(filter: SubjectFilter = {}, page: PageOptions = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.number(), z.string(), z.number().int()]));
      const rows = await driver.query<Omit<SubjectRow, 'lastAt'> & { tid: number; last_at: Date | string | null }>(
        `SELECT s.tid, t.topic, s.subject, s.total, s.confidence, s.protocol, s.registry, s.signals::float8 AS signals, s.last_at, s.score
         FROM subject_scores s JOIN topics t USING (tid)
         WHERE s.total IS NOT NULL
           AND ($1::text IS NULL OR t.topic = $1)
           AND ($2::text IS NULL OR s.protocol = $2)
           AND ($3::float8 IS NULL OR s.total >= $3)
           AND ($4::float8 IS NULL OR s.confidence >= $4)
           AND ($5::text IS NULL OR $5 = ANY (s.publishers))
           AND ($6::float8 IS NULL OR s.total < $6 OR (s.total = $6 AND (s.subject > $7 OR (s.subject = $7 AND s.tid > $8))))
         ORDER BY s.total DESC, s.subject, s.tid LIMIT $9`,
        [
          filter.topic ?? null,
          filter.protocol ?? null,
          filter.minScore ?? null,
          filter.minConfidence ?? null,
          filter.publisher ?? null,
          after?.[0] ?? null,
          after?.[1] ?? null,
          after?.[2] ?? null,
          limit + 1,
        ],
      );
      return paged(
        rows,
        limit,
        (r): SubjectRow => ({
          topic: r.topic,
          subject: r.subject,
          total: r.total,
          confidence: r.confidence,
          protocol: r.protocol,
          registry: r.registry,
          signals: r.signals,
          lastAt: r.last_at === null ? null : iso(r.last_at),
          score: r.score,
        }),
        (r) => [r.total, r.subject, r.tid],
      );
    },

    async topics() {
      const rows = await driver.query<{
        tid: number;
        topic: string;
        seq: number;
        consensus: string | null;
        at: Date | string | null;
        signals: number;
        source: string | null;
        behind: number | null;
        note: string | null;
        updated_at: Date | string | null;
      }>(
        `SELECT tid, topic, last_sequence::float8 AS seq, last_consensus AS consensus, last_consensus_at AS at,
           signals::float8 AS signals, source, behind::float8 AS behind, note, updated_at FROM topics ORDER BY topic`,
      );
      const counts = await driver.query<{ tid: number; category: string; name: string; n: number }>(
        'SELECT tid, category, name, n::float8 AS n FROM topic_counts ORDER BY tid, category, name',
      );
      const nowMs = Date.now();
      return rows.map((r): TopicStatus => {
        const of = (category: string) => Object.fromEntries(counts.filter((c) => c.tid === r.tid && c.category === category).map((c) => [c.name, c.n]));
        return {
          topic: r.topic,
          lastSequence: r.seq,
          lastConsensusTimestamp: r.consensus,
          lastConsensusAt: r.at === null ? null : iso(r.at),
          counts: { signals: r.signals, records: of('record'), rejected: of('rejected'), unknown: of('unknown') },
          lagMs: r.consensus === null ? null : Math.max(0, nowMs - Date.parse(consensusIso(r.consensus))),
          behind: r.behind,
          source: r.source === 'grpc' || r.source === 'rest' ? r.source : null,
          note: r.note,
          updatedAt: r.updated_at === null ? null : iso(r.updated_at),
        };
      });
    },

    async runs({ topic, ...page } = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.number().int(), z.string()]));
      const rows = await driver.query<{
        tid: number;
        topic: string;
        run: string;
        signals: number;
        first_at: Date | string | null;
        last_at: Date | string | null;
        revealed: boolean;
        counts: VerifyReport['counts'] | null;
      }>(
        `SELECT r.tid, t.topic, r.run, r.signals::float8 AS signals, r.first_at, r.last_at, r.revealed,
           CASE WHEN r.verify_dirty THEN NULL ELSE r.verification -> 'counts' END AS counts
         FROM runs r JOIN topics t USING (tid)
         WHERE ($1::text IS NULL OR t.topic = $1) AND ($2::int IS NULL OR (r.tid, r.run) > ($2::int, $3::text))
         ORDER BY r.tid, r.run LIMIT $4`,
        [topic ?? null, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
      );
      return paged(
        rows,
        limit,
        (r): RunRow => ({
          topic: r.topic,
          run: r.run,
          signals: r.signals,
          firstAt: r.first_at === null ? '' : iso(r.first_at),
          lastAt: r.last_at === null ? '' : iso(r.last_at),
          revealed: r.revealed,
          verification: r.counts,
        }),
        (r) => [r.tid, r.run],
      );
    },

    async runVerification(topic, run) {
      const [row] = await driver.query<{
        tid: number;
        signals: number;
        revealed: boolean;
        dirty: boolean;
        verification: VerifyReport | null;
        verified_at: Date | string | null;
      }>(
        `SELECT r.tid, r.signals::float8 AS signals, r.revealed, r.verify_dirty AS dirty, r.verification, r.verified_at
         FROM runs r JOIN topics t USING (tid) WHERE t.topic = $1 AND r.run = $2`,
        [topic, run],
      );
      if (!row) return null;
      if (!row.dirty && row.verification && row.verified_at) {
        return { topic, run, revealed: row.revealed, computedAt: iso(row.verified_at), report: row.verification } satisfies RunVerification;
      }
      const signals = await driver.query<SignalRow>(
        `SELECT tid, seq::float8 AS seq, idx, consensus, payer, message FROM signals
         WHERE tid = $1 AND rh = $3 AND message ->> 'run' = $2 ORDER BY seq, idx`,
        [row.tid, run, hash32(run)],
      );
      const reveals = await driver.query<RecordRow>(
        `SELECT seq::float8 AS seq, idx, consensus, payer, kind, v, validated, message FROM records
         WHERE tid = $1 AND run = $2 AND kind = 'reveal' ORDER BY seq, idx`,
        [row.tid, run],
      );
      const report = verifySignals({
        signals: signals.map((s) => verifiableSignal(toReadSignal(s))),
        reveals: reveals.map(toReadRecord).flatMap(revealOf),
        keyedResponseHash: (key, s, response) => responseHashV2(key, s.signal, s.subject, response),
      });
      const computedAt = new Date();
      // Only marks it current if no signal or reveal arrived meanwhile (then the next call recomputes).
      await driver.query(
        `UPDATE runs SET verification = $3::json, verified_at = $4, verify_dirty = NOT (signals = $5 AND revealed = $6)
         WHERE tid = $1 AND run = $2`,
        [row.tid, run, JSON.stringify(report), computedAt, signals.length, reveals.length > 0],
      );
      return { topic, run, revealed: reveals.length > 0, computedAt: computedAt.toISOString(), report };
    },

    async databaseBytes() {
      const [row] = await driver.query<{ n: number }>('SELECT pg_database_size(current_database())::float8 AS n');
      return row!.n;
    },

    revision: () => currentRevision(driver),

    async changesSince(revision, limit) {
      const rows = await driver.query<{ topic: string; subject: string }>(
        `SELECT t.topic, c.subject FROM (
           SELECT tid, subject FROM subject_scores WHERE rev > $1
           UNION SELECT tid, unnest(subjects) FROM dirty_batches WHERE rev > $1
         ) c JOIN topics t USING (tid) LIMIT $2`,
        [revision, limit + 1],
      );
      return rows.length > limit ? null : rows;
    },

    watch(listener, { intervalMs = 250, since } = {}) {
      let last = since;
      let known = since !== undefined;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      // Sole writer: the revision moves only with this store's own writes.
      let askedAt = -1;
      const tick = async () => {
        try {
          const asking = writes;
          if (sole && known && askedAt === asking) return;
          const value = await currentRevision(driver);
          askedAt = asking;
          if (!stopped && value !== last) {
            const first = !known;
            known = true;
            last = value;
            if (!first) listener(value);
          }
        } catch {
          // A closed store or a lost connection: the next tick tries again; unsubscribe stops it.
        } finally {
          if (!stopped && !closed) timer = setTimeout(() => void tick(), intervalMs);
        }
      };
      void tick();
      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    },
  };
  return store;
}

const SIGNAL_COLUMNS = 'tid, seq, idx, sh, rh, consensus, payer, dedupe, message';
const UNIQUE_VIOLATION = '23505';

/**
 * Stores signals (after the cursor guard) and returns those stored, in order. COPY is the cheapest way in (measured:
 * a third of the server's CPU of an INSERT over json_to_recordset, which parses every message twice), but it has no
 * ON CONFLICT: a signal whose dedupe key is already stored (a publisher that re-publishes; rare) makes the unique
 * index refuse the whole COPY, and the batch then goes through a staging table and INSERT … ON CONFLICT DO NOTHING,
 * in sequence order, so the first of each key wins as before.
 */
async function insertSignals(tx: SqlExecutor, tid: number, signals: readonly ReadSignal[], rows: readonly PreparedSignal[]): Promise<readonly ReadSignal[]> {
  const data = rows.map((r) => `${tid}\t${r.line}`).join('');
  await tx.exec('SAVEPOINT signals_copy');
  try {
    await tx.copyFrom(`COPY signals (${SIGNAL_COLUMNS}) FROM STDIN`, data);
    await tx.exec('RELEASE SAVEPOINT signals_copy');
    return signals;
  } catch (err) {
    if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    await tx.exec('ROLLBACK TO SAVEPOINT signals_copy');
  }
  await tx.exec('CREATE TEMP TABLE IF NOT EXISTS signals_stage (LIKE signals) ON COMMIT DELETE ROWS');
  await tx.copyFrom(`COPY signals_stage (${SIGNAL_COLUMNS}) FROM STDIN`, data);
  const inserted = await tx.query<{ dedupe: string }>(
    `INSERT INTO signals SELECT * FROM signals_stage ORDER BY seq, idx ON CONFLICT (tid, dedupe) DO NOTHING
     RETURNING replace(dedupe::text, '-', '') AS dedupe`,
  );
  const keys = new Set(inserted.map((r) => r.dedupe));
  // A key twice in the batch was inserted once, by its first signal.
  return signals.filter((_, i) => keys.delete(rows[i]!.dedupe));
}

/** Stored signals per run: runs, counts, first and last consensus timestamps (INSERT_RUNS's arrays). */
function runsOf(signals: readonly ReadSignal[]): [string[], number[], string[], string[]] {
  const runs = new Map<string, { n: number; first: string; last: string }>();
  for (const s of signals) {
    const ts = s.consensusTimestamp;
    const r = runs.get(s.message.run);
    if (!r) runs.set(s.message.run, { n: 1, first: ts, last: ts });
    else {
      r.n++;
      if (consensusBefore(ts, r.first)) r.first = ts;
      if (consensusBefore(r.last, ts)) r.last = ts;
    }
  }
  const list = [...runs];
  return [list.map(([run]) => run), list.map(([, r]) => r.n), list.map(([, r]) => r.first), list.map(([, r]) => r.last)];
}

/** `seconds.nanos` order: more seconds digits is later, else the text orders them (nanos have 9 digits). */
function consensusBefore(a: string, b: string): boolean {
  const da = a.indexOf('.');
  const db = b.indexOf('.');
  return da !== db ? (da < 0 ? a.length : da) < (db < 0 ? b.length : db) : a < b;
}

const INSERT_RUNS = `
INSERT INTO runs (tid, run, signals, first_at, last_at)
SELECT $1, run, n, ${TS('f')}, ${TS('l')} FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[]) AS u(run, n, f, l)
ON CONFLICT (tid, run) DO UPDATE SET signals = runs.signals + excluded.signals,
  first_at = least(runs.first_at, excluded.first_at), last_at = greatest(runs.last_at, excluded.last_at), verify_dirty = true`;

/** Signals of (tid, subject) pairs given as $1 int[], $2 text[] and their hash32 $3 int[]. */
const SIGNALS_OF_SUBJECTS = `
SELECT s.tid, s.seq::float8 AS seq, s.idx, s.consensus, s.payer, s.message FROM signals s
JOIN unnest($1::int[], $2::text[], $3::int[]) AS d(tid, subject, sh)
  ON s.sh = d.sh AND s.tid = d.tid AND s.message ->> 'subject' = d.subject
ORDER BY s.tid, s.seq, s.idx`;

const INSERT_RECORDS = `
WITH ins AS (
  INSERT INTO records (tid, seq, idx, consensus, payer, kind, v, validated, run, message)
  SELECT $1, u.* FROM json_to_recordset($2::json)
    AS u(seq bigint, idx int, consensus text, payer text, kind text, v int, validated boolean, run text, message json)
  WHERE u.seq > $3
  ON CONFLICT DO NOTHING
  RETURNING kind, validated, run
)
INSERT INTO runs (tid, run, revealed) SELECT DISTINCT $1::int, run, true FROM ins WHERE kind = 'reveal' AND validated AND run IS NOT NULL
ON CONFLICT (tid, run) DO UPDATE SET revealed = true, verify_dirty = true`;

interface PreparedSignal {
  /** The COPY text line after the topic id column. */
  line: string;
  /** The dedupe key, 32 hex digits (a uuid as PostgreSQL reads it). */
  dedupe: string;
}

interface PreparedBatch {
  signals: PreparedSignal[];
  /** A JSON document for json_to_recordset. */
  records: string;
}

/** Encoded before the batch's turn to write, while an earlier batch of the topic may still be writing. */
function prepareBatch(batch: IndexBatch): PreparedBatch {
  const signals = batch.signals.map((s): PreparedSignal => {
    const dedupe = dedupeHex(s);
    const { subject, run } = s.message;
    return {
      dedupe,
      line: `${s.sequenceNumber}\t${s.index}\t${hash32(subject)}\t${hash32(run)}\t${copyText(s.consensusTimestamp)}\t${copyText(s.payerAccountId)}\t${dedupe}\t${copyText(JSON.stringify(s.message))}\n`,
    };
  });
  const records = batch.records.map((r) => ({
    seq: r.sequenceNumber,
    idx: r.index,
    consensus: r.consensusTimestamp,
    payer: r.payerAccountId,
    kind: r.kind,
    v: r.v,
    validated: r.validated,
    run: typeof r.message.run === 'string' ? r.message.run : null,
    message: r.message,
  }));
  return { signals, records: JSON.stringify(records) };
}

interface SignalRow extends Row {
  tid: number;
  seq: number;
  idx: number;
  consensus: string;
  payer: string;
  message: ReadSignal['message'];
}

interface RecordRow extends Row {
  seq: number;
  idx: number;
  consensus: string;
  payer: string;
  kind: ReadRecord['kind'];
  v: number;
  validated: boolean;
  message: Record<string, unknown>;
}

function toReadSignal(r: SignalRow): ReadSignal {
  return {
    sequenceNumber: r.seq,
    consensusTimestamp: r.consensus,
    consensusAt: consensusIso(r.consensus),
    payerAccountId: r.payer,
    index: r.idx,
    message: r.message,
  };
}

function toReadRecord(r: RecordRow): ReadRecord {
  return {
    sequenceNumber: r.seq,
    consensusTimestamp: r.consensus,
    payerAccountId: r.payer,
    consensusAt: consensusIso(r.consensus),
    index: r.idx,
    kind: r.kind,
    v: r.v,
    validated: r.validated,
    message: r.message,
  };
}

/** The reader's dedupe key (publisher, run, signal id, subject), hashed to 16 bytes. */
function dedupeHex(s: ReadSignal): string {
  return oneShotHash('md5', dedupeKey(s.payerAccountId, s.message), 'hex');
}

/** A value in COPY's text format: backslash, tab and line breaks escaped (JSON text has no raw tabs or newlines). */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : value;
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** The index key of a subject or run: the first 4 bytes of its md5, as a signed 32-bit integer. */
function hash32(value: string): number {
  let h = hash32Cache.get(value);
  if (h === undefined) {
    // Subjects and runs recur batch after batch: a bounded memo saves most of the hashing.
    if (hash32Cache.size >= HASH32_CACHE_MAX) hash32Cache.clear();
    hash32Cache.set(value, (h = oneShotHash('md5', value, 'buffer').readInt32BE(0)));
  }
  return h;
}
const HASH32_CACHE_MAX = 20_000; // about 4 MB of UAIDs at most
const hash32Cache = new Map<string, number>();

async function currentRevision(db: SqlExecutor): Promise<number> {
  const [row] = await db.query<{ value: number }>("SELECT value::float8 AS value FROM serve_meta WHERE key = 'revision'");
  return row!.value;
}

function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

function pageLimit(page: PageOptions): number {
  const limit = page.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1) throw new Hcs25Error('USAGE', `limit must be an integer from 1 to ${MAX_PAGE}`);
  return Math.min(limit, MAX_PAGE);
}

function paged<R, T>(rows: R[], limit: number, map: (row: R) => T, key: (row: R) => unknown[]): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(map), next: more ? Buffer.from(JSON.stringify(key(items[items.length - 1]!))).toString('base64url') : null };
}

function decodeCursor<T>(cursor: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (cursor === undefined) return undefined;
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new Hcs25Error('USAGE', 'the page cursor is not one this list gave out', { hint: 'pass the `next` value of the previous page unchanged' });
  }
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
