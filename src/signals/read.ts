/**
 * The forward-compatible reader of one topic message: v1 and v2, single signals, packs (JSON or zlib), score and
 * reveal records, batches of score records (`op: "scores"`, JSON or zlib: one `score` item per record). It never throws. What it does not know (another version, another op, another signal id) is
 * returned as an `unknown` item, counted by the caller, never rejected: HCS-25 says new signals MUST NOT break
 * consumers. Rejected means malformed only: too large, not UTF-8, bad JSON, bad zlib, not an hcs-25 message, or a
 * known shape that violates its schema. Unknown fields are kept in what is returned, and ignored.
 *
 * Migration: `parseSignalMessage` (parse.ts) stays as the strict validator of exactly what the v1 builder writes
 * (tests and tools that check our own output); readers of topics use `readMessage`.
 */
import { inflateSync } from 'node:zlib';
import type { z } from 'zod';
import {
  MAX_MESSAGE_BYTES,
  MESSAGE_VERSION,
  PROTOCOL_ID,
  SIGNAL_ID_PATTERN,
  SIGNAL_IDS,
  evalDataSchema,
  evalSignalMessageSchema,
  probeDataSchema,
  probeSignalMessageSchema,
  revealMessageSchema,
  scoreMessageSchema,
  type SignalMessage,
} from './schemas.js';
import {
  KNOWN_SIGNAL_IDS_V2,
  MESSAGE_VERSION_V2,
  SIGNAL_IDS_V2,
  evalSignalV2Schema,
  packBodySchema,
  probeSignalV2Schema,
  signalMessageV2Schema,
  type SignalMessageV2,
} from './schemas-v2.js';
import { ZLIB_FIRST_BYTE, expandPack } from './pack.js';
import { revealMessageV2Schema } from './reveal.js';
import { scoreMessageV2Schema } from './score.js';
import { SCORES_OP, expandScores, scoresBodySchema } from './score-pack.js';

export type ReadRejectReason = 'too-large' | 'not-utf8' | 'bad-json' | 'bad-zlib' | 'not-hcs25' | 'schema';
export type UnknownKind = 'version' | 'op' | 'signal';

/** A signal of any version; `index` is its place in the message (0 for a single signal). */
export interface SignalItem {
  kind: 'signal';
  index: number;
  message: SignalMessage | SignalMessageV2;
}
/** A score or reveal record; `index` is its place in a batch (0 for a record alone). `validated` is false for a v2 record whose schema is not wired in {@link RECORD_SCHEMAS_V2}. */
export interface RecordItem {
  kind: 'score' | 'reveal';
  index: number;
  v: number;
  message: Record<string, unknown>;
  validated: boolean;
}
/** Something a later version may define: counted by kind and name, not rejected. */
export interface UnknownItem {
  kind: 'unknown';
  index: number;
  unknown: UnknownKind;
  /** The version number, op or signal id (at most 64 characters). */
  name: string;
}
export type MessageItem = SignalItem | RecordItem | UnknownItem;

export type ReadResult =
  | { ok: true; encoding: 'json' | 'zlib'; items: MessageItem[] }
  | { ok: false; reason: ReadRejectReason; detail: string };

/** v2 score and reveal schemas by op. `null` would read a known op's records as unvalidated. */
export const RECORD_SCHEMAS_V2: Readonly<Record<'score' | 'reveal', z.ZodType | null>> = { score: scoreMessageV2Schema, reveal: revealMessageV2Schema };

/** v1 schemas without the builder's strictness: a v1 message with extra fields is read, its extras ignored. */
const V1_SIGNAL_SCHEMAS: Readonly<Record<string, z.ZodType<SignalMessage>>> = {
  [SIGNAL_IDS.math]: evalSignalMessageSchema.extend({ data: evalDataSchema.loose() }).loose(),
  [SIGNAL_IDS.science]: evalSignalMessageSchema.extend({ data: evalDataSchema.loose() }).loose(),
  [SIGNAL_IDS.availability]: probeSignalMessageSchema.extend({ data: probeDataSchema.loose() }).loose(),
};
const V1_RECORD_SCHEMAS: Readonly<Record<'score' | 'reveal', z.ZodType>> = { score: scoreMessageSchema.loose(), reveal: revealMessageSchema.loose() };

/** Inflated packs are a few KiB; anything near this is a decompression bomb, not a pack. */
const MAX_INFLATED_BYTES = 64 * 1024;
const NAME_MAX = 64;
const decoder = new TextDecoder('utf-8', { fatal: true });

class Malformed extends Error {
  constructor(
    readonly reason: ReadRejectReason,
    detail: string,
  ) {
    super(detail);
  }
}

export interface ReadMessageOptions {
  /** A string body is base64 (the mirror REST `message` field) unless this says `utf8`. */
  encoding?: 'base64' | 'utf8';
}

/** Reads one topic message (base64 from mirror REST, text, or bytes) into its items. Never throws. */
export function readMessage(body: string | Uint8Array, options: ReadMessageOptions = {}): ReadResult {
  try {
    const bytes = typeof body === 'string' ? Buffer.from(body, options.encoding === 'utf8' ? 'utf8' : 'base64') : Buffer.from(body);
    if (bytes.length > MAX_MESSAGE_BYTES) {
      throw new Malformed('too-large', `${bytes.length} bytes; HCS-25 messages are at most ${MAX_MESSAGE_BYTES}`);
    }
    const zlib = bytes[0] === ZLIB_FIRST_BYTE;
    const value = parseJson(zlib ? inflate(bytes) : bytes);
    if (typeof value !== 'object' || value === null || Array.isArray(value) || (value as { p?: unknown }).p !== PROTOCOL_ID) {
      throw new Malformed('not-hcs25', 'message is not an hcs-25 message (p)');
    }
    return { ok: true, encoding: zlib ? 'zlib' : 'json', items: itemsOf(value as Record<string, unknown>) };
  } catch (err) {
    if (err instanceof Malformed) return { ok: false, reason: err.reason, detail: err.message };
    return { ok: false, reason: 'schema', detail: err instanceof Error ? err.message : 'unreadable message' };
  }
}

function inflate(bytes: Buffer): Buffer {
  try {
    return inflateSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (err) {
    if (err instanceof RangeError) throw new Malformed('too-large', `inflates to more than ${MAX_INFLATED_BYTES} bytes`);
    throw new Malformed('bad-zlib', 'message starts like zlib (0x78) but does not inflate');
  }
}

function parseJson(bytes: Buffer): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new Malformed('not-utf8', 'message is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Malformed('bad-json', 'message is not JSON');
  }
}

function itemsOf(value: Record<string, unknown>): MessageItem[] {
  const { v, op } = value;
  if (v !== MESSAGE_VERSION && v !== MESSAGE_VERSION_V2) return [unknown(0, 'version', v)];
  if (op === 'signal') return [v === MESSAGE_VERSION ? signalV1(value) : signalV2(value, 0)];
  if (op === 'score' || op === 'reveal') return [record(op, v, value)];
  if (op === 'pack' && v === MESSAGE_VERSION_V2) {
    const body = validate(packBodySchema, value, '');
    let expanded: Array<Record<string, unknown>>;
    try {
      expanded = expandPack(body);
    } catch (err) {
      throw new Malformed('schema', err instanceof Error ? err.message : 'bad pack');
    }
    return expanded.map((s, index) => packedSignalV2(s, index));
  }
  if (op === SCORES_OP && v === MESSAGE_VERSION_V2) {
    return expandScores(validate(scoresBodySchema, value, '')).map((r, index) => record('score', v, r, index, `record ${index}: `));
  }
  return [unknown(0, 'op', op)];
}

function signalV1(value: Record<string, unknown>): MessageItem {
  const id = value.signal;
  const schema = typeof id === 'string' && Object.hasOwn(V1_SIGNAL_SCHEMAS, id) ? V1_SIGNAL_SCHEMAS[id] : undefined;
  if (!schema) return unknownSignal(0, id);
  return { kind: 'signal', index: 0, message: validate(schema, value, '') };
}

function signalV2(value: Record<string, unknown>, index: number, where = ''): MessageItem {
  if (!KNOWN_SIGNAL_IDS_V2.has(value.signal as string)) return unknownSignal(index, value.signal);
  return { kind: 'signal', index, message: validate(signalMessageV2Schema, value, where) as SignalMessageV2 };
}

/**
 * What a pack's signal needs checked beyond its pack: the pack schema already checked, with the very schemas of the
 * v2 signal envelope, everything the expansion copies from it (subject, status, run, sources, signal ids; p, op and v
 * are constants), so only the computed fetchedAt and the data remain. The verdicts and details are those of the
 * whole v2 signal schema (same paths, same order); validating the whole signal again cost a third of reading a pack.
 */
const PACKED_SIGNAL_REST: Readonly<Record<string, z.ZodType<Pick<SignalMessageV2, 'fetchedAt' | 'data'>>>> = {
  [SIGNAL_IDS_V2.math]: evalSignalV2Schema.pick({ fetchedAt: true, data: true }),
  [SIGNAL_IDS_V2.science]: evalSignalV2Schema.pick({ fetchedAt: true, data: true }),
  [SIGNAL_IDS_V2.availability]: probeSignalV2Schema.pick({ fetchedAt: true, data: true }),
};

function packedSignalV2(value: Record<string, unknown>, index: number): MessageItem {
  const id = value.signal as string;
  const rest = Object.hasOwn(PACKED_SIGNAL_REST, id) ? PACKED_SIGNAL_REST[id] : undefined;
  if (!rest) return unknownSignal(index, id);
  const { fetchedAt, data } = validate(rest, { fetchedAt: value.fetchedAt, data: value.data }, `signal ${index}: `);
  // The key order of the v2 signal schema's output, as a single signal reads.
  const message = {
    p: value.p,
    op: value.op,
    v: value.v,
    subject: value.subject,
    status: value.status,
    fetchedAt,
    run: value.run,
    ...(value.sources !== undefined ? { sources: [...(value.sources as string[])] } : {}),
    signal: id,
    data,
  } as SignalMessageV2;
  return { kind: 'signal', index, message };
}

function record(op: 'score' | 'reveal', v: number, value: Record<string, unknown>, index = 0, where = ''): MessageItem {
  const schema = v === MESSAGE_VERSION ? V1_RECORD_SCHEMAS[op] : RECORD_SCHEMAS_V2[op];
  if (!schema) return { kind: op, index, v, message: value, validated: false };
  return { kind: op, index, v, message: validate(schema, value, where) as Record<string, unknown>, validated: true };
}

/** An id outside the HCS-25 pattern is malformed; a well-formed id this version does not know is counted. */
function unknownSignal(index: number, id: unknown): MessageItem {
  if (typeof id !== 'string' || id.length > NAME_MAX || !SIGNAL_ID_PATTERN.test(id)) {
    throw new Malformed('schema', `signal: ${JSON.stringify(id)?.slice(0, NAME_MAX) ?? 'missing'} is not an HCS-25 signal id`);
  }
  return unknown(index, 'signal', id);
}

function unknown(index: number, kind: UnknownKind, name: unknown): UnknownItem {
  const text = typeof name === 'string' ? name : (JSON.stringify(name) ?? 'undefined');
  return { kind: 'unknown', index, unknown: kind, name: text.slice(0, NAME_MAX) };
}

function validate<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Malformed('schema', `${where}${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch'}`);
}

/** Unknown items counted by kind and name: `{ version: {"3": 1}, op: {vote: 2}, signal: {"reputation.stars": 4} }`. */
export type UnknownCounts = Record<UnknownKind, Record<string, number>>;

export function emptyUnknownCounts(): UnknownCounts {
  return { version: {}, op: {}, signal: {} };
}

export function countUnknown(counts: UnknownCounts, kind: UnknownKind, name: string): void {
  counts[kind][name] = (counts[kind][name] ?? 0) + 1;
}
