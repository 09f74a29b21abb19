/**
 * Publish: built signals → the run's signal topic, exactly once. Each signal is journaled (fsync'd) before its
 * transaction id is used; the submitter pipelines submissions under pre-set transaction ids, so a resend after a crash
 * or a lost receipt is a DUPLICATE_TRANSACTION, never a second message. What an earlier attempt journaled but never
 * confirmed goes first, under the ids it already has. Fees are metered against the run's cap.
 */
import { AccountBalanceQuery } from '@hashgraph/sdk';
import type { Hcs25Client } from '../client.js';
import { errorMessage } from '../core/errors.js';
import { parsePrivateKey } from '../hedera/client.js';
import { confirmOnMirror, type Expected } from '../publisher/confirm.js';
import { FeeCapError, FeeMeter, hbarToTinybar } from '../publisher/fees.js';
import type { Journal, RunState } from '../publisher/journal.js';
import { capHbar, type RunReport } from '../publisher/report.js';
import { withTransientRetry } from '../publisher/retry.js';
import { operatorSigner } from '../publisher/signer.js';
import { Submitter, SubmitError, nodesOf, type SubmitOutcome, type SubmitterOptions } from '../publisher/submitter.js';
import { TRANSACTION_MEMOS } from '../signals/schemas.js';
import type { BuiltSignal } from './build-signals.js';

export interface PublishSignalsParameters {
  journal: Journal;
  /** The run as journaled so far (a new run's start record, or everything a resumed run had). */
  state: RunState;
  signals: AsyncIterable<BuiltSignal>;
  /** Estimated fee of one message (the meter counts in-flight submissions at it). */
  estimateTinybar: bigint;
  /** Aborted when publishing stops for good, so whoever produces `signals` stops asking agents. */
  stop: AbortController;
  /** The user's Ctrl-C: nothing new is sent, what is in flight still gets its receipt. */
  signal?: AbortSignal;
  onSubmitted?: (submitted: { confirmed: number; pending: number; retries: number }) => void;
  onNote?: (line: string) => void;
  /** Tests and benches: submitter tuning. */
  submitter?: Partial<Pick<SubmitterOptions, 'window' | 'validSeconds' | 'retryBudgetMs' | 'minBackoffMs' | 'maxBackoffMs' | 'mirrorGraceMs'>>;
}

export interface PublishSignalsReturnType {
  status: 'complete' | 'stopped' | 'interrupted';
  error?: unknown;
  outcomes: Map<string, SubmitOutcome>;
  fees?: FeeMeter;
  submitter?: Submitter;
  /** Read back from the mirror node after publishing: at the receipt's sequence number, byte for byte. */
  mirror?: RunReport['mirror'];
}

export async function publishSignals(client: Hcs25Client, parameters: PublishSignalsParameters): Promise<PublishSignalsReturnType> {
  const { journal, state, stop, signal } = parameters;
  const operator = client.requireOperator();
  const sdk = client.sdk;
  const start = state.start;
  const outcomes = new Map<string, SubmitOutcome>();
  let submitter: Submitter | undefined;
  let fees: FeeMeter | undefined;
  let status: PublishSignalsReturnType['status'] = 'complete';
  let error: unknown;
  let mirror: RunReport['mirror'];
  let journaledSpent = state.spentTinybar;
  const onAbort = () => {
    stop.abort(signal?.reason);
    submitter?.stop(new SubmitError('INTERRUPTED', 'the run was interrupted', { hint: 'resume it with --resume' }));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const progress = () => {
    const s = submitter?.stats;
    parameters.onSubmitted?.({ confirmed: s?.confirmed ?? 0, pending: (s?.sent ?? 0) - (s?.confirmed ?? 0), retries: s?.retries ?? 0 });
  };

  try {
    // An explicit node list, as in the submitter: see its receipt query.
    const query = async () =>
      BigInt((await new AccountBalanceQuery().setAccountId(operator.accountId).setNodeAccountIds(nodesOf(sdk).slice(0, 3)).execute(sdk, 5_000)).hbars.toTinybars().toString());
    fees = new FeeMeter({
      capTinybar: hbarToTinybar(capHbar(client.config, state)),
      estimateTinybar: parameters.estimateTinybar,
      spentBefore: state.spentTinybar,
      balance: (final) => (final ? withTransientRetry(query, { attempts: 4 }) : query()),
      onSample: (spent, confirmed) => {
        journaledSpent = spent;
        journal.append({ t: 'fees', spentTinybar: spent.toString(), confirmed });
      },
    });
    await fees.begin();
    const s = (submitter = new Submitter({
      client: sdk,
      signer: operatorSigner(parsePrivateKey(operator)),
      operatorId: operator.accountId,
      topicId: start.topic,
      journal,
      memo: TRANSACTION_MEMOS.signal,
      mirror: client.mirror,
      fees,
      ...parameters.submitter,
      onEvent: (e) => {
        if (e.type === 'confirmed' || e.type === 'retry') progress();
        if (e.type === 'stopped') stop.abort(e.error);
      },
    }));
    if (signal?.aborted) onAbort();
    const track = (key: string, p: Promise<SubmitOutcome>) => void p.then((o) => outcomes.set(key, o));

    for (const sig of state.signals.values()) {
      if (sig.message && !sig.receipt) track(sig.key, s.submit({ key: sig.key, json: sig.message.json, prior: sig.txIds }));
    }
    const keepResponses = start.config.keepResponses;
    for await (const built of parameters.signals) {
      const { key, result, message, buildError } = built;
      if (state.signals.has(key)) continue;
      const stored = keepResponses || result.kind === 'availability' ? result : { ...result, response: null };
      const record = message ? { message: { json: message.json, bytes: message.bytes } } : buildError ? { buildError } : {};
      journal.append({ t: 'result', key, result: stored, ...record });
      state.signals.set(key, { key, result: stored, ...record, txIds: [] });
      if (message) track(key, s.submit({ key, json: message.json }));
      else await journal.flush();
    }
    await s.drain();
    if (signal?.aborted) status = 'interrupted';
    else if (s.fatal) {
      status = 'stopped';
      error = s.fatal;
    } else mirror = await readBack(client, state, outcomes, journal, parameters);
  } catch (err) {
    status = signal?.aborted ? 'interrupted' : 'stopped';
    error = err;
    submitter?.stop(err instanceof SubmitError || err instanceof FeeCapError ? err : new SubmitError('ABORTED', `the run stopped: ${errorMessage(err)}`));
    await submitter?.drain();
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await fees?.end().catch(() => undefined);
    if (fees && fees.spentTinybar !== journaledSpent) journal.append({ t: 'fees', spentTinybar: fees.spentTinybar.toString(), confirmed: submitter?.stats.confirmed ?? 0 });
    const reason = error instanceof Error ? error.message : status === 'interrupted' ? 'interrupted' : undefined;
    journal.append({ t: 'end', status, ...(reason ? { reason } : {}) });
    await journal.close().catch(() => undefined);
  }

  if (status === 'complete' && error === undefined) {
    const missing = [...state.signals.values()].some((sig) => sig.message && !sig.receipt && outcomes.get(sig.key)?.status !== 'confirmed');
    if (missing) status = 'stopped';
  }
  return { status, ...(error !== undefined && { error }), outcomes, ...(fees && { fees }), ...(submitter && { submitter }), ...(mirror && { mirror }) };
}

/** Reads the run's signals back from the mirror node and journals their consensus timestamps. Best effort: a lagging mirror leaves some missing. */
async function readBack(
  client: Hcs25Client,
  state: RunState,
  outcomes: Map<string, SubmitOutcome>,
  journal: Journal,
  parameters: PublishSignalsParameters,
): Promise<RunReport['mirror']> {
  const expected: Expected[] = [];
  for (const sig of state.signals.values()) {
    const outcome = outcomes.get(sig.key);
    const receipt = sig.receipt ?? (outcome?.status === 'confirmed' ? { seq: outcome.seq, consensusTimestamp: outcome.consensusTimestamp } : undefined);
    if (receipt && sig.message && !receipt.consensusTimestamp) expected.push({ key: sig.key, seq: receipt.seq, json: sig.message.json });
  }
  if (expected.length === 0) return undefined;
  try {
    const found = await confirmOnMirror(client.mirror, state.start.topic, expected, { ...(parameters.signal && { signal: parameters.signal }) });
    if (found.confirmed.length > 0) journal.append({ t: 'landed', entries: found.confirmed });
    if (found.missing.length > 0) parameters.onNote?.(`note: the mirror node does not show ${found.missing.length} of the signals yet (mirror lag); their receipts are journaled`);
    for (const m of found.mismatched.slice(0, 3)) {
      parameters.onNote?.(`warning: the mirror node shows other content at sequence ${m.seq} than signal ${m.key} whose receipt named it`);
    }
    return { confirmed: found.confirmed.length, missing: found.missing.length, mismatched: found.mismatched.length };
  } catch (err) {
    parameters.onNote?.(`note: could not read the signals back from the mirror node (${errorMessage(err)}); their receipts are journaled`);
    return undefined;
  }
}
