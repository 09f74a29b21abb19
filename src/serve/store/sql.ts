/**
 * The ServeStore over any Postgres dialect driver: both engines (PGlite, pg) run exactly these statements, so they
 * cannot drift. Engines supply a driver (query, transaction, close) and the indexer lock. This file holds the store
 * and its reads; the indexer's writes are in ingest.ts, score upkeep in rescore.ts.
 */
import { z } from 'zod';
import type { SubjectScore } from '../../score/scores.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from '../../score/scoring-config.js';
import { consensusIso } from '../../core/consensus-time.js';
import type { ReadRecord } from '../../read/types.js';
import { responseHashV2 } from '../../format/hashing.js';
import { revealOf, verifiableSignal } from '../../verify/read.js';
import { verifySignals, type VerifyReport } from '../../verify/signals.js';
import { currentRevision, hash32, iso, SqlContext, type SignalRow, toReadSignal } from './context.js';
import {
  createIdentities,
  IDENTITY_COLUMNS,
  IDENTITY_JOIN,
  type IdentityColumns,
  identityOf,
  substringPattern,
} from './identity.js';
import { createHistoryReader } from './history.js';
import { createHookStore } from './hooks.js';
import { createIngest } from './ingest.js';
import { decodeCursor, pageLimit, paged } from './paging.js';
import { migrate } from './migrate.js';
import { createRescorer } from './rescore.js';
import { createExportReads } from './export.js';
import type {
  PageOptions,
  RunRow,
  RunVerification,
  ServeStore,
  SqlDriver,
  StoredScore,
  SubjectFilter,
  SubjectRow,
  TopicStatus,
} from './types.js';

export interface SqlStoreOptions {
  engine: ServeStore['engine'];
  driver: SqlDriver;
  tryIndexerLock: () => Promise<boolean>;
  /** Runs after the driver closes (the lock connection). */
  onClose?: () => Promise<void>;
  scoring?: ScoringConfig;
  /** One process owns the database (PGlite): see SqlContext.sole. */
  soleWriter?: boolean;
}

/**
 * A stored score `s` is fresh unless its subject waits for its rescoring (it is rescored soon): one index lookup, see
 * docs/performance.md, "Subjects waiting for their rescoring, one row each".
 */
const FRESH = 'NOT EXISTS (SELECT 1 FROM pending_subjects p WHERE p.tid = s.tid AND p.subject = s.subject) AS fresh';

type StoredScoreRow = { topic: string; subject: string; fresh: boolean; score: SubjectScore } & IdentityColumns;

function storedScore(r: StoredScoreRow): StoredScore {
  return { topic: r.topic, subject: r.subject, fresh: r.fresh, score: r.score, identity: identityOf(r, r.subject) };
}

export function createSqlStore(options: SqlStoreOptions): ServeStore {
  const { driver } = options;
  const ctx = new SqlContext(driver, options.scoring ?? DEFAULT_SCORING_CONFIG, options.soleWriter === true);

  const store: ServeStore = {
    engine: options.engine,

    async migrate() {
      await migrate(driver);
    },

    async close() {
      if (ctx.closed) return;
      ctx.closed = true;
      await driver.close();
      await options.onClose?.();
    },

    tryIndexerLock: () => options.tryIndexerLock(),

    ...createIngest(ctx),
    ...createRescorer(ctx),
    ...createIdentities(ctx),
    ...createExportReads(ctx),
    ...createHistoryReader(ctx),
    ...createHookStore(ctx),

    async subjectScore(subject, { topic } = {}) {
      // Fresh unless the subject waits for its rescoring since before its newest signal (markStale's wait starts
      // after it: no signal is missing). Only a rescoring of the subject ends its wait, so the answer changes only at
      // a revision changesSince names. The newest signal is looked up only while the subject waits.
      const [row] = await driver.query<{ topic: string; fresh: boolean; score: SubjectScore | null } & IdentityColumns>(
        `SELECT t.topic, s.score, ${IDENTITY_COLUMNS},
           NOT EXISTS (SELECT 1 FROM pending_subjects p WHERE p.tid = t.tid AND p.subject = $1 AND p.after_seq < (
             SELECT g.seq FROM signals g WHERE g.sh = $3 AND g.tid = t.tid AND g.message ->> 'subject' = $1
             ORDER BY g.sh DESC, g.tid DESC, g.seq DESC, g.idx DESC LIMIT 1)) AS fresh
         FROM topics t LEFT JOIN subject_scores s ON s.tid = t.tid AND s.subject = $1
           LEFT JOIN subject_identities i ON i.tid = t.tid AND i.subject = $1
         WHERE (s.subject IS NOT NULL OR EXISTS (SELECT 1 FROM signals g WHERE g.sh = $3 AND g.tid = t.tid AND g.message ->> 'subject' = $1))
           AND ($2::text IS NULL OR t.topic = $2) ORDER BY t.tid LIMIT 1`,
        [subject, topic ?? null, hash32(subject)],
      );
      return row
        ? ({
            topic: row.topic,
            subject,
            fresh: row.fresh,
            score: row.score,
            identity: identityOf(row, subject),
          } satisfies StoredScore)
        : null;
    },

    async storedScores(page: PageOptions = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.number().int(), z.string()]));
      const rows = await driver.query<
        {
          tid: number;
          topic: string;
          subject: string;
          fresh: boolean;
          score: SubjectScore;
        } & IdentityColumns
      >(
        `SELECT s.tid, t.topic, s.subject, s.score, ${IDENTITY_COLUMNS},
           ${FRESH}
         FROM subject_scores s JOIN topics t USING (tid) ${IDENTITY_JOIN}
         WHERE s.score IS NOT NULL AND ($1::int IS NULL OR (s.tid, s.subject) > ($1::int, $2::text))
         ORDER BY s.tid, s.subject LIMIT $3`,
        [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
      );
      return paged(rows, limit, storedScore, (r) => [r.tid, r.subject]);
    },

    async scoresOf(keys) {
      if (keys.length === 0) return [];
      const rows = await driver.query<
        { topic: string; subject: string; fresh: boolean; score: SubjectScore } & IdentityColumns
      >(
        `SELECT k.topic, s.subject, s.score, ${IDENTITY_COLUMNS},
           ${FRESH}
         FROM unnest($1::text[], $2::text[]) AS k(topic, subject)
         JOIN topics t ON t.topic = k.topic
         JOIN subject_scores s ON s.tid = t.tid AND s.subject = k.subject
         ${IDENTITY_JOIN}
         WHERE s.score IS NOT NULL`,
        [keys.map((k) => k.topic), keys.map((k) => k.subject)],
      );
      return rows.map(storedScore);
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
        [
          subject,
          topic ?? null,
          after?.[0] ?? null,
          after?.[1] ?? null,
          after?.[2] ?? null,
          limit + 1,
          hash32(subject),
        ],
      );
      return paged(
        rows,
        limit,
        (r) => ({ topic: r.topic, ...toReadSignal(r) }),
        (r) => [r.tid, r.seq, r.idx],
      );
    },

    async listSubjects(filter: SubjectFilter = {}, page: PageOptions = {}) {
      const limit = pageLimit(page);
      // The cursor is the last row's (total, eval observations, subject, tid): the order's whole key (migration 007).
      const after = decodeCursor(page.cursor, z.tuple([z.number(), z.number().int(), z.string(), z.number().int()]));
      const rows = await driver.query<
        Omit<SubjectRow, 'lastAt' | 'identity'> & {
          tid: number;
          last_at: Date | string | null;
          eval_observations: number;
        } & IdentityColumns
      >(
        `SELECT s.tid, t.topic, s.subject, s.total, s.confidence, s.protocol, s.registry, s.signals::float8 AS signals, s.last_at, s.score,
           s.eval_observations, ${IDENTITY_COLUMNS}
         FROM subject_scores s JOIN topics t USING (tid) ${IDENTITY_JOIN}
         WHERE s.total IS NOT NULL
           AND ($1::text IS NULL OR t.topic = $1)
           AND ($2::text IS NULL OR s.protocol = $2)
           AND ($3::float8 IS NULL OR s.total >= $3)
           AND ($4::float8 IS NULL OR s.confidence >= $4)
           AND ($5::text IS NULL OR $5 = ANY (s.publishers))
           AND ($6::float8 IS NULL OR s.total < $6 OR (s.total = $6 AND (s.eval_observations < $7
             OR (s.eval_observations = $7 AND (s.subject > $8 OR (s.subject = $8 AND s.tid > $9))))))
           AND ($11::text IS NULL OR s.subject ILIKE $11 OR i.name ILIKE $11 OR i.endpoint ILIKE $11 OR i.account_id ILIKE $11)
           AND ($12::text IS NULL OR i.registry = $12)
           AND ($13::text IS NULL OR s.basis = $13)
           AND ($14::boolean IS NULL OR s.low_evidence = $14)
           AND ($15::int IS NULL OR s.eval_observations >= $15)
         ORDER BY s.total DESC, s.eval_observations DESC, s.subject, s.tid LIMIT $10`,
        [
          filter.topic ?? null,
          filter.protocol ?? null,
          filter.minScore ?? null,
          filter.minConfidence ?? null,
          filter.publisher ?? null,
          after?.[0] ?? null,
          after?.[1] ?? null,
          after?.[2] ?? null,
          after?.[3] ?? null,
          limit + 1,
          filter.q === undefined ? null : substringPattern(filter.q),
          filter.registry ?? null,
          filter.basis ?? null,
          filter.evidence === undefined ? null : filter.evidence === 'low',
          filter.minEvalObservations ?? null,
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
          identity: identityOf(r, r.subject),
        }),
        (r) => [r.total, r.eval_observations, r.subject, r.tid],
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
        const of = (category: string) =>
          Object.fromEntries(
            counts.filter((c) => c.tid === r.tid && c.category === category).map((c) => [c.name, c.n]),
          );
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

    async runs({ topic, order = 'asc', ...page } = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.number().int(), z.string()]));
      const [cmp, dir] = order === 'desc' ? ['<', 'DESC'] : ['>', 'ASC'];
      const rows = await driver.query<{
        tid: number;
        topic: string;
        run: string;
        signals: number;
        first_at: Date | string | null;
        last_at: Date | string | null;
        revealed: boolean;
        counts: VerifyReport['counts'] | null;
        reveal_seq: number | null;
        reveal_consensus: string | null;
      }>(
        `SELECT r.tid, t.topic, r.run, r.signals::float8 AS signals, r.first_at, r.last_at, r.revealed,
           CASE WHEN r.verify_dirty THEN NULL ELSE r.verification -> 'counts' END AS counts,
           rv.seq::float8 AS reveal_seq, rv.consensus AS reveal_consensus
         FROM runs r JOIN topics t USING (tid)
         LEFT JOIN LATERAL (SELECT seq, consensus FROM records
           WHERE tid = r.tid AND run = r.run AND kind = 'reveal' AND validated ORDER BY seq, idx LIMIT 1) rv ON r.revealed
         WHERE ($1::text IS NULL OR t.topic = $1) AND ($2::int IS NULL OR (r.tid, r.run) ${cmp} ($2::int, $3::text))
         ORDER BY r.tid ${dir}, r.run ${dir} LIMIT $4`,
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
          reveal:
            r.reveal_seq === null || r.reveal_consensus === null
              ? null
              : { sequenceNumber: r.reveal_seq, consensusTimestamp: r.reveal_consensus },
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
        return {
          topic,
          run,
          revealed: row.revealed,
          computedAt: iso(row.verified_at),
          report: row.verification,
        } satisfies RunVerification;
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
      const rows = await driver.query<{ topic: string; subject: string; rescored: boolean }>(
        `SELECT t.topic, c.subject, c.rescored FROM (
           SELECT tid, subject, true AS rescored FROM subject_scores WHERE rev > $1
           UNION SELECT tid, subject, false FROM pending_subjects WHERE rev > $1
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
          const asking = ctx.writes;
          if (ctx.sole && known && askedAt === asking) return;
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
          if (!stopped && !ctx.closed) timer = setTimeout(() => void tick(), intervalMs);
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

interface RecordRow extends Record<string, unknown> {
  seq: number;
  idx: number;
  consensus: string;
  payer: string;
  kind: ReadRecord['kind'];
  v: number;
  validated: boolean;
  message: Record<string, unknown>;
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
