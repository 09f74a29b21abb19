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
import type { EvidenceBasis } from '../../score/evidence.js';
import type { HistoryWindow, SubjectHistory } from '../../score/history.js';
import type { ReadRecord, ReadSignal, RejectedMessage, UnknownRead } from '../../read/types.js';
import type { VerifyReport } from '../../verify/signals.js';
import type { HookStore } from './hook-types.js';

export type * from './hook-types.js';

import type { Page, PageOptions } from './paging.js';
export type { Page, PageOptions } from './paging.js';

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

export { DEFAULT_PAGE, MAX_PAGE } from './paging.js';

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
  /** Who the subject is, from the registry entry its signals cite (store/identity.ts). */
  identity?: SubjectIdentity;
}

/** How far a subject's identity is known: see schemas/serve/006_subject_identities.sql. */
export type IdentityStatus = 'uncited' | 'pending' | 'resolved' | 'not-listed' | 'unavailable';

/**
 * A subject's name, protocol and address as the registry entry its signals cite lists them. Names and endpoints are
 * whatever the registry's writer chose: stored escaped for terminals (read/labels.ts), escaped again for HTML.
 */
export interface SubjectIdentity {
  name: string | null;
  /** The entry's protocol (a2a, openai, http, mcp, hcs-10); before it is resolved, the UAID's (`rest` shown `http`). */
  protocol: string | null;
  /** URL for a2a / openai / http / mcp agents. */
  endpoint: string | null;
  /** An HCS-10 agent's Hedera account. */
  accountId: string | null;
  /** Topic id of the registry the newest citing signal names. */
  registry: string | null;
  /** The registry message that listed the subject, `hcs://2/{topic}#{sequence}`, and its sequence number. */
  entry: string | null;
  sequence: number | null;
  status: IdentityStatus;
  /** Why the registry could not be read (status `unavailable`). */
  note: string | null;
}

/** A registry with subjects due for resolving (identitiesDue). */
export interface DueRegistry {
  /** Topic id. */
  registry: string;
  /** Consensus time (`seconds.nanos`) of the newest citing signal: the registry is read as it was then. */
  until: string;
  /** Due subjects never resolved yet. */
  unresolved: number;
}

/** A subject due for resolving, with the citation its answer will be for. */
export interface DueIdentity {
  topic: string;
  subject: string;
  citedSeq: number;
}

/** What reading a registry found for a due subject. */
export interface IdentityUpdate extends DueIdentity {
  /** The registry read (topic id): an update for a subject whose newest citation names another one is dropped. */
  registry: string;
  status: 'resolved' | 'not-listed';
  /** What the entry says (status `resolved`). */
  entry?: {
    name: string | null;
    protocol: string;
    endpoint: string | null;
    accountId: string | null;
    entry: string;
    sequence: number;
  };
}

export interface SubjectFilter {
  topic?: string;
  /** Only subjects with at least one signal paid by this account. */
  publisher?: string;
  /** The UAID protocol (e.g. `a2a`, `hcs-10`). */
  protocol?: string;
  minScore?: number;
  minConfidence?: number;
  /** Case-insensitive substring of the subject's name, UAID, endpoint or HCS-10 account. */
  q?: string;
  /** The topic id of the registry the subject's signals cite. */
  registry?: string;
  /** What the score rests on (evidenceStrength.basis). */
  basis?: EvidenceBasis;
  /** `low`: evidenceStrength.lowEvidence; `sufficient`: not. */
  evidence?: 'low' | 'sufficient';
  /** At least this many eval observations in all (evidenceStrength.evalObservations). */
  minEvalObservations?: number;
}

/** A row of the ranked subject list (score desc, then eval observations desc, then subject, then topic). */
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
  identity: SubjectIdentity;
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
  /** Where the run's first reveal is on the topic, or null before it is revealed. */
  reveal: { sequenceNumber: number; consensusTimestamp: string } | null;
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

/** A subject whose stored score was written after a sync position (updatedSubjects). */
export interface ChangedSubject {
  topic: string;
  subject: string;
  /** The revision that wrote it: the sync order. */
  rev: number;
  score: SubjectScore;
  identity: SubjectIdentity;
}

/** A page of changes: `token` continues after its last item (after `since` when it has none). */
export interface SyncPage {
  items: ChangedSubject[];
  /** More changes are stored already (ask again with `token`). */
  more: boolean;
  token: string;
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
   * Puts back in line for its rescoring every subject whose score changed with time alone by `now` (a component turned
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
  /**
   * Availability and latency over the 24 h, 7 d and 30 d before `now` (default: the clock), and the `window`'s series
   * (with the stored score at each bucket's end); null when the topic has no signal about the subject and no score.
   */
  subjectHistory(
    subject: string,
    options: { topic: string; window: HistoryWindow; now?: Date },
  ): Promise<SubjectHistory | null>;
  /**
   * Scored subjects of `topic` whose score the rescoring wrote after `since` (a previous SyncPage's token, or a time:
   * from the first subject rescored at or after it), in change order (revision, then subject). A subject rescored
   * again later comes again, at its new place.
   */
  updatedSubjects(topic: string, since: string | Date, limit?: number): Promise<SyncPage>;
  /** A topic's signals with consensus time in [from, to), in consensus order (keyset paged). */
  topicSignals(topic: string, window: { from: Date; to: Date }, page?: PageOptions): Promise<Page<ReadSignal>>;
  /**
   * Every stored signal about one subject on one topic, of these payers only (all when absent), in topic order: what
   * the rescoring reads for it, so as bounded as a rescoring.
   */
  subjectSignalsOf(topic: string, subject: string, publishers?: readonly string[]): Promise<ReadSignal[]>;
  /**
   * Scored subjects ranked by score desc, then eval observations desc (evidence strength: a thinly evidenced or
   * availability-only subject after a well-evidenced one of the same score), then subject; subjects not scored yet
   * are left out.
   */
  listSubjects(filter?: SubjectFilter, page?: PageOptions): Promise<Page<SubjectRow>>;
  topics(): Promise<TopicStatus[]>;
  /** Runs by (topic, run id); `desc`: newest first (run ids are ULIDs, so they sort by start time). */
  runs(options?: PageOptions & { topic?: string; order?: 'asc' | 'desc' }): Promise<Page<RunRow>>;
  /** The verify library over the run's indexed signals and reveals: stored, recomputed when they changed. */
  runVerification(topic: string, run: string): Promise<RunVerification | null>;
  /**
   * Registries with subjects due for resolving (a citation newer than their stored entry), those with never-resolved
   * subjects first, at most `limit` (default 16).
   */
  identitiesDue(options?: { limit?: number }): Promise<DueRegistry[]>;
  /** The subjects of `registry` due for resolving, paged in (topic, subject) order. */
  dueIdentities(registry: string, page?: PageOptions): Promise<Page<DueIdentity>>;
  /**
   * Stores what a registry said (one transaction, at a new revision: cached answers of these subjects are dropped).
   * A subject stays due when a newer citation arrived meanwhile.
   */
  saveIdentities(updates: readonly IdentityUpdate[]): Promise<void>;
  /**
   * The registry could not be read: its due subjects keep what was resolved before (`unavailable` when nothing was)
   * and stay due, with `note` saying why. Returns how many changed (none when the note is the same as before).
   */
  identitiesUnavailable(registry: string, note: string): Promise<number>;
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
