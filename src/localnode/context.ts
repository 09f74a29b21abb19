/** The contract between the consensus loop (ledger.ts) and the per-transaction handlers. */
import type { proto } from '@hashgraph/proto';
import type { LedgerState, TopicMessage } from './state.js';
import type { ParsedTx } from './transaction.js';

export interface HandleContext {
  readonly state: LedgerState;
  readonly tx: ParsedTx;
  /** Consensus time of this transaction. */
  readonly ns: bigint;
  readonly wallMs: number;
  /** Moves tinybars between existing accounts and lists the movement in the record. */
  move(from: number, to: number, amount: bigint): void;
  /** Receipt and record extras. */
  readonly result: {
    entity?: { kind: 'account' | 'topic'; num: number };
    topicSeq?: number;
    topicRunningHash?: Buffer;
  };
  /** What persistence and the mirror must learn about. */
  readonly changed: { accounts: Set<number>; topics: Set<number>; messages: TopicMessage[] };
}

export interface TransactionHandler {
  /** Checks at precheck that look only at the body (the node's "pure checks"); returns a status code. */
  pureCheck?(body: proto.TransactionBody): number;
  /** Applies the transaction at consensus; returns the receipt status. Must not mutate state before it knows it succeeds. */
  handle(ctx: HandleContext): number;
}
