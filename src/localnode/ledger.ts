/**
 * Ingest and consensus. `submit()` runs the node's precheck (time box, duplicates, payer, pure checks, fee,
 * payer signature) and queues the transaction; consensus applies queued transactions in order after
 * `consensusDelayMs`, assigning strictly increasing consensus timestamps, charging fees and keeping records.
 */
import { Status, accountNum, nowNs, topicNum, NS_PER_S } from './codec.js';
import type { HandleContext, TransactionHandler } from './context.js';
import { splitFee, transactionFee } from './fees.js';
import { isSatisfied } from './keys.js';
import type { LedgerState, TopicMessage, Transfer, TxRecord } from './state.js';
import type { ParsedTx } from './transaction.js';
import { createTopic, deleteTopic, submitMessage, updateTopic, memoStatus } from './topics.js';
import { createAccount, cryptoTransfer, updateAccount } from './accounts.js';

/** The first consensus node's account; a network of n nodes has 0.0.3 … 0.0.(2+n). */
export const NODE_ACCOUNT = 3;
export const FUNDING_ACCOUNT = 98;
const MIN_VALID_DURATION_S = 15;
const MAX_VALID_DURATION_S = 180;

export const HANDLERS: Record<string, TransactionHandler> = {
  consensusCreateTopic: createTopic,
  consensusUpdateTopic: updateTopic,
  consensusDeleteTopic: deleteTopic,
  consensusSubmitMessage: submitMessage,
  cryptoCreateAccount: createAccount,
  cryptoUpdateAccount: updateAccount,
  cryptoTransfer,
};

/** What the ledger reports after each consensus transaction (persistence, mirror subscriptions). */
export interface LedgerListener {
  onConsensus(record: TxRecord, changed: HandleContext['changed']): void;
}

function bodyEntity(tx: ParsedTx): TxRecord['entity'] {
  const b = tx.body;
  const topic = b.consensusSubmitMessage?.topicID ?? b.consensusUpdateTopic?.topicID ?? b.consensusDeleteTopic?.topicID;
  const t = topicNum(topic);
  if (t != null) return { kind: 'topic', num: t };
  const a = accountNum(b.cryptoUpdateAccount?.accountIDToUpdate);
  return a != null ? { kind: 'account', num: a } : undefined;
}

interface Pending {
  tx: ParsedTx;
  /** The node that accepted it: it earns the node fee and is named in the record. */
  node: number;
  submittedAt: number;
  dueAt: number;
}

export class Ledger {
  private consensusDelayMs: number;
  private readonly pending: Pending[] = [];
  private pendingHead = 0;
  private readonly pendingKeys = new Set<string>();
  /** Transaction ids seen within their validity window, with the window's end. */
  private readonly seen = new Map<string, bigint>();
  private lastPrune = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: LedgerListener[] = [];
  private stopped = false;

  constructor(
    readonly state: LedgerState,
    options: { consensusDelayMs?: number } = {},
  ) {
    this.consensusDelayMs = options.consensusDelayMs ?? 0;
    // Records restored from a state directory still count as seen while their validity window lasts.
    const now = nowNs();
    for (const r of state.records.values()) {
      const end = r.txId.validStartNs + BigInt(r.validDurationS) * NS_PER_S;
      if (end > now) this.seen.set(r.key, end);
    }
  }

  /** Changes the delay for queued transactions too (consensus order is kept: due times stay ascending). */
  setConsensusDelay(ms: number): void {
    this.consensusDelayMs = ms;
    for (let i = this.pendingHead; i < this.pending.length; i++) {
      const p = this.pending[i] as Pending;
      p.dueAt = p.submittedAt + ms;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule();
  }

  addListener(l: LedgerListener): void {
    this.listeners.push(l);
  }

  isPending(key: string): boolean {
    return this.pendingKeys.has(key);
  }

  /**
   * Precheck at consensus node `node`; on OK the transaction is queued for consensus. Returns the precheck status.
   * Duplicates are detected across nodes, as on a network: every node learns each transaction id at consensus.
   */
  submit(tx: ParsedTx, node: number = NODE_ACCOUNT): number {
    const status = this.precheck(tx, node);
    if (status !== Status.OK) return status;
    this.seen.set(tx.key, tx.txId.validStartNs + BigInt(tx.validDurationS) * NS_PER_S);
    this.pendingKeys.add(tx.key);
    if (this.consensusDelayMs <= 0 && this.pendingHead === this.pending.length) {
      this.apply(tx, node);
    } else {
      const now = Date.now();
      this.pending.push({ tx, node, submittedAt: now, dueAt: now + this.consensusDelayMs });
      this.schedule();
    }
    return Status.OK;
  }

  precheck(tx: ParsedTx, node: number = NODE_ACCOUNT): number {
    const now = nowNs();
    // A transaction names the node it is for: sent to another node it is refused (node account ids are signed).
    if (tx.node !== node) return Status.INVALID_NODE_ACCOUNT;
    if (tx.txId.scheduled || tx.txId.nonce !== 0) return Status.TRANSACTION_ID_FIELD_NOT_ALLOWED;
    if (tx.validDurationS < MIN_VALID_DURATION_S || tx.validDurationS > MAX_VALID_DURATION_S)
      return Status.INVALID_TRANSACTION_DURATION;
    if (tx.txId.validStartNs + BigInt(tx.validDurationS) * NS_PER_S <= now) return Status.TRANSACTION_EXPIRED;
    if (tx.txId.validStartNs > now) return Status.INVALID_TRANSACTION_START;
    const memo = memoStatus(tx.body.memo);
    if (memo !== Status.OK) return memo;
    this.pruneSeen(now);
    if (this.seen.has(tx.key)) return Status.DUPLICATE_TRANSACTION;
    const payer = this.state.accounts.get(tx.txId.payer);
    if (!payer) return Status.PAYER_ACCOUNT_NOT_FOUND;
    if (payer.deleted) return Status.PAYER_ACCOUNT_DELETED;
    const handler = HANDLERS[tx.kind];
    if (!handler) return Status.NOT_SUPPORTED;
    const pure = handler.pureCheck?.(tx.body) ?? Status.OK;
    if (pure !== Status.OK) return pure;
    const fee = transactionFee(tx.kind);
    if (tx.maxFee < fee) return Status.INSUFFICIENT_TX_FEE;
    if (payer.balance < fee) return Status.INSUFFICIENT_PAYER_BALANCE;
    if (!isSatisfied(payer.key, tx.sigs)) return Status.INVALID_SIGNATURE;
    return Status.OK;
  }

  private pruneSeen(now: bigint): void {
    const ms = Date.now();
    if (ms - this.lastPrune < 5_000) return;
    this.lastPrune = ms;
    for (const [k, end] of this.seen) if (end < now) this.seen.delete(k);
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    const head = this.pending[this.pendingHead];
    if (!head) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.applyDue();
      },
      Math.max(0, head.dueAt - Date.now()),
    );
  }

  private applyDue(): void {
    const now = Date.now();
    while (this.pendingHead < this.pending.length) {
      const p = this.pending[this.pendingHead];
      if (!p || p.dueAt > now) break;
      this.pendingHead++;
      this.apply(p.tx, p.node);
    }
    if (this.pendingHead === this.pending.length) {
      this.pending.length = 0;
      this.pendingHead = 0;
    } else if (this.pendingHead > 1024 && this.pendingHead * 2 > this.pending.length) {
      // Under steady load with a delay the queue never empties: drop the applied head now and then.
      this.pending.splice(0, this.pendingHead);
      this.pendingHead = 0;
    }
    this.schedule();
  }

  /** Applies everything still queued now, e.g. before a clean stop. */
  flushPending(): void {
    for (const p of this.pending.slice(this.pendingHead)) p.dueAt = 0;
    this.applyDue();
  }

  private nextConsensusNs(): bigint {
    const now = nowNs();
    const last = this.state.lastConsensusNs;
    return now > last ? now : last + 1n;
  }

  private apply(tx: ParsedTx, nodeAccount: number): void {
    this.pendingKeys.delete(tx.key);
    const state = this.state;
    const ns = this.nextConsensusNs();
    const wallMs = Date.now();
    const net = new Map<number, bigint>();
    const move = (from: number, to: number, amount: bigint): void => {
      const a = state.accounts.get(from);
      const b = state.accounts.get(to);
      if (!a || !b || amount === 0n) return;
      a.balance -= amount;
      b.balance += amount;
      net.set(from, (net.get(from) ?? 0n) - amount);
      net.set(to, (net.get(to) ?? 0n) + amount);
    };
    const ctx: HandleContext = {
      state,
      tx,
      ns,
      wallMs,
      move,
      result: {},
      changed: { accounts: new Set(), topics: new Set(), messages: [] as TopicMessage[] },
    };
    const payer = state.accounts.get(tx.txId.payer);
    const fee = transactionFee(tx.kind);
    let status: number;
    let charged = 0n;
    if (!payer || payer.deleted) {
      status = Status.PAYER_ACCOUNT_NOT_FOUND;
    } else if (payer.balance < fee) {
      status = Status.INSUFFICIENT_PAYER_BALANCE;
    } else {
      const { node, funding } = splitFee(fee);
      move(payer.num, nodeAccount, node);
      move(payer.num, FUNDING_ACCOUNT, funding);
      charged = fee;
      const handler = HANDLERS[tx.kind];
      try {
        status = handler ? handler.handle(ctx) : Status.NOT_SUPPORTED;
      } catch {
        // Like the node: an unexpected handler failure is this transaction's FAIL_INVALID, never a crash of the
        // consensus timer (which would take the host process down).
        status = Status.FAIL_INVALID;
      }
    }
    // A failed update or submit still names its entity on the mirror.
    const entity = ctx.result.entity ?? bodyEntity(tx);
    const transfers: Transfer[] = [];
    for (const [account, amount] of net) if (amount !== 0n) transfers.push({ account, amount });
    transfers.sort((x, y) => x.account - y.account);
    const record: TxRecord = {
      txId: tx.txId,
      key: tx.key,
      type: tx.kind,
      status,
      ns,
      wallMs,
      hash: tx.hash,
      memo: tx.body.memo ?? '',
      fee: charged,
      maxFee: tx.maxFee,
      validDurationS: tx.validDurationS,
      node: nodeAccount,
      transfers,
      ...(entity ? { entity } : {}),
      ...(ctx.result.topicSeq !== undefined
        ? { topicSeq: ctx.result.topicSeq, topicRunningHash: ctx.result.topicRunningHash }
        : {}),
    };
    state.addRecord(record);
    for (const l of this.listeners) l.onConsensus(record, ctx.changed);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
