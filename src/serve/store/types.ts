/**
 * The serve store: what the indexer writes and the HTTP API reads, behind one interface with two engines (PGlite,
 * embedded, and a real PostgreSQL server) over ONE SQL schema (schemas/serve/*.sql).
 *
 * Writes are batches applied in one transaction together with the topic's new cursor, so a process killed at any
 * moment loses and repeats nothing: a batch is either all in or all out, and a replayed batch (or the part of it at or
 * before the cursor) is ignored. Dedupe keys live in the database, so "first one wins" survives restarts.
 *
 * Reads are bounded: every list takes a `limit` (clamped to MAX_PAGE) and an opaque keyset `cursor` (never OFFSET).
 */
import type { ScoringConfig } from '../../score/scoring-config.js';
import type { SubjectScore } from '../../score/scores.js';
import type { ReadRecord, ReadSignal, RejectedMessage, UnknownRead } from '../../read/types.js';
import type { VerifyReport } from '../../verify/signals.js';
import type { HookStore } from './hook-types.js';

export type * from './hook-types.js';

type Row = Record<string, unknown>;

/** What the SQL store needs of a database: PGlite and node-postgres each give one (store/pglite.ts, store/postgres.ts). */
export interface SqlExecutor {
  query<T extends Row = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Several statements, no parameters. */
  exec(text: string): Promise<void>;
  /** `COPY … FROM STDIN` (text format) fed with `data`. */
  copyFrom(sql: string, data: string): Promise<void>;
}

export interface SqlDriver extends SqlExecutor {
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Largest page any list returns; a bigger `limit` is clamped to it. */
export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 100;

export type IndexSource = 'grpc' | 'rest';

/** Where a topic's indexing stands: the last message fully applied. */
export interface TopicCursor {
  sequence: number;
  /** Mirror form `seconds.nanos` of that message, or null when it had none (an incomplete chunk group). */
  consensusTimestamp: string | null;
}

/** A score or reveal record with its place in the message ((sequence, index) names it). */
export type IndexRecord = ReadRecord;

/**
 * What the indexer classified from a run of WHOLE topic messages (in sequence order), applied atomically with `cursor`:
 * everything at or before the stored cursor is ignored, so a message must not be split across batches.
 * Signals are already allow-listed and deduplicated within the batch; duplicates of signals stored by earlier batches
 * are found by the store (their dedupe keys) and counted as `duplicate` rejections.
 */
export interface IndexBatch {
  signals: readonly ReadSignal[];
  records: readonly IndexRecord[];
  unknown: readonly UnknownRead[];
  rejected: readonly RejectedMessage[];
  /** The last message this batch covers: the topic's new cursor. */
  cursor: TopicCursor;
  source: IndexSource;
}

export interface ApplyResult {
  /** Signals stored by this batch (after the cursor guard and the stored dedupe keys). */
  signals: number;
  /** Signals that were duplicates of stored ones (counted as rejected `duplicate`). */
  duplicates: number;
  /** False when the whole batch was at or before the stored cursor (a replay): nothing changed. */
  applied: boolean;
  revision: number;
}

export interface PageOptions {
  /** Opaque keyset cursor from a previous page's `next`. */
  cursor?: string;
  /** Page size, 1..MAX_PAGE (default DEFAULT_PAGE). */
  limit?: number;
}

export interface Page<T> {
  items: T[];
  /** Cursor for the next page, or null at the end. */
  next: string | null;
}

/** A subject on one topic: what a score answer is kept under. */
export interface SubjectKey {
  topic: string;
  subject: string;
}

/** One subject's current score on one topic: one subject of `hcs25 scores --json`, plus where it comes from. */
export interface StoredScore {
  topic: string;
  subject: string;
  /** False while signals arrived since `score` was computed (it is recomputed shortly). */
  fresh: boolean;
  /** Null until the first computation. */
  score: SubjectScore | null;
}

export interface SubjectFilter {
  topic?: string;
  /** Only subjects with at least one signal paid by this account. */
  publisher?: string;
  /** The UAID protocol (e.g. `a2a`, `hcs-10`). */
  protocol?: string;
  minScore?: number;
  minConfidence?: number;
}

/** A row of the ranked subject list (score desc, then subject, then topic). */
export interface SubjectRow {
  topic: string;
  subject: string;
  total: number;
  confidence: number;
  protocol: string | null;
  registry: string | null;
  signals: number;
  lastAt: string | null;
  score: SubjectScore;
}

export interface TopicStatus {
  topic: string;
  lastSequence: number;
  lastConsensusTimestamp: string | null;
  /** ISO time of the last indexed message, or null. */
  lastConsensusAt: string | null;
  counts: {
    signals: number;
    records: Record<string, number>;
    rejected: Record<string, number>;
    unknown: Record<string, number>;
  };
  /** now − last consensus time, ms (null before the first message). */
  lagMs: number | null;
  /** Messages the mirror node holds beyond the cursor, when the indexer knows the head (REST), else null. */
  behind: number | null;
  source: IndexSource | null;
  /** The indexer's last note (an outage, a fallback), or null. */
  note: string | null;
  updatedAt: string | null;
}

/** Live indexer state that is not part of a batch. */
export interface TopicState {
  source?: IndexSource;
  behind?: number | null;
  note?: string | null;
}

export interface RunRow {
  topic: string;
  run: string;
  signals: number;
  firstAt: string;
  lastAt: string;
  revealed: boolean;
  /** Verification counts when computed and current, else null (runVerification computes it). */
  verification: VerifyReport['counts'] | null;
}

export interface RunVerification {
  topic: string;
  run: string;
  revealed: boolean;
  computedAt: string;
  report: VerifyReport;
}

export interface RescoreResult {
  /** Subjects whose score was recomputed. */
  subjects: number;
  /** True when dirty subjects remain (call again). */
  more: boolean;
}

export interface ServeStore extends HookStore {
  readonly engine: 'pglite' | 'postgres';
  /** Applies the schema migrations not applied yet (idempotent; safe with several instances starting at once). */
  migrate(): Promise<void>;
  close(): Promise<void>;

  /**
   * Takes the indexer lock if free: Postgres `pg_try_advisory_lock` on a dedicated connection held until close (or
   * until that connection dies, when another instance may take over); PGlite is one process: always true.
   */
  tryIndexerLock(): Promise<boolean>;
  /**
   * Records the publisher allow-list (null or empty: every payer) the topic is indexed under. When the topic was
   * indexed under another list, its signals, records, runs and counts are removed and its cursor goes back to the
   * start (its subjects wait for their rescoring): returns true then.
   */
  useAllowList(topic: string, publishers: readonly string[] | null): Promise<boolean>;
  /** The last message applied on this topic, or null before the first batch. */
  cursor(topic: string): Promise<TopicCursor | null>;
  /**
   * One transaction: signals, records, counts, dedupe keys and the new cursor. Calls may overlap (the batch is encoded
   * at once, written after the topic's earlier batches, in call order); after a failed one, applyBatch refuses the
   * topic until `cursor(topic)` is read again, so nothing after a lost batch can move the cursor past it.
   */
  applyBatch(topic: string, batch: IndexBatch): Promise<ApplyResult>;
  /** Records the indexer's live state (source, behind-head, note) without touching the cursor. */
  setTopicState(topic: string, state: TopicState): Promise<void>;
  /** Recomputes up to `limit` dirty subjects' scores (computeScores, the store's scoring config). */
  rescoreDirty(options?: { limit?: number; now?: Date }): Promise<RescoreResult>;
  /**
   * Puts back in a batch to rescore every subject whose score changed with time alone by `now` (a component turned
   * stale: `stale_at`, migration 004), the earliest due first and at most `limit` (default and most 1000) per call;
   * returns how many (call again while it returns some).
   */
  markStale(options?: { now?: Date; limit?: number }): Promise<number>;

  subjectScore(subject: string, options?: { topic?: string }): Promise<StoredScore | null>;
  /** Every scored subject's current score, paged in (topic id, subject) order: what a score cache starts from. */
  storedScores(page?: PageOptions): Promise<Page<StoredScore>>;
  /** The current scores of these subjects, those scored (in no particular order): what a score cache refreshes. */
  scoresOf(keys: readonly SubjectKey[]): Promise<StoredScore[]>;
  /** Signal history, `hcs25 signals --json` rows; newest first by default. */
  subjectSignals(
    subject: string,
    options?: PageOptions & { topic?: string; order?: 'asc' | 'desc' },
  ): Promise<Page<ReadSignal & { topic: string }>>;
  /** Scored subjects ranked by score desc, then subject; subjects not scored yet are left out. */
  listSubjects(filter?: SubjectFilter, page?: PageOptions): Promise<Page<SubjectRow>>;
  topics(): Promise<TopicStatus[]>;
  runs(options?: PageOptions & { topic?: string }): Promise<Page<RunRow>>;
  /** The verify library over the run's indexed signals and reveals: stored, recomputed when they changed. */
  runVerification(topic: string, run: string): Promise<RunVerification | null>;
  /** Size of the database on disk (pg_database_size), bytes. */
  databaseBytes(): Promise<number>;
  /** Grows with every change (batch, rescore): ETags and change detection, across instances sharing a database. */
  revision(): Promise<number>;
  /**
   * The (topic, subject) pairs whose score answer changed after `revision`, rescored (a new score) or marked dirty by
   * newer signals (no longer fresh; one subject may be both), or null when more than `limit` did (then drop every
   * cached answer).
   */
  changesSince(revision: number, limit: number): Promise<Array<SubjectKey & { rescored: boolean }> | null>;
  /**
   * Calls `listener` when the revision changes (polled every `intervalMs`, default 250); returns the unsubscribe.
   * `since`: the revision the caller already knows (a first poll that differs is reported); default: the first poll's.
   */
  watch(listener: (revision: number) => void, options?: { intervalMs?: number; since?: number }): () => void;
}

export interface OpenStoreOptions {
  /** Where `.hcs25` state lives: the embedded database defaults to `<stateDir>/serve-db`. */
  stateDir: string;
  /** Scoring configuration for stored scores (default: the built-in one, as `hcs25 scores`). */
  scoring?: ScoringConfig;
}
