/**
 * What a run tells its caller: the summary the CLI prints (and `--json` emits), built from the journal's state and
 * the submitter's outcomes.
 */
import type { ResolvedConfig } from '../config/load.js';
import { Hcs25Error, errorMessage } from '../core/errors.js';
import type { Progress } from '../evaluate/progress.js';
import type { SkippedEntry } from '../discover/skips.js';
import { formatHbar, hbarToTinybar, type FeeMeter } from './fees.js';
import {
  REPORT_LIST_LIMIT,
  countOutcome,
  signalReceipt,
  signalSummary,
  type EvalTally,
  type RunState,
  type SignalSummary,
} from './journal.js';

export type { SignalSummary } from './journal.js';
import type { Submitter, SubmitOutcome } from './submitter.js';

export interface RunProgress {
  evals: Progress;
  submitted: { confirmed: number; pending: number; retries: number };
}

/** One message a dry run would submit. */
export interface DryRunEntry {
  /** `zlib`: a compressed message (format 3 `op: "zlib"`), whose preview is inflated. */
  encoding: 'json' | 'zlib';
  /** Size on the topic. */
  bytes: number;
  /** Signals it carries. */
  signals: number;
  /** The JSON it carries (a compressed message inflated). */
  preview: string;
  estimatedFeeTinybar: bigint;
}

export interface RunReport {
  run: string;
  topic?: string;
  journal?: string;
  status: 'complete' | 'stopped' | 'interrupted' | 'dry-run';
  resumed: boolean;
  agents: number;
  skipped: SkippedEntry[];
  /** `notAsked`: evals skipped because the agent's probe found it unreachable (counted in `skipped` too). */
  evals: EvalTally;
  signals: {
    expected: number;
    published: number;
    duplicates: number;
    unsent: number;
    buildErrors: number;
    retries: number;
    reissued: number;
  };
  /** Messages on the topic (or, for a dry run, that a run would submit). */
  messages: { count: number; bytes: number; maxBytes: number; signalsPerMessage: number; perAgent: number };
  fees: { spentTinybar: string; spent: string; estimatePerMessageTinybar: string; cap: string };
  durationMs: number;
  /** Read back from the mirror node after publishing: at the receipt's sequence number, byte for byte. */
  mirror?: { confirmed: number; missing: number; mismatched: number };
  error?: { code: string; message: string; hint?: string };
  /** Signals one by one: problems first, then the first of the rest, at most REPORT_LIST_LIMIT (1,000). */
  list: SignalSummary[];
  /** Signals counted above but not in `list` (a large run). */
  listOmitted: number;
}

export interface ReportExtra {
  status: RunReport['status'];
  resumed: boolean;
  skipped: SkippedEntry[];
  evals: Progress;
  fees?: FeeMeter;
  submitter?: Submitter;
  journal?: string;
  error?: unknown;
  dryRunEstimate?: bigint;
  /** Messages a dry run would submit. */
  dryRunMessages?: { count: number; bytes: number; maxBytes: number };
  durationMs: number;
}

/** The run's fee cap: as given now (flag, env, file), else as the run was started with. */
export function capHbar(config: ResolvedConfig, state: RunState): number {
  return config.sources.maxFeeHbar === 'default' ? state.start.config.maxFeeHbar : config.maxFeeHbar;
}

export function addProgress(base: Progress, p: Progress): Progress {
  return {
    total: base.total + p.total,
    done: base.done + p.done,
    running: p.running,
    correct: base.correct + p.correct,
    wrong: base.wrong + p.wrong,
    failed: base.failed + p.failed,
    skipped: base.skipped + p.skipped,
  };
}

/**
 * The run's report from its state: what a compact state settled (counted as it was confirmed) plus what it still
 * holds (unconfirmed, unsent), or everything a full state holds. Memory and time follow the signals still held.
 */
export function buildReport(
  config: ResolvedConfig,
  state: RunState,
  outcomes: Map<string, SubmitOutcome>,
  extra: ReportExtra,
): RunReport {
  const settled = state.settled;
  const tally = { ...settled.evals };
  const problems: SignalSummary[] = [];
  const rest: SignalSummary[] = [];
  let published = settled.published;
  let duplicates = settled.duplicates;
  let unsent = 0;
  let buildErrors = settled.buildErrors;
  let built = settled.built;
  for (const sig of state.signals.values()) {
    countOutcome(tally, sig.result);
    if (sig.message) built++;
    // Outcomes are by message: the signal's pack, or in a v1 run the signal itself.
    const outcome = outcomes.get(sig.pack?.key ?? sig.key);
    const receipt =
      signalReceipt(state, sig) ??
      (outcome?.status === 'confirmed'
        ? {
            seq: outcome.seq,
            txId: outcome.txId,
            duplicate: outcome.duplicate,
            ...(sig.pack && { index: sig.pack.index }),
          }
        : undefined);
    const listed = problems.length + rest.length < REPORT_LIST_LIMIT;
    const entry = listed ? signalSummary(sig, receipt) : undefined;
    if (receipt) {
      published++;
      if (receipt.duplicate) duplicates++;
    } else if (sig.buildError) buildErrors++;
    else if (extra.status !== 'dry-run') {
      if (entry) entry.problem = outcome?.status === 'unsent' ? `unsent: ${outcome.reason}` : 'unsent';
      unsent++;
    }
    if (entry) (entry.problem ? problems : rest).push(entry);
  }
  const list = [
    ...problems,
    ...settled.list.filter((l) => l.problem),
    ...rest,
    ...settled.list.filter((l) => !l.problem),
  ].slice(0, REPORT_LIST_LIMIT);
  const estimate = extra.dryRunEstimate ?? extra.fees?.estimateTinybar ?? 0n;
  const sizes =
    extra.status === 'dry-run'
      ? (extra.dryRunMessages ?? { count: 0, bytes: 0, maxBytes: 0 })
      : publishedSizes(state, outcomes);
  const spent =
    extra.status === 'dry-run' ? BigInt(sizes.count) * estimate : (extra.fees?.spentTinybar ?? state.spentTinybar);
  const carried = extra.status === 'dry-run' ? built : published;
  const agents = state.start.agents.length;
  const error = extra.error;
  const expectedSignals = state.start.agents.length * state.start.config.evals.length;
  return {
    run: state.start.run,
    ...(state.start.topic ? { topic: state.start.topic } : {}),
    ...(extra.journal ? { journal: extra.journal } : {}),
    status: extra.status,
    resumed: extra.resumed,
    agents: state.start.agents.length,
    skipped: extra.skipped,
    evals: tally,
    signals: {
      expected: expectedSignals,
      published,
      duplicates,
      unsent,
      buildErrors,
      retries: extra.submitter?.stats.retries ?? 0,
      reissued: extra.submitter?.stats.reissued ?? 0,
    },
    messages: {
      count: sizes.count,
      bytes: sizes.bytes,
      maxBytes: sizes.maxBytes,
      signalsPerMessage: sizes.count > 0 ? round2(carried / sizes.count) : 0,
      perAgent: agents > 0 ? round3(sizes.count / agents) : 0,
    },
    fees: {
      spentTinybar: spent.toString(),
      spent: formatHbar(spent),
      estimatePerMessageTinybar: estimate.toString(),
      cap: formatHbar(hbarToTinybar(capHbar(config, state))),
    },
    durationMs: extra.durationMs,
    ...(error !== undefined
      ? {
          error: {
            code: error instanceof Hcs25Error ? error.code : 'ERROR',
            message: errorMessage(error),
            ...(error instanceof Hcs25Error && error.hint ? { hint: error.hint } : {}),
          },
        }
      : {}),
    list,
    listOmitted: tally.total - list.length,
  };
}

/** Sizes of the run's messages that are on the topic: settled ones, and the packs (or v1 signals' own messages) still held. */
function publishedSizes(
  state: RunState,
  outcomes: Map<string, SubmitOutcome>,
): { count: number; bytes: number; maxBytes: number } {
  const sizes = { ...state.settled.messages };
  const landed = (key: string, receipt: unknown, bytes: number) => {
    if (receipt === undefined && outcomes.get(key)?.status !== 'confirmed') return;
    sizes.count++;
    sizes.bytes += bytes;
    sizes.maxBytes = Math.max(sizes.maxBytes, bytes);
  };
  for (const p of state.packs.values()) landed(p.key, p.receipt, p.bytes);
  for (const sig of state.signals.values())
    if (sig.message && !sig.pack) landed(sig.key, sig.receipt, sig.message.bytes);
  return sizes;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const round3 = (x: number) => Math.round(x * 1000) / 1000;
