/**
 * Publish: built signals → the run's signal topic, exactly once. Each result is journaled with its signal; a run with
 * a pack mode (every format-3 and v2 run) feeds the signals to its packers (`publish/packing.ts`, `packing-v3.ts`)
 * and journals each packed message — its bytes and the keys of the signals it carries — before its transaction id is
 * used (a v1 run sends one journaled message per signal). The submitter pipelines submissions under pre-set transaction ids, so a resend after a crash or a lost
 * receipt is a DUPLICATE_TRANSACTION, never a second message. What an earlier attempt journaled but never confirmed
 * goes first, under the ids it already has; journaled signals in no pack are packed anew, so a signal is packed once.
 * A flush timer sends a partly filled pack when no signal has completed it for a while: a slow agent does not hold
 * others' signals back. Fees are metered against the run's cap.
 */
import { AccountBalanceQuery } from '@hashgraph/sdk';
import type { Hcs25Client } from '../client.js';
import { errorMessage } from '../core/errors.js';
import { parsePrivateKey } from '../hedera/client.js';
import { confirmOnMirror, type Expected } from './confirm.js';
import { FeeCapError, FeeMeter, hbarToTinybar } from './fees.js';
import {
  PACK_KEY_PREFIX,
  addResult,
  applyPack,
  hasResult,
  packBytes,
  runFormat,
  settleMessage,
  type Journal,
  type RunState,
} from './journal.js';
import { capHbar, type RunReport } from './report.js';
import { operatorSigner } from './signer.js';
import type { PackedOut } from './packing-base.js';
import { signalPacking } from './packing.js';
import { DEFAULT_RETRY_FOR_MS, SubmitError, withTransientRetry } from './send-failure.js';
import { nodesOf } from './node-rotation.js';
import { Submitter, type SubmitOutcome, type SubmitterOptions } from './submitter.js';
import { TRANSACTION_MEMOS } from '../format/protocol.js';
import { TRANSACTION_MEMOS_V3 } from '../format/schema-v3.js';
import type { BuiltSignal } from './build-signals.js';

export interface PublishSignalsParameters {
  journal: Journal;
  /** The run as journaled so far (a new run's start record, or everything a resumed run had). */
  state: RunState;
  signals: AsyncIterable<BuiltSignal>;
  /** Estimated fee of one message (the meter counts in-flight submissions at it). */
  estimateTinybar: bigint;
  /** A partly filled pack is sent this long after it was begun, ms (default 2000; see PackingOptions.flushMs). */
  flushMs?: number;
  /**
   * How long to ride out a busy or unreachable network without progress before stopping (resumable), ms: default
   * DEFAULT_RETRY_FOR_MS; not finite for `watch`, which never stops for it. Each wait is said through `onNote`.
   */
  retryForMs?: number;
  /** Aborted when publishing stops for good, so whoever produces `signals` stops asking agents. */
  stop: AbortController;
  /** The user's Ctrl-C: nothing new is sent, what is in flight still gets its receipt. */
  signal?: AbortSignal;
  onSubmitted?: (submitted: { confirmed: number; pending: number; retries: number }) => void;
  onNote?: (line: string) => void;
  /** Tests and benches: submitter tuning. */
  submitter?: Partial<
    Pick<
      SubmitterOptions,
      'window' | 'validSeconds' | 'retryBudgetMs' | 'minBackoffMs' | 'maxBackoffMs' | 'mirrorGraceMs'
    >
  >;
}

/** Messages read back from the mirror node after a run (a larger run reads back a sample: its first confirmed messages). */
export const READ_BACK_LIMIT = 2_000;
/** Messages queued or in flight in the submitter, per slot of its window, before the publisher stops pulling signals. */
const BACKLOG_PER_SLOT = 2;
/** A network that stays busy is said again this often. */
const BUSY_NOTE_EVERY_MS = 15_000;
/** Signals handed to the packers and not yet in a message, per slot of the submitter's window. */
const PACKED_PER_SLOT = 16;

export interface PublishSignalsReturnType {
  status: 'complete' | 'stopped' | 'interrupted';
  error?: unknown;
  /**
   * By message key: a pack's key, or in a v1 run the signal's. With a compact state (`state.keep === 'pending'`, as
   * `Journal.open`/`emptyRunState` make it) confirmed messages are settled into the state instead and only the
   * outcomes of unsent messages are kept here.
   */
  outcomes: Map<string, SubmitOutcome>;
  fees?: FeeMeter;
  submitter?: Submitter;
  /** Read back from the mirror node after publishing: at the receipt's sequence number, byte for byte. */
  mirror?: RunReport['mirror'];
}

export async function publishSignals(
  client: Hcs25Client,
  parameters: PublishSignalsParameters,
): Promise<PublishSignalsReturnType> {
  const { journal, state, stop, signal } = parameters;
  const operator = client.requireOperator();
  const sdk = client.sdk;
  const start = state.start;
  const format = runFormat(start.config);
  const outcomes = new Map<string, SubmitOutcome>();
  let submitter: Submitter | undefined;
  let fees: FeeMeter | undefined;
  let status: PublishSignalsReturnType['status'] = 'complete';
  let error: unknown;
  let mirror: RunReport['mirror'];
  let journaledSpent = state.spentTinybar;
  /** Confirmed messages of a compact state, for the read-back (settled messages leave the state). */
  const readBackSample: (Expected & { signals: number })[] = [];
  let readBackSkipped = 0;
  const onAbort = () => {
    stop.abort(signal?.reason);
    submitter?.stop(new SubmitError('INTERRUPTED', 'the run was interrupted', { hint: 'resume it with --resume' }));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const retryForMs = parameters.retryForMs ?? DEFAULT_RETRY_FOR_MS;
  // A busy network is said at once and then every BUSY_NOTE_EVERY_MS while it lasts, not once per message and retry.
  let lastBusyNote = 0;
  const busyNote = (reason: string, delayMs: number) => {
    if (Date.now() - lastBusyNote < BUSY_NOTE_EVERY_MS) return;
    lastBusyNote = Date.now();
    const patience = Number.isFinite(retryForMs)
      ? `gives up after ${formatDuration(retryForMs)} without progress`
      : 'keeps trying';
    parameters.onNote?.(
      `network busy or unreachable (${reason}): retrying in ${(delayMs / 1000).toFixed(1)} s; the run ${patience}`,
    );
  };
  const progress = () => {
    const s = submitter?.stats;
    parameters.onSubmitted?.({
      confirmed: s?.confirmed ?? 0,
      pending: (s?.sent ?? 0) - (s?.confirmed ?? 0),
      retries: s?.retries ?? 0,
    });
  };

  try {
    // First: a worker transport boots (and loads the SDK) while the fee meter asks for the balance.
    const transport = client.submitTransport();
    // An explicit node list, as in the submitter: see its receipt query.
    const query = async () =>
      BigInt(
        (
          await new AccountBalanceQuery()
            .setAccountId(operator.accountId)
            .setNodeAccountIds(nodesOf(sdk).slice(0, 3))
            .execute(sdk, 5_000)
        ).hbars
          .toTinybars()
          .toString(),
      );
    fees = new FeeMeter({
      capTinybar: hbarToTinybar(capHbar(client.config, state)),
      estimateTinybar: parameters.estimateTinybar,
      spentBefore: state.spentTinybar,
      balance: (final) => (final ? withTransientRetry(query, { forMs: retryForMs, onRetry: busyNote }) : query()),
      onSample: (spent, confirmed) => {
        journaledSpent = spent;
        journal.append({ t: 'fees', spentTinybar: spent.toString(), confirmed });
      },
    });
    await fees.begin();
    submitter = new Submitter({
      client: sdk,
      signer: operatorSigner(parsePrivateKey(operator)),
      operatorId: operator.accountId,
      topicId: start.topic,
      journal,
      memo: format === 3 ? TRANSACTION_MEMOS_V3.signal : TRANSACTION_MEMOS.signal,
      mirror: client.mirror,
      fees,
      transport,
      retryBudgetMs: retryForMs,
      ...parameters.submitter,
      onEvent: (e) => {
        if (e.type === 'retry') busyNote(e.reason, e.delayMs);
        if (e.type === 'confirmed' || e.type === 'retry') progress();
        if (e.type === 'stopped') stop.abort(e.error);
      },
    });
    const s = submitter;
    if (signal?.aborted) onAbort();
    const compact = state.keep === 'pending';
    const track = (key: string, p: Promise<SubmitOutcome>) =>
      void p.then((o) => {
        if (!compact || o.status !== 'confirmed') {
          outcomes.set(key, o);
          return;
        }
        if (readBackSample.length < READ_BACK_LIMIT) {
          const message = key.startsWith(PACK_KEY_PREFIX) ? state.packs.get(key) : state.signals.get(key);
          const bytes = message && ('signals' in message ? packBytes(message) : message.message?.json);
          if (bytes)
            readBackSample.push({
              key,
              seq: o.seq,
              message: bytes,
              signals: 'signals' in message! ? message.signals.length : 1,
            });
        } else readBackSkipped++;
        settleMessage(state, key, {
          txId: o.txId,
          seq: o.seq,
          ...(o.duplicate && { duplicate: true }),
          ...(o.consensusTimestamp && { consensusTimestamp: o.consensusTimestamp }),
        });
      });
    const mode = start.config.pack;
    const send = (messages: PackedOut[]) => {
      for (const m of messages) {
        const key = `${PACK_KEY_PREFIX}${state.packCount}`;
        const record = { key, encoding: m.encoding, data: m.data, bytes: m.bytes.length, signals: m.keys };
        // Appended before the submitter journals (and syncs) the transaction id: durable before the id is used.
        journal.append({ t: 'pack', ...record });
        applyPack(state, record);
        track(key, s.submit({ key, message: m.bytes }));
      }
    };
    const packing = mode
      ? signalPacking(format === 3 ? 3 : 2, {
          mode,
          flushMs: parameters.flushMs ?? 2_000,
          perSubject: start.config.evals.length,
          onPacked: send,
        })
      : undefined;

    try {
      // What an earlier attempt journaled but never confirmed, under its journaled ids.
      for (const p of state.packs.values()) {
        if (!p.receipt) track(p.key, s.submit({ key: p.key, message: packBytes(p), prior: p.txIds }));
      }
      for (const sig of state.signals.values()) {
        if (!sig.message || sig.receipt || sig.pack) continue;
        if (packing) packing.add(sig.key, sig.message.json);
        else track(sig.key, s.submit({ key: sig.key, message: sig.message.json, prior: sig.txIds }));
      }
      const keepResponses = start.config.keepResponses;
      const backlog = (parameters.submitter?.window ?? 128) * BACKLOG_PER_SLOT;
      for await (const built of parameters.signals) {
        const { key, result, message, buildError } = built;
        if (hasResult(state, key)) continue;
        const stored = keepResponses || result.kind === 'availability' ? result : { ...result, response: null };
        const record = message
          ? { message: { json: message.json, bytes: message.bytes } }
          : buildError
            ? { buildError }
            : {};
        journal.append({ t: 'result', key, result: stored, ...record });
        addResult(state, { key, result: stored, ...record });
        if (message && packing) packing.add(key, message.json);
        else if (message) track(key, s.submit({ key, message: message.json }));
        else await journal.flush();
        // Back-pressure: signals are pulled (and agents asked) no faster than the network confirms them.
        await s.whenBelow(backlog);
        await packing?.whenBelow(backlog * PACKED_PER_SLOT);
      }
      packing?.flush();
    } finally {
      packing?.stop();
    }
    await s.drain();
    if (signal?.aborted) status = 'interrupted';
    else if (s.fatal) {
      status = 'stopped';
      error = s.fatal;
    } else mirror = await readBack(client, state, outcomes, journal, parameters, readBackSample, readBackSkipped);
  } catch (err) {
    status = signal?.aborted ? 'interrupted' : 'stopped';
    error = err;
    submitter?.stop(
      err instanceof SubmitError || err instanceof FeeCapError
        ? err
        : new SubmitError('ABORTED', `the run stopped: ${errorMessage(err)}`),
    );
    await submitter?.drain();
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await fees?.end().catch(() => undefined);
    if (fees && fees.spentTinybar !== journaledSpent)
      journal.append({
        t: 'fees',
        spentTinybar: fees.spentTinybar.toString(),
        confirmed: submitter?.stats.confirmed ?? 0,
      });
    const reason = error instanceof Error ? error.message : status === 'interrupted' ? 'interrupted' : undefined;
    const end = { t: 'end', status, ...(reason ? { reason } : {}) } as const;
    journal.append(end);
    // The state stays what a read of the journal gives (a watcher reveals the run from it).
    state.end = { ...end, at: new Date().toISOString() };
    await journal.close().catch(() => undefined);
  }

  if (status === 'complete' && error === undefined) {
    const confirmed = (key: string) => outcomes.get(key)?.status === 'confirmed';
    const missing = [...state.signals.values()].some(
      (sig) =>
        sig.message &&
        !sig.receipt &&
        !(sig.pack && (state.packs.get(sig.pack.key)?.receipt || confirmed(sig.pack.key))) &&
        !confirmed(sig.key),
    );
    if (missing) status = 'stopped';
  }
  return {
    status,
    ...(error !== undefined && { error }),
    outcomes,
    ...(fees && { fees }),
    ...(submitter && { submitter }),
    ...(mirror && { mirror }),
  };
}

/**
 * Reads the run's messages back from the mirror node and journals their consensus timestamps. Counts are in signals
 * (a pack counts for each signal it carries). Best effort: a lagging mirror leaves some missing.
 */
async function readBack(
  client: Hcs25Client,
  state: RunState,
  outcomes: Map<string, SubmitOutcome>,
  journal: Journal,
  parameters: PublishSignalsParameters,
  sample: (Expected & { signals: number })[],
  skipped: number,
): Promise<RunReport['mirror']> {
  const expected: Expected[] = [...sample];
  const carried = new Map(sample.map((e) => [e.key, e.signals]));
  const expect = (
    key: string,
    journaled: { seq: number; consensusTimestamp?: string } | undefined,
    message: string | Buffer,
  ) => {
    const outcome = outcomes.get(key);
    const receipt =
      journaled ??
      (outcome?.status === 'confirmed'
        ? { seq: outcome.seq, consensusTimestamp: outcome.consensusTimestamp }
        : undefined);
    if (receipt && !receipt.consensusTimestamp) expected.push({ key, seq: receipt.seq, message });
  };
  for (const sig of state.signals.values())
    if (sig.message && !sig.pack) expect(sig.key, sig.receipt, sig.message.json);
  for (const p of state.packs.values()) expect(p.key, p.receipt, packBytes(p));
  if (expected.length === 0) return undefined;
  try {
    const found = await confirmOnMirror(client.mirror, state.start.topic, expected, {
      ...(parameters.signal && { signal: parameters.signal }),
    });
    if (found.confirmed.length > 0) journal.append({ t: 'landed', entries: found.confirmed });
    const signals = (items: { key: string }[]) =>
      items.reduce((n, e) => n + (carried.get(e.key) ?? state.packs.get(e.key)?.signals.length ?? 1), 0);
    const missing = signals(found.missing);
    if (skipped > 0)
      parameters.onNote?.(
        `note: read back the first ${sample.length} messages from the mirror node (a sample); ${skipped} more are confirmed by receipt`,
      );
    if (missing > 0)
      parameters.onNote?.(
        `note: the mirror node does not show ${missing} of the signals yet (mirror lag); their receipts are journaled`,
      );
    for (const m of found.mismatched.slice(0, 3)) {
      parameters.onNote?.(
        `warning: the mirror node shows other content at sequence ${m.seq} than message ${m.key} whose receipt named it`,
      );
    }
    return { confirmed: signals(found.confirmed), missing, mismatched: signals(found.mismatched) };
  } catch (err) {
    parameters.onNote?.(
      `note: could not read the signals back from the mirror node (${errorMessage(err)}); their receipts are journaled`,
    );
    return undefined;
  }
}

/** `90 s`, `5 min`, `2 h`: a patience, as the user set it. */
function formatDuration(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}
