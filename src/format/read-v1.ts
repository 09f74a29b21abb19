/**
 * The v1 parser: the items of a `v: 1` message (read.ts has decoded it), and the strict check of exactly what the v1
 * builder writes.
 */
import type { z } from 'zod';
import { PROTOCOLS } from '../core/agent.js';
import {
  type Malformed,
  bodyBytes,
  parseJson,
  signalItems,
  unknownFields,
  unknownItem,
  unknownSignal,
  validate,
  type MessageItem,
  type OpenSignal,
  type SignalVocabulary,
} from './read-common.js';
import { MAX_MESSAGE_BYTES, PROTOCOL_ID } from './protocol.js';
import {
  MESSAGE_VERSION,
  SIGNAL_IDS,
  evalDataSchema,
  evalSignalMessageSchema,
  evalSignalReadSchema,
  probeDataSchema,
  probeSignalReadSchema,
  revealMessageSchema,
  scoreMessageSchema,
  signalMessageSchema,
  type Hcs25Message,
} from './schema-v1.js';

/** v1 schemas without the builder's strictness (schema-v1.ts): extra fields and values v1 did not write are read. */
const SIGNAL_SCHEMAS: Readonly<Record<string, z.ZodType<OpenSignal>>> = {
  [SIGNAL_IDS.math]: evalSignalReadSchema,
  [SIGNAL_IDS.science]: evalSignalReadSchema,
  [SIGNAL_IDS.availability]: probeSignalReadSchema,
};
const RECORD_SCHEMAS: Readonly<Record<'score' | 'reveal', z.ZodType>> = {
  score: scoreMessageSchema.loose(),
  reveal: revealMessageSchema.loose(),
};

const keys = (shape: object): ReadonlySet<string> => new Set(Object.keys(shape));
const VOCABULARY: SignalVocabulary = {
  fields: keys(evalSignalMessageSchema.shape),
  data: {
    [SIGNAL_IDS.math]: keys(evalDataSchema.shape),
    [SIGNAL_IDS.science]: keys(evalDataSchema.shape),
    [SIGNAL_IDS.availability]: keys(probeDataSchema.shape),
  },
  transports: new Set(PROTOCOLS),
};
const RECORD_FIELDS = { score: keys(scoreMessageSchema.shape), reveal: keys(revealMessageSchema.shape) };

/** The items of a decoded v1 message: a signal, a score or a reveal record, or an op v1 does not have. */
export function readV1(value: Record<string, unknown>): MessageItem[] {
  const { op } = value;
  if (op === 'signal') {
    const id = value.signal;
    const schema = typeof id === 'string' && Object.hasOwn(SIGNAL_SCHEMAS, id) ? SIGNAL_SCHEMAS[id] : undefined;
    if (!schema) return [unknownSignal(0, id)];
    return signalItems(0, validate(schema, value, ''), VOCABULARY, value);
  }
  if (op === 'score' || op === 'reveal') {
    const message = validate(RECORD_SCHEMAS[op], value, '') as Record<string, unknown>;
    return unknownFields(value, RECORD_FIELDS[op], 0, '', [
      { kind: op, index: 0, v: MESSAGE_VERSION, message, validated: true },
    ]);
  }
  return [unknownItem(0, 'op', op)];
}

export type RejectReason =
  | 'too-large'
  | 'not-utf8'
  | 'bad-json'
  | 'not-hcs25'
  | 'unknown-version'
  | 'unknown-op'
  | 'schema';

export type ParseResult = { ok: true; message: Hcs25Message } | { ok: false; reason: RejectReason; detail: string };

export interface ParseOptions {
  /** The mirror REST `message` field is base64; pass `base64` for it, `utf8` for text, or give bytes. */
  encoding?: 'base64' | 'utf8';
}

const STRICT_SCHEMAS: Record<string, z.ZodType<Hcs25Message>> = {
  signal: signalMessageSchema,
  score: scoreMessageSchema,
  reveal: revealMessageSchema,
};

/**
 * Validates one message body as exactly what the v1 builder writes (strict: extra fields, other versions and ops
 * are reasons), for checking hcs25's own v1 output. Never throws. To read a topic use `readMessage` (read.ts).
 */
export function parseSignalMessage(body: string | Uint8Array, options: ParseOptions = {}): ParseResult {
  const bytes = bodyBytes(body, options.encoding);
  if (bytes.length > MAX_MESSAGE_BYTES) {
    return {
      ok: false,
      reason: 'too-large',
      detail: `${bytes.length} bytes; HCS-25 messages are at most ${MAX_MESSAGE_BYTES}`,
    };
  }
  let value: unknown;
  try {
    value = parseJson(bytes);
  } catch (err) {
    const { reason, message } = err as Malformed;
    return { ok: false, reason: reason as RejectReason, detail: message };
  }
  if (typeof value !== 'object' || value === null || (value as { p?: unknown }).p !== PROTOCOL_ID) {
    return { ok: false, reason: 'not-hcs25', detail: 'message is not an hcs-25 message (p)' };
  }
  const { v, op } = value as { v?: unknown; op?: unknown };
  if (v !== MESSAGE_VERSION) {
    return { ok: false, reason: 'unknown-version', detail: `version ${JSON.stringify(v)} is not supported (v1)` };
  }
  const schema = typeof op === 'string' && Object.hasOwn(STRICT_SCHEMAS, op) ? STRICT_SCHEMAS[op] : undefined;
  if (!schema)
    return { ok: false, reason: 'unknown-op', detail: `op ${JSON.stringify(op)} is not signal, score or reveal` };
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: 'schema',
      detail: issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch',
    };
  }
  return { ok: true, message: parsed.data };
}
