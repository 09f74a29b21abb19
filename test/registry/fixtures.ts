import type { TopicMessage } from '../../src/hedera/mirror-rest.js';

/** A whole topic message as the mirror client yields it. */
export function msg(seq: number, body: unknown, extra: Partial<TopicMessage> = {}): TopicMessage {
  const message = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    sequenceNumber: seq,
    firstSequenceNumber: seq,
    consensusTimestamp: `${1_700_000_000 + seq}.000000000`,
    payerAccountId: '0.0.2',
    message,
    runningHash: '',
    chunks: 1,
    ...extra,
  };
}
