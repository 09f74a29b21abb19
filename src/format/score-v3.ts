/**
 * Format-3 score records (`"fmt":"hcs25-tool/3"`, op `score` and op `scores`): the reference implementation's record
 * (standards-sdk hcs-25 `computeTrustScore`: `trustScore`, `trustScores.total`, `trustScoreConfigVersion`,
 * `trustScoreUpdatedAt`, `trustConfidence`, `breakdown.adapters[]`) plus `evidence`, what it was computed from: the
 * signal topic, the sequence range read, the runs used, the publisher allow-list and the scoring config's digest, so
 * that anyone holding that config recomputes the record from exactly those signals.
 *
 * Component values live in `breakdown` only (not mirrored in `trustScores`, as the reference does) so that a record
 * with a ~140-character UAID fits one message. Reference defaults are left out, and put back by the reader:
 * `applicable` (only applicable adapters are listed), an empty `unavailable`, a `weight` of 1 (adapter or component),
 * a component `status` of "ok" (as a signal's), m_stale 1. A record whose runs would not fit (a subject scored over
 * many runs with a long UAID) leaves `runs` out: the range still names its evidence, and a verifier then has no runs
 * to compare. Objects are loose and enumerations open tokens: a
 * later version's fields and values read. A batch (op `scores`) writes what its records share once; record k is the
 * op `score` record with the batch's fields merged under its own (the record's win), addressed (sequence, k).
 */
import { z } from 'zod';
import { MessageTooLargeError } from '../core/errors.js';
import { DIGEST_PATTERN } from '../core/digest.js';
import { ENTITY_ID_PATTERN, RUN_ID_PATTERN } from '../core/ids.js';
import { ADAPTER_ID_PATTERN, MAX_MESSAGE_BYTES, finishMessage, subjectSchema, type BuiltMessage } from './protocol.js';
import { MessagePacker, type PackMode } from './pack.js';
import { zlibMessageV3 } from './pack-v3.js';
import { FORMAT_ID_V3 } from './schema-v3.js';

export const SCORES_MAX_RECORDS_V3 = 64;

const scoreValue = z.number().min(0).max(100);
const token = z.string().regex(/^[a-z0-9][a-z0-9:._-]{0,47}$/, 'must be a lowercase token');
const componentKey = z.string().regex(/^\S{1,96}$/, 'must be a component key without whitespace');
const entityId = z.string().regex(ENTITY_ID_PATTERN, 'must be an entity id like 0.0.1234');

export const scoreComponentV3Schema = z
  .object({
    key: componentKey.describe('HCS-25 component key'),
    value: scoreValue.describe('the value that entered the adapter total (a stale one after m_stale)'),
    status: token.optional().describe('HCS-25 status: ok, stale, missing, timeout, error (open token); default ok'),
    weight: z.number().min(0).optional().describe('within-adapter weight; default 1'),
  })
  .loose();

export const scoreAdapterV3Schema = z
  .object({
    adapterId: z.string().regex(ADAPTER_ID_PATTERN, 'must be an HCS-25 adapter id'),
    contributionMode: token.describe('universal, scoped or conditional (open token)'),
    inDenominator: z.boolean(),
    weight: z.number().min(0).optional().describe('default 1'),
    total: scoreValue.describe('mean of the components, 2 decimals'),
    components: z.array(scoreComponentV3Schema).max(32),
    unavailable: z.array(componentKey).max(32).optional().describe('non-scorable components left out; default none'),
  })
  .loose();

const evidenceFields = {
  topic: entityId.describe('the signal topic'),
  seq: z
    .tuple([z.number().int().min(0), z.number().int().min(0)])
    .refine(([first, last]) => first <= last, 'first must not exceed last')
    .describe('[first, last] sequence numbers of the topic range read (inclusive)'),
  runs: z
    .array(z.string().regex(RUN_ID_PATTERN, 'must be a run id'))
    .max(256)
    .optional()
    .describe('runs of the signals used; absent only when they did not fit'),
  publishers: z.array(entityId).max(64).optional().describe('the payer allow-list applied; absent: any payer'),
  config: z.string().regex(DIGEST_PATTERN).describe('sha256: + base64url of the scoring config as canonical JSON'),
  staleMultiplier: z.number().min(0).max(1).optional().describe('HCS-25 m_stale when not 1'),
};
export const scoreEvidenceV3Schema = z.object(evidenceFields).loose().describe('what the record was computed from');

const recordFields = {
  subject: subjectSchema,
  trustScore: scoreValue.describe('the composite, equal to trustScores.total'),
  trustScores: z.object({ total: scoreValue }).loose().describe('HCS-25: the composite as total'),
  trustScoreConfigVersion: z.number().int().min(0),
  trustScoreUpdatedAt: z.iso.datetime({ offset: true }),
  trustConfidence: z.number().min(0).max(1).optional().describe('share of ok components, weighted like the score'),
  breakdown: z.object({ adapters: z.array(scoreAdapterV3Schema).max(64) }).loose(),
  evidence: scoreEvidenceV3Schema,
};

export const scoreMessageV3Schema = z
  .object({ fmt: z.literal(FORMAT_ID_V3), op: z.literal('score'), ...recordFields })
  .loose()
  .describe('hcs25 format 3: one HCS-25 trust score record with its evidence');
export type ScoreMessageV3 = z.infer<typeof scoreMessageV3Schema>;
export type ScoreEvidenceV3 = z.infer<typeof scoreEvidenceV3Schema>;
export type ScoreAdapterV3 = z.infer<typeof scoreAdapterV3Schema>;

const partialEvidence = z.object(evidenceFields).partial().loose();
export const scoresMessageV3Schema = z
  .object({
    fmt: z.literal(FORMAT_ID_V3),
    op: z.literal('scores'),
    trustScoreConfigVersion: recordFields.trustScoreConfigVersion.optional().describe("every record's"),
    trustScoreUpdatedAt: recordFields.trustScoreUpdatedAt.optional().describe("every record's"),
    evidence: partialEvidence.optional().describe("every record's evidence, under the record's own fields"),
    records: z
      .array(
        z
          .object({
            ...recordFields,
            trustScoreConfigVersion: recordFields.trustScoreConfigVersion.optional(),
            trustScoreUpdatedAt: recordFields.trustScoreUpdatedAt.optional(),
            evidence: partialEvidence.optional(),
          })
          .loose(),
      )
      .min(1)
      .max(SCORES_MAX_RECORDS_V3),
  })
  .loose()
  .describe('hcs25 format 3: several score records; record k is op "score" at (sequence, k)');
export type ScoresMessageV3 = z.infer<typeof scoresMessageV3Schema>;

/** A record as the builder takes it: everything but `fmt` and `op`. */
export interface ScoreRecordV3Input {
  subject: string;
  trustScore: number;
  trustScores: { total: number };
  trustScoreConfigVersion: number;
  trustScoreUpdatedAt: string;
  trustConfidence?: number;
  breakdown: { adapters: ScoreAdapterV3[] };
  evidence: ScoreEvidenceV3;
}

/** The field order of a record, so a batch record merged back is byte for byte the record built alone. */
const RECORD_ORDER = [
  'subject',
  'trustScore',
  'trustScores',
  'trustScoreConfigVersion',
  'trustScoreUpdatedAt',
  'trustConfidence',
  'breakdown',
  'evidence',
] as const;
const EVIDENCE_ORDER = ['topic', 'seq', 'runs', 'publishers', 'config', 'staleMultiplier'] as const;

function ordered(o: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of order) if (o[k] !== undefined) out[k] = o[k];
  for (const k of Object.keys(o)) if (!(k in out) && o[k] !== undefined) out[k] = o[k];
  return out;
}

/**
 * One op `score` message, defaults left out (module comment); without `runs` when only that makes it fit. Throws
 * MessageTooLargeError when even that does not fit (a UAID of several hundred characters).
 */
export function buildScoreMessageV3(input: ScoreRecordV3Input): BuiltMessage<ScoreMessageV3> {
  const { staleMultiplier, ...evidence } = input.evidence;
  const adapters = input.breakdown.adapters.map((a) => {
    const { weight, components, unavailable, ...rest } = a;
    return {
      ...rest,
      ...(weight === 1 ? {} : { weight }),
      components: components.map(({ weight: w, status, ...c }) => ({
        ...c,
        ...(status === 'ok' ? {} : { status }),
        ...(w === 1 ? {} : { weight: w }),
      })),
      ...(unavailable && unavailable.length > 0 ? { unavailable } : {}),
    };
  });
  const build = (e: Record<string, unknown>) =>
    finishMessage(
      {
        fmt: FORMAT_ID_V3,
        op: 'score',
        ...ordered(
          { ...input, breakdown: { ...input.breakdown, adapters }, evidence: ordered(e, EVIDENCE_ORDER) },
          RECORD_ORDER,
        ),
      } as ScoreMessageV3,
      'score record',
    );
  const full = { ...evidence, ...(staleMultiplier === 1 ? {} : { staleMultiplier }) };
  try {
    return build(full);
  } catch (err) {
    if (!(err instanceof MessageTooLargeError) || full.runs === undefined) throw err;
    const { runs: _, ...withoutRuns } = full;
    return build(withoutRuns);
  }
}

/** A read record with the defaults the builder left out put back (module comment), in the builder's field order. */
export function withScoreDefaultsV3(record: Record<string, unknown>): Record<string, unknown> {
  const breakdown = record.breakdown as { adapters: Array<Record<string, unknown>> };
  const adapters = breakdown.adapters.map((a) => ({
    adapterId: a.adapterId,
    contributionMode: a.contributionMode,
    inDenominator: a.inDenominator,
    weight: a.weight ?? 1,
    ...a,
    components: (a.components as Array<Record<string, unknown>>).map((c) => ({
      key: c.key,
      value: c.value,
      status: c.status ?? 'ok',
      weight: c.weight ?? 1,
      ...c,
    })),
    unavailable: a.unavailable ?? [],
  }));
  const evidence = record.evidence as Record<string, unknown>;
  return {
    ...record,
    breakdown: { ...breakdown, adapters },
    evidence: ordered({ ...evidence, staleMultiplier: evidence.staleMultiplier ?? 1 }, EVIDENCE_ORDER),
  };
}

/** Record k of a validated batch as op `score` (the batch's fields under the record's own), not yet validated. */
export function expandScoresV3(batch: ScoresMessageV3): Array<Record<string, unknown>> {
  return batch.records.map((r) => {
    const evidence = ordered({ ...batch.evidence, ...r.evidence }, EVIDENCE_ORDER);
    const merged = ordered(
      {
        ...r,
        trustScoreConfigVersion: r.trustScoreConfigVersion ?? batch.trustScoreConfigVersion,
        trustScoreUpdatedAt: r.trustScoreUpdatedAt ?? batch.trustScoreUpdatedAt,
        evidence,
      },
      RECORD_ORDER,
    );
    return { fmt: FORMAT_ID_V3, op: 'score', ...merged };
  });
}

/** The batch of built records: what every record shares (config version, time, evidence fields) written once. */
export function scoresBatchV3(records: readonly ScoreMessageV3[]): ScoresMessageV3 {
  const first = records[0];
  if (!first) throw new RangeError('a batch needs at least one record');
  const same = (get: (r: ScoreMessageV3) => unknown): boolean => {
    const v = JSON.stringify(get(first));
    return records.every((r) => JSON.stringify(get(r)) === v);
  };
  const version = same((r) => r.trustScoreConfigVersion);
  const updatedAt = same((r) => r.trustScoreUpdatedAt);
  const shared: Record<string, unknown> = {};
  for (const k of Object.keys(first.evidence)) if (same((r) => r.evidence[k])) shared[k] = first.evidence[k];
  // Runs differ per subject as a rule: they stay in each record, also when they happen to agree.
  delete shared.runs;
  return {
    fmt: FORMAT_ID_V3,
    op: 'scores',
    ...(version ? { trustScoreConfigVersion: first.trustScoreConfigVersion } : {}),
    ...(updatedAt ? { trustScoreUpdatedAt: first.trustScoreUpdatedAt } : {}),
    ...(Object.keys(shared).length > 0 ? { evidence: shared } : {}),
    records: records.map((r) => {
      const { fmt: _f, op: _o, trustScoreConfigVersion, trustScoreUpdatedAt, evidence, ...rest } = r;
      const own: Record<string, unknown> = {};
      for (const k of Object.keys(evidence)) if (!(k in shared)) own[k] = evidence[k];
      return {
        ...rest,
        ...(version ? {} : { trustScoreConfigVersion }),
        ...(updatedAt ? {} : { trustScoreUpdatedAt }),
        ...(Object.keys(own).length > 0 ? { evidence: own } : {}),
      } as ScoresMessageV3['records'][number];
    }),
  } as ScoresMessageV3;
}

export interface PackedScoresV3 {
  mode: PackMode;
  /** The exact bytes to submit: UTF-8 JSON whatever the mode (dense is JSON too, op `zlib`). */
  bytes: Buffer;
  /** The records inside, in index order. */
  records: ScoreMessageV3[];
}

/**
 * Packs built records into messages: `json` batches as many as fit, `dense` batches as many as fit once deflated and
 * wrapped, `subject` and `none` send one op `score` record per message (a score record is one subject). A message
 * that would hold one record is that op `score` record (with the default config, a readable batch seldom holds two).
 * The size search is {@link MessagePacker}'s; a record too large for a batch of its own goes alone.
 */
export class ScorePackerV3 {
  private readonly packer: MessagePacker<BuiltMessage<ScoreMessageV3>, PackedScoresV3> | undefined;

  constructor(readonly mode: PackMode) {
    if (mode === 'subject' || mode === 'none') return;
    const dense = mode === 'dense';
    const batchJson = (items: BuiltMessage<ScoreMessageV3>[]) =>
      Buffer.from(JSON.stringify(scoresBatchV3(items.map((i) => i.message))), 'utf8');
    this.packer = new MessagePacker(
      {
        // The packer tells dense (deflated) from readable modes by this; the bytes are ours either way.
        mode: dense ? 'dense' : 'subject',
        encode: (items) => {
          // A batch of one is that record alone: readable, and no larger.
          if (items.length === 1) return this.single(items[0]!);
          const json = batchJson(items);
          return { mode, bytes: dense ? zlibMessageV3(Buffer.from(json)) : json, records: items.map((i) => i.message) };
        },
        single: (item) => this.single(item),
        belongs: (_first, count) => count < SCORES_MAX_RECORDS_V3,
        // Base64 makes a wrapped body a third larger than its deflated bytes: never "surely fits" unmeasured.
        aloneJsonBytes: (item) => (dense ? MAX_MESSAGE_BYTES : batchJson([item]).length),
        jsonBytes: (item) => item.bytes,
      },
      MAX_MESSAGE_BYTES,
    );
  }

  add(item: BuiltMessage<ScoreMessageV3>): PackedScoresV3[] {
    return this.packer ? this.packer.add(item, item.bytes) : [this.single(item)];
  }

  flush(): PackedScoresV3[] {
    return this.packer ? this.packer.flush() : [];
  }

  private single(item: BuiltMessage<ScoreMessageV3>): PackedScoresV3 {
    return { mode: this.mode, bytes: Buffer.from(item.json, 'utf8'), records: [item.message] };
  }
}
