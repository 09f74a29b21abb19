/** Receipts and records in HAPI form, built from the ledger's TxRecord. */
import type { proto } from '@hashgraph/proto';
import { Status, accountIdProto, toLong, topicIdProto, tsToProto, txIdToProto, NS_PER_S } from './codec.js';
import { EXCHANGE_RATE } from './fees.js';
import { RUNNING_HASH_VERSION } from './running-hash.js';
import type { TxRecord } from './state.js';

export const RECEIPT_TTL_NS = 180n * NS_PER_S;

export function exchangeRateSet(ns: bigint): proto.IExchangeRateSet {
  // Rates expire on the next whole hour, like the network's exchange-rate file.
  const hour = 3600n * NS_PER_S;
  const expiry = (ns / hour + 1n) * hour;
  const rate = (expirationNs: bigint): proto.IExchangeRate => ({
    hbarEquiv: EXCHANGE_RATE.hbarEquiv,
    centEquiv: EXCHANGE_RATE.centEquiv,
    expirationTime: { seconds: toLong(expirationNs / NS_PER_S) },
  });
  return { currentRate: rate(expiry), nextRate: rate(expiry + hour) };
}

export function receiptProto(r: TxRecord): proto.ITransactionReceipt {
  const receipt: proto.ITransactionReceipt = { status: r.status, exchangeRate: exchangeRateSet(r.ns) };
  if (r.entity && r.status === Status.SUCCESS) {
    if (r.type === 'consensusCreateTopic') receipt.topicID = topicIdProto(r.entity.num);
    if (r.type === 'cryptoCreateAccount') receipt.accountID = accountIdProto(r.entity.num);
  }
  if (r.topicSeq !== undefined && r.topicRunningHash) {
    receipt.topicSequenceNumber = toLong(r.topicSeq);
    receipt.topicRunningHash = r.topicRunningHash;
    receipt.topicRunningHashVersion = toLong(RUNNING_HASH_VERSION);
  }
  return receipt;
}

export function recordProto(r: TxRecord): proto.ITransactionRecord {
  return {
    receipt: receiptProto(r),
    transactionHash: r.hash,
    consensusTimestamp: tsToProto(r.ns),
    transactionID: txIdToProto(r.txId),
    memo: r.memo,
    transactionFee: toLong(r.fee),
    transferList: {
      accountAmounts: r.transfers.map((t) => ({ accountID: accountIdProto(t.account), amount: toLong(t.amount) })),
    },
  };
}

/** Upper-case mirror transaction names, e.g. `CONSENSUSSUBMITMESSAGE`. */
export const MIRROR_NAMES: Record<string, string> = {
  consensusCreateTopic: 'CONSENSUSCREATETOPIC',
  consensusUpdateTopic: 'CONSENSUSUPDATETOPIC',
  consensusDeleteTopic: 'CONSENSUSDELETETOPIC',
  consensusSubmitMessage: 'CONSENSUSSUBMITMESSAGE',
  cryptoCreateAccount: 'CRYPTOCREATEACCOUNT',
  cryptoUpdateAccount: 'CRYPTOUPDATEACCOUNT',
  cryptoTransfer: 'CRYPTOTRANSFER',
};
