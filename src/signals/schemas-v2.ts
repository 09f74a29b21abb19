/**
 * On-chain format v2 of hcs25 signals (`v: 2`): a single signal (`op: "signal"`) and a pack (`op: "pack"`) that
 * carries many signals with their shared parts written once. v2 readers keep unknown fields (and ignore them): objects
 * here are `loose`. Version 1 stays readable forever (schemas.ts); its signal ids are read as aliases of these.
 */
import { z } from 'zod';
import { FAILURE_REASONS } from './reasons.js';
import {
  EVAL_OUTCOMES,
  PROTOCOL_ID,
  QUESTION_HASH_PATTERN,
  SIGNAL_ID_PATTERN,
  SIGNAL_IDS,
  SIGNAL_STATUSES,
  isoTimestampSchema,
  runIdSchema,
  signalEnvelopeShape,
  subjectSchema,
  type SignalStatus,
} from './schemas.js';

export const MESSAGE_VERSION_V2 = 2;

/** Signal ids of the reference HCS-25 catalog (`a2a` = chat-capable agents in general, A2A or MCP or other). */
export const SIGNAL_IDS_V2 = {
  math: 'simple-evals.a2a_math',
  science: 'simple-evals.a2a_science',
  availability: 'availability.probe',
} as const;
export type SignalIdV2 = (typeof SIGNAL_IDS_V2)[keyof typeof SIGNAL_IDS_V2];

/** v1 ids and the catalog ids they are read as. */
export const SIGNAL_ID_ALIASES: Readonly<Record<string, SignalIdV2>> = {
  [SIGNAL_IDS.math]: SIGNAL_IDS_V2.math,
  [SIGNAL_IDS.science]: SIGNAL_IDS_V2.science,
};

/** The catalog id of a signal id (a v1 alias becomes its v2 id; anything else is returned as is). */
export function canonicalSignalId(id: string): string {
  return Object.hasOwn(SIGNAL_ID_ALIASES, id) ? SIGNAL_ID_ALIASES[id]! : id;
}

const signalId = z.string().max(64).regex(SIGNAL_ID_PATTERN, 'must be an HCS-25 signal id');
const sourceRef = z.string().min(1).max(160);
const transport = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,31}$/)
  .describe('protocol the agent was reached over, in the UAID `proto` vocabulary (rest, a2a, mcp, hcs-10, openai)');
// v2 `transport` is the subject's UAID `proto` (registry/uaid.ts `hcs14Proto`): hcs25's `http` is `rest`; the others
// are unchanged. A token, not an enum, so a future protocol does not make old readers reject a signal.
const reason = z.enum(FAILURE_REASONS).describe('closed failure code; present only on failures');
const hash = z.string().regex(QUESTION_HASH_PATTERN);
const latencyMs = z.number().int().min(0);
const score = z.union([z.literal(0), z.literal(100)]);

export const evalDataV2Schema = z
  .object({
    outcome: z.enum(EVAL_OUTCOMES).describe('catalog status token of the eval'),
    score: score.describe('a2aSimple*Score: 100 correct, 0 otherwise'),
    questionHash: hash
      .optional()
      .describe('base64url(first 16 bytes of HMAC-SHA256(run key, question id)); absent when no question was asked (skipped)'),
    answer: z.string().max(16).optional().describe('the extracted answer token only; absent when none'),
    responseHash: hash
      .optional()
      .describe('base64url(first 16 bytes of HMAC-SHA256(run key, "hcs-25/response/v2\\n" + signal + "\\n" + subject + "\\n" + raw response)); absent without a response'),
    compliant: z.boolean().describe('the response was exactly the bare answer'),
    latencyMs,
    grader: z.string().regex(/^[a-z][a-z-]*@\d+$/),
    transport,
    reason: reason.optional(),
  })
  .loose();

export const probeDataV2Schema = z
  .object({
    reachable: z.boolean().describe('HTTP status < 500 (or the protocol equivalent)'),
    score: score.describe('availabilityScore on the 0-100 scale: 100 reachable, 0 not'),
    latencyMs,
    transport,
    httpStatus: z.number().int().min(100).max(599).optional(),
    reason: reason.optional(),
  })
  .loose();

const envelopeV2 = { ...signalEnvelopeShape, v: z.literal(MESSAGE_VERSION_V2) };

export const evalSignalV2Schema = z
  .object({ ...envelopeV2, signal: z.enum([SIGNAL_IDS_V2.math, SIGNAL_IDS_V2.science]), data: evalDataV2Schema })
  .loose();
export const probeSignalV2Schema = z.object({ ...envelopeV2, signal: z.literal(SIGNAL_IDS_V2.availability), data: probeDataV2Schema }).loose();

export const signalMessageV2Schema = z
  .discriminatedUnion('signal', [evalSignalV2Schema, probeSignalV2Schema])
  .describe('HCS-25 trust signal (op "signal", v2): one observation about one subject; unknown fields are ignored');

/** The v2 signal ids this version knows the data of; other ids that match the HCS-25 pattern are counted, not rejected. */
export const KNOWN_SIGNAL_IDS_V2: ReadonlySet<string> = new Set(Object.values(SIGNAL_IDS_V2));

export interface EvalDataV2 {
  outcome: (typeof EVAL_OUTCOMES)[number];
  score: 0 | 100;
  questionHash?: string;
  answer?: string;
  responseHash?: string;
  compliant: boolean;
  latencyMs: number;
  grader: string;
  transport: string;
  reason?: (typeof FAILURE_REASONS)[number];
}

export interface ProbeDataV2 {
  reachable: boolean;
  score: 0 | 100;
  latencyMs: number;
  transport: string;
  httpStatus?: number;
  reason?: (typeof FAILURE_REASONS)[number];
}

interface SignalV2Envelope {
  p: typeof PROTOCOL_ID;
  op: 'signal';
  v: typeof MESSAGE_VERSION_V2;
  subject: string;
  status: SignalStatus;
  fetchedAt: string;
  run: string;
  sources?: string[];
}
export interface EvalSignalMessageV2 extends SignalV2Envelope {
  signal: typeof SIGNAL_IDS_V2.math | typeof SIGNAL_IDS_V2.science;
  data: EvalDataV2;
}
export interface ProbeSignalMessageV2 extends SignalV2Envelope {
  signal: typeof SIGNAL_IDS_V2.availability;
  data: ProbeDataV2;
}
export type SignalMessageV2 = EvalSignalMessageV2 | ProbeSignalMessageV2;

/** Most signals one pack may hold: far above what fits in 1024 compressed bytes, low enough to bound a reader's work. */
export const PACK_MAX_SIGNALS = 256;

const packedSignal = z
  .object({
    i: z.number().int().min(0).describe('index into `ids`: the signal id'),
    st: z.enum(SIGNAL_STATUSES).describe('HCS-25 status'),
    dt: z.number().int().min(-86_400_000).max(86_400_000).describe('fetchedAt minus the pack\'s `at`, in ms'),
    d: z
      .record(z.string(), z.unknown())
      .describe('the signal\'s `data` as in a v2 single signal, less `transport` and `grader` when they equal `tr` and `g`'),
  })
  .loose();

const packedSubject = z
  .object({
    id: subjectSchema,
    src: z.array(z.number().int().min(0)).max(4).optional().describe('indexes into `src`: the subject\'s sources'),
    tr: transport.optional().describe('transport of the subject\'s signals whose `d` has none'),
    sig: z.array(packedSignal).min(1),
  })
  .loose();

/**
 * Body of a pack: the JSON of a `subject`-mode message, and the inflated JSON of a `dense`-mode (zlib) message.
 * Signal k of the message (its index) is the k-th entry of `subjects[*].sig` in document order.
 */
export const packBodySchema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal('pack'),
    v: z.literal(MESSAGE_VERSION_V2),
    run: runIdSchema,
    at: isoTimestampSchema.describe('base time: each signal\'s fetchedAt is `at` + its `dt`'),
    ids: z.array(signalId).min(1).max(32).describe('signal-id table'),
    g: z
      .string()
      .regex(/^[a-z][a-z-]*@\d+$/)
      .optional()
      .describe('grader of the eval signals (those whose `d` has an `outcome`) whose `d` has none'),
    src: z.array(sourceRef).max(64).optional().describe('sources table'),
    subjects: z.array(packedSubject).min(1),
  })
  .loose()
  .refine((b) => b.subjects.reduce((n, s) => n + s.sig.length, 0) <= PACK_MAX_SIGNALS, `a pack holds at most ${PACK_MAX_SIGNALS} signals`)
  .describe('HCS-25 signal pack (op "pack", v2): the signals of one run about one or more subjects');

export type PackBody = z.infer<typeof packBodySchema>;
