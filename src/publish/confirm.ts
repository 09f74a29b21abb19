import type { MirrorRestClient } from '../hedera/mirror-rest.js';

export interface Expected {
  key: string;
  seq: number;
  /** The message as submitted: JSON text, or bytes (a zlib pack). */
  message: string | Uint8Array;
}

export interface MirrorConfirmation {
  /** On the topic at the receipt's sequence number, byte for byte. */
  confirmed: { key: string; seq: number; consensusTimestamp: string }[];
  /** Not visible before the deadline (mirror lag). */
  missing: Expected[];
  /** The sequence number holds something else: the receipt and the mirror node disagree. */
  mismatched: Expected[];
}

/**
 * Reads a run's messages back from the mirror node: each must sit at the sequence number its receipt gave, with the
 * exact bytes sent. Also yields the consensus timestamps, which receipts do not carry. Mirror nodes trail consensus
 * by seconds, so unseen messages are retried until the deadline, then reported as missing (not an error).
 */
export async function confirmOnMirror(
  mirror: MirrorRestClient,
  topicId: string,
  expected: Expected[],
  options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<MirrorConfirmation> {
  const pending = new Map(expected.map((e) => [e.seq, e]));
  const result: MirrorConfirmation = { confirmed: [], missing: [], mismatched: [] };
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  while (pending.size > 0 && !options.signal?.aborted) {
    // Not Math.min(...seqs): spreading a large run's sequence numbers as arguments overflows the stack.
    let from = Number.POSITIVE_INFINITY;
    let to = 0;
    for (const seq of pending.keys()) {
      if (seq < from) from = seq;
      if (seq > to) to = seq;
    }
    for await (const page of mirror.rawTopicMessages(topicId, {
      afterSequence: from - 1,
      beforeSequence: to + 1,
      ...(options.signal ? { signal: options.signal } : {}),
    })) {
      for (const raw of page) {
        const want = pending.get(raw.sequenceNumber);
        if (!want) continue;
        pending.delete(raw.sequenceNumber);
        if (raw.message.equals(typeof want.message === 'string' ? Buffer.from(want.message, 'utf8') : want.message)) {
          result.confirmed.push({ key: want.key, seq: want.seq, consensusTimestamp: raw.consensusTimestamp });
        } else {
          result.mismatched.push(want);
        }
      }
    }
    if (pending.size === 0 || Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
  result.missing = [...pending.values()];
  return result;
}
