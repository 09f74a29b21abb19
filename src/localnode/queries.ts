/**
 * HAPI queries. Receipts and balances are free (their payment, an unsigned 0 ℏ transfer, is ignored). Paid
 * queries answer COST_ANSWER with the cost, and ANSWER_ONLY only with a payment that is a CryptoTransfer of at
 * least the cost to the node, which passes precheck (payer signature included) and then goes to consensus.
 */
import { proto } from '@hashgraph/proto';
import {
  Status,
  accountIdProto,
  accountNum,
  longToBigInt,
  nowNs,
  toLong,
  topicIdProto,
  topicNum,
  tsToProto,
  txIdFromProto,
  txIdKey,
  NS_PER_S,
} from './codec.js';
import { queryCost } from './fees.js';
import { NODE_ACCOUNT, type Ledger } from './ledger.js';
import { resolveAccount } from './accounts.js';
import { RECEIPT_TTL_NS, receiptProto, recordProto } from './records.js';
import { decodeTransaction } from './transaction.js';

/** Query oneof name → Response oneof name, where they differ. */
const RESPONSE_FIELD: Record<string, string> = {
  contractGetBytecode: 'contractGetBytecodeResponse',
  ContractGetRecords: 'contractGetRecordsResponse',
};

const LOCAL_LEDGER_ID = new Uint8Array([3]);
const COST_ANSWER = proto.ResponseType.COST_ANSWER;
const COST_ANSWER_STATE_PROOF = proto.ResponseType.COST_ANSWER_STATE_PROOF;

type Answer = { status: number; body?: Record<string, unknown> };
type QueryBody = { header?: proto.IQueryHeader | null } & Record<string, unknown>;

function respond(field: string, header: proto.IResponseHeader, body: Record<string, unknown> = {}): Uint8Array {
  return proto.Response.encode({ [field]: { header, ...body } } as proto.IResponse).finish();
}

/** A Response carrying only a precheck code, for faults and unsupported methods; empty when undecodable. */
export function queryStatusResponse(raw: Uint8Array, status: number): Uint8Array {
  try {
    const q = proto.Query.decode(raw);
    const field = q.query;
    if (!field) return proto.Response.encode({}).finish();
    return respond(RESPONSE_FIELD[field] ?? field, { nodeTransactionPrecheckCode: status });
  } catch {
    return proto.Response.encode({}).finish();
  }
}

export class QueryEngine {
  /** `node`: the consensus node answering, which query payments must pay. Receipts and records come from the shared ledger. */
  constructor(
    private readonly ledger: Ledger,
    private readonly node: number = NODE_ACCOUNT,
  ) {}

  answer(raw: Uint8Array, implemented: boolean): Uint8Array {
    let q: proto.Query;
    try {
      q = proto.Query.decode(raw);
    } catch {
      return proto.Response.encode({}).finish();
    }
    const field = q.query;
    if (!field) return proto.Response.encode({}).finish();
    const responseField = RESPONSE_FIELD[field] ?? field;
    const body = (q as unknown as Record<string, QueryBody>)[field] ?? {};
    const responseType = body.header?.responseType ?? proto.ResponseType.ANSWER_ONLY;
    const header = (status: number, cost = 0n): proto.IResponseHeader => ({
      nodeTransactionPrecheckCode: status,
      responseType,
      ...(cost > 0n ? { cost: toLong(cost) } : {}),
    });
    const build = implemented ? this.builders[field] : undefined;
    if (!build) return respond(responseField, header(Status.NOT_SUPPORTED));
    const result = build(body);
    if (result.status !== Status.OK) return respond(responseField, header(result.status));
    const cost = queryCost(field);
    if (cost > 0n) {
      if (responseType === COST_ANSWER || responseType === COST_ANSWER_STATE_PROOF)
        return respond(responseField, header(Status.OK, cost));
      const paid = this.takePayment(body.header?.payment, cost);
      if (paid !== Status.OK) return respond(responseField, header(paid));
    }
    return respond(responseField, header(Status.OK, cost), result.body);
  }

  private takePayment(payment: proto.ITransaction | null | undefined, cost: bigint): number {
    if (!payment) return Status.INSUFFICIENT_TX_FEE;
    const decoded = decodeTransaction(proto.Transaction.encode(payment).finish());
    if (!decoded.ok) return decoded.status;
    const tx = decoded.tx;
    if (tx.kind !== 'cryptoTransfer') return Status.INSUFFICIENT_TX_FEE;
    const toNode = (tx.body.cryptoTransfer?.transfers?.accountAmounts ?? [])
      .filter((a) => accountNum(a.accountID) === this.node)
      .reduce((s, a) => s + longToBigInt(a.amount), 0n);
    if (toNode < cost) return Status.INSUFFICIENT_TX_FEE;
    return this.ledger.submit(tx, this.node);
  }

  private readonly builders: Record<string, (b: QueryBody) => Answer> = {
    transactionGetReceipt: (b) => {
      const id = txIdFromProto((b as proto.ITransactionGetReceiptQuery).transactionID);
      if (!id) return { status: Status.INVALID_TRANSACTION_ID };
      const key = txIdKey(id);
      if (this.ledger.isPending(key)) return { status: Status.OK, body: { receipt: { status: Status.UNKNOWN } } };
      const r = this.ledger.state.records.get(key);
      if (!r || r.ns + RECEIPT_TTL_NS < nowNs()) return { status: Status.RECEIPT_NOT_FOUND };
      return { status: Status.OK, body: { receipt: receiptProto(r) } };
    },
    transactionGetRecord: (b) => {
      const id = txIdFromProto((b as proto.ITransactionGetRecordQuery).transactionID);
      if (!id) return { status: Status.INVALID_TRANSACTION_ID };
      const r = this.ledger.state.records.get(txIdKey(id));
      if (!r || r.ns + RECEIPT_TTL_NS < nowNs()) return { status: Status.RECORD_NOT_FOUND };
      return { status: Status.OK, body: { transactionRecord: recordProto(r) } };
    },
    cryptogetAccountBalance: (b) => {
      const q = b as proto.ICryptoGetAccountBalanceQuery;
      if (q.contractID) return { status: Status.INVALID_CONTRACT_ID };
      const num = resolveAccount(this.ledger.state, q.accountID);
      const acct = num == null ? undefined : this.ledger.state.accounts.get(num);
      if (!acct) return { status: Status.INVALID_ACCOUNT_ID };
      if (acct.deleted) return { status: Status.ACCOUNT_DELETED };
      return { status: Status.OK, body: { accountID: accountIdProto(acct.num), balance: toLong(acct.balance) } };
    },
    cryptoGetInfo: (b) => {
      const num = resolveAccount(this.ledger.state, (b as proto.ICryptoGetInfoQuery).accountID);
      const acct = num == null ? undefined : this.ledger.state.accounts.get(num);
      if (!acct) return { status: Status.INVALID_ACCOUNT_ID };
      if (acct.deleted) return { status: Status.ACCOUNT_DELETED };
      const accountInfo: proto.CryptoGetInfoResponse.IAccountInfo = {
        accountID: accountIdProto(acct.num),
        contractAccountID: (acct.evmAlias ?? longZeroAddress(acct.num)).toString('hex'),
        deleted: acct.deleted,
        key: acct.key,
        balance: toLong(acct.balance),
        receiverSigRequired: acct.receiverSigRequired,
        expirationTime: tsToProto(BigInt(acct.expirySeconds) * NS_PER_S),
        autoRenewPeriod: { seconds: toLong(acct.autoRenewPeriod) },
        memo: acct.memo,
        maxAutomaticTokenAssociations: acct.maxAutoAssociations,
        ...(acct.evmAlias ? { alias: acct.evmAlias } : {}),
        ledgerId: LOCAL_LEDGER_ID,
        ethereumNonce: toLong(0),
        stakingInfo: { declineReward: acct.declineReward },
      };
      return { status: Status.OK, body: { accountInfo } };
    },
    consensusGetTopicInfo: (b) => {
      const num = topicNum((b as proto.IConsensusGetTopicInfoQuery).topicID);
      const t = num == null ? undefined : this.ledger.state.topics.get(num);
      if (!t || t.deleted) return { status: Status.INVALID_TOPIC_ID };
      const topicInfo: proto.IConsensusTopicInfo = {
        memo: t.memo,
        runningHash: t.runningHash,
        sequenceNumber: toLong(t.sequenceNumber),
        expirationTime: tsToProto(BigInt(t.expirySeconds) * NS_PER_S),
        autoRenewPeriod: { seconds: toLong(t.autoRenewPeriod) },
        ledgerId: LOCAL_LEDGER_ID,
        feeExemptKeyList: t.feeExemptKeys,
        customFees: t.customFees.map((f) => ({
          fixedFee: { amount: toLong(f.amount) },
          feeCollectorAccountId: accountIdProto(f.collector),
        })),
        ...(t.adminKey ? { adminKey: t.adminKey } : {}),
        ...(t.submitKey ? { submitKey: t.submitKey } : {}),
        ...(t.feeScheduleKey ? { feeScheduleKey: t.feeScheduleKey } : {}),
        ...(t.autoRenewAccount !== undefined ? { autoRenewAccount: accountIdProto(t.autoRenewAccount) } : {}),
      };
      return { status: Status.OK, body: { topicID: topicIdProto(t.num), topicInfo } };
    },
  };
}

/** `0x000…0<num>`: the EVM address of an account without an alias. */
export function longZeroAddress(num: number): Buffer {
  const b = Buffer.alloc(20);
  b.writeBigUInt64BE(BigInt(num), 12);
  return b;
}
