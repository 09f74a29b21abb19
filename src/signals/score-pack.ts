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
import { deflateSync, inflateSync } from 'node:zlib';
import { z } from 'zod';
import type { BuiltMessage } from './build.js';
import { DIGEST_PATTERN } from '../core/digest.js';
import { ZLIB_FIRST_BYTE } from './pack.js';
import { MessagePacker, withoutKey, type PackMode } from './packer.js';
import { PROTOCOL_ID } from './schemas.js';
import { SCORE_MESSAGE_VERSION, scoreExplanationSchema, scoreMessageV2Schema, type ScoreMessageV2 } from './score.js';

export const SCORES_OP = 'scores';
/** Most records one batch may hold: far above what fits in 1024 compressed bytes, low enough to bound a reader's work. */
export const SCORES_MAX_RECORDS = 256;

const batchedScoreRecord = scoreMessageV2Schema
  .omit({ p: true, op: true, v: true })
  .extend({
    trustScoreConfigVersion: z.number().int().min(0).optional().describe('default: the batch\'s'),
    trustScoreUpdatedAt: z.iso.datetime({ offset: true }).optional().describe('default: the batch\'s'),
    explanation: scoreExplanationSchema
      .extend({ configDigest: scoreExplanationSchema.shape.configDigest.optional().describe('default: the batch\'s') })
      .optional(),
  })
  .describe('a v2 score record without p/op/v and without the fields the batch writes once');

export const scoresBodySchema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal(SCORES_OP),
    v: z.literal(SCORE_MESSAGE_VERSION),
    trustScoreConfigVersion: z.number().int().min(0).optional().describe('every record\'s, unless it has its own'),
    trustScoreUpdatedAt: z.iso.datetime({ offset: true }).optional().describe('every record\'s, unless it has its own'),
    configDigest: z.string().regex(DIGEST_PATTERN).optional().describe('every explanation\'s, unless it has its own'),
    records: z.array(batchedScoreRecord).min(1).max(SCORES_MAX_RECORDS),
  })
  .loose()
  .describe('HCS-25 score records in one message (op "scores", v2): record k is the op "score" record at (sequence number, k)');

export type ScoresBody = z.infer<typeof scoresBodySchema>;

export interface PackedScores {
  mode: PackMode;
  /** `json`: UTF-8 JSON (a batch, or one `op: "score"` record); `zlib`: an RFC 1950 stream of a batch's JSON. */
  encoding: 'json' | 'zlib';
  /** The exact bytes to submit. */
  bytes: Buffer;
  /** The records inside, in index order. */
  records: ScoreMessageV2[];
}

/** The batch body of records (each as `buildScoreMessageV2` made it), with what they all share written once. */
export function scoresBody(records: readonly ScoreMessageV2[]): ScoresBody {
  const first = records[0];
  if (!first) throw new RangeError('a batch needs at least one record');
  const same = <V>(get: (r: ScoreMessageV2) => V): V | undefined => {
    const v = get(first);
    return records.every((r) => get(r) === v) ? v : undefined;
  };
  const version = same((r) => r.trustScoreConfigVersion);
  const updatedAt = same((r) => r.trustScoreUpdatedAt);
  const explained = records.filter((r) => r.explanation);
  const digest = explained.length > 0 && explained.every((r) => r.explanation!.configDigest === explained[0]!.explanation!.configDigest) ? explained[0]!.explanation!.configDigest : undefined;
  return {
    p: PROTOCOL_ID,
    op: SCORES_OP,
    v: SCORE_MESSAGE_VERSION,
    ...(version !== undefined ? { trustScoreConfigVersion: version } : {}),
    ...(updatedAt !== undefined ? { trustScoreUpdatedAt: updatedAt } : {}),
    ...(digest !== undefined ? { configDigest: digest } : {}),
    records: records.map((r) => {
      const { p: _p, op: _op, v: _v, trustScoreConfigVersion, trustScoreUpdatedAt, explanation, ...rest } = r;
      const own: Record<string, unknown> = { ...rest };
      if (version === undefined) own.trustScoreConfigVersion = trustScoreConfigVersion;
      if (updatedAt === undefined) own.trustScoreUpdatedAt = trustScoreUpdatedAt;
      if (explanation) own.explanation = digest === undefined ? explanation : withoutKey(explanation, 'configDigest');
      return own as ScoresBody['records'][number];
    }),
  };
}

/**
 * The records of a validated batch as `op: "score"` objects in index order, each with what the batch wrote once put
 * back, in the builder's key order (not validated here: the reader validates each as a v2 score record).
 */
export function expandScores(body: ScoresBody): Array<Record<string, unknown>> {
  return body.records.map((r) => {
    const { subject, trustScore, trustScores, trustScoreConfigVersion, trustScoreUpdatedAt, explanation, ...rest } = r;
    return {
      p: PROTOCOL_ID,
      op: 'score',
      v: SCORE_MESSAGE_VERSION,
      subject,
      trustScore,
      trustScores,
      trustScoreConfigVersion: trustScoreConfigVersion ?? body.trustScoreConfigVersion,
      trustScoreUpdatedAt: trustScoreUpdatedAt ?? body.trustScoreUpdatedAt,
      ...rest,
      ...(explanation ? { explanation: { configDigest: explanation.configDigest ?? body.configDigest, ...explanation } } : {}),
    };
  });
}

/**
 * The records of a message this publisher built (a batch in either encoding, or one `op: "score"` record), unvalidated:
 * for the publisher's own journaled bytes. Topic messages go through the reader (read.ts), which validates.
 */
export function batchRecords(bytes: Buffer): Array<Record<string, unknown>> {
  const value = JSON.parse((bytes[0] === ZLIB_FIRST_BYTE ? inflateSync(bytes) : bytes).toString('utf8')) as Record<string, unknown>;
  return value.op === SCORES_OP ? expandScores(value as ScoresBody) : [value];
}

/** Packs built score records into messages of the given mode (the size search is {@link MessagePacker}'s). */
export class ScorePacker extends MessagePacker<BuiltMessage<ScoreMessageV2>, PackedScores> {
  constructor(options: { mode: PackMode; maxBytes?: number }) {
    const { mode } = options;
    const dense = mode === 'dense';
    const bodyJson = (records: ScoreMessageV2[]) => Buffer.from(JSON.stringify(scoresBody(records)), 'utf8');
    super(
      {
        mode,
        encode(items) {
          const records = items.map((i) => i.message);
          const json = bodyJson(records);
          return { mode, encoding: dense ? 'zlib' : 'json', bytes: dense ? deflateSync(json, { level: 9 }) : json, records };
        },
        // buildScoreMessageV2 made sure the record fits one message.
        single: (item) => ({ mode, encoding: 'json', bytes: Buffer.from(item.json, 'utf8'), records: [item.message] }),
        belongs: (_first, count) => count < SCORES_MAX_RECORDS,
        aloneJsonBytes: (item) => bodyJson([item.message]).length,
        jsonBytes: (item) => item.bytes,
      },
      options.maxBytes,
    );
  }
}
