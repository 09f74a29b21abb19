/**
 * What the submitter takes and gives: jobs (a journaled message and the ids it already had), outcomes, progress
 * events and options.
 */
import type { Client } from '@hashgraph/sdk';
import type { MirrorRestClient } from '../hedera/mirror-rest.js';
import type { FeeCapError, FeeMeter } from './fees.js';
import type { Journal } from './journal.js';
import type { SubmitTransport } from './sdk-transport.js';
import type { SubmitError } from './send-failure.js';
import type { TransactionSigner } from './signer.js';

export interface PriorTxId {
  txId: string;
  validSeconds: number;
  /** Reached consensus with a failure: cannot be sent again. */
  consumed: boolean;
}

export interface SubmitJob {
  key: string;
  /** The exact message to put on the topic (≤ 1024 bytes: one chunk): UTF-8 JSON text, or bytes (a zlib pack). */
  message: string | Uint8Array;
  /** Ids this message was given by an earlier attempt of the run, oldest first (resume). */
  prior?: PriorTxId[];
}

export type SubmitOutcome =
  | {
      key: string;
      status: 'confirmed';
      txId: string;
      seq: number;
      /** An earlier send of the same id had already landed (DUPLICATE_TRANSACTION or found on the mirror node). */
      duplicate: boolean;
      via: 'receipt' | 'mirror';
      consensusTimestamp?: string;
    }
  | { key: string; status: 'unsent'; reason: string };

export type SubmitEvent =
  /** `nodeId`: the consensus node that accepted it. */
  | { type: 'sent'; key: string; txId: string; nodeId: string }
  | { type: 'confirmed'; key: string; txId: string; seq: number; duplicate: boolean }
  | { type: 'retry'; key: string; txId: string; attempt: number; reason: string; delayMs: number }
  | { type: 'reissued'; key: string; oldTxId: string; txId: string; reason: string }
  | { type: 'stopped'; error: SubmitError | FeeCapError };

export interface SubmitterOptions {
  client: Client;
  signer: TransactionSigner;
  operatorId: string;
  topicId: string;
  journal: Journal;
  /** Transaction memo (`hcs-25:op:0` for signals). */
  memo: string;
  /** Mirror node, to learn whether an expired id landed. */
  mirror: MirrorRestClient;
  fees?: FeeMeter;
  /**
   * Where transactions are built, signed, sent and their receipts asked (default: the SDK client in this thread).
   * `client` still names the nodes, and every decision stays here.
   */
  transport?: SubmitTransport;
  /** Submissions in flight at once (sent and awaiting a receipt). Default 128. */
  window?: number;
  /** Valid duration of each transaction id, seconds (15–180). Default 120. */
  validSeconds?: number;
  /** How long one message may keep failing transiently before the run stops, ms. Default 60 000. */
  retryBudgetMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long one submit call (SDK retries included) may take, ms. Default 30 000. */
  submitTimeoutMs?: number;
  /** How long one receipt query (SDK polling included) may take, ms. Default 30 000. */
  receiptTimeoutMs?: number;
  /** After an id's validity ends, time given to the mirror node to show it before it is declared unused. Default 30 s. */
  mirrorGraceMs?: number;
  /** Clock for expiry decisions (tests move it forward). */
  now?: () => number;
  onEvent?: (event: SubmitEvent) => void;
}
