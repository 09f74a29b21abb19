/**
 * The v2 parser: the items of a `v: 2` message (read.ts has decoded and, for a dense pack, inflated it). A pack or a
 * batch of score records is expanded into the single signals and `op: "score"` records it carries, each validated as
 * if it had come alone; a malformed signal of a pack is rejected alone (its index), the rest of the pack is read. A
 * signal id, op, vocabulary value or field v2 does not know is an `unknown` item, counted by the caller.
 */
import type { z } from 'zod';
import { PROTOCOLS } from '../core/agent.js';
import { hcs14Proto } from '../discover/uaid.js';
import {
  readAlone,
  signalItems,
  unknownFields,
  unknownItem,
  unknownSignal,
  validate,
  type MessageItem,
  type SignalVocabulary,
} from './read-common.js';
import { PROTOCOL_ID } from './protocol.js';
import { FAILURE_REASONS } from './reasons.js';
import {
  KNOWN_SIGNAL_IDS_V2,
  MESSAGE_VERSION_V2,
  SCORES_OP,
  SCORE_MESSAGE_VERSION,
  SIGNAL_IDS_V2,
  evalDataV2Schema,
  evalSignalV2Schema,
  packEnvelopeSchema,
  packedSignalSchema,
  packedSubjectHeadSchema,
  probeDataV2Schema,
  revealMessageV2Schema,
  scoreMessageV2Schema,
  scoresBodySchema,
  signalMessageV2Schema,
  type PackBody,
  type PackEnvelope,
  type PackedSignal,
  type PackedSubjectHead,
  type ScoresBody,
} from './schema-v2.js';

/** v2 score and reveal schemas by op. `null` would read a known op's records as unvalidated. */
export const RECORD_SCHEMAS_V2: Readonly<Record<'score' | 'reveal', z.ZodType | null>> = {
  score: scoreMessageV2Schema,
  reveal: revealMessageV2Schema,
};

const keys = (shape: object): ReadonlySet<string> => new Set(Object.keys(shape));
/** What v2 signals hold; the known transports are the UAID `proto` values hcs25 writes. */
export const VOCABULARY_V2: SignalVocabulary = {
  fields: keys(evalSignalV2Schema.shape),
  data: {
    [SIGNAL_IDS_V2.math]: keys(evalDataV2Schema.shape),
    [SIGNAL_IDS_V2.science]: keys(evalDataV2Schema.shape),
    [SIGNAL_IDS_V2.availability]: keys(probeDataV2Schema.shape),
  },
  transports: new Set(PROTOCOLS.map(hcs14Proto)),
  reasons: new Set(FAILURE_REASONS),
};
const PACK_FIELDS = keys(packEnvelopeSchema.shape);
const PACKED_SUBJECT_FIELDS = new Set([...keys(packedSubjectHeadSchema.shape), 'sig']);
const PACKED_SIGNAL_FIELDS = keys(packedSignalSchema.shape);
const RECORD_FIELDS = {
  score: keys(scoreMessageV2Schema.shape),
  reveal: keys(revealMessageV2Schema.shape),
  scores: keys(scoresBodySchema.shape),
};

/** The items of a decoded v2 message. */
export function readV2(value: Record<string, unknown>): MessageItem[] {
  const { op } = value;
  if (op === 'signal') return signal(value, 0, '');
  if (op === 'score' || op === 'reveal') return record(op, value, 0, '');
  if (op === 'pack') return readPack(value);
  if (op === SCORES_OP) {
    const body = validate(scoresBodySchema, value, '');
    return unknownFields(
      value,
      RECORD_FIELDS.scores,
      0,
      '',
      expandScores(body).flatMap((r, index) => record('score', r, index, `record ${index}: `)),
    );
  }
  return [unknownItem(0, 'op', op)];
}

function signal(value: Record<string, unknown>, index: number, where: string): MessageItem[] {
  if (!KNOWN_SIGNAL_IDS_V2.has(value.signal as string)) return [unknownSignal(index, value.signal)];
  return signalItems(index, validate(signalMessageV2Schema, value, where), VOCABULARY_V2, value);
}

function record(op: 'score' | 'reveal', value: Record<string, unknown>, index: number, where: string): MessageItem[] {
  const schema = RECORD_SCHEMAS_V2[op];
  if (!schema) return [{ kind: op, index, v: MESSAGE_VERSION_V2, message: value, validated: false }];
  const message = validate(schema, value, where) as Record<string, unknown>;
  return unknownFields(value, RECORD_FIELDS[op], index, '', [
    { kind: op, index, v: MESSAGE_VERSION_V2, message, validated: true },
  ]);
}

/**
 * A pack's items in index order. Only a malformed envelope (run, at, tables, the subjects and their `sig` arrays)
 * rejects the message; a malformed subject rejects its signals, a malformed signal itself, each with its index.
 */
function readPack(value: Record<string, unknown>): MessageItem[] {
  const body = validate(packEnvelopeSchema, value, '');
  // Field names are counted on what was sent: validation drops a `__proto__` key.
  const raw = value.subjects as ReadonlyArray<{ sig: ReadonlyArray<{ d?: Record<string, unknown> }> }>;
  const items = unknownFields(value, PACK_FIELDS, 0);
  let index = 0;
  for (const [k, subject] of body.subjects.entries()) {
    const first = index;
    const head = packedSubjectHeadSchema.safeParse(subject);
    for (const [j, sig] of subject.sig.entries()) {
      const at = index++;
      const where = `signal ${at}: `;
      items.push(
        ...readAlone(at, where, () => {
          const packed = validate(packedSignalSchema, sig, `${where}subjects.${k}.sig.${j}.`);
          const own = head.success ? head.data : validate(packedSubjectHeadSchema, subject, `${where}subjects.${k}.`);
          const sent = raw[k]!.sig[j]!;
          const expanded = expandSignal(body, own, { ...packed, d: sent.d ?? packed.d });
          return unknownFields(sent, PACKED_SIGNAL_FIELDS, at, 'sig.', signal(expanded, at, where));
        }),
      );
    }
    if (head.success) unknownFields(raw[k]!, PACKED_SUBJECT_FIELDS, first, 'subjects.', items);
  }
  return items;
}

/**
 * The signals of a validated pack body as v2 single-signal objects, in index order (not validated here: the reader
 * validates each against the v2 signal schema, or counts an unknown id). Throws RangeError on a dangling table index.
 */
export function expandPack(body: PackBody): Array<Record<string, unknown>> {
  return body.subjects.flatMap((subject) => subject.sig.map((s) => expandSignal(body, subject, s)));
}

/** One signal of a pack as a v2 single signal. Throws RangeError on a dangling table index or a time out of range. */
function expandSignal(body: PackEnvelope, subject: PackedSubjectHead, s: PackedSignal): Record<string, unknown> {
  const sources = subject.src?.map((k) => tableEntry(body.src ?? [], k, 'src'));
  return {
    p: PROTOCOL_ID,
    op: 'signal',
    v: MESSAGE_VERSION_V2,
    signal: tableEntry(body.ids, s.i, 'ids'),
    subject: subject.id,
    status: s.st,
    fetchedAt: new Date(Date.parse(body.at) + s.dt).toISOString(),
    run: body.run,
    ...(sources && sources.length > 0 ? { sources } : {}),
    data: withDefaults(s.d, subject.tr, body.g),
  };
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
