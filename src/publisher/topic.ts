import { PrecheckStatusError, PublicKey, Status, TopicCreateTransaction, TransactionId, TransactionReceiptQuery, type Client, type Key } from '@hashgraph/sdk';
import { Hcs25Error, UsageError, errorMessage } from '../core/errors.js';
import type { MirrorRestClient } from '../hedera/mirror-rest.js';
import { signalTopicMemo } from '../signals/schemas.js';
import { withTransientRetry } from './retry.js';
import { nodesOf } from './submitter.js';

export interface CreateTopicOptions {
  /** Default `hcs-25:0:86400`. */
  memo?: string;
  /** Only holders of this key may submit; without it anyone may write (consumers filter by publisher). */
  submitKey?: Key;
  /** Lets the holder update or delete the topic; none by default, so nobody can change a published signal topic. */
  adminKey?: Key;
}

export interface CreatedTopic {
  topicId: string;
  memo: string;
  transactionId: string;
  submitKey?: string;
}

const MAX_MEMO_BYTES = 100;

/** Creates an HCS-25 signal topic and waits for its receipt. */
export async function createSignalTopic(client: Client, options: CreateTopicOptions = {}): Promise<CreatedTopic> {
  const memo = options.memo ?? signalTopicMemo();
  if (Buffer.byteLength(memo, 'utf8') > MAX_MEMO_BYTES) {
    throw new UsageError(`the topic memo is ${Buffer.byteLength(memo, 'utf8')} bytes; Hedera allows ${MAX_MEMO_BYTES}`);
  }
  const operator = client.operatorAccountId;
  if (!operator) throw new UsageError('creating a topic needs an operator account');
  // A pre-set id and a fixed node list: a retry resends the same transaction, so it can never create two topics.
  const transactionId = TransactionId.generate(operator);
  const nodes = nodesOf(client).slice(0, 3);
  const tx = new TopicCreateTransaction().setTopicMemo(memo).setTransactionId(transactionId).setNodeAccountIds(nodes);
  if (options.submitKey) tx.setSubmitKey(options.submitKey);
  if (options.adminKey) tx.setAdminKey(options.adminKey);
  tx.freezeWith(client);
  await withTransientRetry(async () => {
    try {
      await tx.execute(client);
    } catch (err) {
      if (!(err instanceof PrecheckStatusError && err.status === Status.DuplicateTransaction)) throw err;
    }
  });
  // Explicit nodes for the receipt too: see the submitter's receipt query.
  const receipt = await withTransientRetry(() => new TransactionReceiptQuery().setTransactionId(transactionId).setNodeAccountIds(nodes).execute(client));
  if (!receipt.topicId) throw new Error('the topic create receipt has no topic id');
  return {
    topicId: receipt.topicId.toString(),
    memo,
    transactionId: transactionId.toString(),
    ...(options.submitKey ? { submitKey: options.submitKey.toString() } : {}),
  };
}

/** Parses a public key given on the command line (DER or raw hex; raw 32 bytes is read as ED25519). */
export function parsePublicKey(text: string, flag = '--submit-key'): PublicKey {
  const hex = text.trim().replace(/^0x/, '');
  try {
    return PublicKey.fromString(hex);
  } catch {
    throw new UsageError(`${flag} is not a public key`, { hint: 'give a DER-encoded hex public key (302a… ED25519, 302d… ECDSA), or a raw 32-byte ED25519 key in hex' });
  }
}

/** True when a memo follows the HCS-25 signal-topic form `hcs-25:0:{ttl}`. */
export function isSignalTopicMemo(memo: string): boolean {
  return /^hcs-25:0:\d+$/.test(memo);
}

export class RunError extends Hcs25Error {
  constructor(code: 'TOPIC_DELETED' | 'NO_AGENTS', message: string, hint: string) {
    super(code, message, { hint });
    this.name = 'RunError';
  }
}

/** The topic should exist and look like a signal topic. A topic created seconds ago may not be on the mirror node yet, so absence is a warning. */
export async function checkSignalTopic(mirror: MirrorRestClient, topic: string, options: { onNote?: (line: string) => void; signal?: AbortSignal } = {}): Promise<void> {
  let info;
  try {
    info = await mirror.getTopic(topic, options.signal);
  } catch (err) {
    options.onNote?.(`warning: could not read topic ${topic} from the mirror node (${errorMessage(err)})`);
    return;
  }
  if (info === null) {
    options.onNote?.(`warning: the mirror node does not know topic ${topic} (yet); if it does not exist, submission will stop with INVALID_TOPIC_ID`);
    return;
  }
  if (info.deleted) throw new RunError('TOPIC_DELETED', `topic ${topic} is deleted`, 'create a new one with `hcs25 topic create`');
  if (!isSignalTopicMemo(info.memo)) options.onNote?.(`warning: topic ${topic} has memo "${info.memo.slice(0, 60)}", not an HCS-25 signal topic memo (hcs-25:0:{ttl})`);
}
