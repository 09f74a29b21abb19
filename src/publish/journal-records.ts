/**
 * The run journal's records: one zod schema per record type (`t`), the format version, and the keys that name a
 * signal within a run. The on-disk format of every journal that exists; a change here must still read old journals.
 */
import { z } from 'zod';
import { Hcs25Error } from '../core/errors.js';
import { PROTOCOLS } from '../core/agent.js';
import type { Agent } from '../core/agent.js';
import type { AnyEvalResult } from '../evaluate/types.js';
import { entityIdSchema, transactionIdSchema } from '../core/id-schemas.js';
import { RUN_ID_PATTERN } from '../core/ids.js';
import { PACK_MODES } from '../format/pack.js';

export const JOURNAL_VERSION = 1;

export class JournalError extends Hcs25Error {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('JOURNAL', message, options);
    this.name = 'JournalError';
  }
}

const isoTime = z.string().min(1);
const txIdString = transactionIdSchema;

const agentSchema = z
  .looseObject({
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
   * How the run packs signals into messages. Absent in journals of v1 runs (one v1 message per signal), which a
   * resume finishes the way they began.
   */
  pack: z.enum(PACK_MODES).optional(),
  /**
   * The on-chain format the run writes (3). Absent in journals of runs begun before format 3: v2 when `pack` is
   * present, else v1. A resume finishes a run in the format it began with.
   */
  format: z.literal(3).optional(),
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

/** The on-chain format a journaled run writes: what it began with (see `runConfigSchema.format`). */
export function runFormat(config: Pick<RunConfigSummary, 'pack' | 'format'>): 1 | 2 | 3 {
  if (config.format !== undefined) return config.format;
  return config.pack ? 2 : 1;
}
