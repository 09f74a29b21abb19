/**
 * The SDK side of submission: build, sign and send one transaction under a given id, or ask for one receipt. The
 * submitter (exactly-once decisions, journal, retries, node health) talks to it only through plain data, so tests
 * can stand in for the network.
 */
import {
  AccountId,
  Hbar,
  HbarUnit,
  PrecheckStatusError,
  Status,
  TopicMessageSubmitTransaction,
  TransactionId,
  TransactionReceiptQuery,
  type Client,
} from '@hashgraph/sdk';
import { errorMessage } from '../core/errors.js';
import type { TransactionSigner } from './signer.js';
import { SubmitError, classifySend } from './send-failure.js';

export interface SendRequest {
  topicId: string;
  memo: string;
  /** The journaled id: the transport never makes one of its own. */
  txId: string;
  validSeconds: number;
  message: string | Uint8Array;
  maxFeeTinybar: bigint;
  /** Node account ids to sign for, in the order the SDK tries them. */
  nodes: string[];
  timeoutMs: number;
}

/** How a send failed, as plain data (a worker cannot pass the SDK's error classes). */
export type SendFailure =
  | { kind: 'duplicate'; nodeId?: string }
  | { kind: 'expired' }
  | { kind: 'transient'; reason: string }
  | { kind: 'fatal'; status: string; message: string; hint?: string };

export type SendResult = { ok: true; nodeId: string } | { ok: false; failure: SendFailure };

export interface ReceiptRequest {
  txId: string;
  nodes: string[];
  timeoutMs: number;
}

/** A receipt's status and sequence number, or why none came (the submitter polls again or asks the mirror node). */
export type ReceiptResult = { ok: true; status: string; seq: number } | { ok: false; reason: string };

export interface SubmitTransport {
  send(request: SendRequest): Promise<SendResult>;
  receipt(request: ReceiptRequest): Promise<ReceiptResult>;
}

/** Submission through an SDK client in this thread. */
export function sdkTransport(client: Client, signer: TransactionSigner): SubmitTransport {
  return {
    async send(r) {
      try {
        const tx = new TopicMessageSubmitTransaction()
          .setTopicId(r.topicId)
          .setMessage(r.message)
          .setMaxChunks(1)
          .setTransactionId(TransactionId.fromString(r.txId))
          .setTransactionMemo(r.memo)
          .setTransactionValidDuration(r.validSeconds)
          .setMaxTransactionFee(Hbar.from(r.maxFeeTinybar.toString(), HbarUnit.Tinybar))
          .setNodeAccountIds(r.nodes.map((n) => AccountId.fromString(n)))
          // Never let the SDK swap in an id we have not journaled.
          .setRegenerateTransactionId(false)
          .freezeWith(client);
        await tx.signWith(signer.publicKey, (body) => signer.sign(body));
        const response = await tx.execute(client, r.timeoutMs);
        return { ok: true, nodeId: response.nodeId.toString() };
      } catch (err) {
        return { ok: false, failure: sendFailure(err) };
      }
    },
    async receipt(r) {
      try {
        const receipt = await new TransactionReceiptQuery()
          .setTransactionId(TransactionId.fromString(r.txId))
          .setValidateStatus(false)
          .setMinBackoff(100)
          .setMaxBackoff(2_000)
          .setMaxAttempts(20)
          .setNodeAccountIds(r.nodes.map((n) => AccountId.fromString(n)))
          .execute(client, r.timeoutMs);
        return { ok: true, status: receipt.status.toString(), seq: receipt.topicSequenceNumber?.toNumber() ?? 0 };
      } catch (err) {
        return { ok: false, reason: errorMessage(err) };
      }
    },
  };
}

function sendFailure(err: unknown): SendFailure {
  const failure = classifySend(err);
  switch (failure.kind) {
    case 'duplicate':
      return err instanceof PrecheckStatusError && err.nodeId
        ? { kind: 'duplicate', nodeId: err.nodeId.toString() }
        : { kind: 'duplicate' };
    case 'fatal':
      return {
        kind: 'fatal',
        status: failure.error.status,
        message: failure.error.message,
        ...(failure.error.hint && { hint: failure.error.hint }),
      };
    default:
      return failure;
  }
}

/** The submitter's error for a fatal send failure. */
export function sendError(failure: Extract<SendFailure, { kind: 'fatal' }>): SubmitError {
  return new SubmitError(failure.status, failure.message, { ...(failure.hint && { hint: failure.hint }) });
}

/** `Status.Success` as the receipt's string form. */
export const SUCCESS = Status.Success.toString();
