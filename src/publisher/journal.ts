/**
 * The run journal: one append-only JSON-lines file per run, `<stateDir>/runs/<RUN>.jsonl`, mode 0600 in a 0700
 * directory. It is written before anything is submitted and is the only place the run key lives until `reveal`.
 *
 * Durability: records are buffered and written by `flush()`, which fdatasyncs; concurrent flushes coalesce into one
 * write + one sync (group commit), so hundreds of submissions in flight cost a handful of syncs per second.
 * A process killed mid-write leaves at most a torn last line; the reader drops it and `open()` cuts it off before
 * appending, so the file stays valid JSON lines.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { chmod, link, mkdir, open, readdir, rename, stat, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { Hcs25Error } from '../core/errors.js';
import { PROTOCOLS } from '../core/agent.js';
import type { Agent } from '../core/agent.js';
import type { AnyEvalResult } from '../evals/types.js';
import { entityIdSchema, transactionIdSchema } from '../core/ids.js';
import { PACK_MODES } from '../signals/pack.js';

export const JOURNAL_VERSION = 1;
export const RUN_ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export class JournalError extends Hcs25Error {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('JOURNAL', message, options);
    this.name = 'JournalError';
  }
}

// ---------- records ----------

const isoTime = z.string().min(1);
const txIdString = transactionIdSchema;

const agentSchema = z.looseObject({
  subject: z.string().min(1),
  name: z.string(),
  protocol: z.enum(PROTOCOLS),
  endpoint: z.string().optional(),
  inboundTopicId: z.string().optional(),
  accountId: z.string().optional(),
  model: z.string().optional(),
  source: z.string().optional(),
  registrySeq: z.number().optional(),
})
  // Checked where it matters; the rest is kept as written.
  .transform((a) => a as unknown as Agent);

/** Run settings worth knowing on resume and in reports. Never a key, never a header value. */
export const runConfigSchema = z.object({
  network: z.string(),
  operator: z.string().optional(),
  registry: z.string().optional(),
  agentsFile: z.string().optional(),
  evals: z.array(z.string()),
  concurrency: z.number().int().positive(),
  budgetMs: z.number().int().positive(),
  maxFeeHbar: z.number().positive(),
  keepResponses: z.boolean(),
  /**
   * How the run packs v2 signals into messages. Absent in journals of v1 runs (one v1 message per signal), which a
   * resume finishes the way they began.
   */
  pack: z.enum(PACK_MODES).optional(),
  /** Extra runner options that must be the same on resume (science bank path, grader, question counts). */
  extra: z.record(z.string(), z.unknown()).optional(),
});
export type RunConfigSummary = z.infer<typeof runConfigSchema>;

const startSchema = z.object({
  t: z.literal('start'),
  v: z.literal(JOURNAL_VERSION),
  at: isoTime,
  run: z.string().regex(RUN_ID_PATTERN),
  seed: z.string(),
  runKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  // A journal that names no valid topic (edited by hand, damaged) is refused, never resent to.
  topic: entityIdSchema,
  config: runConfigSchema,
  agents: z.array(agentSchema),
});

const builtSchema = z.object({ json: z.string(), bytes: z.number().int().positive() });

/** One eval/probe result and the message built from it, written together so one can never exist without the other. */
const resultSchema = z.object({
  t: z.literal('result'),
  at: isoTime,
  key: z.string().min(1),
  // Our own file: the shape is checked where it matters (kind, agent); the rest is kept as written for re-grading.
  result: z
    .looseObject({ kind: z.enum(['math', 'science', 'availability']), agent: agentSchema })
    .transform((r) => r as unknown as AnyEvalResult),
  message: builtSchema.optional(),
  buildError: z.object({ code: z.string(), message: z.string() }).optional(),
});

/**
 * A packed message (`hcs25 run --pack`), journaled before its transaction id is used: the exact bytes (UTF-8 text,
 * or base64 of a zlib stream) and the signal keys it carries, in index order. Its tx and receipt records use its key.
 */
const packSchema = z.object({
  t: z.literal('pack'),
  at: isoTime,
  key: z.string().startsWith('pack|'),
  encoding: z.enum(['json', 'zlib']),
  data: z.string().min(1),
  bytes: z.number().int().positive(),
  signals: z.array(z.string().min(1)).min(1),
});

/**
 * A score record (`hcs25 scores --publish`), journaled before its transaction id is used: the exact message and the
 * subject it scores. Its tx and receipt records use its key. Only score publications (not runs) hold these.
 */
const scoreSchema = z.object({
  t: z.literal('score'),
  at: isoTime,
  key: z.string().startsWith('score|'),
  json: z.string().min(1),
  bytes: z.number().int().positive(),
  subject: z.string().min(1),
});

/**
 * A message of score records (`hcs25 scores --publish --pack`), journaled before its transaction id is used: the exact
 * bytes (UTF-8 text, or base64 of a zlib stream) and the subjects of its records, in index order. Journals from before
 * packing hold `score` records (one record per message), read as a message of one subject.
 */
const scoresSchema = z.object({
  t: z.literal('scores'),
  at: isoTime,
  key: z.string().startsWith('score|'),
  encoding: z.enum(['json', 'zlib']),
  data: z.string().min(1),
  bytes: z.number().int().positive(),
  subjects: z.array(z.string().min(1)).min(1),
});

/** A transaction id assigned to a message, durable before the first send. */
const txSchema = z.object({
  t: z.literal('tx'),
  at: isoTime,
  key: z.string().min(1),
  txId: txIdString,
  /** Seconds the transaction is valid from its valid start. */
  validSeconds: z.number().int().positive(),
  /** Why a new id replaced an older one (`expired`, `failed:<STATUS>`); absent for the first id. */
  reason: z.string().optional(),
});

const receiptSchema = z.object({
  t: z.literal('receipt'),
  at: isoTime,
  key: z.string().min(1),
  txId: txIdString,
  seq: z.number().int().positive(),
  /** Known when the receipt came from the mirror node (or after `landed`); a receipt does not carry it. */
  consensusTimestamp: z.string().optional(),
  /** True when the network answered DUPLICATE_TRANSACTION: an earlier send of this id had already landed. */
  duplicate: z.boolean().optional(),
  /** Where the confirmation came from. */
  via: z.enum(['receipt', 'mirror']).optional(),
});

/** Consensus timestamps read back from the mirror node for messages already confirmed by receipt. */
const landedSchema = z.object({
  t: z.literal('landed'),
  at: isoTime,
  entries: z.array(z.object({ key: z.string(), seq: z.number().int().positive(), consensusTimestamp: z.string() })),
});

const failureSchema = z.object({
  t: z.literal('failure'),
  at: isoTime,
  key: z.string().optional(),
  txId: txIdString.optional(),
  code: z.string(),
  message: z.string(),
  /** The run stopped on this failure. */
  fatal: z.boolean(),
  /** The transaction reached consensus with this failure: its id is used up and a resubmit needs a new one. */
  consumed: z.boolean().optional(),
});

/** Fees paid so far by this run, in tinybars, measured from the operator's balance. */
const feesSchema = z.object({
  t: z.literal('fees'),
  at: isoTime,
  spentTinybar: z.string().regex(/^\d+$/),
  confirmed: z.number().int().nonnegative(),
});

const resumeSchema = z.object({ t: z.literal('resume'), at: isoTime });

const endSchema = z.object({
  t: z.literal('end'),
  at: isoTime,
  status: z.enum(['complete', 'stopped', 'failed', 'interrupted']),
  reason: z.string().optional(),
});

export const journalRecordSchema = z.discriminatedUnion('t', [
  startSchema,
  resultSchema,
  packSchema,
  scoreSchema,
  scoresSchema,
  txSchema,
  receiptSchema,
  landedSchema,
  failureSchema,
  feesSchema,
  resumeSchema,
  endSchema,
]);

export type JournalRecord = z.infer<typeof journalRecordSchema>;
export type StartRecord = z.infer<typeof startSchema>;
export type ResultRecord = z.infer<typeof resultSchema>;
export type PackRecord = z.infer<typeof packSchema>;
export type TxRecord = z.infer<typeof txSchema>;
export type ScoreRecord = z.infer<typeof scoreSchema>;
export type ScoresRecord = z.infer<typeof scoresSchema>;
export type ReceiptRecord = z.infer<typeof receiptSchema>;
export type FailureRecord = z.infer<typeof failureSchema>;
export type EndRecord = z.infer<typeof endSchema>;

/** A record without its `at`: the journal stamps the time. */
export type JournalInput = JournalRecord extends infer R ? (R extends { at: string } ? Omit<R, 'at'> : never) : never;

// ---------- keys ----------

/**
 * The identity of one signal within a run: what a resume uses to tell done from not done. One per eval kind and
 * subject, which is also the consumers' duplicate key (payer, run, signal, subject).
 */
export function resultKey(result: Pick<AnyEvalResult, 'kind' | 'agent'>): string {
  return signalKey(result.kind, result.agent.subject);
}

export function signalKey(kind: AnyEvalResult['kind'], subject: string): string {
  return `${kind}|${subject}`;
}

// ---------- paths ----------

export function runsDir(stateDir: string): string {
  return join(stateDir, 'runs');
}

export function journalPath(stateDir: string, runId: string): string {
  assertRunId(runId);
  return join(runsDir(stateDir), `${runId}.jsonl`);
}

export function assertRunId(runId: string): void {
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new JournalError(`"${runId.slice(0, 40)}" is not a run id (a 26-character ULID)`, {
      hint: 'run ids are printed at the start of `hcs25 run`; list them with `ls <state-dir>/runs`',
    });
  }
}

/** Run ids with a journal in `stateDir`, oldest first (ULIDs sort by time). */
export async function listRuns(stateDir: string): Promise<string[]> {
  try {
    const names = await readdir(runsDir(stateDir));
    return names.filter((n) => n.endsWith('.jsonl') && RUN_ID_PATTERN.test(n.slice(0, -6))).map((n) => n.slice(0, -6)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

// ---------- writer ----------

export class Journal {
  private buffer: string[] = [];
  /** The flush that is writing now (or the last one). */
  private current: Promise<void> = Promise.resolve();
  /** A flush queued behind `current`; it takes everything appended before it starts. */
  private next: Promise<void> | null = null;
  private closed = false;
  private failed: unknown = null;

  private constructor(
    readonly path: string,
    readonly runId: string,
    private readonly fh: FileHandle,
    private readonly lock: string,
  ) {}

  /**
   * Starts a new run's journal; the start record is durable when this resolves. The journal gets its name only with
   * its start record on disk (written under a temporary name, synced, then linked): a process killed meanwhile leaves
   * no journal without a start record, which nothing could resume (a restarted watcher stopped on one).
   */
  static async create(stateDir: string, start: Omit<StartRecord, 't' | 'v' | 'at'>): Promise<Journal> {
    // Only the runs folder holds secrets (run keys, raw responses); the state dir may be shared, so leave its mode alone.
    await mkdir(stateDir, { recursive: true });
    await ensurePrivateDir(runsDir(stateDir));
    const path = journalPath(stateDir, start.run);
    const partial = `${path}.new`;
    // Not an append handle: records follow the start record at the file position, as in any other journal.
    const fh = await open(partial, 'w', 0o600);
    try {
      await writeFully(fh, Buffer.from(recordLine({ t: 'start', v: JOURNAL_VERSION, ...start }), 'utf8'));
      await fh.datasync();
      try {
        await link(partial, path);
      } catch (err) {
        // A filesystem without hard links: a rename, once the name is known to be free (run ids are new ULIDs).
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' || existsSync(path)) {
          throw new JournalError(`a journal for run ${start.run} already exists (${path})`, { hint: `resume it with --resume ${start.run}` });
        }
        await rename(partial, path);
      }
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    } finally {
      await unlink(partial).catch(() => undefined);
    }
    syncDir(runsDir(stateDir));
    return new Journal(path, start.run, fh, acquireLock(path, start.run));
  }

  /**
   * Opens an existing run for appending (resume, reveal). A torn last line — the process died mid-write — is cut
   * off first; anything else that does not parse is an error, because guessing could lose or duplicate a signal.
   */
  static async open(stateDir: string, runId: string, options: Pick<ReadJournalOptions, 'onResult'> = {}): Promise<{ journal: Journal; state: RunState }> {
    const path = journalPath(stateDir, runId);
    const lock = await lockExisting(path, runId);
    try {
      // Compact: a resume needs what is not yet confirmed, and counts of the rest.
      const read = await readJournal(path, { ...options, keep: 'pending' });
      if (read.tornBytes > 0) await truncate(path, read.validBytes);
      await chmod(path, 0o600);
      const fh = await open(path, 'a', 0o600);
      return { journal: new Journal(path, runId, fh, lock), state: read.state };
    } catch (err) {
      releaseLock(lock);
      throw err;
    }
  }

  /**
   * Opens a run for appending without reading it again, for the process that has just written and closed it and
   * still holds its state (a watcher revealing the run it published: a read parses every record, ~1.7 KB a signal,
   * and a watcher's old space grew ~8 MB at each reveal). Undefined when the file does not end with a whole line (a
   * failed last write): `open` reads it and cuts the torn line.
   */
  static async reopen(stateDir: string, runId: string): Promise<Journal | undefined> {
    const path = journalPath(stateDir, runId);
    const lock = await lockExisting(path, runId);
    let fh: FileHandle | undefined;
    try {
      fh = await open(path, 'a+', 0o600);
      const { size } = await fh.stat();
      const last = Buffer.alloc(1);
      if (size > 0 && (await fh.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] === 10) return new Journal(path, runId, fh, lock);
      await fh.close();
    } catch (err) {
      await fh?.close().catch(() => undefined);
      releaseLock(lock);
      throw err;
    }
    releaseLock(lock);
    return undefined;
  }

  /** Buffers a record; it reaches the disk with the next `flush()`. */
  append(record: JournalInput): void {
    if (this.closed) throw new JournalError(`journal ${this.runId} is closed`);
    this.buffer.push(recordLine(record));
  }

  /** Appends and waits until the record is on disk. */
  async write(record: JournalInput): Promise<void> {
    this.append(record);
    await this.flush();
  }

  /** Writes and syncs everything appended so far. Concurrent callers share one write and one sync. */
  flush(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.next) return this.next;
    const next = this.current.then(() => {
      this.next = null;
      return this.writeOut();
    });
    this.next = next;
    this.current = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.fh.close();
      releaseLock(this.lock);
    }
  }

  private async writeOut(): Promise<void> {
    if (this.buffer.length === 0) return;
    const data = Buffer.from(this.buffer.join(''), 'utf8');
    this.buffer = [];
    try {
      await writeFully(this.fh, data);
      await this.fh.datasync();
    } catch (err) {
      // After a failed write the file may hold part of a line; nothing more may be appended after it.
      this.failed = new JournalError(`cannot write the run journal ${this.path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, {
        hint: 'check free disk space and permissions of the state directory, then resume the run',
        cause: err,
      });
      throw this.failed;
    }
  }
}

/** A record's journal line, stamped with the time it is written (a record has no `at` of its own). */
function recordLine(record: JournalInput): string {
  return `${JSON.stringify({ ...record, at: new Date().toISOString() })}\n`;
}

/**
 * One write(2) may take only part of the data (a nearly full disk); the rest must follow, or the next flush would
 * append after a half line and corrupt the middle of the journal.
 */
async function writeFully(fh: FileHandle, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length; ) {
    const { bytesWritten } = await fh.write(data, offset, data.length - offset);
    if (bytesWritten <= 0) throw Object.assign(new Error('no progress writing the journal'), { code: 'EIO' });
    offset += bytesWritten;
  }
}

/** Locks an existing journal: a missing one is a clear error before the lock is taken (and before anything creates it). */
async function lockExisting(path: string, runId: string): Promise<string> {
  await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ENOENT' ? new JournalError(`no journal at ${path}`, { hint: 'check the run id and --state-dir' }) : err;
  });
  return acquireLock(path, runId);
}

/**
 * One process per run at a time: two writers would interleave the journal and both resend the same ids. The lock
 * file holds the owner's pid; a lock left by a killed process (pid gone) is taken over.
 */
function acquireLock(journal: string, runId: string): string {
  const lock = `${journal}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      return lock;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSafe(lock));
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
        throw new JournalError(`run ${runId} is in use by process ${owner}`, { hint: 'wait for it to finish, or stop it; a killed run can be resumed' });
      }
      try {
        unlinkSync(lock);
      } catch {
        // Another process took it over first; the next attempt finds out.
      }
    }
  }
  throw new JournalError(`cannot lock run ${runId}`, { hint: `remove ${lock} if no hcs25 process is using the run` });
}

function releaseLock(lock: string): void {
  try {
    if (readFileSafe(lock) === String(process.pid)) unlinkSync(lock);
  } catch {
    // Already gone.
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Whether a process with this id runs (one we may not signal counts as running). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await stat(dir);
  if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
}

/** Makes a new directory entry durable (the file's own data is synced by `flush`). */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not every filesystem allows syncing a directory; the entry still reaches disk with the next metadata flush.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

// ---------- reader ----------

export interface SignalState {
  key: string;
  result: ResultRecord['result'];
  message?: { json: string; bytes: number };
  buildError?: { code: string; message: string };
  /** Transaction ids assigned to this message, oldest first. */
  txIds: { txId: string; validSeconds: number; consumed: boolean }[];
  receipt?: { txId: string; seq: number; consensusTimestamp?: string; duplicate?: boolean };
  /** The packed message that carries this signal, and its index there (its tx and receipt are the pack's). */
  pack?: { key: string; index: number };
}

/** A packed message of the run: what was journaled, and its transaction ids and receipt. */
export interface PackState {
  key: string;
  encoding: PackRecord['encoding'];
  data: string;
  bytes: number;
  signals: string[];
  txIds: SignalState['txIds'];
  receipt?: SignalState['receipt'];
}

export const PACK_KEY_PREFIX = 'pack|';

/**
 * The exact bytes of a journaled pack, as submitted, in an ArrayBuffer of their own size: `Buffer.from` would cut a
 * message this small from Node's shared 8 KiB pool, and a run holds each confirmed pack's bytes for its read-back
 * (up to `READ_BACK_LIMIT`), which kept 8 KiB alive per message (the watcher's array buffers grew through each run).
 */
export function packBytes(pack: Pick<PackState, 'encoding' | 'data'>): Buffer {
  const encoding = pack.encoding === 'zlib' ? 'base64' : 'utf8';
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(pack.data, encoding));
  // byteLength may overcount base64 that is not canonical (whitespace); the bytes are what was written.
  const written = bytes.write(pack.data, encoding);
  return written === bytes.length ? bytes : bytes.subarray(0, written);
}

/** A pack record's fields for the bytes of a packed message. */
export function packData(encoding: PackRecord['encoding'], bytes: Buffer): string {
  return bytes.toString(encoding === 'zlib' ? 'base64' : 'utf8');
}

/** Where a signal landed: its own receipt (v1 runs), or its pack's receipt and its index in the pack. */
export function signalReceipt(state: RunState, sig: SignalState): (NonNullable<SignalState['receipt']> & { index?: number }) | undefined {
  if (sig.receipt) return sig.receipt;
  const receipt = sig.pack ? state.packs.get(sig.pack.key)?.receipt : undefined;
  return receipt && { ...receipt, index: sig.pack!.index };
}

/** A reveal of the run key to one topic; its tx and receipt records use the key `reveal|<topic>`. */
export interface RevealState {
  topic: string;
  txIds: SignalState['txIds'];
  receipt?: SignalState['receipt'];
}

export const REVEAL_KEY_PREFIX = 'reveal|';

export function revealKey(topic: string): string {
  return `${REVEAL_KEY_PREFIX}${topic}`;
}

/** A journaled message of a score publication (one record or a batch), with its transaction ids and receipt. */
export interface ScoreState {
  key: string;
  encoding: ScoresRecord['encoding'];
  /** As {@link packData} writes it. */
  data: string;
  bytes: number;
  /** The subjects of its records, in index order. */
  subjects: string[];
  txIds: SignalState['txIds'];
  receipt?: SignalState['receipt'];
}

export const SCORE_KEY_PREFIX = 'score|';

export interface RunState {
  start: StartRecord;
  /**
   * Journaled results by key. A compact state (`keep: 'pending'`: a resume, a new run) holds only those whose
   * message is not yet confirmed; confirmed ones are settled into `settled` and dropped, so a run's memory follows
   * what is in flight, not the registry. A full state (`keep: 'all'`, `readJournal`: verify, tests) holds every one.
   */
  signals: Map<string, SignalState>;
  failures: FailureRecord[];
  /** Fees paid across all attempts of the run, tinybars. */
  spentTinybar: bigint;
  resumes: number;
  end?: EndRecord;
  reveals: Map<string, RevealState>;
  /** Packed messages by key, in the order they were journaled (a compact state: the unconfirmed ones only). */
  packs: Map<string, PackState>;
  /** A score publication's records by key, in the order they were journaled. */
  scores?: Map<string, ScoreState>;
  keep: 'all' | 'pending';
  /** Every journaled result, settled or not: subject → a bit per eval kind (what a resume must not ask again). */
  done: Map<string, number>;
  results: number;
  /** Packs journaled so far, settled or not (pack keys are numbered from it). */
  packCount: number;
  /** What settled signals and messages add to the run's report. */
  settled: SettledTally;
}

/** One signal as the run report lists it. */
export interface SignalSummary {
  key: string;
  /** The agent's name as its registry entry gave it (local knowledge: names are not on-chain). */
  name: string;
  signal: string;
  subject: string;
  status: string;
  bytes: number;
  seq?: number;
  /** Position of the signal inside the message at `seq` (0 for a message of its own). */
  index?: number;
  txId?: string;
  /** Why it is not on the topic (build error, unsent). */
  problem?: string;
}

/** Counts of eval outcomes: `notAsked` are the skipped evals of agents whose probe failed (part of `skipped`). */
export interface EvalTally {
  total: number;
  correct: number;
  wrong: number;
  failed: number;
  skipped: number;
  notAsked: number;
}

/** Signals and messages a compact state has settled (confirmed, or with nothing to send) and dropped. */
export interface SettledTally {
  evals: EvalTally;
  signals: number;
  /** Settled signals that had a message (a dry run's "would be published"). */
  built: number;
  published: number;
  duplicates: number;
  buildErrors: number;
  messages: { count: number; bytes: number; maxBytes: number };
  /** The first settled signals, for the report's list (at most REPORT_LIST_LIMIT). */
  list: SignalSummary[];
}

/** Signals a run report lists one by one; a larger run is counted, and its problems listed first. */
export const REPORT_LIST_LIMIT = 1_000;

const KIND_BITS: Readonly<Record<string, number>> = { availability: 1, math: 2, science: 4 };

function emptyEvalTally(): EvalTally {
  return { total: 0, correct: 0, wrong: 0, failed: 0, skipped: 0, notAsked: 0 };
}

/** Counts one result into an eval tally. */
export function countOutcome(tally: EvalTally, result: AnyEvalResult): void {
  tally.total++;
  if (result.kind === 'availability') {
    if (result.reachable) tally.correct++;
    else tally.failed++;
    return;
  }
  switch (result.outcome) {
    case 'correct':
      tally.correct++;
      return;
    case 'wrong':
    case 'unparseable':
    case 'empty':
      tally.wrong++;
      return;
    case 'skipped':
      tally.skipped++;
      if (result.reason?.startsWith('probe-unreachable')) tally.notAsked++;
      return;
    default:
      tally.failed++;
  }
}

/** A result key as (subject, bit of its eval kind); a key of another shape stands for itself. */
function keyParts(key: string): [string, number] {
  const bar = key.indexOf('|');
  const bit = bar > 0 ? KIND_BITS[key.slice(0, bar)] : undefined;
  return bit === undefined ? [key, 8] : [key.slice(bar + 1), bit];
}

/** Whether the run has journaled a result under this key (settled or not). */
export function hasResult(state: RunState, key: string): boolean {
  const [subject, bit] = keyParts(key);
  return ((state.done.get(subject) ?? 0) & bit) !== 0;
}

/**
 * Adds a journaled result to the state (a result is written once per key; a repeat never replaces a built message).
 * A compact state settles at once what has nothing to send (a build error).
 */
export function addResult(state: RunState, record: Omit<SignalState, 'txIds' | 'receipt' | 'pack'>): void {
  const [part, bit] = keyParts(record.key);
  // The agent's own string when it is the same (one string per agent in a new run, not a slice of every key): its
  // hash is computed once, where a fresh slice is hashed on every lookup.
  const subject = record.result.agent.subject === part ? record.result.agent.subject : part;
  const done = state.done.get(subject) ?? 0;
  if ((done & bit) !== 0) return;
  state.done.set(subject, done | bit);
  state.results++;
  const sig: SignalState = { ...record, txIds: [] };
  state.signals.set(record.key, sig);
  if (state.keep === 'pending' && !sig.message) settleSignal(state, sig);
}

/**
 * Settles one signal of a compact state: counted into `settled` (listed while the list has room) and dropped.
 * `receipt` is where it landed; without one it had nothing to send (a build error, a dry run).
 */
export function settleSignal(state: RunState, sig: SignalState, receipt?: SignalState['receipt'] & { index?: number }): void {
  const t = state.settled;
  countOutcome(t.evals, sig.result);
  t.signals++;
  if (sig.message) t.built++;
  if (receipt) {
    t.published++;
    if (receipt.duplicate) t.duplicates++;
  } else if (sig.buildError) t.buildErrors++;
  if (t.list.length < REPORT_LIST_LIMIT) t.list.push(signalSummary(sig, receipt));
  state.signals.delete(sig.key);
}

/**
 * Settles a confirmed message of a compact state: its signals (a pack's, or a v1 signal's own) and its size. A full
 * state keeps everything (the receipt goes on the message, as the journal's records say).
 */
export function settleMessage(state: RunState, key: string, receipt: NonNullable<SignalState['receipt']>): void {
  const target = key.startsWith(PACK_KEY_PREFIX) ? state.packs.get(key) : state.signals.get(key);
  if (!target) return;
  if (state.keep === 'all') {
    target.receipt ??= receipt;
    return;
  }
  const t = state.settled.messages;
  const bytes = 'signals' in target ? target.bytes : (target.message?.bytes ?? 0);
  t.count++;
  t.bytes += bytes;
  t.maxBytes = Math.max(t.maxBytes, bytes);
  if ('signals' in target) {
    state.packs.delete(key);
    target.signals.forEach((k, index) => {
      const sig = state.signals.get(k);
      if (sig) settleSignal(state, sig, { ...receipt, index });
    });
  } else settleSignal(state, target, receipt);
}

/** A signal as the report lists it: where it landed, or why it is not on the topic. */
export function signalSummary(sig: SignalState, receipt?: SignalState['receipt'] & { index?: number }): SignalSummary {
  const message = sig.message ? (JSON.parse(sig.message.json) as { signal?: string; status?: string }) : undefined;
  const entry: SignalSummary = {
    key: sig.key,
    signal: message?.signal ?? sig.result.kind,
    subject: sig.result.agent.subject,
    name: sig.result.agent.name,
    status: message?.status ?? 'unbuilt',
    bytes: sig.message?.bytes ?? 0,
  };
  if (receipt) {
    entry.seq = receipt.seq;
    entry.index = receipt.index ?? 0;
    entry.txId = receipt.txId;
  } else if (sig.buildError) entry.problem = `not built: ${sig.buildError.message}`;
  return entry;
}

export interface JournalRead {
  state: RunState;
  records: number;
  /** Bytes of whole, valid lines. */
  validBytes: number;
  /** Bytes of a torn last line that was ignored (0 when the file ends cleanly). */
  tornBytes: number;
}

/**
 * Reads a run journal line by line, folding each record into the run's state as it goes: the file is never held
 * whole, and with `keep: 'pending'` (what a resume needs) neither is any signal whose message was confirmed.
 * Default `keep: 'all'`: every result with its receipt (verify, tests).
 */
export interface ReadJournalOptions {
  keep?: RunState['keep'];
  /** Sees every result record as it is read, even those the state does not keep (what was asked, of whom). */
  onResult?: (result: AnyEvalResult) => void;
}

export async function readJournal(path: string, options: ReadJournalOptions = {}): Promise<JournalRead> {
  const fold = new JournalFold(path, options.keep ?? 'all', options.onResult);
  let stream;
  try {
    const fh = await open(path, 'r');
    stream = fh.createReadStream({ highWaterMark: 1 << 20 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new JournalError(`no journal at ${path}`, { hint: 'check the run id and --state-dir' });
    }
    throw err;
  }
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, nl);
      const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingBytes = 0;
      fold.line(line.toString('utf8'), line.length + 1);
      from = nl + 1;
    }
    if (from < chunk.length) {
      pending.push(chunk.subarray(from));
      pendingBytes += chunk.length - from;
    }
  }
  // No newline at the end: the writer died mid-line. Even if it parses, it was never acknowledged as written.
  return fold.finish(pendingBytes);
}

/** Parses journal text. Exported for tests; `readJournal` is the normal entry. */
export function parseJournal(text: string, path = 'journal', options: { keep?: RunState['keep'] } = {}): JournalRead {
  const fold = new JournalFold(path, options.keep ?? 'all');
  let offset = 0;
  while (offset < text.length) {
    const nl = text.indexOf('\n', offset);
    if (nl === -1) return fold.finish(Buffer.byteLength(text.slice(offset), 'utf8'));
    const line = text.slice(offset, nl);
    fold.line(line, Buffer.byteLength(line, 'utf8') + 1);
    offset = nl + 1;
  }
  return fold.finish(0);
}

/** Folds journal lines into a run state, one at a time. */
class JournalFold {
  private state: RunState | undefined;
  private records = 0;
  private lineNo = 0;
  private validBytes = 0;

  constructor(
    private readonly path: string,
    private readonly keep: RunState['keep'],
    private readonly onResult?: (result: AnyEvalResult) => void,
  ) {}

  line(line: string, bytes: number): void {
    this.lineNo++;
    this.validBytes += bytes;
    const parsed = parseLine(line);
    if (parsed === null) {
      if (line.trim() === '') return;
      throw new JournalError(`journal ${this.path} is corrupt at line ${this.lineNo}`, {
        hint: 'a line in the middle of the journal does not parse; restore it from a backup or start a new run',
      });
    }
    this.records++;
    if (!this.state) {
      if (parsed.t !== 'start') throw notAJournal(this.path);
      this.state = emptyRunState(parsed, this.keep);
    } else {
      apply(this.state, parsed);
      if (parsed.t === 'result') this.onResult?.(parsed.result);
    }
  }

  finish(tornBytes: number): JournalRead {
    if (!this.state) throw notAJournal(this.path);
    return { state: this.state, records: this.records, validBytes: this.validBytes, tornBytes };
  }
}

function notAJournal(path: string): JournalError {
  return new JournalError(`journal ${path} does not begin with a run start record`, {
    hint: 'the file is not an hcs25 run journal, or its first line was lost',
  });
}

function parseLine(line: string): JournalRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = journalRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The state of a run that has journaled only its start (compact unless `keep: 'all'`). */
export function emptyRunState(start: StartRecord, keep: RunState['keep'] = 'pending'): RunState {
  const settled: SettledTally = { evals: emptyEvalTally(), signals: 0, built: 0, published: 0, duplicates: 0, buildErrors: 0, messages: { count: 0, bytes: 0, maxBytes: 0 }, list: [] };
  return { start, signals: new Map(), failures: [], spentTinybar: 0n, resumes: 0, reveals: new Map(), packs: new Map(), keep, done: new Map(), results: 0, packCount: 0, settled };
}

/** Rebuilds a run's state from its records. */
export function foldJournal(records: readonly JournalRecord[], path = 'journal', keep: RunState['keep'] = 'all'): RunState {
  const first = records[0];
  if (first?.t !== 'start') throw notAJournal(path);
  const state = emptyRunState(first, keep);
  for (const record of records.slice(1)) apply(state, record);
  return state;
}

function apply(state: RunState, record: JournalRecord): void {
  switch (record.t) {
    case 'start':
      throw new JournalError('journal holds a second start record');
    case 'result':
      addResult(state, {
        key: record.key,
        result: record.result,
        ...(record.message ? { message: record.message } : {}),
        ...(record.buildError ? { buildError: record.buildError } : {}),
      });
      return;
    case 'pack':
      applyPack(state, record);
      return;
    case 'score': {
      const { key, json, bytes, subject } = record;
      (state.scores ??= new Map()).set(key, { key, encoding: 'json', data: json, bytes, subjects: [subject], txIds: [] });
      return;
    }
    case 'scores': {
      const { key, encoding, data, bytes, subjects } = record;
      (state.scores ??= new Map()).set(key, { key, encoding, data, bytes, subjects, txIds: [] });
      return;
    }
    case 'tx':
      signal(state, record.key)?.txIds.push({ txId: record.txId, validSeconds: record.validSeconds, consumed: false });
      return;
    case 'receipt': {
      const receipt = {
        txId: record.txId,
        seq: record.seq,
        ...(record.consensusTimestamp ? { consensusTimestamp: record.consensusTimestamp } : {}),
        ...(record.duplicate ? { duplicate: true } : {}),
      };
      const s = signal(state, record.key);
      // Reveals and score records keep their receipts; signals and packs settle (a compact state lets them go).
      if (s && !record.key.startsWith(REVEAL_KEY_PREFIX) && !record.key.startsWith(SCORE_KEY_PREFIX)) settleMessage(state, record.key, receipt);
      else if (s) s.receipt ??= receipt;
      return;
    }
    case 'landed':
      for (const e of record.entries) {
        const s = state.signals.get(e.key) ?? state.packs.get(e.key);
        if (s?.receipt && s.receipt.seq === e.seq) s.receipt.consensusTimestamp = e.consensusTimestamp;
      }
      return;
    case 'failure':
      // A compact state keeps the last few: the report names failures, a resume needs none of them.
      if (state.keep === 'pending' && state.failures.length >= REPORT_LIST_LIMIT) state.failures.shift();
      state.failures.push(record);
      if (record.key && record.txId && record.consumed) {
        const tx = signal(state, record.key)?.txIds.find((t) => t.txId === record.txId);
        if (tx) tx.consumed = true;
      }
      return;
    case 'fees':
      state.spentTinybar = BigInt(record.spentTinybar);
      return;
    case 'resume':
      state.resumes++;
      delete state.end;
      return;
    case 'end':
      state.end = record;
      return;
  }
}

/** Records a journaled pack and points each signal it carries at it (a signal is packed at most once). */
export function applyPack(state: RunState, record: Omit<PackRecord, 't' | 'at'>): void {
  const { key, encoding, data, bytes, signals } = record;
  state.packs.set(key, { key, encoding, data, bytes, signals, txIds: [] });
  state.packCount = Math.max(state.packCount, packIndex(key) + 1);
  signals.forEach((k, index) => {
    const s = state.signals.get(k);
    if (!s) throw new JournalError(`journal packs signal ${k} before its result record`);
    s.pack ??= { key, index };
  });
}

function packIndex(key: string): number {
  const n = Number(key.slice(PACK_KEY_PREFIX.length));
  return Number.isInteger(n) && n >= 0 ? n : -1;
}

/** The message a tx/receipt/failure record refers to; undefined when a compact state settled it already. */
function signal(state: RunState, key: string): Pick<SignalState, 'txIds' | 'receipt'> | undefined {
  if (key.startsWith(PACK_KEY_PREFIX)) {
    const pack = state.packs.get(key);
    if (pack) return pack;
    if (state.keep === 'pending' && packIndex(key) >= 0 && packIndex(key) < state.packCount) return undefined;
    throw new JournalError(`journal refers to pack ${key} before its pack record`);
  }
  if (key.startsWith(SCORE_KEY_PREFIX)) {
    const score = state.scores?.get(key);
    if (!score) throw new JournalError(`journal refers to score record ${key} before its score record`);
    return score;
  }
  if (key.startsWith(REVEAL_KEY_PREFIX)) {
    const topic = key.slice(REVEAL_KEY_PREFIX.length);
    let reveal = state.reveals.get(topic);
    if (!reveal) state.reveals.set(topic, (reveal = { topic, txIds: [] }));
    return reveal;
  }
  const s = state.signals.get(key);
  if (s) return s;
  if (state.keep === 'pending' && hasResult(state, key)) return undefined;
  throw new JournalError(`journal refers to signal ${key} before its result record`);
}

