/**
 * Consensus Service handlers: create / update / delete topic and submit message, with the node's rules for
 * admin, submit and auto-renew account signatures, chunk info, message size, HIP-991 HBAR fixed fees,
 * sequence numbers and the v3 running hash.
 */
import type { proto } from '@hashgraph/proto';
import {
  Status,
  accountNum,
  longToBigInt,
  longToNumber,
  topicNum,
  tsFromProto,
  txIdFromProto,
  txIdKey,
  NS_PER_S,
  SHARD,
  REALM,
} from './codec.js';
import type { HandleContext, TransactionHandler } from './context.js';
import { isEmptyKeyList, isSatisfied, isValidKey } from './keys.js';
import { nextRunningHash } from './running-hash.js';
import type { FixedFee, Topic, TopicMessage } from './state.js';

export const MAX_MESSAGE_BYTES = 1024;
export const MAX_MEMO_BYTES = 100;
const MIN_AUTO_RENEW_S = 6_999_999;
const MAX_AUTO_RENEW_S = 8_000_001;
const MAX_CUSTOM_FEES = 10;
const MAX_FEE_EXEMPT_KEYS = 10;

/** Memo rules shared by every entity: at most 100 UTF-8 bytes, no NUL. */
export function memoStatus(memo: string | null | undefined): number {
  if (!memo) return Status.OK;
  if (Buffer.byteLength(memo, 'utf8') > MAX_MEMO_BYTES) return Status.MEMO_TOO_LONG;
  if (memo.includes('\0')) return Status.INVALID_ZERO_BYTE_IN_STRING;
  return Status.OK;
}

function liveTopic(ctx: HandleContext, id: proto.ITopicID | null | undefined): Topic | undefined {
  const num = topicNum(id);
  const t = num == null ? undefined : ctx.state.topics.get(num);
  return t && !t.deleted ? t : undefined;
}

function parseCustomFees(ctx: HandleContext, fees: proto.IFixedCustomFee[]): FixedFee[] | number {
  if (fees.length > MAX_CUSTOM_FEES) return Status.CUSTOM_FEES_LIST_TOO_LONG;
  const out: FixedFee[] = [];
  for (const f of fees) {
    const amount = longToBigInt(f.fixedFee?.amount);
    if (amount <= 0n) return Status.CUSTOM_FEE_MUST_BE_POSITIVE;
    const collector = accountNum(f.feeCollectorAccountId);
    if (collector == null || !ctx.state.accounts.has(collector)) return Status.INVALID_CUSTOM_FEE_COLLECTOR;
    // No token service here, so any denominating token is unknown.
    if (f.fixedFee?.denominatingTokenId) return Status.INVALID_TOKEN_ID_IN_CUSTOM_FEES;
    out.push({ amount, collector });
  }
  return out;
}

function checkFeeExemptKeys(keys: proto.IKey[]): number {
  if (keys.length > MAX_FEE_EXEMPT_KEYS) return Status.MAX_ENTRIES_FOR_FEE_EXEMPT_KEY_LIST_EXCEEDED;
  return keys.every((k) => isValidKey(k)) ? Status.OK : Status.INVALID_KEY_IN_FEE_EXEMPT_KEY_LIST;
}

function autoRenewStatus(seconds: number): number {
  return seconds < MIN_AUTO_RENEW_S || seconds > MAX_AUTO_RENEW_S ? Status.AUTORENEW_DURATION_NOT_IN_RANGE : Status.OK;
}

/** An auto-renew account must exist and sign; 0.0.0 clears it on update. */
function autoRenewAccountStatus(ctx: HandleContext, id: proto.IAccountID): number {
  const num = accountNum(id);
  const acct = num == null ? undefined : ctx.state.accounts.get(num);
  if (!acct || acct.deleted) return Status.INVALID_AUTORENEW_ACCOUNT;
  return isSatisfied(acct.key, ctx.tx.sigs) ? Status.OK : Status.INVALID_SIGNATURE;
}

export const createTopic: TransactionHandler = {
  pureCheck(body) {
    return memoStatus(body.consensusCreateTopic?.memo);
  },
  handle(ctx) {
    const b = ctx.tx.body.consensusCreateTopic ?? {};
    for (const k of [b.adminKey, b.submitKey, b.feeScheduleKey])
      if (k && !isEmptyKeyList(k) && !isValidKey(k)) return Status.BAD_ENCODING;
    if (!b.autoRenewPeriod) return Status.INVALID_RENEWAL_PERIOD;
    const renew = longToNumber(b.autoRenewPeriod.seconds);
    const renewStatus = autoRenewStatus(renew);
    if (renewStatus !== Status.OK) return renewStatus;
    const exempt = b.feeExemptKeyList ?? [];
    const exemptStatus = checkFeeExemptKeys(exempt);
    if (exemptStatus !== Status.OK) return exemptStatus;
    const fees = parseCustomFees(ctx, b.customFees ?? []);
    if (typeof fees === 'number') return fees;
    let autoRenewAccount: number | undefined;
    if (b.autoRenewAccount && longToNumber(b.autoRenewAccount.accountNum) !== 0) {
      const s = autoRenewAccountStatus(ctx, b.autoRenewAccount);
      if (s !== Status.OK) return s;
      autoRenewAccount = accountNum(b.autoRenewAccount) ?? undefined;
    }
    const admin = b.adminKey && !isEmptyKeyList(b.adminKey) ? b.adminKey : undefined;
    if (admin && !isSatisfied(admin, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
    const num = ctx.state.allocateEntity();
    const topic: Topic = {
      num,
      memo: b.memo ?? '',
      adminKey: admin,
      submitKey: b.submitKey && !isEmptyKeyList(b.submitKey) ? b.submitKey : undefined,
      feeScheduleKey: b.feeScheduleKey && !isEmptyKeyList(b.feeScheduleKey) ? b.feeScheduleKey : undefined,
      feeExemptKeys: exempt,
      customFees: fees,
      autoRenewPeriod: renew,
      autoRenewAccount,
      expirySeconds: Number(ctx.ns / NS_PER_S) + renew,
      createdNs: ctx.ns,
      createdWallMs: ctx.wallMs,
      deleted: false,
      sequenceNumber: 0,
      runningHash: Buffer.alloc(48),
      messages: [],
    };
    ctx.state.addTopic(topic);
    ctx.changed.topics.add(num);
    ctx.result.entity = { kind: 'topic', num };
    return Status.SUCCESS;
  },
};

export const updateTopic: TransactionHandler = {
  pureCheck(body) {
    return memoStatus(body.consensusUpdateTopic?.memo?.value);
  },
  handle(ctx) {
    const b = ctx.tx.body.consensusUpdateTopic ?? {};
    const topic = liveTopic(ctx, b.topicID);
    if (!topic) return Status.INVALID_TOPIC_ID;
    const onlyExtendsExpiry =
      b.expirationTime != null &&
      b.memo == null &&
      b.adminKey == null &&
      b.submitKey == null &&
      b.autoRenewPeriod == null &&
      b.autoRenewAccount == null &&
      b.feeScheduleKey == null &&
      b.feeExemptKeyList == null &&
      b.customFees == null;
    if (!onlyExtendsExpiry) {
      if (!topic.adminKey) {
        // Without an admin key a topic is immutable, except that anyone may edit its fees with the fee schedule key.
        const feeOnly =
          b.customFees != null &&
          b.memo == null &&
          b.adminKey == null &&
          b.submitKey == null &&
          b.autoRenewPeriod == null &&
          b.autoRenewAccount == null &&
          b.feeExemptKeyList == null &&
          b.expirationTime == null;
        if (!feeOnly) return Status.UNAUTHORIZED;
      } else if (!isSatisfied(topic.adminKey, ctx.tx.sigs)) {
        return Status.INVALID_SIGNATURE;
      }
    }
    for (const k of [b.adminKey, b.submitKey, b.feeScheduleKey])
      if (k && !isEmptyKeyList(k) && !isValidKey(k)) return Status.BAD_ENCODING;
    if (b.adminKey && !isEmptyKeyList(b.adminKey) && !isSatisfied(b.adminKey, ctx.tx.sigs))
      return Status.INVALID_SIGNATURE;
    let expiry = topic.expirySeconds;
    if (b.expirationTime) {
      const e = Number(tsFromProto(b.expirationTime) / NS_PER_S);
      if (e < topic.expirySeconds) return Status.EXPIRATION_REDUCTION_NOT_ALLOWED;
      expiry = e;
    }
    let renew = topic.autoRenewPeriod;
    if (b.autoRenewPeriod) {
      renew = longToNumber(b.autoRenewPeriod.seconds);
      const s = autoRenewStatus(renew);
      if (s !== Status.OK) return s;
    }
    let autoRenewAccount = topic.autoRenewAccount;
    if (b.autoRenewAccount) {
      if (longToNumber(b.autoRenewAccount.accountNum) === 0) autoRenewAccount = undefined;
      else {
        const s = autoRenewAccountStatus(ctx, b.autoRenewAccount);
        if (s !== Status.OK) return s;
        autoRenewAccount = accountNum(b.autoRenewAccount) ?? undefined;
      }
    }
    let fees = topic.customFees;
    if (b.customFees) {
      if (!topic.feeScheduleKey) return Status.FEE_SCHEDULE_KEY_NOT_SET;
      if (!isSatisfied(topic.feeScheduleKey, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
      const parsed = parseCustomFees(ctx, b.customFees.fees ?? []);
      if (typeof parsed === 'number') return parsed;
      fees = parsed;
    }
    let exempt = topic.feeExemptKeys;
    if (b.feeExemptKeyList) {
      exempt = b.feeExemptKeyList.keys ?? [];
      const s = checkFeeExemptKeys(exempt);
      if (s !== Status.OK) return s;
    }
    if (b.memo) topic.memo = b.memo.value ?? '';
    if (b.adminKey) topic.adminKey = isEmptyKeyList(b.adminKey) ? undefined : b.adminKey;
    if (b.submitKey) topic.submitKey = isEmptyKeyList(b.submitKey) ? undefined : b.submitKey;
    if (b.feeScheduleKey) topic.feeScheduleKey = isEmptyKeyList(b.feeScheduleKey) ? undefined : b.feeScheduleKey;
    topic.expirySeconds = expiry;
    topic.autoRenewPeriod = renew;
    topic.autoRenewAccount = autoRenewAccount;
    topic.customFees = fees;
    topic.feeExemptKeys = exempt;
    ctx.changed.topics.add(topic.num);
    ctx.result.entity = { kind: 'topic', num: topic.num };
    return Status.SUCCESS;
  },
};

export const deleteTopic: TransactionHandler = {
  handle(ctx) {
    const topic = liveTopic(ctx, ctx.tx.body.consensusDeleteTopic?.topicID);
    if (!topic) return Status.INVALID_TOPIC_ID;
    if (!topic.adminKey) return Status.UNAUTHORIZED;
    if (!isSatisfied(topic.adminKey, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
    topic.deleted = true;
    ctx.changed.topics.add(topic.num);
    ctx.result.entity = { kind: 'topic', num: topic.num };
    return Status.SUCCESS;
  },
};

/** HIP-991: HBAR fixed fees, unless a fee-exempt key signed; bounded by the body's maxCustomFees when given. */
function chargeCustomFees(ctx: HandleContext, topic: Topic): number {
  if (topic.customFees.length === 0) return Status.OK;
  const payer = ctx.tx.txId.payer;
  if (topic.feeExemptKeys.some((k) => isSatisfied(k, ctx.tx.sigs))) return Status.OK;
  const due = topic.customFees.filter((f) => f.collector !== payer);
  const total = due.reduce((s, f) => s + f.amount, 0n);
  const limits = ctx.tx.body.maxCustomFees ?? [];
  if (limits.length > 0) {
    const hbarLimit = limits
      .filter((l) => accountNum(l.accountId) === payer)
      .flatMap((l) => l.fees ?? [])
      .filter((f) => !f.denominatingTokenId)
      .reduce((s, f) => s + longToBigInt(f.amount), 0n);
    if (total > hbarLimit) return Status.MAX_CUSTOM_FEE_LIMIT_EXCEEDED;
  }
  const acct = ctx.state.accounts.get(payer);
  if (!acct || acct.balance < total) return Status.INSUFFICIENT_PAYER_BALANCE_FOR_CUSTOM_FEE;
  for (const f of due) ctx.move(payer, f.collector, f.amount);
  return Status.OK;
}

export const submitMessage: TransactionHandler = {
  pureCheck(body) {
    const b = body.consensusSubmitMessage;
    if (!b?.topicID) return Status.INVALID_TOPIC_ID;
    const len = b.message?.length ?? 0;
    if (len === 0) return Status.INVALID_TOPIC_MESSAGE;
    if (len > MAX_MESSAGE_BYTES) return Status.MESSAGE_SIZE_TOO_LARGE;
    return Status.OK;
  },
  handle(ctx) {
    const b = ctx.tx.body.consensusSubmitMessage ?? {};
    const topic = liveTopic(ctx, b.topicID);
    if (!topic) return Status.INVALID_TOPIC_ID;
    if (topic.submitKey && !isSatisfied(topic.submitKey, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
    let chunk: TopicMessage['chunk'] = null;
    if (b.chunkInfo) {
      const total = b.chunkInfo.total ?? 0;
      const number = b.chunkInfo.number ?? 0;
      if (number < 1 || number > total) return Status.INVALID_CHUNK_NUMBER;
      const initial = txIdFromProto(b.chunkInfo.initialTransactionID);
      if (!initial || initial.payer !== ctx.tx.txId.payer) return Status.INVALID_CHUNK_TRANSACTION_ID;
      if (number === 1 && txIdKey(initial) !== ctx.tx.key) return Status.INVALID_CHUNK_TRANSACTION_ID;
      chunk = { initialTxId: initial, number, total };
    }
    const feeStatus = chargeCustomFees(ctx, topic);
    if (feeStatus !== Status.OK) return feeStatus;
    const message = Buffer.from(b.message ?? []);
    const seq = topic.sequenceNumber + 1;
    const runningHash = nextRunningHash({
      previous: topic.runningHash,
      payer: { shard: SHARD, realm: REALM, num: ctx.tx.txId.payer },
      topic: { shard: SHARD, realm: REALM, num: topic.num },
      consensusSeconds: ctx.ns / NS_PER_S,
      consensusNanos: Number(ctx.ns % NS_PER_S),
      sequenceNumber: seq,
      message,
    });
    topic.sequenceNumber = seq;
    topic.runningHash = runningHash;
    const m: TopicMessage = {
      topic: topic.num,
      seq,
      ns: ctx.ns,
      wallMs: ctx.wallMs,
      message,
      runningHash,
      payer: ctx.tx.txId.payer,
      chunk,
    };
    topic.messages.push(m);
    ctx.changed.messages.push(m);
    ctx.result.topicSeq = seq;
    ctx.result.topicRunningHash = runningHash;
    return Status.SUCCESS;
  },
};
