/**
 * What the message reader (read.ts) and its per-version parsers (read-v1.ts, read-v2.ts) share: the items of one
 * message, the one way to say a message is malformed, and decoding a body to JSON.
 */
import { inflateSync } from 'node:zlib';
import type { z } from 'zod';
import type { SignalMessage } from './schema-v1.js';
import type { SignalMessageV2 } from './schema-v2.js';
import { EVAL_OUTCOMES, KNOWN_SCORES, SIGNAL_ID_PATTERN, SIGNAL_STATUSES } from './protocol.js';

export type ReadRejectReason = 'too-large' | 'not-utf8' | 'bad-json' | 'bad-zlib' | 'not-hcs25' | 'schema';
/**
 * What a reader may not know: a version, an op, a signal id, a value of an open vocabulary (`outcome=…`, `reason=…`,
 * `status=…`, `transport=…`, `score=…`) or a field name (`data.flavour`).
 */
export type UnknownKind = 'version' | 'op' | 'signal' | 'value' | 'field';

/** A signal of any version; `index` is its place in the message (0 for a single signal). */
export interface SignalItem {
  kind: 'signal';
  index: number;
  message: SignalMessage | SignalMessageV2;
}
/**
 * A score or reveal record; `index` is its place in a batch (0 for a record alone). `validated` is false for a v2
 * record whose schema is not wired in `RECORD_SCHEMAS_V2`.
 */
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
  /** The version number, op, signal id, `field=value` or field name (at most 64 characters). */
  name: string;
}
/** One malformed signal of a pack: it alone is not read, the rest of its message is. */
export interface RejectedItem {
  kind: 'rejected';
  index: number;
  reason: ReadRejectReason;
  detail: string;
}
export type MessageItem = SignalItem | RecordItem | UnknownItem | RejectedItem;

const NAME_MAX = 64;

/** Thrown by a parser for a malformed message; readMessage turns it into a rejection. */
export class Malformed extends Error {
  constructor(
    readonly reason: ReadRejectReason,
    detail: string,
  ) {
    super(detail);
  }
}

/** `value` parsed by `schema`, or Malformed naming the first issue (prefixed by `where`). */
export function validate<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Malformed(
    'schema',
    `${where}${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch'}`,
  );
}

/** An id outside the HCS-25 pattern is malformed; a well-formed id this version does not know is counted. */
export function unknownSignal(index: number, id: unknown): UnknownItem {
  if (typeof id !== 'string' || id.length > NAME_MAX || !SIGNAL_ID_PATTERN.test(id)) {
    throw new Malformed(
      'schema',
      `signal: ${JSON.stringify(id)?.slice(0, NAME_MAX) ?? 'missing'} is not an HCS-25 signal id`,
    );
  }
  return unknownItem(index, 'signal', id);
}

export function unknownItem(index: number, kind: UnknownKind, name: unknown): UnknownItem {
  const text = typeof name === 'string' ? name : (JSON.stringify(name) ?? 'undefined');
  return { kind: 'unknown', index, unknown: kind, name: text.slice(0, NAME_MAX) };
}

/**
 * The items of `read`, or, when it finds the signal at `index` malformed, that signal's rejection alone. Malformed
 * says where it is; any other error (a dangling table index) gets `where` in front.
 */
export function readAlone(index: number, where: string, read: () => MessageItem[]): MessageItem[] {
  try {
    return read();
  } catch (err) {
    if (err instanceof Malformed) return [{ kind: 'rejected', index, reason: err.reason, detail: err.message }];
    const detail = `${where}${err instanceof Error ? err.message : 'malformed signal'}`;
    return [{ kind: 'rejected', index, reason: 'schema', detail }];
  }
}

/** An unknown `field` item for each own key of `value` not in `known`, named `prefix` + key. */
export function unknownFields(
  value: object,
  known: ReadonlySet<string>,
  index: number,
  prefix = '',
  into: MessageItem[] = [],
): MessageItem[] {
  for (const key of Object.keys(value)) if (!known.has(key)) into.push(unknownItem(index, 'field', prefix + key));
  return into;
}

/** What one version's signals may hold: anything else in a signal is counted as unknown. */
export interface SignalVocabulary {
  /** Field names of the signal envelope. */
  fields: ReadonlySet<string>;
  /** Field names of `data`, by signal id. */
  data: Readonly<Record<string, ReadonlySet<string>>>;
  transports: ReadonlySet<string>;
  /** Failure codes, when the version has a closed list of them (v1's codes are free-form: none is unknown). */
  reasons?: ReadonlySet<string>;
}

const STATUSES: ReadonlySet<string> = new Set(SIGNAL_STATUSES);
const OUTCOMES: ReadonlySet<string> = new Set(EVAL_OUTCOMES);

/** A validated signal's shape as far as counting its unknowns goes. */
export interface OpenSignal {
  signal: string;
  status: string;
  data: { score: number; outcome?: string; reason?: string; transport?: string };
}

/**
 * A validated signal as items: the signal, then an unknown `value` or `field` item for each value or field name it
 * holds that `vocabulary` does not know (the signal is still read and scored by its status and score). A status
 * that is not HCS-25's cannot be mapped to a score: such a signal is one unknown `status=…` item, not a signal.
 * Field names are counted on `raw`, the signal before validation (which drops a `__proto__` key).
 */
export function signalItems(
  index: number,
  message: OpenSignal,
  vocabulary: SignalVocabulary,
  raw: { data?: unknown } = message,
): MessageItem[] {
  if (!STATUSES.has(message.status)) return [unknownItem(index, 'value', `status=${message.status}`)];
  const items: MessageItem[] = [{ kind: 'signal', index, message: message as unknown as SignalItem['message'] }];
  const { data } = message;
  const value = (field: 'outcome' | 'reason' | 'transport', known: ReadonlySet<string> | undefined) => {
    const v = data[field];
    if (v !== undefined && known && !known.has(v)) items.push(unknownItem(index, 'value', `${field}=${v}`));
  };
  value('outcome', OUTCOMES);
  value('reason', vocabulary.reasons);
  value('transport', vocabulary.transports);
  if (!KNOWN_SCORES.has(data.score)) items.push(unknownItem(index, 'value', `score=${data.score}`));
  unknownFields(raw, vocabulary.fields, index, '', items);
  const dataFields = vocabulary.data[message.signal];
  if (dataFields) unknownFields((raw.data as object | undefined) ?? data, dataFields, index, 'data.', items);
  return items;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A message body as bytes: a string is base64 (the mirror REST `message` field) unless `encoding` says `utf8`. */
export function bodyBytes(body: string | Uint8Array, encoding: 'base64' | 'utf8' = 'base64'): Buffer {
  return typeof body === 'string' ? Buffer.from(body, encoding) : Buffer.from(body);
}

/** UTF-8 JSON, or Malformed (`not-utf8`, `bad-json`). */
export function parseJson(bytes: Uint8Array): unknown {
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

/** Inflates a zlib stream of at most `max` bytes, or Malformed (`too-large` for a decompression bomb, `bad-zlib`). */
export function inflateBounded(bytes: Uint8Array, max: number, what: string): Buffer {
  try {
    return inflateSync(bytes, { maxOutputLength: max });
  } catch (err) {
    if (err instanceof RangeError) throw new Malformed('too-large', `${what} inflates to more than ${max} bytes`);
    throw new Malformed('bad-zlib', `${what} does not inflate`);
  }
}
