/**
 * What the message reader (read.ts) and its per-version parsers (read-v1.ts, read-v2.ts) share: the items of one
 * message, the one way to say a message is malformed, and decoding a body to JSON.
 */
import { inflateSync } from 'node:zlib';
import type { z } from 'zod';
import type { SignalMessage } from './schema-v1.js';
import type { SignalMessageV2 } from './schema-v2.js';
import { SIGNAL_ID_PATTERN } from './protocol.js';

export type ReadRejectReason = 'too-large' | 'not-utf8' | 'bad-json' | 'bad-zlib' | 'not-hcs25' | 'schema';
/**
 * What a reader counts instead of rejecting: a version, op or signal id it does not know; a signal whose `status` it
 * does not know (not scored); a `value` it does not know in a signal it still reads (`outcome:…`, `reason:…`,
 * `score:…`); a `field` name it does not know.
 */
export type UnknownKind = 'version' | 'op' | 'signal' | 'status' | 'value' | 'field';

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
  /** The version number, op or signal id (at most 64 characters). */
  name: string;
}
/** One malformed signal of a pack: it alone is rejected, the rest of the message reads. */
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
