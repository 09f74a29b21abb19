import type { z } from 'zod';
import {
  MAX_MESSAGE_BYTES,
  MESSAGE_VERSION,
  PROTOCOL_ID,
  revealMessageSchema,
  scoreMessageSchema,
  signalMessageSchema,
  type Hcs25Message,
} from './schemas.js';

export type RejectReason = 'too-large' | 'not-utf8' | 'bad-json' | 'not-hcs25' | 'unknown-version' | 'unknown-op' | 'schema';

export type ParseResult =
  | { ok: true; message: Hcs25Message }
  | { ok: false; reason: RejectReason; detail: string };

export interface ParseOptions {
  /** The mirror REST `message` field is base64; pass `base64` for it, `utf8` for text, or give bytes. */
  encoding?: 'base64' | 'utf8';
}

const SCHEMA_BY_OP: Record<string, z.ZodType<Hcs25Message>> = {
  signal: signalMessageSchema,
  score: scoreMessageSchema,
  reveal: revealMessageSchema,
};
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Validates one topic message body as exactly what the v1 builder writes (strict: extra fields, other versions and
 * ops are reasons). Never throws: anything a public topic can hold comes back as a reason.
 *
 * Migration: to read a topic use `readMessage` (read.ts): v1 and v2, packs, records, unknown kinds counted rather
 * than rejected, extra fields kept. This one stays for checking hcs25's own v1 output (tests, tools).
 */
export function parseSignalMessage(body: string | Uint8Array, options: ParseOptions = {}): ParseResult {
  const bytes = typeof body === 'string' ? Buffer.from(body, options.encoding === 'utf8' ? 'utf8' : 'base64') : body;
  if (bytes.length > MAX_MESSAGE_BYTES) {
    return { ok: false, reason: 'too-large', detail: `${bytes.length} bytes; HCS-25 messages are at most ${MAX_MESSAGE_BYTES}` };
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: 'not-utf8', detail: 'message is not valid UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'bad-json', detail: 'message is not JSON' };
  }
  if (typeof value !== 'object' || value === null || (value as { p?: unknown }).p !== PROTOCOL_ID) {
    return { ok: false, reason: 'not-hcs25', detail: 'message is not an hcs-25 message (p)' };
  }
  const { v, op } = value as { v?: unknown; op?: unknown };
  if (v !== MESSAGE_VERSION) return { ok: false, reason: 'unknown-version', detail: `version ${JSON.stringify(v)} is not supported (v1)` };
  const schema = typeof op === 'string' && Object.hasOwn(SCHEMA_BY_OP, op) ? SCHEMA_BY_OP[op] : undefined;
  if (!schema) return { ok: false, reason: 'unknown-op', detail: `op ${JSON.stringify(op)} is not signal, score or reveal` };
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: 'schema', detail: issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch' };
  }
  return { ok: true, message: parsed.data };
}
