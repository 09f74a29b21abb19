/** Publishes computed scores as HCS-25 `op: "score"` v2 messages (transaction memo `hcs-25:op:1`). */
import { TopicMessageSubmitTransaction, type Client } from '@hashgraph/sdk';
import { MessageTooLargeError } from '../core/errors.js';
import type { BuiltMessage } from '../signals/build.js';
import { buildScoreMessageV2, type ScoreExplanation, type ScoreMessageV2 } from '../signals/score.js';
import { TRANSACTION_MEMOS } from '../signals/schemas.js';
import type { SubjectScore } from './scores.js';

export interface PublishedScore {
  subject: string;
  transactionId: string;
  sequenceNumber: number;
  bytes: number;
  /** The record carries its Score Explanation (false only for a subject id too long to leave room for it). */
  explained: boolean;
}

/**
 * The on-chain form of one subject's score: a v2 record (signals/score.ts) whose explanation lists every applicable
 * adapter with its mode, weight, denominator membership, total and components. A subject id so long (≈ 270+
 * characters with the default config) that the explanation does not fit is published without it: a score nobody can
 * recompute beats no score, and `explained` says which it was. Throws if even that would not fit in one message.
 */
export function scoreMessageFor(s: SubjectScore): BuiltMessage<ScoreMessageV2> & { explained: boolean } {
  const input = {
    subject: s.subject,
    total: s.trustScores.total,
    trustScoreConfigVersion: s.trustScoreConfigVersion,
    trustScoreUpdatedAt: s.trustScoreUpdatedAt,
    trustConfidence: s.trustConfidence,
    explanation: explanationFor(s),
  };
  try {
    return { ...buildScoreMessageV2(input), explained: true };
  } catch (err) {
    if (!(err instanceof MessageTooLargeError)) throw err;
    return { ...buildScoreMessageV2(input, { explain: false }), explained: false };
  }
}

/** The Score Explanation of a computed score (component values before m_stale, as HCS-25 applies it). */
export function explanationFor(s: SubjectScore): ScoreExplanation {
  const components = Object.entries(s.components);
  return {
    configDigest: s.trustScoreConfigDigest,
    staleMultiplier: s.staleMultiplier,
    adapters: s.adapters
      .filter((a) => a.applicable)
      .map((a) => ({
        id: a.adapterId,
        mode: a.contributionMode,
        w: a.weight,
        in: a.inDenominator,
        t: a.total ?? 0,
        c: components
          .filter(([, c]) => c.adapterId === a.adapterId)
          .map(([k, c]) => ({ k, v: c.omitted ? null : (c.beforeStale ?? c.value), s: c.status })),
      })),
  };
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
      const { json, bytes, explained } = built[i]!;
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
        explained,
      };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, built.length)) }, worker));
  return out;
}
