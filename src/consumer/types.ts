import type { RejectReason } from '../signals/parse.js';
import type { SignalMessage } from '../signals/schemas.js';

/** A validated signal as read from a topic, with what the mirror node says about its transaction. */
export interface ReadSignal {
  sequenceNumber: number;
  /** Mirror form, `"seconds.nanoseconds"`. */
  consensusTimestamp: string;
  /** The same instant as ISO 8601 (milliseconds), for people and for time arithmetic. */
  consensusAt: string;
  /** The account that paid for the submit: the publisher's identity (DESIGN §3.1). */
  payerAccountId: string;
  message: SignalMessage;
}

/**
 * Why a topic message did not become a signal. The parser's reasons, plus the reader's own:
 * `other-op` (a valid score/reveal message), `publisher-not-allowed`, `duplicate`, `incomplete-chunks`.
 */
export type RejectedReason = RejectReason | 'other-op' | 'publisher-not-allowed' | 'duplicate' | 'incomplete-chunks';

export interface RejectedMessage {
  sequenceNumber: number;
  consensusTimestamp: string;
  payerAccountId: string;
  reason: RejectedReason;
  /** A short explanation; never the message body (a public topic can hold anything). */
  detail: string;
}

export type ReaderEvent = { type: 'signal'; signal: ReadSignal } | { type: 'rejected'; rejected: RejectedMessage };
