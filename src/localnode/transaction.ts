/**
 * Decoding of a wire `Transaction` into what precheck and consensus need. The SDK sends
 * `Transaction{signedTransactionBytes}`; the deprecated `bodyBytes`+`sigMap` form is accepted too.
 * The transaction hash is SHA-384 of signedTransactionBytes (or of the whole Transaction in the old form),
 * which is what the SDK computes client-side.
 */
import { createHash } from 'node:crypto';
import { proto } from '@hashgraph/proto';
import { Status, accountNum, longToBigInt, longToNumber, txIdFromProto, txIdKey, type TxId } from './codec.js';
import { SignatureSet } from './keys.js';

export const MAX_TRANSACTION_BYTES = 6144;

export interface ParsedTx {
  body: proto.TransactionBody;
  /** Body data case, e.g. `consensusSubmitMessage`. */
  kind: string;
  txId: TxId;
  key: string;
  node: number | null;
  validDurationS: number;
  maxFee: bigint;
  hash: Buffer;
  sigs: SignatureSet;
  size: number;
}

export type Decoded = { ok: true; tx: ParsedTx } | { ok: false; status: number };

export function decodeTransaction(raw: Uint8Array): Decoded {
  if (raw.length > MAX_TRANSACTION_BYTES) return { ok: false, status: Status.TRANSACTION_OVERSIZE };
  let bodyBytes: Uint8Array;
  let sigPairs: proto.ISignaturePair[];
  let hashed: Uint8Array;
  try {
    const t = proto.Transaction.decode(raw);
    if (t.signedTransactionBytes?.length) {
      const st = proto.SignedTransaction.decode(t.signedTransactionBytes);
      bodyBytes = st.bodyBytes;
      sigPairs = st.sigMap?.sigPair ?? [];
      hashed = t.signedTransactionBytes;
    } else if (t.bodyBytes?.length) {
      bodyBytes = t.bodyBytes;
      sigPairs = t.sigMap?.sigPair ?? [];
      hashed = raw;
    } else {
      return { ok: false, status: Status.INVALID_TRANSACTION };
    }
  } catch {
    return { ok: false, status: Status.INVALID_TRANSACTION };
  }
  let body: proto.TransactionBody;
  try {
    body = proto.TransactionBody.decode(bodyBytes);
  } catch {
    return { ok: false, status: Status.INVALID_TRANSACTION_BODY };
  }
  const kind = body.data;
  if (!kind) return { ok: false, status: Status.INVALID_TRANSACTION_BODY };
  const txId = txIdFromProto(body.transactionID);
  if (!txId) return { ok: false, status: Status.INVALID_TRANSACTION_ID };
  return {
    ok: true,
    tx: {
      body,
      kind,
      txId,
      key: txIdKey(txId),
      node: accountNum(body.nodeAccountID),
      validDurationS: longToNumber(body.transactionValidDuration?.seconds),
      maxFee: longToBigInt(body.transactionFee),
      hash: createHash('sha384').update(hashed).digest(),
      sigs: new SignatureSet(bodyBytes, sigPairs),
      size: raw.length,
    },
  };
}
