/**
 * HCS-10 wire format: topic memos, analytics transaction memos, the operations we write, and zod schemas for the
 * operations we read (from agents we do not control). Pure; no network.
 *
 * Written by hand rather than through the standards-sdk's `buildHcs10*Tx` builders: those load the whole SDK
 * (slow to import), return transactions without size checks, and have no `close_connection` / `connection_closed`
 * builders. test/hcs10/messages.test.ts checks every builder here against the SDK's (payload and memo).
 */
import { z } from 'zod';
import { Hcs25Error } from '../core/errors.js';
import { parseHrl } from '../core/hrl.js';
import { ENTITY_ID_PATTERN } from '../core/ids.js';

export const HCS10_TTL_SECONDS = 60;
/** One HCS message; larger `message` data goes to an HCS-1 file and is sent as its HRL. */
export const MAX_HCS_MESSAGE_BYTES = 1024;
/** The standards-sdk moves `data` to HCS-1 above this serialized size; we follow it so both sides agree. */
export const HCS10_INLINE_LIMIT_BYTES = 1000;

/** Operation enum of the analytics transaction memo `hcs-10:op:{op}:{topicType}`. */
export const OP_ENUM = {
  register: 0,
  delete: 1,
  migrate: 2,
  connection_request: 3,
  connection_created: 4,
  connection_closed: 5,
  close_connection: 5,
  message: 6,
} as const;
export type Hcs10OpName = keyof typeof OP_ENUM;

/** Topic-type enum of the analytics memo. Not the topic-memo type enum (0 inbound … 3 registry): see HCS-10. */
export const MEMO_TOPIC_ENUM = { registry: 0, inbound: 1, outbound: 2, connection: 3 } as const;
export type Hcs10TopicKind = keyof typeof MEMO_TOPIC_ENUM;

export function analyticsMemo(op: Hcs10OpName, on: Hcs10TopicKind): string {
  return `hcs-10:op:${OP_ENUM[op]}:${MEMO_TOPIC_ENUM[on]}`;
}

// ---------- topic memos ----------

export function inboundTopicMemo(accountId: string, ttl = HCS10_TTL_SECONDS): string {
  return `hcs-10:0:${ttl}:0:${accountId}`;
}

export function outboundTopicMemo(ttl = HCS10_TTL_SECONDS): string {
  return `hcs-10:0:${ttl}:1`;
}

export function connectionTopicMemo(inboundTopicId: string, connectionId: number, ttl = HCS10_TTL_SECONDS): string {
  return `hcs-10:1:${ttl}:2:${inboundTopicId}:${connectionId}`;
}

export function registryTopicMemo(ttl = HCS10_TTL_SECONDS, metadataTopicId?: string): string {
  return metadataTopicId ? `hcs-10:0:${ttl}:3:${metadataTopicId}` : `hcs-10:0:${ttl}:3`;
}

export type Hcs10TopicMemo =
  | { type: 'inbound'; ttl: number; accountId: string }
  | { type: 'outbound'; ttl: number }
  | { type: 'connection'; ttl: number; inboundTopicId: string; connectionId: number }
  | { type: 'registry'; ttl: number; metadataTopicId?: string };

/** An entity id inside a memo: the core pattern without its anchors. */
const ID = ENTITY_ID_PATTERN.source.slice(1, -1);
const TOPIC_MEMO = new RegExp(String.raw`^hcs-10:([01]):(\d{1,12}):([0-3])(?::(${ID}))?(?::(\d{1,15}))?$`);

/** Parses any HCS-10 topic memo; null when it is not one (or its extra fields do not fit its type). */
export function parseHcs10TopicMemo(memo: string): Hcs10TopicMemo | null {
  const m = TOPIC_MEMO.exec(memo.trim());
  if (!m) return null;
  const ttl = Number(m[2]);
  const [extraId, connectionId] = [m[4], m[5]];
  switch (m[3]) {
    case '0':
      return extraId !== undefined && connectionId === undefined ? { type: 'inbound', ttl, accountId: extraId } : null;
    case '1':
      return extraId === undefined ? { type: 'outbound', ttl } : null;
    case '2':
      return extraId !== undefined && connectionId !== undefined
        ? { type: 'connection', ttl, inboundTopicId: extraId, connectionId: Number(connectionId) }
        : null;
    default:
      return connectionId === undefined
        ? { type: 'registry', ttl, ...(extraId !== undefined && { metadataTopicId: extraId }) }
        : null;
  }
}

// ---------- operator ids ----------

export interface OperatorId {
  inboundTopicId: string;
  accountId: string;
}

export function formatOperatorId(inboundTopicId: string, accountId: string): string {
  return `${inboundTopicId}@${accountId}`;
}

const OPERATOR_ID = new RegExp(`^(${ID})@(${ID})$`);

export function parseOperatorId(value: string): OperatorId | null {
  const m = OPERATOR_ID.exec(value);
  return m ? { inboundTopicId: m[1]!, accountId: m[2]! } : null;
}

// ---------- operations we write ----------

/** One HCS-10 message ready to submit: the JSON body and the transaction memo HCS-10 requires for it. */
export interface Hcs10Outgoing {
  payload: Record<string, unknown>;
  body: string;
  memo: string;
}

/** A submitted operation, for callers that account for transactions (fees, audits, tests). */
export interface SubmittedOp {
  topicId: string;
  op: string;
  memo: string;
  seq: number;
  transactionId: string;
  /** The HIP-991 fee this submission paid to the topic, tinybars (a fee-gated inbound topic's connection request). */
  topicFeeTinybars?: number;
}

export class Hcs10MessageTooLargeError extends Hcs25Error {
  constructor(op: string, bytes: number) {
    super('HCS10_MESSAGE_TOO_LARGE', `HCS-10 ${op} is ${bytes} bytes; one HCS message holds ${MAX_HCS_MESSAGE_BYTES}`, {
      hint: 'put large content in an HCS-1 file and send its hcs://1/ reference',
    });
    this.name = 'Hcs10MessageTooLargeError';
  }
}

function outgoing(
  op: Hcs10OpName,
  on: Hcs10TopicKind,
  fields: Record<string, unknown>,
  m: string | undefined,
): Hcs10Outgoing {
  const payload: Record<string, unknown> = { p: 'hcs-10', op, ...fields, ...(m !== undefined && { m }) };
  const body = JSON.stringify(payload);
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > MAX_HCS_MESSAGE_BYTES) throw new Hcs10MessageTooLargeError(op, bytes);
  return { payload, body, memo: analyticsMemo(op, on) };
}

/** Requester → agent's inbound topic. Its sequence number becomes the connection id. */
export function connectionRequestOp(a: { operatorId: string; m?: string }): Hcs10Outgoing {
  return outgoing('connection_request', 'inbound', { operator_id: a.operatorId }, a.m);
}

/** Requester's own outbound record of a request; `operatorId` is the *target's* (HCS-10 says so). */
export function outboundConnectionRequestOp(a: {
  operatorId: string;
  outboundTopicId: string;
  connectionRequestId: number;
  m?: string;
}): Hcs10Outgoing {
  return outgoing(
    'connection_request',
    'outbound',
    { operator_id: a.operatorId, outbound_topic_id: a.outboundTopicId, connection_request_id: a.connectionRequestId },
    a.m,
  );
}

/** Agent → its own inbound topic, answering request `connectionId`. */
export function connectionCreatedOp(a: {
  connectionTopicId: string;
  connectedAccountId: string;
  operatorId: string;
  connectionId: number;
  m?: string;
}): Hcs10Outgoing {
  return outgoing(
    'connection_created',
    'inbound',
    {
      connection_topic_id: a.connectionTopicId,
      connected_account_id: a.connectedAccountId,
      operator_id: a.operatorId,
      connection_id: a.connectionId,
    },
    a.m,
  );
}

/** Agent's outbound record of a connection it created. */
export function outboundConnectionCreatedOp(a: {
  connectionTopicId: string;
  outboundTopicId: string;
  requestorOutboundTopicId: string;
  confirmedRequestId: number;
  connectionRequestId: number;
  operatorId: string;
  m?: string;
}): Hcs10Outgoing {
  return outgoing(
    'connection_created',
    'outbound',
    {
      connection_topic_id: a.connectionTopicId,
      outbound_topic_id: a.outboundTopicId,
      requestor_outbound_topic_id: a.requestorOutboundTopicId,
      confirmed_request_id: a.confirmedRequestId,
      connection_request_id: a.connectionRequestId,
      operator_id: a.operatorId,
    },
    a.m,
  );
}

/** A message on a connection topic; `data` is text or an `hcs://1/…` reference. */
export function messageOp(a: { operatorId: string; data: string; m?: string }): Hcs10Outgoing {
  return outgoing('message', 'connection', { operator_id: a.operatorId, data: a.data }, a.m);
}

/** Whether `data` fits inline in a message op, or must go to HCS-1 first. */
export function fitsInline(operatorId: string, data: string, m?: string): boolean {
  const body = JSON.stringify({
    p: 'hcs-10',
    op: 'message',
    operator_id: operatorId,
    data,
    ...(m !== undefined && { m }),
  });
  return Buffer.byteLength(body, 'utf8') <= HCS10_INLINE_LIMIT_BYTES;
}

export function closeConnectionOp(a: { operatorId: string; reason?: string; m?: string }): Hcs10Outgoing {
  return outgoing(
    'close_connection',
    'connection',
    { operator_id: a.operatorId, ...(a.reason !== undefined && { reason: a.reason }) },
    a.m,
  );
}

export function outboundConnectionClosedOp(a: {
  connectionTopicId: string;
  operatorId: string;
  closeMethod?: 'explicit' | 'admin_key' | 'submit_key';
  reason?: string;
  m?: string;
}): Hcs10Outgoing {
  return outgoing(
    'connection_closed',
    'outbound',
    {
      connection_topic_id: a.connectionTopicId,
      close_method: a.closeMethod ?? 'explicit',
      operator_id: a.operatorId,
      ...(a.reason !== undefined && { reason: a.reason }),
    },
    a.m,
  );
}

/** Registry `register` (current form plus the SDK's optional `inbound_topic_id`). */
export function registerOp(a: { accountId: string; inboundTopicId?: string; m?: string }): Hcs10Outgoing {
  return outgoing(
    'register',
    'registry',
    { account_id: a.accountId, ...(a.inboundTopicId !== undefined && { inbound_topic_id: a.inboundTopicId }) },
    a.m,
  );
}

// ---------- operations we read ----------

const entityId = z.string().regex(ENTITY_ID_PATTERN, 'must look like 0.0.1234');
const operatorIdField = z.string().regex(OPERATOR_ID, 'must be inboundTopicId@accountId');
const seqField = z.union([
  z.number().int().positive(),
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
]);
const memoField = z.string().max(500).optional();

export const connectionRequestSchema = z.object({
  p: z.literal('hcs-10'),
  op: z.literal('connection_request'),
  operator_id: operatorIdField,
  m: memoField,
});

export const connectionCreatedSchema = z.object({
  p: z.literal('hcs-10'),
  op: z.literal('connection_created'),
  connection_topic_id: entityId,
  connected_account_id: entityId.optional(),
  operator_id: operatorIdField.optional(),
  // Numbers per spec; some writers send the sequence number as a string.
  connection_id: seqField,
  m: memoField,
});

export const messageSchema = z.object({
  p: z.literal('hcs-10'),
  op: z.literal('message'),
  operator_id: operatorIdField,
  data: z.string(),
  m: memoField,
});

export const closeConnectionSchema = z.object({
  p: z.literal('hcs-10'),
  op: z.literal('close_connection'),
  operator_id: operatorIdField.optional(),
  reason: z.string().max(500).optional(),
  m: memoField,
});

export type ConnectionRequest = z.infer<typeof connectionRequestSchema>;
export type ConnectionCreated = z.infer<typeof connectionCreatedSchema>;
export type MessageOp = z.infer<typeof messageSchema>;
export type CloseConnection = z.infer<typeof closeConnectionSchema>;
export type IncomingOp = ConnectionRequest | ConnectionCreated | MessageOp | CloseConnection;

const INCOMING = {
  connection_request: connectionRequestSchema,
  connection_created: connectionCreatedSchema,
  message: messageSchema,
  close_connection: closeConnectionSchema,
} as const;

/** Largest message we parse; whole HCS messages can be up to 20 chunks. */
const MAX_INCOMING_BYTES = 20 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes of one topic message → a known HCS-10 operation, or why not. Never throws. */
export function parseIncoming(bytes: Uint8Array): { ok: true; op: IncomingOp } | { ok: false; reason: string } {
  if (bytes.length > MAX_INCOMING_BYTES) return { ok: false, reason: `message is ${bytes.length} bytes` };
  let doc: unknown;
  try {
    doc = JSON.parse(utf8.decode(bytes));
  } catch {
    return { ok: false, reason: 'not UTF-8 JSON' };
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return { ok: false, reason: 'not a JSON object' };
  const { p, op } = doc as { p?: unknown; op?: unknown };
  if (p !== 'hcs-10') return { ok: false, reason: 'not an hcs-10 message' };
  // Own properties only: an op of "constructor" or "toString" must not find Object's.
  const schema =
    typeof op === 'string' && Object.hasOwn(INCOMING, op) ? INCOMING[op as keyof typeof INCOMING] : undefined;
  if (schema === undefined) return { ok: false, reason: `op ${JSON.stringify(op)} is not handled` };
  const parsed = schema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: `invalid ${String(op)}: ${issue ? `${issue.path.join('.')} ${issue.message}` : 'schema'}`,
    };
  }
  return { ok: true, op: parsed.data };
}

/** The topic of an `hcs://1/<topic>` reference, or null. */
export function hcs1TopicOf(data: string): string | null {
  const hrl = parseHrl(data);
  return hrl?.standard === 1 ? hrl.topicId : null;
}
