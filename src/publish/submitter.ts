/**
 * One file over 500 lines: the send, receipt and expiry paths of one message share its state machine; node
 * rotation and the types are apart already (node-rotation.ts, submit-types.ts).
 *
 * Puts journaled messages on a topic: each exactly once, many in flight, retried when the failure is transient,
 * stopped loudly when it is not.
 *
 * Exactly once rests on pre-set transaction ids. Every message gets a new transaction id (`newTransactionId(operator)`) and that id
 * is durable in the journal before the first byte is sent. Any resend — after a timeout, a dropped connection, a
 * crash and `--resume` — uses the same id, so the network answers DUPLICATE_TRANSACTION if an earlier send landed;
 * that counts as success and the receipt is fetched. An id only lives for its valid duration (120 s, backdated a few
 * seconds by the SDK): a resend after that is TRANSACTION_EXPIRED. Then the mirror node is asked whether the old id
 * reached consensus (after a grace period for mirror lag, since an expired id can no longer land); only if it did
 * not is a new id issued, journaled like the first.
 *
 * Node failover. Each transaction is signed for a few nodes (the SDK moves on from a node that fails); when the
 * send still fails transiently it is signed again for the next few nodes under the same id. The payer's
 * transaction id, not the node, is what the network dedupes on, so a resend through another node after an
 * earlier send landed is DUPLICATE_TRANSACTION. Receipts are asked of the submitting node first, then of others:
 * every node answers for every transaction, so a node that goes down takes no receipt with it.
 *
 * SDK pitfalls handled here: TopicMessageSubmitTransaction unlocks the transaction id list when it freezes, so on
 * TRANSACTION_EXPIRED the SDK would silently retry under a new, unjournaled id — regeneration is switched off. The
 * SDK's own retries (BUSY, PLATFORM_TRANSACTION_NOT_CREATED, gRPC UNAVAILABLE) end in MaxAttemptsOrTimeoutError or,
 * with one node, "All nodes are unhealthy"; both are transient here and retried with bounded backoff. gRPC codes the
 * SDK does not retry itself (CANCELLED while a node restarts, …) come out as grpc-js's raw errors, not GrpcServiceError.
 */
import { AccountId, Status, TransactionId } from '@hashgraph/sdk';
import { setMaxListeners } from 'node:events';
import { z } from 'zod';
import { Hcs25Error, MessageTooLargeError, errorMessage } from '../core/errors.js';
import { backoffDelay, sleep } from '../core/retry.js';
import { newTransactionId } from '../hedera/tx.js';
import { MAX_MESSAGE_BYTES } from '../format/protocol.js';
import { FeeCapError, MAX_SUBMIT_FEE_TINYBAR } from './fees.js';
import { NODES_PER_REQUEST, NodeRotation, nodesOf } from './node-rotation.js';
import { SUCCESS, sdkTransport, sendError, type ReceiptResult, type SubmitTransport } from './sdk-transport.js';
import { SubmitError, statusError } from './send-failure.js';
import type { SubmitJob, SubmitOutcome, SubmitterOptions } from './submit-types.js';

export type { PriorTxId, SubmitEvent, SubmitJob, SubmitOutcome, SubmitterOptions } from './submit-types.js';

/** Receipt statuses where the transaction reached consensus but did nothing and may be tried under a new id. */
const RETRY_NEW_ID_RECEIPT = new Set<string>([Status.ThrottledAtConsensus.toString()]);

interface ActiveId {
  txId: string;
  validSeconds: number;
  validStartMs: number;
  /** Set when the network said the id is expired, whatever our clock says. */
  expired?: boolean;
}

interface Failing {
  count: number;
  since?: number;
}

const mirrorMessageSchema = z.object({
  sequence_number: z.number().int().positive(),
  topic_id: z.string().optional(),
  consensus_timestamp: z.string(),
});

export class Submitter {
  private readonly o: Required<
    Pick<
      SubmitterOptions,
      | 'window'
      | 'validSeconds'
      | 'retryBudgetMs'
      | 'minBackoffMs'
      | 'maxBackoffMs'
      | 'submitTimeoutMs'
      | 'receiptTimeoutMs'
      | 'mirrorGraceMs'
    >
  > &
    SubmitterOptions;
  private readonly now: () => number;
  private readonly nodes: NodeRotation;
  private readonly transport: SubmitTransport;
  private readonly operator: AccountId;
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly pending = new Set<Promise<SubmitOutcome>>();
  private readonly roomWaiters: (() => void)[] = [];
  private readonly stopController = new AbortController();
  private fatalError: SubmitError | FeeCapError | undefined;
  readonly stats = { sent: 0, confirmed: 0, duplicates: 0, retries: 0, reissued: 0, unsent: 0 };

  constructor(options: SubmitterOptions) {
    this.o = {
      window: 128,
      validSeconds: 120,
      retryBudgetMs: 60_000,
      minBackoffMs: 250,
      maxBackoffMs: 8_000,
      submitTimeoutMs: 30_000,
      receiptTimeoutMs: 30_000,
      mirrorGraceMs: 30_000,
      ...options,
    };
    this.now = options.now ?? Date.now;
    // Every message backing off listens on this signal: up to `window` listeners is expected, not a leak.
    setMaxListeners(0, this.stopController.signal);
    this.operator = AccountId.fromString(options.operatorId);
    this.nodes = new NodeRotation(nodesOf(options.client).map(String));
    this.transport = options.transport ?? sdkTransport(options.client, options.signer);
    if (this.nodes.size === 0)
      throw new SubmitError('NO_NODES', 'the client has no consensus nodes', { hint: 'check --network' });
  }

  /** The error that stopped submission, if any. */
  get fatal(): SubmitError | FeeCapError | undefined {
    return this.fatalError;
  }

  /** Queues one message. Resolves when it is confirmed, or `unsent` when submission stopped before it landed; never rejects. */
  submit(job: SubmitJob): Promise<SubmitOutcome> {
    const p = this.withSlot(job).then((outcome) => {
      if (outcome.status === 'unsent') this.stats.unsent++;
      return outcome;
    });
    this.pending.add(p);
    void p.finally(() => {
      this.pending.delete(p);
      for (const wake of this.roomWaiters.splice(0)) wake();
    });
    return p;
  }

  /** Messages queued or in flight. */
  get backlog(): number {
    return this.pending.size;
  }

  /**
   * Resolves when fewer than `limit` messages are queued or in flight, or submission stopped: back-pressure for
   * whoever feeds the submitter, so a run holds a window's worth of messages, not the registry's.
   */
  async whenBelow(limit: number): Promise<void> {
    while (this.pending.size >= limit && !this.fatalError)
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Waits until every queued message has an outcome. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Stops submission: nothing more is sent; messages in flight still get their receipts where possible. */
  stop(error: SubmitError | FeeCapError): void {
    if (this.fatalError) return;
    this.fatalError = error;
    this.stopController.abort(error);
    this.o.onEvent?.({ type: 'stopped', error });
    for (const wake of this.waiting.splice(0)) wake();
    for (const wake of this.roomWaiters.splice(0)) wake();
  }

  private async withSlot(job: SubmitJob): Promise<SubmitOutcome> {
    if (this.active >= this.o.window) await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.fatalError) return unsent(job, this.fatalError);
    this.active++;
    try {
      return await this.process(job);
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  private async process(job: SubmitJob): Promise<SubmitOutcome> {
    // The builder refuses larger messages, but a resumed job comes from the journal file: sent as is, the SDK would
    // split it into chunks under ids that were never journaled.
    const bytes = typeof job.message === 'string' ? Buffer.byteLength(job.message, 'utf8') : job.message.byteLength;
    if (bytes > MAX_MESSAGE_BYTES) {
      const error = new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES, `message ${job.key.slice(0, 80)}`);
      try {
        this.o.journal.append({ t: 'failure', key: job.key, code: error.code, message: error.message, fatal: false });
      } catch {
        // A closed journal: the outcome still says why.
      }
      return unsent(job, error);
    }
    let maxFee = MAX_SUBMIT_FEE_TINYBAR;
    if (this.o.fees) {
      try {
        maxFee = this.o.fees.reserve();
      } catch (err) {
        if (!(err instanceof FeeCapError)) throw err;
        this.stop(err);
        return unsent(job, err);
      }
    }
    let outcome: SubmitOutcome;
    try {
      outcome = await this.attempt(job, maxFee);
    } catch (err) {
      // The journal could not be written (disk full, closed): nothing more may be sent, since ids must be durable first.
      const error =
        err instanceof SubmitError
          ? err
          : new SubmitError(
              err instanceof Hcs25Error ? err.code : 'UNEXPECTED',
              `submission stopped: ${errorMessage(err)}`,
              {
                cause: err,
                hint:
                  err instanceof Hcs25Error && err.hint
                    ? err.hint
                    : 'run with HCS25_DEBUG=1 for details, then resume the run',
              },
            );
      this.stop(error);
      outcome = unsent(job, error);
    }
    if (outcome.status === 'confirmed') this.o.fees?.confirm();
    else this.o.fees?.release();
    return outcome;
  }

  private async attempt(job: SubmitJob, maxFee: bigint): Promise<SubmitOutcome> {
    const last = job.prior?.at(-1);
    let id: ActiveId | undefined = last && !last.consumed ? activeId(last.txId, last.validSeconds) : undefined;
    let reissue: { reason: string; from?: string } | undefined = last?.consumed
      ? { reason: 'failed', from: last.txId }
      : undefined;
    /** Transient failures of this message so far, and since when it has been failing (reset by an accepted send). */
    const failing: Failing = { count: 0 };
    /** The network holds this id: it answered OK to our send, or DUPLICATE_TRANSACTION to a resend. */
    let accepted = false;
    let duplicate = false;
    /** The nodes the id was last signed for: a resend after a timeout goes to them again, under the same id. */
    let frozen: string[] | undefined;
    let nodeId: string | undefined;

    for (;;) {
      if (this.fatalError) return unsent(job, this.fatalError);

      // 1. An id that may be past its validity: find out whether it landed before choosing another.
      if (id && this.isExpired(id)) {
        let landed: Landed;
        try {
          landed = await this.findLanded(id);
        } catch (err) {
          if (this.fatalError) continue;
          const stop = await this.backoff(job, id, failing, `mirror node: ${errorMessage(err)}`);
          if (stop) return stop;
          continue;
        }
        if (landed.kind === 'success')
          return this.confirm(job, id, landed.seq, true, 'mirror', landed.consensusTimestamp);
        if (landed.kind === 'failed') {
          const stop = await this.consumedFailure(job, id, landed.status);
          if (stop) return stop;
        }
        reissue = { reason: landed.kind === 'failed' ? `failed:${landed.status}` : 'expired', from: id.txId };
        id = undefined;
      }

      // 2. A new id, durable in the journal before anything is sent.
      if (!id) {
        id = activeId(newTransactionId(this.operator).toString(), this.o.validSeconds);
        frozen = undefined;
        accepted = false;
        duplicate = false;
        nodeId = undefined;
        await this.o.journal.write({
          t: 'tx',
          key: job.key,
          txId: id.txId,
          validSeconds: id.validSeconds,
          ...(reissue ? { reason: reissue.reason } : {}),
        });
        if (reissue) {
          this.stats.reissued++;
          this.o.onEvent?.({
            type: 'reissued',
            key: job.key,
            oldTxId: reissue.from ?? '',
            txId: id.txId,
            reason: reissue.reason,
          });
        }
        reissue = undefined;
      }

      // 3. Send, or resend the same signed bytes (after a timeout we cannot know whether the first send arrived).
      if (!accepted) {
        frozen ??= this.nodes.pick();
        const sent = await this.transport.send({
          topicId: this.o.topicId,
          memo: this.o.memo,
          txId: id.txId,
          validSeconds: id.validSeconds,
          message: job.message,
          maxFeeTinybar: maxFee,
          nodes: frozen,
          timeoutMs: this.o.submitTimeoutMs,
        });
        if (sent.ok) {
          nodeId = sent.nodeId;
          this.nodes.noteAnswer(frozen, nodeId);
          accepted = true;
          failing.since = undefined;
          this.stats.sent++;
          this.o.onEvent?.({ type: 'sent', key: job.key, txId: id.txId, nodeId });
        } else {
          const failure = sent.failure;
          if (failure.kind === 'duplicate') {
            accepted = true;
            duplicate = true;
            nodeId = failure.nodeId;
            if (nodeId) this.nodes.noteAnswer(frozen, nodeId);
          } else if (failure.kind === 'expired') {
            id.expired = true;
            continue;
          } else if (failure.kind === 'transient') {
            // Same id, signed for the next nodes: the ones it named may be down for longer than the SDK waits.
            if (this.nodes.size > NODES_PER_REQUEST) frozen = undefined;
            const stop = await this.backoff(job, id, failing, failure.reason);
            if (stop) return stop;
            continue;
          } else {
            const error = sendError(failure);
            await this.fail(job, id, error, false);
            return unsent(job, error);
          }
        }
      }

      // 4. The receipt: a sequence number, or a consensus failure. Polled again (not resent) while it is missing.
      const receipt = await this.receipt(id, nodeId);
      if (!receipt.ok) {
        if (this.isExpired(id)) continue; // not confirmed within its validity: ask the mirror node (step 1)
        const stop = await this.backoff(job, id, failing, `receipt: ${receipt.reason}`);
        if (stop) return stop;
        continue;
      }
      const { status, seq } = receipt;
      if (status === SUCCESS && seq > 0) return this.confirm(job, id, seq, duplicate, 'receipt');
      if (status === SUCCESS) {
        const stop = await this.backoff(job, id, failing, 'a SUCCESS receipt without a sequence number');
        if (stop) return stop;
        continue;
      }
      const stop = await this.consumedFailure(job, id, status);
      if (stop) return stop;
      reissue = { reason: `failed:${status}`, from: id.txId };
      id = undefined;
    }
  }

  private receipt(id: ActiveId, nodeId: string | undefined): Promise<ReceiptResult> {
    // Always an explicit node list: for requests without one, the SDK (2.81) refuses to pick a node for its first
    // 8 s (node min readmit period) after any node was marked unhealthy, even when the node's backoff is over.
    // The submitting node first (it knows the transaction soonest), then others in case it went down.
    const others = this.nodes.pick().filter((n) => n !== nodeId);
    const nodes = nodeId ? this.nodes.healthyFirst([nodeId, ...others]).slice(0, NODES_PER_REQUEST) : others;
    return this.transport.receipt({ txId: id.txId, nodes, timeoutMs: this.o.receiptTimeoutMs });
  }

  private async confirm(
    job: SubmitJob,
    id: ActiveId,
    seq: number,
    duplicate: boolean,
    via: 'receipt' | 'mirror',
    consensusTimestamp?: string,
  ): Promise<SubmitOutcome> {
    await this.o.journal.write({
      t: 'receipt',
      key: job.key,
      txId: id.txId,
      seq,
      via,
      ...(duplicate ? { duplicate: true } : {}),
      ...(consensusTimestamp ? { consensusTimestamp } : {}),
    });
    this.stats.confirmed++;
    if (duplicate) this.stats.duplicates++;
    this.o.onEvent?.({ type: 'confirmed', key: job.key, txId: id.txId, seq, duplicate });
    return {
      key: job.key,
      status: 'confirmed',
      txId: id.txId,
      seq,
      duplicate,
      via,
      ...(consensusTimestamp ? { consensusTimestamp } : {}),
    };
  }

  /** A transaction reached consensus and failed. Returns the unsent outcome when that stops the run. */
  private async consumedFailure(job: SubmitJob, id: ActiveId, status: string): Promise<SubmitOutcome | undefined> {
    if (RETRY_NEW_ID_RECEIPT.has(status)) {
      this.o.journal.append({
        t: 'failure',
        key: job.key,
        txId: id.txId,
        code: status,
        message: `reached consensus as ${status}; retrying under a new id`,
        fatal: false,
        consumed: true,
      });
      return undefined;
    }
    const error = statusError(status, this.o.topicId, 'receipt');
    await this.fail(job, id, error, true);
    return unsent(job, error);
  }

  private async fail(job: SubmitJob, id: ActiveId, error: SubmitError, consumed: boolean): Promise<void> {
    this.stop(error);
    await this.o.journal
      .write({
        t: 'failure',
        key: job.key,
        txId: id.txId,
        code: error.status,
        message: error.message,
        fatal: true,
        ...(consumed ? { consumed } : {}),
      })
      .catch(() => undefined);
  }

  /**
   * Waits before the next try. Bounded by time rather than by count: with one node, a dropped connection puts it
   * in the SDK's backoff and every request fails locally ("All nodes are unhealthy") until it is readmitted, which
   * says nothing new about the network. Returns an unsent outcome when the message has failed for too long.
   */
  private async backoff(
    job: SubmitJob,
    id: ActiveId,
    failing: Failing,
    reason: string,
  ): Promise<SubmitOutcome | undefined> {
    const attempt = ++failing.count;
    failing.since ??= Date.now();
    const failingMs = Date.now() - failing.since;
    if (failingMs > this.o.retryBudgetMs) {
      const error = new SubmitError(
        'NETWORK',
        `the network kept failing for ${Math.round(failingMs / 1000)} s (${attempt} tries; last: ${reason})`,
        {
          hint: 'check that the consensus nodes are reachable, then resume the run; unsent signals are kept in the journal',
        },
      );
      await this.fail(job, id, error, false);
      return unsent(job, error);
    }
    const delayMs = Math.round(
      backoffDelay(attempt - 1, { minMs: this.o.minBackoffMs, maxMs: this.o.maxBackoffMs, jitter: true }),
    );
    this.stats.retries++;
    this.o.onEvent?.({ type: 'retry', key: job.key, txId: id.txId, attempt, reason, delayMs });
    await pause(delayMs, this.stopController.signal);
    return undefined;
  }

  private isExpired(id: ActiveId): boolean {
    return id.expired === true || this.now() >= id.validStartMs + id.validSeconds * 1000;
  }

  /**
   * Whether an expired id reached consensus, according to the mirror node. Waits out the mirror grace first: an id
   * past its validity can no longer land, so once the mirror node has had time to ingest everything up to that
   * point, "not found" means it never landed.
   */
  private async findLanded(id: ActiveId): Promise<Landed> {
    const settledAt = id.validStartMs + id.validSeconds * 1000 + this.o.mirrorGraceMs;
    // When the node called it expired but our clock disagrees, the node's clock is ahead: the grace alone suffices.
    const wait = Math.min(settledAt - this.now(), id.expired ? this.o.mirrorGraceMs : Number.POSITIVE_INFINITY);
    if (wait > 0) await pause(wait, this.stopController.signal);
    const txs = await this.o.mirror.getTransaction(id.txId, this.stopController.signal);
    if (!txs || txs.length === 0) return { kind: 'absent' };
    const ok = txs.find((t) => t.result === 'SUCCESS');
    if (!ok) return { kind: 'failed', status: txs[0]!.result };
    const body = await this.o.mirror.getJson(
      `/api/v1/topics/messages/${encodeURIComponent(ok.consensus_timestamp)}`,
      this.stopController.signal,
    );
    const parsed = mirrorMessageSchema.safeParse(body);
    if (!parsed.success || (parsed.data.topic_id !== undefined && parsed.data.topic_id !== this.o.topicId)) {
      throw new SubmitError('MIRROR', `the mirror node shows transaction ${id.txId} but not its topic message`, {
        hint: 'try again when the mirror node has caught up',
      });
    }
    return { kind: 'success', seq: parsed.data.sequence_number, consensusTimestamp: parsed.data.consensus_timestamp };
  }
}

type Landed =
  | { kind: 'success'; seq: number; consensusTimestamp: string }
  | { kind: 'failed'; status: string }
  | { kind: 'absent' };

function activeId(txId: string, validSeconds: number): ActiveId {
  const start = TransactionId.fromString(txId).validStart;
  const validStartMs = start ? start.seconds.toNumber() * 1000 + Math.floor(start.nanos.toNumber() / 1e6) : 0;
  return { txId, validSeconds, validStartMs };
}

function unsent(job: SubmitJob, error: Error): SubmitOutcome {
  return { key: job.key, status: 'unsent', reason: error.message };
}

/** A wait that a stop ends early; the caller sees the stop when it next checks. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch(() => undefined);
}
