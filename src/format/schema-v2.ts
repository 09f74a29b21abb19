/**
 * On-chain format v2 (`v: 2`), the current one: a single signal (`op: "signal"`), a pack of signals (`op: "pack"`),
 * score records (`op: "score"`) and batches of them (`op: "scores"`), and the reveal (`op: "reveal"`). v2 readers keep
 * unknown fields (and ignore them): objects here are `loose`. Version 1 stays readable forever (schema-v1.ts); its
 * signal ids are read as aliases of these. Read by read-v2.ts, written by write.ts and pack.ts.
 */
import { z } from 'zod';
import { DIGEST_PATTERN } from '../core/digest.js';
import type { FailureReason } from './reasons.js';
import {
  ADAPTER_ID_PATTERN,
  EVAL_OUTCOMES,
  PROTOCOL_ID,
  QUESTION_HASH_PATTERN,
  SIGNAL_ID_PATTERN,
  SIGNAL_STATUSES,
  isoTimestampSchema,
  runIdSchema,
  signalScoreSchema,
  subjectSchema,
  tokenSchema,
  type KnownOutcome,
  type Open,
  type SignalStatus,
} from './protocol.js';
import { SIGNAL_IDS, signalEnvelopeShape } from './schema-v1.js';

// --- signals and packs ---
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
// v2 `transport` is the subject's UAID `proto` (discover/uaid.ts `hcs14Proto`): hcs25's `http` is `rest`; the others
// are unchanged. Status, outcome, reason and transport are open tokens (protocol.ts): a value a later writer adds is
// counted by readers (read-v2.ts), never rejected.
const transport = tokenSchema.describe(
  'protocol the agent was reached over, in the UAID `proto` vocabulary (rest, a2a, mcp, hcs-10, openai)',
);
const reason = tokenSchema.describe(
  'failure code, e.g. timeout, dns, http-5xx, no-answer (docs/formats.md lists those hcs25 writes); present only on failures',
);
const hash = z.string().regex(QUESTION_HASH_PATTERN);
const latencyMs = z.number().int().min(0);
const score = signalScoreSchema;

export const evalDataV2Schema = z
  .object({
    outcome: tokenSchema.describe(`catalog status token of the eval (hcs25 writes ${EVAL_OUTCOMES.join(', ')})`),
    score: score.describe('a2aSimple*Score, 0-100: hcs25 writes 100 correct, 0 otherwise'),
    questionHash: hash
      .optional()
      .describe(
        'base64url(first 16 bytes of HMAC-SHA256(run key, question id)); absent when no question was asked (skipped)',
      ),
    answer: z.string().max(16).optional().describe('the extracted answer token only; absent when none'),
    responseHash: hash
      .optional()
      .describe(
        'base64url(first 16 bytes of HMAC-SHA256(run key, "hcs-25/response/v2\\n" + signal + "\\n" + subject + "\\n" + raw response)); absent without a response',
      ),
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
    score: score.describe('availabilityScore on the 0-100 scale: hcs25 writes 100 reachable, 0 not'),
    latencyMs,
    transport,
    httpStatus: z.number().int().min(100).max(599).optional(),
    reason: reason.optional(),
  })
  .loose();

const signalStatus = tokenSchema.describe(`HCS-25 status (${SIGNAL_STATUSES.join(', ')})`);
const envelopeV2 = { ...signalEnvelopeShape, v: z.literal(MESSAGE_VERSION_V2), status: signalStatus };

export const evalSignalV2Schema = z
  .object({ ...envelopeV2, signal: z.enum([SIGNAL_IDS_V2.math, SIGNAL_IDS_V2.science]), data: evalDataV2Schema })
  .loose();
export const probeSignalV2Schema = z
  .object({ ...envelopeV2, signal: z.literal(SIGNAL_IDS_V2.availability), data: probeDataV2Schema })
  .loose();

export const signalMessageV2Schema = z
  .discriminatedUnion('signal', [evalSignalV2Schema, probeSignalV2Schema])
  .describe('HCS-25 trust signal (op "signal", v2): one observation about one subject; unknown fields are ignored');

/** The v2 signal ids this version knows the data of; other ids that match the HCS-25 pattern are counted, not rejected. */
export const KNOWN_SIGNAL_IDS_V2: ReadonlySet<string> = new Set(Object.values(SIGNAL_IDS_V2));

/** Data of a v2 signal as readers hold it: the vocabularies open, the score any value in 0..100. */
export interface EvalDataV2 {
  outcome: Open<KnownOutcome>;
  score: number;
  questionHash?: string;
  answer?: string;
  responseHash?: string;
  compliant: boolean;
  latencyMs: number;
  grader: string;
  transport: string;
  reason?: Open<FailureReason>;
}

export interface ProbeDataV2 {
  reachable: boolean;
  score: number;
  latencyMs: number;
  transport: string;
  httpStatus?: number;
  reason?: Open<FailureReason>;
}

/** A signal whose status is not a known one is not read as a signal (it cannot be scored): see read-common.ts. */
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

export const packedSignalSchema = z
  .object({
    i: z.number().int().min(0).describe('index into `ids`: the signal id'),
    st: signalStatus,
    dt: z.number().int().min(-86_400_000).max(86_400_000).describe("fetchedAt minus the pack's `at`, in ms"),
    d: z
      .record(z.string(), z.unknown())
      .describe(
        "the signal's `data` as in a v2 single signal, less `transport` and `grader` when they equal `tr` and `g`",
      ),
  })
  .loose();

const packedSubjectHead = {
  id: subjectSchema,
  src: z.array(z.number().int().min(0)).max(4).optional().describe("indexes into `src`: the subject's sources"),
  tr: transport.optional().describe("transport of the subject's signals whose `d` has none"),
};
/** A pack's subject without its signals: what its signals share. */
export const packedSubjectHeadSchema = z.object(packedSubjectHead).loose();
const packedSubject = z.object({ ...packedSubjectHead, sig: z.array(packedSignalSchema).min(1) }).loose();

const packEnvelope = {
  p: z.literal(PROTOCOL_ID),
  op: z.literal('pack'),
  v: z.literal(MESSAGE_VERSION_V2),
  run: runIdSchema,
  at: isoTimestampSchema.describe("base time: each signal's fetchedAt is `at` + its `dt`"),
  ids: z.array(signalId).min(1).max(32).describe('signal-id table'),
  g: z
    .string()
    .regex(/^[a-z][a-z-]*@\d+$/)
    .optional()
    .describe('grader of the eval signals (those whose `d` has an `outcome`) whose `d` has none'),
  src: z.array(sourceRef).max(64).optional().describe('sources table'),
};
const packLimit = [
  (b: { subjects: ReadonlyArray<{ sig: readonly unknown[] }> }) =>
    b.subjects.reduce((n, s) => n + s.sig.length, 0) <= PACK_MAX_SIGNALS,
  `a pack holds at most ${PACK_MAX_SIGNALS} signals`,
] as const;

/**
 * Body of a pack: the JSON of a `subject`-mode message, and the inflated JSON of a `dense`-mode (zlib) message.
 * Signal k of the message (its index) is the k-th entry of `subjects[*].sig` in document order.
 */
export const packBodySchema = z
  .object({ ...packEnvelope, subjects: z.array(packedSubject).min(1) })
  .loose()
  .refine(...packLimit)
  .describe('HCS-25 signal pack (op "pack", v2): the signals of one run about one or more subjects');

export type PackBody = z.infer<typeof packBodySchema>;

/**
 * What a reader checks of a pack before reading each of its signals alone (read-v2.ts): a malformed envelope rejects
 * the message, a malformed subject or signal only the signals it holds.
 */
export const packEnvelopeSchema = z
  .object({ ...packEnvelope, subjects: z.array(z.object({ sig: z.array(z.unknown()).min(1) }).loose()).min(1) })
  .loose()
  .refine(...packLimit);

export type PackEnvelope = z.infer<typeof packEnvelopeSchema>;
export type PackedSubjectHead = z.infer<typeof packedSubjectHeadSchema>;
export type PackedSignal = z.infer<typeof packedSignalSchema>;

/** The publisher-side dedupe key (run, catalog signal id, subject); a reader prefixes the payer. */
export function signalKey(message: { run: string; signal: string; subject: string }): string {
  return `${message.run}\u0000${canonicalSignalId(message.signal)}\u0000${message.subject}`;
}

// --- score records ---
/**
 * Score records v2 (`op: "score"`, `v: 2`): the shape the reference HCS-25 implementation builds (`trustScore`,
 * `trustScores` holding `total` and every component key, `trustScoreConfigVersion`, `trustScoreUpdatedAt`,
 * `trustConfidence`) plus an HCS-25 v1.1 Score Explanation that is enough to recompute `trustScores.total`.
 *
 * Explanation field names are short so the record fits one 1024-byte HCS message with the default config:
 * `explanation.configDigest` digest of the scoring config (`sha256:` + base64url of its canonical JSON);
 * `explanation.staleMultiplier` HCS-25 m_stale (default 1);
 * `explanation.adapters[]`, one per applicable adapter: `id` adapterId, `mode` contribution mode, `w` weight,
 *   `in` in the composite denominator, `t` adapter total, `c` components: `k` key, `v` value (normalized, before
 *   m_stale; `null` = non-scorable and unavailable, left out of the adapter), `s` HCS-25 status.
 * The config version is the record's own `trustScoreConfigVersion`. Rounding: 2 decimals for each component value
 * (again after m_stale), each adapter total, then the composite over the rounded totals.
 *
 * Parsing is lenient where other implementations may differ: unknown fields are kept, `trustScores` may be keyed by
 * adapter ids (v1) or component keys (reference), and the reference's own `breakdown.adapters[]` is accepted.
 */
export const SCORE_MESSAGE_VERSION = 2;
export const CONTRIBUTION_MODES = ['universal', 'scoped', 'conditional'] as const;

const scoreValue = z.number().min(0).max(100);
/** HCS-25 component keys: no whitespace (the reference uses dotted keys such as `availability.uptime`). */
const componentKey = z.string().regex(/^\S{1,96}$/, 'must be a component key without whitespace');
const status = z.enum(SIGNAL_STATUSES);
const adapterId = z.string().regex(ADAPTER_ID_PATTERN, 'must be an HCS-25 adapter id');

export const trustScoresV2Schema = z
  .object({ total: scoreValue })
  .catchall(scoreValue)
  .refine(
    (o) => Object.keys(o).every((k) => k.length <= 96 && /^\S+$/.test(k)),
    'keys must be "total", adapter ids or component keys',
  )
  .describe('total, plus any component keys (reference form) or adapter ids (v1 form), each 0–100');

export const explanationComponentSchema = z
  .object({
    k: componentKey.describe('component key'),
    v: scoreValue.nullable().describe('normalized value before m_stale; null = non-scorable and unavailable (omitted)'),
    s: status.describe('HCS-25 status'),
  })
  .loose();

export const explanationAdapterSchema = z
  .object({
    id: adapterId.describe('adapterId'),
    mode: z.enum(CONTRIBUTION_MODES).describe('contribution mode'),
    w: z.number().min(0).describe('weight'),
    in: z.boolean().describe('in the composite denominator'),
    t: scoreValue.describe('adapter total'),
    c: z.array(explanationComponentSchema).max(32).describe('components'),
  })
  .loose();

export const scoreExplanationSchema = z
  .object({
    configDigest: z
      .string()
      .regex(DIGEST_PATTERN)
      .describe('sha256: + base64url of the scoring config as canonical JSON'),
    staleMultiplier: z.number().min(0).max(1).optional().describe('HCS-25 m_stale; default 1'),
    adapters: z.array(explanationAdapterSchema).max(64).describe('every applicable adapter'),
  })
  .loose()
  .describe('HCS-25 v1.1 Score Explanation: enough to recompute trustScores.total');

/** The reference implementation's breakdown, read (never written) so its records can be recomputed too. */
export const referenceBreakdownSchema = z
  .object({
    adapters: z
      .array(
        z
          .object({
            adapterId,
            contributionMode: z.enum(CONTRIBUTION_MODES),
            applicable: z.boolean().optional(),
            inDenominator: z.boolean(),
            weight: z.number().min(0),
            total: scoreValue,
            components: z.array(z.object({ key: componentKey, value: scoreValue, status }).loose()).max(32),
            unavailable: z
              .array(z.union([componentKey, z.object({ key: componentKey }).loose()]))
              .max(32)
              .optional(),
          })
          .loose(),
      )
      .max(64),
  })
  .loose();

export const scoreMessageV2Schema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal('score'),
    v: z.literal(SCORE_MESSAGE_VERSION),
    subject: z
      .string()
      .min(8)
      .max(512)
      .regex(/^uaid:(aid|did):\S+$/, 'must be an HCS-14 UAID')
      .describe('HCS-14 UAID of the agent the score is about'),
    trustScore: scoreValue.describe('the composite, equal to trustScores.total'),
    trustScores: trustScoresV2Schema,
    trustScoreConfigVersion: z.number().int().min(0),
    trustScoreUpdatedAt: z.iso.datetime({ offset: true }),
    trustConfidence: z.number().min(0).max(1).optional(),
    explanation: scoreExplanationSchema.optional(),
    breakdown: referenceBreakdownSchema.optional().describe("the reference implementation's breakdown (read only)"),
  })
  // trustScore ≠ trustScores.total parses: checkPublishedScore names it as drift, which a parse error could not.
  .loose()
  .describe('HCS-25 computed trust score (op "score", v2) with a Score Explanation');

export type ScoreMessageV2 = z.infer<typeof scoreMessageV2Schema>;
export type ScoreExplanation = z.infer<typeof scoreExplanationSchema>;
export type ExplanationAdapter = z.infer<typeof explanationAdapterSchema>;
export type ExplanationComponent = z.infer<typeof explanationComponentSchema>;

// --- batches of score records ---
/**
 * Batches of v2 score records (`op: "scores"`, `v: 2`): several subjects' `op: "score"` records in one HCS message.
 *
 * A new op, not `op: "pack"`: every deployed hcs25 reader validates `op: "pack"` as a signal pack and would reject a
 * batch of scores as malformed, while an op it does not know is counted as unknown, never rejected. Consumers that
 * read only `op: "score"` (the reference implementation) skip a batch entirely: `hcs25 scores --publish --pack none`
 * is the form for them.
 *
 * Body: `records[k]` is exactly the k-th v2 score record without `p`/`op`/`v`, and without what the body writes once
 * for all its records when every record agrees: `trustScoreConfigVersion`, `trustScoreUpdatedAt` and the
 * explanations' `configDigest` (a record that carries its own keeps it). Putting those back gives the record
 * byte for byte as `op: "score"` would carry it. Modes as for signal packs (pack.ts): `dense` deflates the body
 * (first byte 0x78), `subject` is the body as JSON (readable in an explorer; with explanations one record fits a
 * message), `none` is one `op: "score"` record per message. Record k of a batch is addressed as (sequence number, k).
 */
export const SCORES_OP = 'scores';
/** Most records one batch may hold: far above what fits in 1024 compressed bytes, low enough to bound a reader's work. */
export const SCORES_MAX_RECORDS = 256;

const batchedScoreRecord = scoreMessageV2Schema
  .omit({ p: true, op: true, v: true })
  .extend({
    trustScoreConfigVersion: z.number().int().min(0).optional().describe("default: the batch's"),
    trustScoreUpdatedAt: z.iso.datetime({ offset: true }).optional().describe("default: the batch's"),
    explanation: scoreExplanationSchema
      .extend({ configDigest: scoreExplanationSchema.shape.configDigest.optional().describe("default: the batch's") })
      .optional(),
  })
  .describe('a v2 score record without p/op/v and without the fields the batch writes once');

export const scoresBodySchema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal(SCORES_OP),
    v: z.literal(SCORE_MESSAGE_VERSION),
    trustScoreConfigVersion: z.number().int().min(0).optional().describe("every record's, unless it has its own"),
    trustScoreUpdatedAt: z.iso.datetime({ offset: true }).optional().describe("every record's, unless it has its own"),
    configDigest: z.string().regex(DIGEST_PATTERN).optional().describe("every explanation's, unless it has its own"),
    records: z.array(batchedScoreRecord).min(1).max(SCORES_MAX_RECORDS),
  })
  .loose()
  .describe(
    'HCS-25 score records in one message (op "scores", v2): record k is the op "score" record at (sequence number, k)',
  );

export type ScoresBody = z.infer<typeof scoresBodySchema>;

// --- reveal ---
/**
 * Reveal v2 (`op: "reveal"`, `v: 2`): everything needed to re-derive each question of a run from public data.
 * With `seed`, `generator` and (for SimpleScience) the bank, `questionFor(kind, subject, seed, bank)` rebuilds the
 * question a signal asked, its options and expected answer; `key` checks its `questionHash` (and keyed response
 * hashes); `grader` re-grades its `answer`. A private bank is named by digest only: whoever holds it can verify.
 */
export const REVEAL_MESSAGE_VERSION = 2;

export const revealBankSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/)
      .describe('builtin (the bank bundled with hcs25) or private'),
    digest: z
      .string()
      .regex(DIGEST_PATTERN)
      .describe("sha256: + base64url of the bank's validated questions as canonical JSON"),
  })
  .loose();

export const revealMessageV2Schema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal('reveal'),
    v: z.literal(REVEAL_MESSAGE_VERSION),
    run: z
      .string()
      .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a ULID')
      .describe('ULID of the run'),
    key: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url 32-byte key')
      .describe('the run key (HMAC key of its hashes)'),
    seed: z.string().min(1).max(128).describe('the run seed questions are derived from'),
    generator: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]*@\d+$/)
      .describe('version of the question derivation (RNG, SimpleMath generator, SimpleScience pick and shuffle)'),
    grader: z
      .string()
      .regex(/^[a-z][a-z-]*@\d+$/)
      .describe('grader the run used'),
    bank: revealBankSchema.optional().describe('the SimpleScience bank; absent when the run asked no science question'),
  })
  .loose()
  .describe('Publishes what re-derives every question of a run (op "reveal", v2)');

export type RevealMessageV2 = z.infer<typeof revealMessageV2Schema>;
