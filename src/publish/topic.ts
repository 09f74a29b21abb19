import {
  PrecheckStatusError,
  PublicKey,
  Status,
  TopicCreateTransaction,
  TransactionReceiptQuery,
  type Client,
  type Key,
} from '@hashgraph/sdk';
import { Hcs25Error, UsageError } from '../core/errors.js';
import { formatHrl, parseHrl } from '../core/hrl.js';
import type { MirrorRestClient } from '../hedera/mirror-rest.js';
import { newTransactionId } from '../hedera/tx.js';
import { FORMAT_ID_V3 } from '../format/schema-v3.js';
import { nodesOf } from './node-rotation.js';
import { withTransientRetry } from './send-failure.js';

export interface CreateTopicOptions {
  /** Default `hcs25-tool/3` (no schema file: `hcs25 topic create` inscribes one and names it). */
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

/** Hedera's limit on a topic memo, UTF-8 bytes. */
export const MAX_TOPIC_MEMO_BYTES = 100;

/** Refuses a memo the network would refuse (MEMO_TOO_LONG), before anything is paid for. */
export function checkTopicMemo(memo: string): void {
  const bytes = Buffer.byteLength(memo, 'utf8');
  if (bytes > MAX_TOPIC_MEMO_BYTES) {
    throw new UsageError(`the topic memo is ${bytes} bytes; Hedera allows ${MAX_TOPIC_MEMO_BYTES}`, {
      hint: `shorten --memo to ${MAX_TOPIC_MEMO_BYTES} bytes, or leave it out (the default is ${formatThreeTopicMemo('0.0.1234')})`,
    });
  }
}

/** Creates an HCS-25 signal topic and waits for its receipt. */
export async function createSignalTopic(client: Client, options: CreateTopicOptions = {}): Promise<CreatedTopic> {
  const memo = options.memo ?? formatThreeTopicMemo();
  checkTopicMemo(memo);
  const operator = client.operatorAccountId;
  if (!operator) throw new UsageError('creating a topic needs an operator account');
  // A pre-set id and a fixed node list: a retry resends the same transaction, so it can never create two topics.
  const transactionId = newTransactionId(operator);
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
  const receipt = await withTransientRetry(() =>
    new TransactionReceiptQuery().setTransactionId(transactionId).setNodeAccountIds(nodes).execute(client),
  );
  if (!receipt.topicId) throw new Hcs25Error('LEDGER_TX', 'the topic create receipt has no topic id');
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
    throw new UsageError(`${flag} is not a public key`, {
      hint: 'give a DER-encoded hex public key (302a… ED25519, 302d… ECDSA), or a raw 32-byte ED25519 key in hex',
    });
  }
}

/** What a signal-topic memo says: hcs25's own format (`hcs25-tool/<n>`, maybe naming its definition file) or the old form. */
export type SignalTopicMemo =
  | { form: 'hcs25-tool'; version: number; schemaFile?: string }
  | { form: 'hcs-25'; ttl: number };

const TOOL_MEMO = /^hcs25-tool\/(\d{1,6})(?: (\S+))?$/;

/**
 * `hcs25-tool/3 hcs://1/<file topic>` (or bare `hcs25-tool/<n>`) and the old `hcs-25:0:{ttl}`; null for anything
 * else. A tail that is not an hcs://1/ reference still reads as the format, with no definition file.
 */
export function parseSignalTopicMemo(memo: string): SignalTopicMemo | null {
  const old = /^hcs-25:0:(\d{1,12})$/.exec(memo);
  if (old) return { form: 'hcs-25', ttl: Number(old[1]) };
  const m = TOOL_MEMO.exec(memo);
  if (!m) return null;
  const hrl = m[2] === undefined ? undefined : parseHrl(m[2]);
  return { form: 'hcs25-tool', version: Number(m[1]), ...(hrl?.standard === 1 && { schemaFile: hrl.topicId }) };
}

/** The format-3 topic memo: `hcs25-tool/3`, followed by the definition file's HRL when there is one. */
export function formatThreeTopicMemo(schemaFileTopicId?: string): string {
  return schemaFileTopicId === undefined ? FORMAT_ID_V3 : `${FORMAT_ID_V3} ${formatHrl(1, schemaFileTopicId)}`;
}

/** True for a topic hcs25 publishes signals to: a format-3 memo, or the old `hcs-25:0:{ttl}`. */
export function isSignalTopicMemo(memo: string): boolean {
  const parsed = parseSignalTopicMemo(memo);
  if (parsed === null) return false;
  // Format 3 alone, or naming its definition file: any other tail is not what `hcs25 topic create` writes.
  return parsed.form === 'hcs-25' || (parsed.version === 3 && (memo === FORMAT_ID_V3 || !!parsed.schemaFile));
}

export class RunError extends Hcs25Error {
  constructor(code: 'NO_AGENTS', message: string, hint: string) {
    super(code, message, { hint });
    this.name = 'RunError';
  }
}

export interface CheckTopicOptions {
  /** The operator's public key (raw hex, as the mirror node shows keys): it must be able to submit. */
  operatorKey?: string;
  /** Publish anyway (a topic with another memo, on purpose). Never bypasses a submit key: that would only fail. */
  force?: boolean;
  /** Dry runs: report problems as notes instead of refusing. */
  warnOnly?: boolean;
  /** How long a topic unknown to the mirror node is waited for (mirror lag after `topic create`). Default 8 s. */
  waitMs?: number;
  onNote?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Before anything is evaluated, the topic must make sense to publish to: it exists (waiting out mirror lag), is not
 * deleted, its memo says HCS-25 signal topic (a registry topic would swallow signals that every later `discover`
 * then skips), and the operator can submit to it (no submit key, or the operator's).
 */
export async function checkSignalTopic(
  mirror: MirrorRestClient,
  topic: string,
  options: CheckTopicOptions = {},
): Promise<void> {
  const refuse = (
    code: 'TOPIC_NOT_FOUND' | 'TOPIC_DELETED' | 'TOPIC_NOT_SIGNAL' | 'TOPIC_SUBMIT_KEY',
    message: string,
    hint: string,
  ): void => {
    if (options.warnOnly) options.onNote?.(`warning: ${message}; a real run would refuse to start`);
    else throw new TopicError(code, message, hint);
  };
  const deadline = Date.now() + (options.waitMs ?? 8_000);
  let info = await mirror.getTopic(topic, options.signal);
  while (info === null && Date.now() < deadline && !options.warnOnly) {
    await new Promise((r) => setTimeout(r, 500));
    options.signal?.throwIfAborted();
    info = await mirror.getTopic(topic, options.signal);
  }
  if (info === null) {
    return refuse(
      'TOPIC_NOT_FOUND',
      `topic ${topic} does not exist on this network (the mirror node does not know it)`,
      'check --topic and --network, or create one with `hcs25 topic create`',
    );
  }
  if (info.deleted)
    return refuse('TOPIC_DELETED', `topic ${topic} is deleted`, 'create a new one with `hcs25 topic create`');
  // A single-key submit key can be compared; a key list (protobuf-encoded) is left to the network to judge.
  const submitKey =
    info.submit_key && /^(ED25519|ECDSA_SECP256K1)$/.test(info.submit_key._type ?? '')
      ? info.submit_key.key.toLowerCase()
      : undefined;
  if (submitKey && options.operatorKey && submitKey !== options.operatorKey.toLowerCase()) {
    return refuse(
      'TOPIC_SUBMIT_KEY',
      `topic ${topic} has a submit key that is not the operator's: only its holder can publish there`,
      'publish to a topic of your own (`hcs25 topic create --submit-key-operator`)',
    );
  }
  if (!isSignalTopicMemo(info.memo) && !options.force) {
    const what = /^hcs-(2|10):/.test(info.memo) ? 'a registry topic' : 'not an HCS-25 signal topic';
    refuse(
      'TOPIC_NOT_SIGNAL',
      `topic ${topic} has memo ${JSON.stringify(info.memo.slice(0, 60))}: ${what} (signal topics have memo ${FORMAT_ID_V3} or hcs-25:0:{ttl})`,
      'pass the signal topic (`hcs25 topic create` makes one), or --force to publish there anyway',
    );
  }
}

export class TopicError extends Hcs25Error {
  constructor(
    code: 'TOPIC_NOT_FOUND' | 'TOPIC_DELETED' | 'TOPIC_NOT_SIGNAL' | 'TOPIC_SUBMIT_KEY',
    message: string,
    hint: string,
  ) {
    super(code, message, { hint });
    this.name = 'TopicError';
  }
}
