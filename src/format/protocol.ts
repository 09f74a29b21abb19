/**
 * What every version of the on-chain format shares: the protocol id, the one-message size limit, the HCS-25 id
 * patterns and status vocabulary, the field schemas of a signal's envelope, transaction and topic memos, and the
 * last step of every builder (serialise, check the size).
 */
import { z } from 'zod';
import { MessageTooLargeError } from '../core/errors.js';

/** One HCS message: anything larger would be chunked, and consumers must not have to reassemble signals. */
export const MAX_MESSAGE_BYTES = 1024;
export const PROTOCOL_ID = 'hcs-25';

/** HCS-25 signal-id pattern (the spec prints it with a doubled backslash; this is the intended regex). */
export const SIGNAL_ID_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;
/** HCS-25 adapter-id pattern. */
export const ADAPTER_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*$/;

export const SIGNAL_STATUSES = ['ok', 'missing', 'timeout', 'error', 'stale'] as const;
export type SignalStatus = (typeof SIGNAL_STATUSES)[number];

export const EVAL_OUTCOMES = [
  'correct',
  'wrong',
  'unparseable',
  'empty',
  'timeout',
  'error',
  'upstream-error',
  'skipped',
] as const;

export type KnownOutcome = (typeof EVAL_OUTCOMES)[number];

/**
 * The shape of every open-vocabulary token (status, outcome, reason, transport). Readers check the shape only and
 * count a well-formed value they do not know, so a value a later writer adds never makes a signal unreadable.
 */
export const TOKEN_PATTERN = /^[a-z0-9][a-z0-9:._-]{0,47}$/;
export const tokenSchema = z.string().regex(TOKEN_PATTERN, 'must be a short lowercase token');
/** A signal's score as readers take it: any number in 0..100 (writers today write 0 or 100; others are counted). */
export const signalScoreSchema = z.number().min(0).max(100);
/** Signal scores hcs25 writes; a reader counts any other as an unexpected value. */
export const KNOWN_SCORES: ReadonlySet<number> = new Set([0, 100]);
/** A known value of a vocabulary, or any well-formed token a later version may use. */
export type Open<Known extends string> = Known | (string & {});

export const QUESTION_HASH_PATTERN = /^hs256:[A-Za-z0-9_-]{22}$/;

/**
 * First byte of a zlib stream with a 32 KiB window (every stream Node, Python and browsers write by default): a
 * packed message starting with it is deflated JSON, where a JSON message starts with `{` (0x7b).
 */
export const ZLIB_FIRST_BYTE = 0x78;

const isoTimestamp = z.iso.datetime({ offset: false, precision: 3 }).describe('ISO 8601 UTC time with milliseconds');
const subject = z
  .string()
  .min(8)
  .max(512)
  .regex(/^uaid:(aid|did):\S+$/, 'must be an HCS-14 UAID')
  .describe('HCS-14 UAID of the agent the signal is about');
const runId = z
  .string()
  .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a ULID')
  .describe('ULID of the evaluation run');

/** Field schemas of the signal envelope, the same in every version. */
export { isoTimestamp as isoTimestampSchema, subject as subjectSchema, runId as runIdSchema };

/** Transaction memo per message kind (`hcs-25:op:{0 signal|1 score|2 reveal}`). */
export const TRANSACTION_MEMOS = { signal: 'hcs-25:op:0', score: 'hcs-25:op:1', reveal: 'hcs-25:op:2' } as const;

/** Default signal-topic memo: `hcs-25:0:{ttl}`. */
export function signalTopicMemo(ttlSeconds = 86_400): string {
  return `hcs-25:0:${ttlSeconds}`;
}

/** What a builder needs besides the result: the run and its key. */
export interface SignalContext {
  /** ULID of the run. */
  run: string;
  /** The run's secret HMAC key (32 bytes). */
  runKey: Buffer;
  /** Provenance of the subject, e.g. `hcs://2/0.0.1234`. Defaults to the agent's registry source. */
  sources?: string[];
}

export interface BuiltMessage<M extends object = object> {
  message: M;
  /** The exact UTF-8 JSON that goes on-chain. */
  json: string;
  bytes: number;
}

/** Serialises a message and checks that it fits one HCS chunk. */
export function finishMessage<M extends object>(message: M, what: string): BuiltMessage<M> {
  const json = JSON.stringify(message);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES, what);
  return { message, json, bytes };
}
