/**
 * A run's state as its journal records fold into it: signals and their messages, transaction ids and receipts,
 * failures, fees, and the tallies of what a compact state has settled and let go.
 */
import type { SignalsMessageV3 } from '../format/schema-v3.js';
import type { AnyEvalResult } from '../evaluate/types.js';
import type {
  EndRecord,
  FailureRecord,
  PackRecord,
  ResultRecord,
  ScoresRecord,
  StartRecord,
} from './journal-records.js';

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
export function signalReceipt(
  state: RunState,
  sig: SignalState,
): (NonNullable<SignalState['receipt']> & { index?: number }) | undefined {
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
export function settleSignal(
  state: RunState,
  sig: SignalState,
  receipt?: SignalState['receipt'] & { index?: number },
): void {
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
  const message = sig.message ? builtSignal(sig.message.json) : undefined;
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

/** The signal id and status of a journaled message: a v1/v2 single signal, or a one-signal format-3 message. */
function builtSignal(json: string): { signal?: string; status?: string } {
  const m = JSON.parse(json) as { signal?: string; status?: string } | SignalsMessageV3;
  if (!('fmt' in m)) return m;
  const entry = m.subjects[0]?.sig[0];
  return { ...(entry && { signal: m.ids[entry.i], status: entry.st ?? 'ok' }) };
}

/** The state of a run that has journaled only its start (compact unless `keep: 'all'`). */
export function emptyRunState(start: StartRecord, keep: RunState['keep'] = 'pending'): RunState {
  const settled: SettledTally = {
    evals: emptyEvalTally(),
    signals: 0,
    built: 0,
    published: 0,
    duplicates: 0,
    buildErrors: 0,
    messages: { count: 0, bytes: 0, maxBytes: 0 },
    list: [],
  };
  return {
    start,
    signals: new Map(),
    failures: [],
    spentTinybar: 0n,
    resumes: 0,
    reveals: new Map(),
    packs: new Map(),
    keep,
    done: new Map(),
    results: 0,
    packCount: 0,
    settled,
  };
}
