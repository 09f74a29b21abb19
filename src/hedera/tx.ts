/**
 * Small consensus transactions with `@hashgraph/sdk`, receipts awaited (so a returned sequence number is final):
 * create a topic (optionally HIP-991 fee-gated), submit one single-chunk message with a transaction memo (and a
 * HIP-991 custom fee limit), set an account memo. Used by HCS-10 identities and agents and the HCS-1 writer.
 * Failures become LedgerTxError with the Hedera status, never a key.
 */
import {
  AccountUpdateTransaction,
  Cache,
  CustomFeeLimit,
  CustomFixedFee,
  Hbar,
  HbarUnit,
  Timestamp,
  TopicCreateTransaction,
  TopicMessageSubmitTransaction,
  TransactionId,
  type AccountId,
  type Client,
  type Key,
} from '@hashgraph/sdk';
import { Hcs25Error, errorMessage } from '../core/errors.js';

export class LedgerTxError extends Hcs25Error {
  constructor(what: string, cause: unknown) {
    super('LEDGER_TX', `${what} failed: ${errorMessage(cause)}`, {
      cause,
      hint: 'check the operator balance and that the network is reachable; INVALID_TOPIC_ID means the topic is gone',
    });
    this.name = 'LedgerTxError';
  }
}

/** How long a generated timestamp is remembered to avoid a repeat: it was made 3–8 s in the past, so by then no
 * new one can equal it. */
const RECENT_TIMESTAMPS_MS = 30_000;

/**
 * Bounds the memory of the SDK's `Timestamp.generate`. It keeps every timestamp it ever made in a module-level set so
 * that none repeats, and every free query (a receipt query) makes one for an unused payment id, kept for the life of
 * the process. A watcher asks a receipt per message for days, so that set grows without end. Replaced, once per
 * thread, by the same generation (now minus 3–8 s of jitter, random nanoseconds, the SDK's time drift) with repeats
 * checked against the timestamps of the last 30–60 s only, in two sets swapped every 30 s: a timestamp older than the
 * jitter cannot be made again.
 */
export function boundTimestampMemory(): { remembered(): number } {
  const generate = Timestamp.generate as ((hasJitter?: boolean) => Timestamp) & { bounded?: { remembered(): number } };
  if (generate.bounded) return generate.bounded;
  let recent = new Set<string>();
  let older = new Set<string>();
  let swapAt = Date.now() + RECENT_TIMESTAMPS_MS;
  const bounded = (hasJitter = true): Timestamp => {
    for (;;) {
      const now = Date.now();
      // Every 30 s the older set is let go (at once when the clock was set back).
      if (now >= swapAt || now < swapAt - RECENT_TIMESTAMPS_MS) {
        older = recent;
        recent = new Set();
        swapAt = now + RECENT_TIMESTAMPS_MS;
      }
      const at = now - (hasJitter ? Math.floor(Math.random() * 5_000) + 3_000 : 0);
      const timestamp = new Timestamp(
        Math.floor(at / 1000) + Cache.timeDrift,
        (at % 1000) * 1_000_000 + Math.floor(Math.random() * 1_000_000),
      );
      const key = timestamp.toString();
      if (recent.has(key) || older.has(key)) continue;
      recent.add(key);
      return timestamp;
    }
  };
  const handle = { remembered: () => recent.size + older.size };
  Timestamp.generate = Object.assign(bounded, { bounded: handle });
  return handle;
}

/** The valid start of the last id `newTransactionId` made, ns since the epoch. */
let lastValidStartNs = 0n;

/**
 * A new transaction id for `payer`, as `TransactionId.generate` makes one (its valid start a few seconds in the past,
 * so a node whose clock is behind still accepts it), without its leak: the SDK keeps every timestamp it ever generated
 * in a module-level set to avoid repeats, about 100 B per transaction for the life of the process, which a watcher
 * publishing for days cannot carry. Here valid starts only go up, so no id repeats within the process either.
 */
export function newTransactionId(payer: AccountId): TransactionId {
  const backdateMs = 3_000 + Math.floor(Math.random() * 5_000);
  let ns = BigInt(Date.now() - backdateMs) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000));
  if (ns <= lastValidStartNs) ns = lastValidStartNs + 1n;
  lastValidStartNs = ns;
  return TransactionId.withValidStart(payer, new Timestamp(Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)));
}

export interface CreateTopicOptions {
  memo: string;
  submitKey?: Key;
  adminKey?: Key;
  /** HIP-991: fixed HBAR fees charged per message, each to its collector. */
  fees?: { collectorAccountId: string; tinybars: number }[];
  feeScheduleKey?: Key;
}

export async function createTopic(client: Client, options: CreateTopicOptions): Promise<string> {
  const tx = new TopicCreateTransaction().setTopicMemo(options.memo);
  if (options.submitKey) tx.setSubmitKey(options.submitKey);
  if (options.adminKey) tx.setAdminKey(options.adminKey);
  if (options.feeScheduleKey) tx.setFeeScheduleKey(options.feeScheduleKey);
  if (options.fees?.length) {
    tx.setCustomFees(
      options.fees.map((f) =>
        new CustomFixedFee().setAmount(f.tinybars).setFeeCollectorAccountId(f.collectorAccountId),
      ),
    );
  }
  try {
    const receipt = await (await tx.execute(client)).getReceipt(client);
    if (!receipt.topicId) throw new Hcs25Error('LEDGER_TX', 'the receipt has no topic id');
    return receipt.topicId.toString();
  } catch (err) {
    throw new LedgerTxError(`creating a topic (memo ${options.memo.slice(0, 40)})`, err);
  }
}

export interface SubmitOptions {
  /** HIP-991: the most this submission may pay in topic fees, tinybars (0 or absent: no custom fee limit set). */
  maxCustomFeeTinybars?: number;
}

export interface Submitted {
  seq: number;
  /** `0.0.2@1700000000.000000000` */
  transactionId: string;
}

/** Submits a message body as one chunk (at most 1024 bytes); returns its sequence number and transaction id. */
export async function submitMessage(
  client: Client,
  topicId: string,
  body: string,
  memo: string | undefined,
  options: SubmitOptions = {},
): Promise<Submitted> {
  const tx = new TopicMessageSubmitTransaction()
    .setTopicId(topicId)
    .setMessage(body)
    .setMaxChunks(1)
    .setChunkSize(1024);
  if (client.operatorAccountId) tx.setTransactionId(newTransactionId(client.operatorAccountId));
  if (memo) tx.setTransactionMemo(memo);
  if (options.maxCustomFeeTinybars && options.maxCustomFeeTinybars > 0) {
    const payer = client.operatorAccountId;
    if (payer) {
      tx.setCustomFeeLimits([
        new CustomFeeLimit()
          .setAccountId(payer)
          .setFees([new CustomFixedFee().setAmount(options.maxCustomFeeTinybars)]),
      ]);
    }
  }
  try {
    const response = await tx.execute(client);
    const receipt = await response.getReceipt(client);
    const seq = receipt.topicSequenceNumber;
    if (seq === null || seq === undefined) throw new Hcs25Error('LEDGER_TX', 'the receipt has no sequence number');
    return { seq: Number(seq.toString()), transactionId: response.transactionId.toString() };
  } catch (err) {
    throw new LedgerTxError(`submitting to ${topicId}${memo ? ` (${memo})` : ''}`, err);
  }
}

/** Sets the memo of the client's operator account (signed by the operator key). */
export async function setAccountMemo(client: Client, accountId: string, memo: string): Promise<void> {
  try {
    await (
      await new AccountUpdateTransaction().setAccountId(accountId).setAccountMemo(memo).execute(client)
    ).getReceipt(client);
  } catch (err) {
    throw new LedgerTxError(`setting the memo of ${accountId}`, err);
  }
}

export function hbarToTinybars(hbar: number): number {
  return Number(Hbar.from(hbar, HbarUnit.Hbar).toTinybars().toString());
}
