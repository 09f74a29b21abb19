/**
 * The run journal: one append-only JSON-lines file per run, `<stateDir>/runs/<RUN>.jsonl`, mode 0600 in a 0700
 * directory. It is written before anything is submitted and is the only place the run key lives until `reveal`.
 *
 * Durability: records are buffered and written by `flush()`, which fdatasyncs; concurrent flushes coalesce into one
 * write + one sync (group commit), so hundreds of submissions in flight cost a handful of syncs per second.
 * A process killed mid-write leaves at most a torn last line; the reader drops it and `open()` cuts it off before
 * appending, so the file stays valid JSON lines.
 */
import { closeSync, fsyncSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, open, readdir, readFile, stat, truncate, type FileHandle } from 'node:fs/promises';
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

  /** Starts a new run's journal; the start record is durable when this resolves. */
  static async create(stateDir: string, start: Omit<StartRecord, 't' | 'v' | 'at'>): Promise<Journal> {
    // Only the runs folder holds secrets (run keys, raw responses); the state dir may be shared, so leave its mode alone.
    await mkdir(stateDir, { recursive: true });
    await ensurePrivateDir(runsDir(stateDir));
    const path = journalPath(stateDir, start.run);
    let fh: FileHandle;
    try {
      fh = await open(path, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new JournalError(`a journal for run ${start.run} already exists (${path})`, { hint: `resume it with --resume ${start.run}` });
      }
      throw err;
    }
    syncDir(runsDir(stateDir));
    const journal = new Journal(path, start.run, fh, acquireLock(path, start.run));
    journal.append({ t: 'start', v: JOURNAL_VERSION, ...start });
    await journal.flush();
    return journal;
  }

  /**
   * Opens an existing run for appending (resume, reveal). A torn last line — the process died mid-write — is cut
   * off first; anything else that does not parse is an error, because guessing could lose or duplicate a signal.
   */
  static async open(stateDir: string, runId: string): Promise<{ journal: Journal; state: RunState }> {
    const path = journalPath(stateDir, runId);
    await readJournal(path); // a clear error for a missing or foreign file before taking the lock
    const lock = acquireLock(path, runId);
    try {
      const read = await readJournal(path);
      if (read.tornBytes > 0) await truncate(path, read.validBytes);
      await chmod(path, 0o600);
      const fh = await open(path, 'a', 0o600);
      return { journal: new Journal(path, runId, fh, lock), state: read.state };
    } catch (err) {
      releaseLock(lock);
      throw err;
    }
  }

  /** Buffers a record; it reaches the disk with the next `flush()`. */
  append(record: JournalInput): void {
    if (this.closed) throw new JournalError(`journal ${this.runId} is closed`);
    const full = { ...record, at: new Date().toISOString() } as JournalRecord;
    this.buffer.push(`${JSON.stringify(full)}\n`);
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
      // One write(2) may take only part of the data (a nearly full disk); the rest must follow, or the next flush
      // would append after a half line and corrupt the middle of the journal.
      for (let offset = 0; offset < data.length; ) {
        const { bytesWritten } = await this.fh.write(data, offset, data.length - offset);
        if (bytesWritten <= 0) throw Object.assign(new Error('no progress writing the journal'), { code: 'EIO' });
        offset += bytesWritten;
      }
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
function syncDir(dir: string): void {
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

/** The exact bytes of a journaled pack, as submitted. */
export function packBytes(pack: Pick<PackState, 'encoding' | 'data'>): Buffer {
  return Buffer.from(pack.data, pack.encoding === 'zlib' ? 'base64' : 'utf8');
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

export interface RunState {
  start: StartRecord;
  signals: Map<string, SignalState>;
  failures: FailureRecord[];
  /** Fees paid across all attempts of the run, tinybars. */
  spentTinybar: bigint;
  resumes: number;
  end?: EndRecord;
  reveals: Map<string, RevealState>;
  /** Packed messages by key, in the order they were journaled. */
  packs: Map<string, PackState>;
}

export interface JournalRead {
  state: RunState;
  records: number;
  /** Bytes of whole, valid lines. */
  validBytes: number;
  /** Bytes of a torn last line that was ignored (0 when the file ends cleanly). */
  tornBytes: number;
}

export async function readJournal(path: string): Promise<JournalRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new JournalError(`no journal at ${path}`, { hint: 'check the run id and --state-dir' });
    }
    throw err;
  }
  return parseJournal(text, path);
}

/** Parses journal text. Exported for tests; `readJournal` is the normal entry. */
export function parseJournal(text: string, path = 'journal'): JournalRead {
  const records: JournalRecord[] = [];
  let offset = 0;
  let lineNo = 0;
  let tornBytes = 0;
  while (offset < text.length) {
    const nl = text.indexOf('\n', offset);
    const line = nl === -1 ? text.slice(offset) : text.slice(offset, nl);
    lineNo++;
    const parsed = parseLine(line);
    if (nl === -1) {
      // No newline: the writer died mid-line. Even if it parses, it was never acknowledged as written.
      tornBytes = Buffer.byteLength(line, 'utf8');
      break;
    }
    if (parsed === null) {
      if (line.trim() === '') {
        offset = nl + 1;
        continue;
      }
      throw new JournalError(`journal ${path} is corrupt at line ${lineNo}`, {
        hint: 'a line in the middle of the journal does not parse; restore it from a backup or start a new run',
      });
    }
    records.push(parsed);
    offset = nl + 1;
  }
  const validBytes = Buffer.byteLength(text, 'utf8') - tornBytes;
  return { state: foldJournal(records, path), records: records.length, validBytes, tornBytes };
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

/** The state of a run that has journaled only its start. */
export function emptyRunState(start: StartRecord): RunState {
  return { start, signals: new Map(), failures: [], spentTinybar: 0n, resumes: 0, reveals: new Map(), packs: new Map() };
}

/** Rebuilds a run's state from its records. */
export function foldJournal(records: readonly JournalRecord[], path = 'journal'): RunState {
  const first = records[0];
  if (first?.t !== 'start') {
    throw new JournalError(`journal ${path} does not begin with a run start record`, {
      hint: 'the file is not an hcs25 run journal, or its first line was lost',
    });
  }
  const state = emptyRunState(first);
  for (const record of records.slice(1)) apply(state, record);
  return state;
}

function apply(state: RunState, record: JournalRecord): void {
  switch (record.t) {
    case 'start':
      throw new JournalError('journal holds a second start record');
    case 'result':
      // A result is written once per key; a repeat (a resume that re-evaluated) never replaces a built message.
      if (!state.signals.has(record.key)) {
        state.signals.set(record.key, {
          key: record.key,
          result: record.result,
          ...(record.message ? { message: record.message } : {}),
          ...(record.buildError ? { buildError: record.buildError } : {}),
          txIds: [],
        });
      }
      return;
    case 'pack':
      applyPack(state, record);
      return;
    case 'tx':
      signal(state, record.key).txIds.push({ txId: record.txId, validSeconds: record.validSeconds, consumed: false });
      return;
    case 'receipt': {
      const s = signal(state, record.key);
      s.receipt ??= {
        txId: record.txId,
        seq: record.seq,
        ...(record.consensusTimestamp ? { consensusTimestamp: record.consensusTimestamp } : {}),
        ...(record.duplicate ? { duplicate: true } : {}),
      };
      return;
    }
    case 'landed':
      for (const e of record.entries) {
        const s = state.signals.get(e.key) ?? state.packs.get(e.key);
        if (s?.receipt && s.receipt.seq === e.seq) s.receipt.consensusTimestamp = e.consensusTimestamp;
      }
      return;
    case 'failure':
      state.failures.push(record);
      if (record.key && record.txId && record.consumed) {
        const tx = signal(state, record.key).txIds.find((t) => t.txId === record.txId);
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
  signals.forEach((k, index) => {
    const s = state.signals.get(k);
    if (!s) throw new JournalError(`journal packs signal ${k} before its result record`);
    s.pack ??= { key, index };
  });
}

function signal(state: RunState, key: string): Pick<SignalState, 'txIds' | 'receipt'> {
  if (key.startsWith(PACK_KEY_PREFIX)) {
    const pack = state.packs.get(key);
    if (!pack) throw new JournalError(`journal refers to pack ${key} before its pack record`);
    return pack;
  }
  if (key.startsWith(REVEAL_KEY_PREFIX)) {
    const topic = key.slice(REVEAL_KEY_PREFIX.length);
    let reveal = state.reveals.get(topic);
    if (!reveal) state.reveals.set(topic, (reveal = { topic, txIds: [] }));
    return reveal;
  }
  const s = state.signals.get(key);
  if (!s) throw new JournalError(`journal refers to signal ${key} before its result record`);
  return s;
}

