/**
 * What a run tells its caller: the summary the CLI prints (and `--json` emits), built from the journal's state and
 * the submitter's outcomes.
 */
import type { ResolvedConfig } from '../config/load.js';
import { Hcs25Error, errorMessage } from '../core/errors.js';
import type { Progress } from '../evals/progress.js';
import type { SkippedEntry } from '../registry/skips.js';
import type { SignalMessage } from '../signals/schemas.js';
import { formatHbar, hbarToTinybar, type FeeMeter } from './fees.js';
import { signalReceipt, type RunState, type SignalState } from './journal.js';
import type { Submitter, SubmitOutcome } from './submitter.js';

export interface RunProgress {
  evals: Progress;
  submitted: { confirmed: number; pending: number; retries: number };
}

/** One message a dry run would submit. */
export interface DryRunEntry {
  encoding: 'json' | 'zlib';
  /** Size on the topic. */
  bytes: number;
  /** Signals it carries. */
  signals: number;
  /** The JSON it carries (a zlib pack inflated). */
  preview: string;
  estimatedFeeTinybar: bigint;
}

export interface SignalSummary {
  key: string;
  /** The agent's name as its registry entry gave it (local knowledge: names are not on-chain). */
  name: string;
  signal: string;
  subject: string;
  status: string;
  bytes: number;
  seq?: number;
  /** Position of the signal inside the message at `seq` (0 for a message of its own). */
  index?: number;
  txId?: string;
  /** Why it is not on the topic (build error, unsent). */
  problem?: string;
}

export interface RunReport {
  run: string;
  topic?: string;
  journal?: string;
  status: 'complete' | 'stopped' | 'interrupted' | 'dry-run';
  resumed: boolean;
  agents: number;
  skipped: SkippedEntry[];
  evals: { total: number; correct: number; wrong: number; failed: number; skipped: number };
  signals: { expected: number; published: number; duplicates: number; unsent: number; buildErrors: number; retries: number; reissued: number };
  /** Messages on the topic (or, for a dry run, that a run would submit). */
  messages: { count: number; bytes: number; maxBytes: number; signalsPerMessage: number; perAgent: number };
  fees: { spentTinybar: string; spent: string; estimatePerMessageTinybar: string; cap: string };
  durationMs: number;
  /** Read back from the mirror node after publishing: at the receipt's sequence number, byte for byte. */
  mirror?: { confirmed: number; missing: number; mismatched: number };
  error?: { code: string; message: string; hint?: string };
  list: SignalSummary[];
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
  dryRunMessages?: DryRunEntry[];
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

export function buildReport(config: ResolvedConfig, state: RunState, outcomes: Map<string, SubmitOutcome>, extra: ReportExtra): RunReport {
  const list: SignalSummary[] = [];
  const tally = { total: 0, correct: 0, wrong: 0, failed: 0, skipped: 0 };
  let published = 0;
  let duplicates = 0;
  let unsent = 0;
  let buildErrors = 0;
  for (const sig of state.signals.values()) {
    const message = sig.message ? (JSON.parse(sig.message.json) as SignalMessage) : undefined;
    countOutcome(tally, sig);
    // Outcomes are by message: the signal's pack, or in a v1 run the signal itself.
    const outcome = outcomes.get(sig.pack?.key ?? sig.key);
    const receipt =
      signalReceipt(state, sig) ??
      (outcome?.status === 'confirmed' ? { seq: outcome.seq, txId: outcome.txId, duplicate: outcome.duplicate, ...(sig.pack && { index: sig.pack.index }) } : undefined);
    const entry: SignalSummary = {
      key: sig.key,
      signal: message?.signal ?? sig.result.kind,
      subject: sig.result.agent.subject,
      name: sig.result.agent.name,
      status: message?.status ?? 'unbuilt',
      bytes: sig.message?.bytes ?? 0,
    };
    if (receipt) {
      entry.seq = receipt.seq;
      entry.index = receipt.index ?? 0;
      entry.txId = receipt.txId;
      published++;
      if (receipt.duplicate) duplicates++;
    } else if (sig.buildError) {
      entry.problem = `not built: ${sig.buildError.message}`;
      buildErrors++;
    } else if (extra.status !== 'dry-run') {
      entry.problem = outcome?.status === 'unsent' ? `unsent: ${outcome.reason}` : 'unsent';
      unsent++;
    }
    list.push(entry);
  }
  const estimate = extra.dryRunEstimate ?? extra.fees?.estimateTinybar ?? 0n;
  const sizes = extra.status === 'dry-run' ? (extra.dryRunMessages ?? []).map((m) => m.bytes) : publishedSizes(state, outcomes);
  const spent = extra.status === 'dry-run' ? BigInt(sizes.length) * estimate : (extra.fees?.spentTinybar ?? state.spentTinybar);
  const carried = extra.status === 'dry-run' ? list.filter((l) => l.bytes > 0).length : published;
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
      count: sizes.length,
      bytes: sizes.reduce((n, b) => n + b, 0),
      maxBytes: sizes.reduce((n, b) => Math.max(n, b), 0),
      signalsPerMessage: sizes.length > 0 ? round2(carried / sizes.length) : 0,
      perAgent: agents > 0 ? round3(sizes.length / agents) : 0,
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
  };
}

/** Sizes of the run's messages that are on the topic: its packs, or in a v1 run its signals' own messages. */
function publishedSizes(state: RunState, outcomes: Map<string, SubmitOutcome>): number[] {
  const landed = (key: string, receipt: unknown) => receipt !== undefined || outcomes.get(key)?.status === 'confirmed';
  const sizes = [...state.packs.values()].filter((p) => landed(p.key, p.receipt)).map((p) => p.bytes);
  for (const sig of state.signals.values()) if (sig.message && !sig.pack && landed(sig.key, sig.receipt)) sizes.push(sig.message.bytes);
  return sizes;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

function countOutcome(tally: RunReport['evals'], sig: SignalState): void {
  tally.total++;
  const r = sig.result;
  if (r.kind === 'availability') {
    if (r.reachable) tally.correct++;
    else tally.failed++;
    return;
  }
  switch (r.outcome) {
    case 'correct':
      tally.correct++;
      return;
    case 'wrong':
    case 'unparseable':
    case 'empty':
      tally.wrong++;
      return;
    case 'skipped':
      tally.skipped++;
      return;
    default:
      tally.failed++;
  }
}
