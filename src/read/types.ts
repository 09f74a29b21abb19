import type { ReadRejectReason, RecordItem, UnknownKind } from '../format/read-common.js';
import type { SignalMessage } from '../format/schema-v1.js';
import type { SignalMessageV2 } from '../format/schema-v2.js';

/** A validated signal as read from a topic, with what the mirror node says about its transaction. */
export interface ReadSignal {
  sequenceNumber: number;
  /** Mirror form, `"seconds.nanoseconds"`. */
  consensusTimestamp: string;
  /** The same instant as ISO 8601 (milliseconds), for people and for time arithmetic. */
  consensusAt: string;
  /**
   * The same instant in ms since the epoch (NaN if the mirror's text is not a consensus timestamp). The reader has it
   * from deciding the time range, so scoring takes it instead of parsing `consensusTimestamp` again; without it (a
   * ReadSignal made by hand), scoring parses the text.
   */
  consensusMs?: number;
  /** The account that paid for the submit: the publisher's identity (DESIGN §3.1). */
  payerAccountId: string;
  /** Place of the signal in its message: 0 for a single signal, its pack index otherwise. (sequence, index) names it. */
  index: number;
  /** v1 or v2. A v1 signal keeps its published id (`simple-evals.math`); `canonicalSignalId` gives the catalog id. */
  message: SignalMessage | SignalMessageV2;
}

/** Where a topic message came from, as the mirror node says. */
interface Origin {
  sequenceNumber: number;
  consensusTimestamp: string;
  payerAccountId: string;
}

/** A score or reveal record read from the topic (v2 ones are unvalidated until their schemas are wired in). */
export interface ReadRecord extends Origin {
  consensusAt: string;
  /** Place of the record in its message: 0 alone, k in a batch (`op: "scores"`). (sequence, index) names it. */
  index: number;
  kind: RecordItem['kind'];
  v: number;
  validated: boolean;
  message: Record<string, unknown>;
}

/**
 * Something a later version of HCS-25 or hcs25 defines (another version, op, signal id, vocabulary value or field):
 * counted, not rejected.
 */
export interface UnknownRead extends Origin {
  index: number;
  kind: UnknownKind;
  name: string;
}

/**
 * Why a topic message (or one signal of a pack) was not read: the parser's reasons (malformed only), plus the
 * reader's own: `publisher-not-allowed`, `duplicate` (a later identical copy of a signal), `conflict` (a later copy
 * with other content: the publisher equivocated; the first copy is the one read), `incomplete-chunks`.
 */
export type RejectedReason =
  | ReadRejectReason
  | 'publisher-not-allowed'
  | 'duplicate'
  | 'conflict'
  | 'incomplete-chunks';

export interface RejectedMessage {
  sequenceNumber: number;
  consensusTimestamp: string;
  payerAccountId: string;
  /** For one signal of a pack (a duplicate, or a malformed one rejected alone): its index. */
  index?: number;
  reason: RejectedReason;
  /** A short explanation; never the message body (a public topic can hold anything). */
  detail: string;
  /** For a conflicting copy: the signal it contradicts (the payer is the message's) and where its first copy was read. */
  conflict?: { run: string; signal: string; subject: string; firstSequence: number };
}

export type ReaderEvent = { type: 'signal'; signal: ReadSignal } | { type: 'rejected'; rejected: RejectedMessage };

/** Everything a topic holds: signals and rejections, plus score/reveal records and counted unknowns. */
export type TopicEvent =
  | ReaderEvent
  | { type: 'record'; record: ReadRecord }
  | { type: 'unknown'; unknown: UnknownRead };
