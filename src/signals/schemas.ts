import { z } from 'zod';
import { PROTOCOLS } from '../core/agent.js';

/** One HCS message: anything larger would be chunked, and consumers must not have to reassemble signals. */
export const MAX_MESSAGE_BYTES = 1024;
export const PROTOCOL_ID = 'hcs-25';
export const MESSAGE_VERSION = 1;

/** HCS-25 signal-id pattern (the spec prints it with a doubled backslash; this is the intended regex). */
export const SIGNAL_ID_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;
/** HCS-25 adapter-id pattern. */
export const ADAPTER_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*$/;

export const SIGNAL_IDS = {
  math: 'simple-evals.math',
  science: 'simple-evals.science',
  availability: 'availability.probe',
} as const;

export const SIGNAL_STATUSES = ['ok', 'missing', 'timeout', 'error', 'stale'] as const;
export type SignalStatus = (typeof SIGNAL_STATUSES)[number];

export const EVAL_OUTCOMES = ['correct', 'wrong', 'unparseable', 'empty', 'timeout', 'error', 'upstream-error', 'skipped'] as const;

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
/** A short machine-readable reason: never free text, so no agent output can ride along. */
const reasonCode = z
  .string()
  .regex(/^[a-z0-9][a-z0-9:._-]{0,47}$/, 'must be a short reason code')
  .describe('short reason code, e.g. ambiguous, http-503, timeout');
const transport = z.enum(PROTOCOLS).describe('protocol the agent was reached over');
const sources = z
  .array(z.string().min(1).max(160))
  .max(4)
  .describe('provenance: HRLs of the registry entries the subject came from');

/** Field schemas shared with v2 (schemas-v2.ts). */
export { isoTimestamp as isoTimestampSchema, subject as subjectSchema, runId as runIdSchema };

export const QUESTION_HASH_PATTERN = /^hs256:[A-Za-z0-9_-]{22}$/;
export const RESPONSE_HASH_PATTERN = /^sha256:[A-Za-z0-9_-]{43}$/;

export const evalDataSchema = z
  .object({
    outcome: z.enum(EVAL_OUTCOMES),
    score: z.union([z.literal(0), z.literal(100)]),
    questionHash: z
      .string()
      .regex(QUESTION_HASH_PATTERN)
      .describe('base64url of the first 16 bytes of HMAC-SHA256(run key, question id)'),
    answer: z.string().max(16).nullable().describe('the extracted answer token only'),
    responseHash: z.string().regex(RESPONSE_HASH_PATTERN).nullable().describe('SHA-256 of the raw response, base64url'),
    compliant: z.boolean().describe('the response was exactly the bare answer'),
    latencyMs: z.number().int().min(0),
    grader: z.string().regex(/^[a-z][a-z-]*@\d+$/),
    transport,
    reason: reasonCode.optional(),
  })
  .strict();

export const probeDataSchema = z
  .object({
    reachable: z.boolean(),
    latencyMs: z.number().int().min(0),
    transport,
    httpStatus: z.number().int().min(100).max(599).optional(),
    score: z.union([z.literal(0), z.literal(100)]),
    reason: reasonCode.optional(),
  })
  .strict();

/** Fields every signal message has (v2 replaces `v`). */
export const signalEnvelopeShape = {
  p: z.literal(PROTOCOL_ID),
  op: z.literal('signal'),
  v: z.literal(MESSAGE_VERSION),
  subject,
  status: z.enum(SIGNAL_STATUSES),
  fetchedAt: isoTimestamp,
  run: runId,
  sources: sources.optional(),
};

export const evalSignalMessageSchema = z
  .object({ ...signalEnvelopeShape, signal: z.enum([SIGNAL_IDS.math, SIGNAL_IDS.science]), data: evalDataSchema })
  .strict();
export const probeSignalMessageSchema = z
  .object({ ...signalEnvelopeShape, signal: z.literal(SIGNAL_IDS.availability), data: probeDataSchema })
  .strict();

export const signalMessageSchema = z
  .discriminatedUnion('signal', [evalSignalMessageSchema, probeSignalMessageSchema])
  .describe('HCS-25 trust signal (op "signal", v1): one observation about one subject');

export const trustScoresSchema = z
  .object({ total: z.number().min(0).max(100) })
  .catchall(z.number().min(0).max(100))
  .refine((o) => Object.keys(o).every((k) => k === 'total' || ADAPTER_ID_PATTERN.test(k)), 'keys must be "total" or adapter ids');

export const scoreMessageSchema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal('score'),
    v: z.literal(MESSAGE_VERSION),
    subject,
    trustScores: trustScoresSchema,
    trustScoreConfigVersion: z.number().int().min(1),
    trustScoreUpdatedAt: isoTimestamp,
    trustConfidence: z.number().min(0).max(1).optional(),
  })
  .strict()
  .describe('HCS-25 computed trust score (op "score", v1)');

export const revealMessageSchema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal('reveal'),
    v: z.literal(MESSAGE_VERSION),
    run: runId,
    key: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url 32-byte key'),
  })
  .strict()
  .describe('Publishes a run key so anyone can recompute its question hashes (op "reveal", v1)');

export const hcs25MessageSchema = z.union([signalMessageSchema, scoreMessageSchema, revealMessageSchema]);

export type EvalSignalMessage = z.infer<typeof evalSignalMessageSchema>;
export type ProbeSignalMessage = z.infer<typeof probeSignalMessageSchema>;
export type SignalMessage = z.infer<typeof signalMessageSchema>;
export type ScoreMessage = z.infer<typeof scoreMessageSchema>;
export type RevealMessage = z.infer<typeof revealMessageSchema>;
export type Hcs25Message = SignalMessage | ScoreMessage | RevealMessage;

/** Transaction memo per message kind (`hcs-25:op:{0 signal|1 score|2 reveal}`). */
export const TRANSACTION_MEMOS = { signal: 'hcs-25:op:0', score: 'hcs-25:op:1', reveal: 'hcs-25:op:2' } as const;

/** Default signal-topic memo: `hcs-25:0:{ttl}`. */
export function signalTopicMemo(ttlSeconds = 86_400): string {
  return `hcs-25:0:${ttlSeconds}`;
}
