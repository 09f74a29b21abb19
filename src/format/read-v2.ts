/**
 * The v2 parser: the items of a `v: 2` message (read.ts has decoded and, for a dense pack, inflated it). A pack or a
 * batch of score records is expanded into the single signals and `op: "score"` records it carries, each validated as
 * if it had come alone. A signal id or op v2 does not know is an `unknown` item, counted by the caller.
 */
import type { z } from 'zod';
import { Malformed, unknownItem, unknownSignal, validate, type MessageItem } from './read-common.js';
import { PROTOCOL_ID } from './protocol.js';
import {
  KNOWN_SIGNAL_IDS_V2,
  MESSAGE_VERSION_V2,
  SCORES_OP,
  SCORE_MESSAGE_VERSION,
  packBodySchema,
  revealMessageV2Schema,
  scoreMessageV2Schema,
  scoresBodySchema,
  signalMessageV2Schema,
  type PackBody,
  type ScoresBody,
  type SignalMessageV2,
} from './schema-v2.js';

/** v2 score and reveal schemas by op. `null` would read a known op's records as unvalidated. */
export const RECORD_SCHEMAS_V2: Readonly<Record<'score' | 'reveal', z.ZodType | null>> = {
  score: scoreMessageV2Schema,
  reveal: revealMessageV2Schema,
};

/** The items of a decoded v2 message. */
export function readV2(value: Record<string, unknown>): MessageItem[] {
  const { op } = value;
  if (op === 'signal') return [signal(value, 0, '')];
  if (op === 'score' || op === 'reveal') return [record(op, value, 0, '')];
  if (op === 'pack') {
    const body = validate(packBodySchema, value, '');
    let expanded: Array<Record<string, unknown>>;
    try {
      expanded = expandPack(body);
    } catch (err) {
      throw new Malformed('schema', err instanceof Error ? err.message : 'bad pack');
    }
    return expanded.map((s, index) => signal(s, index, `signal ${index}: `));
  }
  if (op === SCORES_OP) {
    return expandScores(validate(scoresBodySchema, value, '')).map((r, index) =>
      record('score', r, index, `record ${index}: `),
    );
  }
  return [unknownItem(0, 'op', op)];
}

function signal(value: Record<string, unknown>, index: number, where: string): MessageItem {
  if (!KNOWN_SIGNAL_IDS_V2.has(value.signal as string)) return unknownSignal(index, value.signal);
  return { kind: 'signal', index, message: validate(signalMessageV2Schema, value, where) as SignalMessageV2 };
}

function record(op: 'score' | 'reveal', value: Record<string, unknown>, index: number, where: string): MessageItem {
  const schema = RECORD_SCHEMAS_V2[op];
  if (!schema) return { kind: op, index, v: MESSAGE_VERSION_V2, message: value, validated: false };
  const message = validate(schema, value, where) as Record<string, unknown>;
  return { kind: op, index, v: MESSAGE_VERSION_V2, message, validated: true };
}

/**
 * The signals of a validated pack body as v2 single-signal objects, in index order (not validated here: the reader
 * validates each against the v2 signal schema, or counts an unknown id). Throws RangeError on a dangling table index.
 */
export function expandPack(body: PackBody): Array<Record<string, unknown>> {
  const at = Date.parse(body.at);
  const out: Array<Record<string, unknown>> = [];
  for (const subject of body.subjects) {
    const sources = subject.src?.map((k) => tableEntry(body.src ?? [], k, 'src'));
    for (const s of subject.sig) {
      out.push({
        p: PROTOCOL_ID,
        op: 'signal',
        v: MESSAGE_VERSION_V2,
        signal: tableEntry(body.ids, s.i, 'ids'),
        subject: subject.id,
        status: s.st,
        fetchedAt: new Date(at + s.dt).toISOString(),
        run: body.run,
        ...(sources && sources.length > 0 ? { sources } : {}),
        data: withDefaults(s.d, subject.tr, body.g),
      });
    }
  }
  return out;
}

/** A packed signal's data with what the pack wrote once put back: the subject's transport, the evals' grader. */
function withDefaults(
  d: Record<string, unknown>,
  transport: string | undefined,
  grader: string | undefined,
): Record<string, unknown> {
  return {
    ...d,
    ...(transport !== undefined && d.transport === undefined ? { transport } : {}),
    ...(grader !== undefined && d.grader === undefined && 'outcome' in d ? { grader } : {}),
  };
}

function tableEntry(table: readonly string[], index: number, name: string): string {
  const value = table[index];
  if (value === undefined) throw new RangeError(`${name}[${index}] does not exist`);
  return value;
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
      ...(explanation
        ? { explanation: { configDigest: explanation.configDigest ?? body.configDigest, ...explanation } }
        : {}),
    };
  });
}
