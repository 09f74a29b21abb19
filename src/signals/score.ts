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
import { z } from 'zod';
import { finishMessage, type BuiltMessage } from './build.js';
import { DIGEST_PATTERN } from '../core/digest.js';
import { ADAPTER_ID_PATTERN, PROTOCOL_ID, SIGNAL_STATUSES } from './schemas.js';

export const SCORE_MESSAGE_VERSION = 2;
export const CONTRIBUTION_MODES = ['universal', 'scoped', 'conditional'] as const;

const score = z.number().min(0).max(100);
/** HCS-25 component keys: no whitespace (the reference uses dotted keys such as `availability.uptime`). */
const componentKey = z.string().regex(/^\S{1,96}$/, 'must be a component key without whitespace');
const status = z.enum(SIGNAL_STATUSES);
const adapterId = z.string().regex(ADAPTER_ID_PATTERN, 'must be an HCS-25 adapter id');

export const trustScoresV2Schema = z
  .object({ total: score })
  .catchall(score)
  .refine((o) => Object.keys(o).every((k) => k.length <= 96 && /^\S+$/.test(k)), 'keys must be "total", adapter ids or component keys')
  .describe('total, plus any component keys (reference form) or adapter ids (v1 form), each 0–100');

export const explanationComponentSchema = z
  .object({
    k: componentKey.describe('component key'),
    v: score.nullable().describe('normalized value before m_stale; null = non-scorable and unavailable (omitted)'),
    s: status.describe('HCS-25 status'),
  })
  .loose();

export const explanationAdapterSchema = z
  .object({
    id: adapterId.describe('adapterId'),
    mode: z.enum(CONTRIBUTION_MODES).describe('contribution mode'),
    w: z.number().min(0).describe('weight'),
    in: z.boolean().describe('in the composite denominator'),
    t: score.describe('adapter total'),
    c: z.array(explanationComponentSchema).max(32).describe('components'),
  })
  .loose();

export const scoreExplanationSchema = z
  .object({
    configDigest: z.string().regex(DIGEST_PATTERN).describe('sha256: + base64url of the scoring config as canonical JSON'),
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
            total: score,
            components: z.array(z.object({ key: componentKey, value: score, status }).loose()).max(32),
            unavailable: z.array(z.union([componentKey, z.object({ key: componentKey }).loose()])).max(32).optional(),
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
    trustScore: score.describe('the composite, equal to trustScores.total'),
    trustScores: trustScoresV2Schema,
    trustScoreConfigVersion: z.number().int().min(0),
    trustScoreUpdatedAt: z.iso.datetime({ offset: true }),
    trustConfidence: z.number().min(0).max(1).optional(),
    explanation: scoreExplanationSchema.optional(),
    breakdown: referenceBreakdownSchema.optional().describe('the reference implementation\'s breakdown (read only)'),
  })
  // trustScore ≠ trustScores.total parses: checkPublishedScore names it as drift, which a parse error could not.
  .loose()
  .describe('HCS-25 computed trust score (op "score", v2) with a Score Explanation');

export type ScoreMessageV2 = z.infer<typeof scoreMessageV2Schema>;
export type ScoreExplanation = z.infer<typeof scoreExplanationSchema>;
export type ExplanationAdapter = z.infer<typeof explanationAdapterSchema>;
export type ExplanationComponent = z.infer<typeof explanationComponentSchema>;


export interface ScoreRecordInput {
  subject: string;
  trustScoreConfigVersion: number;
  trustScoreUpdatedAt: string;
  trustConfidence?: number;
  /** The composite, as computed from the explanation's adapters (consumer/aggregate.ts). */
  total: number;
  explanation: ScoreExplanation;
}

/**
 * Builds a v2 score record from its explanation: `trustScores` holds the total and every component that has a value,
 * `trustScore` mirrors the total; `explain: false` leaves the explanation itself out (HCS-25 makes it optional).
 * Throws MessageTooLargeError when it would not fit one HCS message.
 */
export function buildScoreMessageV2(input: ScoreRecordInput, options: { explain?: boolean } = {}): BuiltMessage<ScoreMessageV2> {
  const { total } = input;
  const trustScores: Record<string, number> = { total };
  for (const adapter of input.explanation.adapters) {
    for (const c of adapter.c) if (c.v !== null) trustScores[c.k] = c.v;
  }
  const message = scoreMessageV2Schema.parse({
    p: PROTOCOL_ID,
    op: 'score',
    v: SCORE_MESSAGE_VERSION,
    subject: input.subject,
    trustScore: total,
    trustScores,
    trustScoreConfigVersion: input.trustScoreConfigVersion,
    trustScoreUpdatedAt: input.trustScoreUpdatedAt,
    ...(input.trustConfidence !== undefined ? { trustConfidence: input.trustConfidence } : {}),
    ...(options.explain === false ? {} : { explanation: input.explanation }),
  });
  return finishMessage(message, 'score message');
}
