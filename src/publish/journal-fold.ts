/**
 * Reading a run journal: line by line, each record checked against its schema and folded into the run's state.
 * A torn last line (a process killed mid-write) is reported, not folded; any other bad line is an error.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { AnyEvalResult } from '../evaluate/types.js';
import { JournalError, journalRecordSchema, type JournalRecord, type PackRecord } from './journal-records.js';
import {
  PACK_KEY_PREFIX,
  REPORT_LIST_LIMIT,
  REVEAL_KEY_PREFIX,
  SCORE_KEY_PREFIX,
  addResult,
  emptyRunState,
  hasResult,
  settleMessage,
  type RunState,
  type SignalState,
} from './journal-state.js';

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
  let stream: ReturnType<FileHandle['createReadStream']>;
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

/** Rebuilds a run's state from its records. */
export function foldJournal(
  records: readonly JournalRecord[],
  path = 'journal',
  keep: RunState['keep'] = 'all',
): RunState {
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
      state.scores ??= new Map();
      state.scores.set(key, { key, encoding: 'json', data: json, bytes, subjects: [subject], txIds: [] });
      return;
    }
    case 'scores': {
      const { key, encoding, data, bytes, subjects } = record;
      state.scores ??= new Map();
      state.scores.set(key, { key, encoding, data, bytes, subjects, txIds: [] });
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
      if (s && !record.key.startsWith(REVEAL_KEY_PREFIX) && !record.key.startsWith(SCORE_KEY_PREFIX))
        settleMessage(state, record.key, receipt);
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
    if (!reveal) {
      reveal = { topic, txIds: [] };
      state.reveals.set(topic, reveal);
    }
    return reveal;
  }
  const s = state.signals.get(key);
  if (s) return s;
  if (state.keep === 'pending' && hasResult(state, key)) return undefined;
  throw new JournalError(`journal refers to signal ${key} before its result record`);
}
