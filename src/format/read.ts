/**
 * The reader of one topic message, whatever its version: v1 and v2, single signals, packs (JSON or zlib), score and
 * reveal records, batches of score records. It never throws. It decodes the body (size, zlib, UTF-8, JSON, `p`) and
 * hands it to the parser of its version (read-v1.ts, read-v2.ts). What it does not know (another version, another
 * op, another signal id) is returned as an `unknown` item, counted by the caller, never rejected: HCS-25 says new
 * signals MUST NOT break consumers. Rejected means malformed only: too large, not UTF-8, bad JSON, bad zlib, not an
 * hcs-25 message, or a known shape that violates its schema. Unknown fields are kept in what is returned, and ignored.
 */
import { inflateSync } from 'node:zlib';
import { MAX_MESSAGE_BYTES, PROTOCOL_ID, ZLIB_FIRST_BYTE } from './protocol.js';
import {
  Malformed,
  bodyBytes,
  parseJson,
  unknownItem,
  type MessageItem,
  type ReadRejectReason,
  type UnknownKind,
} from './read-common.js';
import { readV1 } from './read-v1.js';
import { readV2 } from './read-v2.js';
import { readScoreOpsV3 } from './read-score-v3.js';
import { SCORE_FORMAT_V3 } from './score-v3.js';

export type { MessageItem, ReadRejectReason, RecordItem, SignalItem, UnknownItem, UnknownKind } from './read-common.js';
export { RECORD_SCHEMAS_V2 } from './read-v2.js';

export type ReadResult =
  | { ok: true; encoding: 'json' | 'zlib'; items: MessageItem[] }
  | { ok: false; reason: ReadRejectReason; detail: string };

/** The parser of each version this reader knows. */
const PARSERS: Readonly<Record<number, (value: Record<string, unknown>) => MessageItem[]>> = { 1: readV1, 2: readV2 };

/** Inflated packs are a few KiB; anything near this is a decompression bomb, not a pack. */
const MAX_INFLATED_BYTES = 64 * 1024;

export interface ReadMessageOptions {
  /** A string body is base64 (the mirror REST `message` field) unless this says `utf8`. */
  encoding?: 'base64' | 'utf8';
}

/** Reads one topic message (base64 from mirror REST, text, or bytes) into its items. Never throws. */
export function readMessage(body: string | Uint8Array, options: ReadMessageOptions = {}): ReadResult {
  try {
    const bytes = bodyBytes(body, options.encoding);
    if (bytes.length > MAX_MESSAGE_BYTES) {
      throw new Malformed('too-large', `${bytes.length} bytes; HCS-25 messages are at most ${MAX_MESSAGE_BYTES}`);
    }
    const zlib = bytes[0] === ZLIB_FIRST_BYTE;
    const value = parseJson(zlib ? inflate(bytes) : bytes);
    // Interim, until the format-3 reader (read-v3.ts) is merged: format-3 score records only.
    const v3 =
      !zlib && typeof value === 'object' && value !== null && (value as { fmt?: unknown }).fmt === SCORE_FORMAT_V3;
    if (v3) return { ok: true, encoding: 'json', items: readScoreMessageV3(value as Record<string, unknown>) };
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      (value as { p?: unknown }).p !== PROTOCOL_ID
    ) {
      throw new Malformed('not-hcs25', 'message is not an hcs-25 message (p)');
    }
    const { v } = value as { v?: unknown };
    const parse = typeof v === 'number' && Object.hasOwn(PARSERS, v) ? PARSERS[v] : undefined;
    const items = parse ? parse(value as Record<string, unknown>) : [unknownItem(0, 'version', v)];
    return { ok: true, encoding: zlib ? 'zlib' : 'json', items };
  } catch (err) {
    if (err instanceof Malformed) return { ok: false, reason: err.reason, detail: err.message };
    return { ok: false, reason: 'schema', detail: err instanceof Error ? err.message : 'unreadable message' };
  }
}

function readScoreMessageV3(value: Record<string, unknown>): MessageItem[] {
  const inner =
    value.op === 'zlib' && typeof value.zlib === 'string'
      ? (parseJson(inflate(Buffer.from(value.zlib, 'base64'))) as Record<string, unknown>)
      : value;
  return inner.op === 'score' || inner.op === 'scores' ? readScoreOpsV3(inner) : [unknownItem(0, 'op', inner.op)];
}

function inflate(bytes: Buffer): Buffer {
  try {
    return inflateSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (err) {
    if (err instanceof RangeError)
      throw new Malformed('too-large', `inflates to more than ${MAX_INFLATED_BYTES} bytes`);
    throw new Malformed('bad-zlib', 'message starts like zlib (0x78) but does not inflate');
  }
}

/** Unknown items counted by kind and name: `{ version: {"3": 1}, op: {vote: 2}, signal: {"reputation.stars": 4} }`. */
export type UnknownCounts = Record<UnknownKind, Record<string, number>>;

export function emptyUnknownCounts(): UnknownCounts {
  return { version: {}, op: {}, signal: {} };
}

export function countUnknown(counts: UnknownCounts, kind: UnknownKind, name: string): void {
  counts[kind][name] = (counts[kind][name] ?? 0) + 1;
}
