/**
 * On-chain format v1 (`v: 1`): one signal, score or reveal per message, exactly these fields. Readable forever
 * (read-v1.ts); written only to finish a run journaled in v1 (write-v1.ts).
 */
import { z } from 'zod';
import { PROTOCOLS, type Protocol } from '../core/agent.js';
import {
  ADAPTER_ID_PATTERN,
  EVAL_OUTCOMES,
  PROTOCOL_ID,
  QUESTION_HASH_PATTERN,
  SIGNAL_STATUSES,
  isoTimestampSchema as isoTimestamp,
  signalScoreSchema,
  tokenSchema,
  type KnownOutcome,
  type Open,
  runIdSchema as runId,
  subjectSchema as subject,
} from './protocol.js';

export const MESSAGE_VERSION = 1;

export const SIGNAL_IDS = {
  math: 'simple-evals.math',
  science: 'simple-evals.science',
  availability: 'availability.probe',
} as const;

/** A short machine-readable reason: never free text, so no agent output can ride along. */
const reasonCode = tokenSchema.describe('short reason code, e.g. ambiguous, http-503, timeout');
const transport = z.enum(PROTOCOLS).describe('protocol the agent was reached over');
const sources = z
  .array(z.string().min(1).max(160))
  .max(4)
  .describe('provenance: HRLs of the registry entries the subject came from');

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

/**
 * What a v1 reader (read-v1.ts) accepts: the builder's shapes, less strict. Status, outcome and transport are open
 * tokens and the score any number in 0..100, so a value hcs25 does not write is counted by the reader, not rejected;
 * extra fields are kept (and ignored).
 */
const openData = { score: signalScoreSchema, transport: tokenSchema };
export const evalSignalReadSchema = evalSignalMessageSchema
  .extend({ status: tokenSchema, data: evalDataSchema.extend({ ...openData, outcome: tokenSchema }).loose() })
  .loose();
export const probeSignalReadSchema = probeSignalMessageSchema
  .extend({ status: tokenSchema, data: probeDataSchema.extend(openData).loose() })
  .loose();

export const trustScoresSchema = z
  .object({ total: z.number().min(0).max(100) })
  .catchall(z.number().min(0).max(100))
  .refine(
    (o) => Object.keys(o).every((k) => k === 'total' || ADAPTER_ID_PATTERN.test(k)),
    'keys must be "total" or adapter ids',
  );

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

/** v1 signal data as readers hold it: outcome and transport may be values this version does not know. */
export type EvalDataV1 = Omit<z.infer<typeof evalDataSchema>, 'outcome' | 'score' | 'transport'> & {
  outcome: Open<KnownOutcome>;
  score: number;
  transport: Open<Protocol>;
};
export type ProbeDataV1 = Omit<z.infer<typeof probeDataSchema>, 'score' | 'transport'> & {
  score: number;
  transport: Open<Protocol>;
};
/** A v1 signal as read (the builder writes the known subset). A signal whose status is unknown is not read as one. */
export type EvalSignalMessage = Omit<z.infer<typeof evalSignalMessageSchema>, 'data'> & { data: EvalDataV1 };
export type ProbeSignalMessage = Omit<z.infer<typeof probeSignalMessageSchema>, 'data'> & { data: ProbeDataV1 };
export type SignalMessage = EvalSignalMessage | ProbeSignalMessage;
export type ScoreMessage = z.infer<typeof scoreMessageSchema>;
export type RevealMessage = z.infer<typeof revealMessageSchema>;
export type Hcs25Message = SignalMessage | ScoreMessage | RevealMessage;
