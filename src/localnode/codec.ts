/**
 * Small conversions between protobuf values (protobufjs Longs, Timestamps, entity ids) and the emulator's
 * internal forms: entity numbers (shard 0, realm 0 only) and consensus times as bigint nanoseconds.
 */
import { proto } from '@hashgraph/proto';

/** What protobufjs accepts and yields for 64-bit fields; the proto typings call it Long. */
export type LongValue = NonNullable<proto.ITimestamp['seconds']>;

interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

export const NS_PER_S = 1_000_000_000n;
export const SHARD = 0;
export const REALM = 0;

export function longToBigInt(v: LongValue | number | null | undefined): bigint {
  if (v == null) return 0n;
  if (typeof v === 'number') return BigInt(v);
  const l = v as unknown as LongLike;
  const u = (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
  return l.unsigned ? u : BigInt.asIntN(64, u);
}

export function longToNumber(v: LongValue | number | null | undefined): number {
  if (v == null) return 0;
  if (typeof v === 'number') return v;
  return Number(longToBigInt(v));
}

/** protobufjs' writer only reads `low`/`high`, so a plain object stands in for a Long (no dependency on `long`). */
export function toLong(v: bigint | number): LongValue {
  const b = BigInt.asUintN(64, typeof v === 'number' ? BigInt(Math.trunc(v)) : v);
  return { low: Number(b & 0xffffffffn) | 0, high: Number(b >> 32n) | 0, unsigned: false } as unknown as LongValue;
}

export function tsFromProto(t: proto.ITimestamp | null | undefined): bigint {
  if (!t) return 0n;
  return longToBigInt(t.seconds) * NS_PER_S + BigInt(t.nanos ?? 0);
}

export function tsToProto(ns: bigint): proto.ITimestamp {
  return { seconds: toLong(ns / NS_PER_S), nanos: Number(ns % NS_PER_S) };
}

/** Mirror-node form `"1795254521.426000000"`. */
export function tsString(ns: bigint): string {
  return `${ns / NS_PER_S}.${(ns % NS_PER_S).toString().padStart(9, '0')}`;
}

/** Parses `sec[.nanos]` as the mirror node does (nanos right-padded to 9 digits); null when malformed. */
export function parseTsString(s: string): bigint | null {
  const m = /^(\d{1,17})(?:\.(\d{1,9}))?$/.exec(s);
  if (!m) return null;
  return BigInt(m[1] ?? '0') * NS_PER_S + BigInt((m[2] ?? '').padEnd(9, '0'));
}

export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

export function entityId(num: number): string {
  return `${SHARD}.${REALM}.${num}`;
}

/** Accepts `0.0.N`, `0.N` and `N` like the mirror node; only shard 0 realm 0 exist here. */
export function parseEntityId(s: string): number | null {
  const m = /^(?:(\d{1,4})\.)?(?:(\d{1,5})\.)?(\d{1,12})$/.exec(s);
  if (!m) return null;
  if (Number(m[1] ?? 0) !== SHARD || Number(m[2] ?? 0) !== REALM) return null;
  const n = Number(m[3]);
  return Number.isSafeInteger(n) ? n : null;
}

function entityNum(
  shard: LongValue | null | undefined,
  realm: LongValue | null | undefined,
  num: LongValue | null | undefined,
): number | null {
  if (longToNumber(shard) !== SHARD || longToNumber(realm) !== REALM) return null;
  return longToNumber(num);
}

/** Account number of a numeric AccountID; null for aliases or foreign shards/realms. */
export function accountNum(a: proto.IAccountID | null | undefined): number | null {
  if (!a || a.accountNum == null) return null;
  return entityNum(a.shardNum, a.realmNum, a.accountNum);
}

export function topicNum(t: proto.ITopicID | null | undefined): number | null {
  if (!t) return null;
  return entityNum(t.shardNum, t.realmNum, t.topicNum);
}

export function accountIdProto(num: number): proto.IAccountID {
  return { shardNum: toLong(SHARD), realmNum: toLong(REALM), accountNum: toLong(num) };
}

export function topicIdProto(num: number): proto.ITopicID {
  return { shardNum: toLong(SHARD), realmNum: toLong(REALM), topicNum: toLong(num) };
}

export interface TxId {
  payer: number;
  validStartNs: bigint;
  scheduled: boolean;
  nonce: number;
}

export function txIdFromProto(t: proto.ITransactionID | null | undefined): TxId | null {
  if (!t?.transactionValidStart) return null;
  const payer = accountNum(t.accountID);
  if (payer == null) return null;
  return {
    payer,
    validStartNs: tsFromProto(t.transactionValidStart),
    scheduled: t.scheduled === true,
    nonce: t.nonce ?? 0,
  };
}

export function txIdToProto(id: TxId): proto.ITransactionID {
  return {
    accountID: accountIdProto(id.payer),
    transactionValidStart: tsToProto(id.validStartNs),
    ...(id.scheduled ? { scheduled: true } : {}),
    ...(id.nonce ? { nonce: id.nonce } : {}),
  };
}

/** Map key for a transaction id; the same text as the SDK's `TransactionId.toString()` for the plain case. */
export function txIdKey(id: TxId): string {
  const secs = id.validStartNs / NS_PER_S;
  const nanos = (id.validStartNs % NS_PER_S).toString().padStart(9, '0');
  return `0.0.${id.payer}@${secs}.${nanos}${id.scheduled ? '?scheduled' : ''}${id.nonce ? `/${id.nonce}` : ''}`;
}

/** Mirror REST form `0.0.8-1234567890-000000006`. */
export function txIdMirror(id: TxId): string {
  const secs = id.validStartNs / NS_PER_S;
  const nanos = (id.validStartNs % NS_PER_S).toString().padStart(9, '0');
  return `0.0.${id.payer}-${secs}-${nanos}`;
}

/** Parses both `0.0.8-123-000000006` (mirror) and `0.0.8@123.000000006` (SDK) forms. */
export function parseTxId(s: string): TxId | null {
  const m = /^(\d+\.\d+\.\d+)(?:-(\d{1,19})-(\d{1,9})|@(\d{1,19})\.(\d{1,9}))$/.exec(s);
  if (!m) return null;
  const payer = parseEntityId(m[1] ?? '');
  if (payer == null) return null;
  const secs = BigInt(m[2] ?? m[4] ?? '0');
  const nanos = BigInt(m[3] ?? m[5] ?? '0');
  if (nanos >= NS_PER_S) return null;
  return { payer, validStartNs: secs * NS_PER_S + nanos, scheduled: false, nonce: 0 };
}

const STATUS_NAMES = proto.ResponseCodeEnum as unknown as Record<string, number> & Record<number, string>;

export function statusCode(name: string): number | undefined {
  const v = STATUS_NAMES[name];
  return typeof v === 'number' ? v : undefined;
}

export function statusName(code: number): string {
  return STATUS_NAMES[code] ?? `STATUS_${code}`;
}

export const Status = proto.ResponseCodeEnum;
