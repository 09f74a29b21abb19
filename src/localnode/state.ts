/**
 * The ledger's data: accounts, topics with their messages (in consensus order, so sequence number n sits at
 * index n−1 and timestamps ascend), and transaction records indexed by transaction id.
 * Balances are bigint tinybars (genesis supply exceeds 2^53).
 */
import type { proto } from '@hashgraph/proto';
import type { TxId } from './codec.js';

export interface Account {
  num: number;
  key: proto.IKey;
  balance: bigint;
  memo: string;
  receiverSigRequired: boolean;
  autoRenewPeriod: number;
  expirySeconds: number;
  createdNs: bigint;
  /** Wall-clock ms when it reached consensus: the mirror shows it only after the configured lag. */
  createdWallMs: number;
  deleted: boolean;
  declineReward: boolean;
  maxAutoAssociations: number;
  /** 20-byte EVM address alias (ECDSA accounts created with an alias). */
  evmAlias?: Buffer;
}

export interface FixedFee {
  amount: bigint;
  collector: number;
  /** Only HBAR fees are charged; token-denominated fees are stored and shown but refused at submit. */
  tokenNum?: number;
}

export interface Topic {
  num: number;
  memo: string;
  adminKey?: proto.IKey;
  submitKey?: proto.IKey;
  feeScheduleKey?: proto.IKey;
  feeExemptKeys: proto.IKey[];
  customFees: FixedFee[];
  autoRenewPeriod: number;
  autoRenewAccount?: number;
  expirySeconds: number;
  createdNs: bigint;
  createdWallMs: number;
  deleted: boolean;
  sequenceNumber: number;
  runningHash: Buffer;
  messages: TopicMessage[];
}

export interface ChunkInfo {
  initialTxId: TxId;
  number: number;
  total: number;
}

export interface TopicMessage {
  topic: number;
  seq: number;
  ns: bigint;
  wallMs: number;
  message: Buffer;
  runningHash: Buffer;
  payer: number;
  chunk: ChunkInfo | null;
  /** Cached mirror REST JSON (base64 encoding): pages of 100 are concatenations of these. */
  json?: string;
}

export interface Transfer {
  account: number;
  amount: bigint;
}

/** What a receipt, a record, and the mirror's /transactions view need; kept after consensus. */
export interface TxRecord {
  txId: TxId;
  key: string;
  /** Body data case, e.g. `consensusSubmitMessage`. */
  type: string;
  status: number;
  ns: bigint;
  wallMs: number;
  hash: Buffer;
  memo: string;
  fee: bigint;
  maxFee: bigint;
  validDurationS: number;
  node: number;
  transfers: Transfer[];
  entity?: { kind: 'account' | 'topic'; num: number };
  topicSeq?: number;
  topicRunningHash?: Buffer;
}

export class LedgerState {
  readonly accounts = new Map<number, Account>();
  readonly topics = new Map<number, Topic>();
  readonly records = new Map<string, TxRecord>();
  readonly recordByHash = new Map<string, TxRecord>();
  /** Account number by lower-case hex EVM alias. */
  readonly aliases = new Map<string, number>();
  nextEntity = 1001;
  lastConsensusNs = 0n;

  addAccount(a: Account): void {
    this.accounts.set(a.num, a);
    if (a.evmAlias) this.aliases.set(a.evmAlias.toString('hex'), a.num);
    this.nextEntity = Math.max(this.nextEntity, a.num + 1);
  }

  addTopic(t: Topic): void {
    this.topics.set(t.num, t);
    this.nextEntity = Math.max(this.nextEntity, t.num + 1);
  }

  addRecord(r: TxRecord): void {
    this.records.set(r.key, r);
    this.recordByHash.set(r.hash.toString('hex'), r);
    if (r.ns > this.lastConsensusNs) this.lastConsensusNs = r.ns;
  }

  allocateEntity(): number {
    return this.nextEntity++;
  }
}
