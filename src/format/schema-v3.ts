/**
 * On-chain format 3 (`"fmt":"hcs25-tool/3"`): hcs25's own envelope, which cannot be mistaken for the HCS-25
 * standard's (HCS-25 defines how to compute scores, not how to store them). Signals travel in `op: "signals"` (one
 * signal, one subject or as many subjects as fit), optionally deflated inside `op: "zlib"`; `op: "reveal"` publishes
 * what re-derives a run's questions. Score records (`op: "score"`, `op: "scores"`) are score-v3.ts.
 *
 * Open by design: unknown fields are ignored (objects are `loose`), and every vocabulary (status, outcome, reason,
 * transport) is a token, not an enum, so a value a later writer adds is counted by readers instead of rejected.
 * Written by write-v3.ts and pack-v3.ts, read by read-v3.ts.
 */
import { z } from 'zod';
import { parseUaid } from '../discover/uaid.js';
import { SIGNAL_ID_PATTERN, SIGNAL_STATUSES, isoTimestampSchema, runIdSchema, subjectSchema } from './protocol.js';
import { revealMessageV2Schema } from './schema-v2.js';

export const FORMAT_ID_V3 = 'hcs25-tool/3';
/** Every format's id starts so; another version after the slash is counted as unknown, never rejected. */
export const FORMAT_ID_PREFIX = 'hcs25-tool/';
export const FORMAT_VERSION_V3 = 3;

export const SIGNALS_OP = 'signals';
export const ZLIB_OP = 'zlib';
export const REVEAL_OP = 'reveal';

/** Transaction memos of format-3 messages (`hcs25-tool/3:signals|score|reveal`). */
export const TRANSACTION_MEMOS_V3 = {
  signal: `${FORMAT_ID_V3}:signals`,
  score: `${FORMAT_ID_V3}:score`,
  reveal: `${FORMAT_ID_V3}:reveal`,
} as const;

/** The grader readers assume for a signal until the run's reveal names one. */
export const DEFAULT_GRADER_V3 = 'first-token@1';

/** Most signals one message may hold: far above what fits in 1024 bytes, low enough to bound a reader's work. */
export const SIGNALS_MAX_V3 = 256;
/** Largest inflated body of a compressed message (`op: "zlib"`, or a v2 dense pack): a few KiB are real; more is a bomb. */
export const ZLIB_MAX_INFLATED_BYTES = 64 * 1024;

/** Open vocabularies: a token a later writer may add, counted by readers that do not know it. */
const token = z.string().regex(/^[a-z0-9][a-z0-9:._-]{0,47}$/, 'must be a lowercase token');
const hash22 = z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'must be 16 bytes as base64url');
const signalId = z.string().max(64).regex(SIGNAL_ID_PATTERN, 'must be an HCS-25 signal id');
const sourceRef = z.string().min(1).max(160);
const transport = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,31}$/)
  .describe('protocol the agent was reached over, in the UAID `proto` vocabulary (rest, a2a, mcp, hcs-10, openai)');
const DT_MAX = 86_400_000;

/** One signal of a pack: what each field means is format3 ("Signal"); only `i`, `dt` and `score` are required. */
export const signalEntryV3Schema = z
  .object({
    i: z.number().int().min(0).describe('index into `ids`: the signal id'),
    dt: z.number().int().min(-DT_MAX).max(DT_MAX).describe("fetchedAt minus the message's `at`, in ms"),
    st: token
      .optional()
      .describe('HCS-25 status (ok|missing|timeout|error|stale); absent = ok; an unknown status is not scored'),
    score: z.number().min(0).max(100).describe('0–100 (today 100 correct/reachable, 0 otherwise)'),
    ms: z.number().int().min(0).optional().describe('latency, ms'),
    reason: token.optional().describe('failure code (reasons.ts); present only on failures'),
    outcome: token
      .optional()
      .describe(
        'evals: correct|wrong|unparseable|empty|timeout|error|upstream-error|skipped (open vocabulary); absent = a graded answer: correct with score 100, wrong with score 0',
      ),
    q: hash22
      .optional()
      .describe('evals: base64url(first 16 bytes of HMAC-SHA256(run key, question id)); absent when skipped'),
    a: z.string().max(16).optional().describe('evals: the extracted answer token; absent when none'),
    r: hash22
      .optional()
      .describe(
        'evals: keyed response hash (base64url of the first 16 bytes of HMAC-SHA256(run key, "hcs-25/response/v2\\n" + signal + "\\n" + subject + "\\n" + raw response)); present only when the reply was not exactly the answer',
      ),
    http: z.number().int().min(100).max(599).optional().describe('probe: HTTP status when not a success'),
  })
  .loose();
export type SignalEntryV3 = z.infer<typeof signalEntryV3Schema>;

const subjectShape = {
  id: subjectSchema,
  src: z
    .array(z.number().int().min(0))
    .max(4)
    .optional()
    .describe("indexes into `src`: the subject's sources; absent = every entry of `src` (none without a table)"),
  tr: transport.optional().describe("transport of the subject's signals; absent = the `proto` of its UAID"),
};

const envelopeShape = {
  fmt: z.literal(FORMAT_ID_V3),
  op: z.literal(SIGNALS_OP),
  run: runIdSchema,
  at: isoTimestampSchema.describe("base time: each signal's fetchedAt is `at` + its `dt`"),
  src: z.array(sourceRef).max(64).optional().describe('sources table (HRLs of registry entries or topics)'),
  ids: z.array(signalId).min(1).max(32).describe('signal-id table'),
};

const signalCount = (subjects: ReadonlyArray<{ sig: readonly unknown[] }>) =>
  subjects.reduce((n, s) => n + s.sig.length, 0) <= SIGNALS_MAX_V3;

/**
 * A format-3 signals message. Signal k of the message is the k-th entry of `subjects[*].sig` in document order:
 * addressed (sequence number, k).
 */
export const signalsMessageV3Schema = z
  .object({
    ...envelopeShape,
    subjects: z
      .array(z.object({ ...subjectShape, sig: z.array(signalEntryV3Schema).min(1) }).loose())
      .min(1)
      .refine(signalCount, `a message holds at most ${SIGNALS_MAX_V3} signals`),
  })
  .loose()
  .describe('hcs25 format 3 (op "signals"): HCS-25 trust signals of one run about one or more subjects');
export type SignalsMessageV3 = z.infer<typeof signalsMessageV3Schema>;

/** The envelope alone, as the reader checks it before each signal on its own (a bad signal costs only itself). */
export const signalsEnvelopeV3Schema = z
  .object({
    ...envelopeShape,
    subjects: z
      .array(z.object({ ...subjectShape, sig: z.array(z.unknown()).min(1) }).loose())
      .min(1)
      .refine(signalCount, `a message holds at most ${SIGNALS_MAX_V3} signals`),
  })
  .loose();

export const zlibMessageV3Schema = z
  .object({
    fmt: z.literal(FORMAT_ID_V3),
    op: z.literal(ZLIB_OP),
    zlib: z
      .string()
      .min(4)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be standard padded base64')
      .describe(
        'base64 of a zlib (RFC 1950) stream; inflated (at most 64 KiB) it is exactly one format-3 JSON message of op "signals" or "scores"',
      ),
  })
  .loose()
  .describe('hcs25 format 3 (op "zlib"): a compressed format-3 message');
export type ZlibMessageV3 = z.infer<typeof zlibMessageV3Schema>;

/**
 * A format-3 signal as readers hand it on (read-v3.ts): expanded to the shape of a v2 single signal, with `v: 3`, so
 * scoring, verification and the serve API treat every format alike. Never on a topic; `hcs25 signals --json` and the
 * serve API show it. Open vocabularies stay open here too (`outcome`, `reason`).
 */
export const readSignalV3Schema = z
  .object({
    p: z.literal('hcs-25'),
    op: z.literal('signal'),
    v: z.literal(FORMAT_VERSION_V3),
    signal: signalId,
    subject: subjectSchema,
    status: z.enum(SIGNAL_STATUSES),
    fetchedAt: isoTimestampSchema,
    run: runIdSchema,
    sources: z.array(sourceRef).max(4).optional(),
    data: z
      .object({
        score: z.number().min(0).max(100),
        latencyMs: z.number().int().min(0),
        transport,
        outcome: token.optional(),
        questionHash: z
          .string()
          .regex(/^hs256:[A-Za-z0-9_-]{22}$/)
          .optional(),
        answer: z.string().max(16).optional(),
        responseHash: z
          .string()
          .regex(/^hs256:[A-Za-z0-9_-]{22}$/)
          .optional(),
        compliant: z.boolean().optional(),
        grader: z.string().optional(),
        reachable: z.boolean().optional(),
        httpStatus: z.number().int().optional(),
        reason: token.optional(),
      })
      .loose(),
  })
  .loose()
  .describe('a format-3 signal as hcs25 readers hand it on: one signal of an op "signals" message, expanded');

const revealShape = revealMessageV2Schema.shape;
export const revealMessageV3Schema = z
  .object({
    fmt: z.literal(FORMAT_ID_V3),
    op: z.literal(REVEAL_OP),
    run: revealShape.run,
    key: revealShape.key,
    seed: revealShape.seed,
    generator: revealShape.generator,
    grader: revealShape.grader,
    bank: revealShape.bank,
  })
  .loose()
  .describe('hcs25 format 3 (op "reveal"): what re-derives every question of a run, published after it');
export type RevealMessageV3 = z.infer<typeof revealMessageV3Schema>;

/** A subject's transport: its `tr`, else its UAID's `proto` (undefined when neither says). */
export function subjectTransport(subject: { id: string; tr?: string | undefined }): string | undefined {
  return subject.tr ?? parseUaid(subject.id).proto;
}

/** A subject's sources: its `src` indexes into the message's table, or the whole table without them. */
export function subjectSources(
  message: { src?: string[] | undefined },
  subject: { src?: number[] | undefined },
): string[] {
  const table = message.src ?? [];
  if (!subject.src) return table;
  return subject.src.map((k) => {
    const ref = table[k];
    if (ref === undefined) throw new RangeError(`src[${k}] does not exist`);
    return ref;
  });
}
