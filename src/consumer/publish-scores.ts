/** Publishes computed scores as HCS-25 `op: "score"` messages (transaction memo `hcs-25:op:1`). */
import { TopicMessageSubmitTransaction, type Client } from '@hashgraph/sdk';
import { buildScoreMessage } from '../signals/build.js';
import { TRANSACTION_MEMOS } from '../signals/schemas.js';
import type { SubjectScore } from './scores.js';

export interface PublishedScore {
  subject: string;
  transactionId: string;
  sequenceNumber: number;
  bytes: number;
}

/** The on-chain form of one subject's score (DESIGN §3.2); throws if it would not fit in one message. */
export function scoreMessageFor(s: SubjectScore) {
  return buildScoreMessage({
    subject: s.subject,
    trustScores: s.trustScores,
    trustScoreConfigVersion: s.trustScoreConfigVersion,
    trustScoreUpdatedAt: s.trustScoreUpdatedAt,
    trustConfidence: s.trustConfidence,
  });
}

/**
 * Submits one score message per subject, a few at a time, and waits for each receipt. Results are in the order of
 * `subjects`; the first failure stops the rest and is thrown.
 */
export async function publishScores(client: Client, scoreTopic: string, subjects: readonly SubjectScore[], concurrency = 8): Promise<PublishedScore[]> {
  const built = subjects.map(scoreMessageFor);
  const out = new Array<PublishedScore>(subjects.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < built.length) {
      const i = next++;
      const { json, bytes } = built[i]!;
      const response = await new TopicMessageSubmitTransaction()
        .setTopicId(scoreTopic)
        .setMessage(json)
        .setTransactionMemo(TRANSACTION_MEMOS.score)
        .execute(client);
      const receipt = await response.getReceipt(client);
      out[i] = {
        subject: subjects[i]!.subject,
        transactionId: response.transactionId.toString(),
        sequenceNumber: receipt.topicSequenceNumber?.toNumber() ?? 0,
        bytes,
      };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, built.length)) }, worker));
  return out;
}
