/**
 * What the watcher's parts share: the run being asked (`Cycle`), the watcher's own state as its parts see it
 * (`WatchContext`), and the small rules about runs they all apply.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { ulid } from 'ulid';
import type { BuiltSignal } from '../publish/build-signals.js';
import type { EvaluateAgentsParameters } from '../evaluate/evaluate-agents.js';
import type { Hcs25Client } from '../client.js';
import type { EvalKind } from '../evaluate/types.js';
import { randomSeed } from '../evaluate/rng.js';
import { gradingExtra, runQuestionSource } from '../publish/grading.js';
import {
  PACK_KEY_PREFIX,
  hasResult,
  signalKey,
  type Journal,
  type RunState,
  type StartRecord,
} from '../publish/journal.js';
import { encodeRunKey, newRunKey } from '../format/hashing.js';
import type { RegistryAgents } from './agents.js';
import type { DailyBudget } from './budget.js';
import type { Channel } from '../core/channel.js';
import { DEFAULT_MAX_FEE_PER_DAY_HBAR, type WatchRegistryParameters } from './options.js';
import type { Schedule } from './schedule.js';
import type { WatchState } from './state.js';
import type { WatchStatus } from './status.js';

/** One run of a cycle while it is asked and published. */
export interface Cycle {
  run: string;
  journal: Journal;
  state: RunState;
  startedAt: number;
  endsAt: number;
  runKey: Buffer;
  /** The cycle's schedule (shared by its runs). */
  schedule: Schedule;
  /** When this process opened the run (ms): an update closes it early only after `minRunMs`. */
  openedAt: number;
  /** Subjects being asked now. */
  asking: Set<string>;
  abort: AbortController;
  /** Results on their way to the publisher (bounded: asking waits while it is full). */
  channel: Channel<BuiltSignal>;
  /**
   * Signals handed to the publisher whose result record is not appended to the journal yet (key → subject). The
   * registry cursor does not pass their agents: after a SIGKILL those answers are gone, and an agent behind the cursor
   * with nothing journaled would wait for its slot in the next cycle instead of being asked again at once.
   */
  unjournaled: Map<string, string>;
  /** The cycle's time is over, its run is full, or a stop was asked: nothing new is started. */
  closing: boolean;
  /** Ends the run early (it is full): set while it runs. */
  rotate?: () => void;
  rotated?: boolean;
  /** Called when the last ask of the run ends. */
  onIdle?: () => void;
}

/** The watcher as its parts (asking, runs) see it. */
export interface WatchContext {
  readonly client: Hcs25Client;
  readonly p: WatchRegistryParameters;
  readonly now: () => number;
  readonly evals: EvalKind[];
  /** Every live agent by subject (the follower's view; the watcher keeps no copy). */
  readonly known: RegistryAgents;
  readonly budget: DailyBudget;
  /** The fee of one message, tinybars. */
  readonly estimate: bigint;
  readonly watchState: WatchState;
  readonly counters: WatchStatus['counters'];
  /** A graceful stop was asked. */
  readonly stopping: AbortSignal;
  error(err: unknown): void;
  /** Saves the watch state within a second. */
  saveSoon(): void;
  save(force: boolean): Promise<void>;
}

/** The start record of a new run of the cycle: its own id, seed and key; the watcher's evals and grading. */
export function newRunStart(
  client: Hcs25Client,
  p: WatchRegistryParameters,
  evals: EvalKind[],
  everyMs: number,
): Omit<StartRecord, 't' | 'v' | 'at'> {
  return {
    run: ulid(),
    seed: randomSeed(),
    runKey: encodeRunKey(newRunKey()),
    topic: p.topic,
    config: {
      network: client.config.network.ledger,
      operator: client.requireOperator().accountId,
      registry: p.registry,
      evals,
      concurrency: client.config.concurrency,
      budgetMs: client.config.budgetMs,
      // The run's own cap never binds before the daily one: the days a cycle spans, plus one.
      maxFeeHbar: (p.maxFeePerDayHbar ?? DEFAULT_MAX_FEE_PER_DAY_HBAR) * (Math.ceil(everyMs / 86_400_000) + 1),
      keepResponses: p.keepResponses ?? false,
      pack: p.pack ?? 'json',
      format: 3,
      ...gradingExtra(p),
    },
    // Agents join a cycle as the registry lists them: each result record names its agent.
    agents: [],
  };
}

/** Whether run `run` may carry the new ask of an agent updated during run `r.run` (run ids are ULIDs: time-ordered). */
export function carriesReask(r: { run: string; inclusive: boolean }, run: string): boolean {
  return r.inclusive ? run >= r.run : run > r.run;
}

/** Subjects with some of the run's evals journaled and not all, with the evals they lack. */
export function halfAsked(state: RunState): Map<string, EvalKind[]> {
  const evals = state.start.config.evals as EvalKind[];
  const out = new Map<string, EvalKind[]>();
  for (const subject of state.done.keys()) {
    const lacking = evals.filter((kind) => !hasResult(state, signalKey(kind, subject)));
    if (lacking.length > 0) out.set(subject, lacking);
  }
  return out;
}

/** What a journal holds and has not paid yet: signals journaled in no pack, and packs without a receipt. */
export function unpaid(state: RunState): { unpacked: number; unconfirmed: number } {
  return {
    unpacked: [...state.signals.values()].filter((s) => s.message && !s.pack).length,
    unconfirmed: [...state.packs.values()].filter((k) => !k.receipt).length,
  };
}

/** How many of `kinds` ask the agent a question (the availability probe asks none). */
export function questionsOf(kinds: readonly EvalKind[]): number {
  return kinds.filter((kind) => kind !== 'availability').length;
}

export function questionOptions(state: RunState): Pick<EvaluateAgentsParameters, 'grader' | 'scienceBank'> {
  const { grader, bank } = runQuestionSource(state.start.config);
  return { grader, ...(bank && { scienceBank: bank.entries }) };
}

/** Packs of a journal confirmed on `day` (UTC): what the cycle has paid today, read back after a restart. */
export async function receiptsOn(path: string, day: string): Promise<number> {
  let n = 0;
  for await (const line of createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  })) {
    if (!line.includes('"t":"receipt"') || !line.includes(`"at":"${day}`)) continue;
    try {
      const r = JSON.parse(line) as { key?: string; at?: string };
      if (r.key?.startsWith(PACK_KEY_PREFIX) && r.at?.startsWith(day)) n++;
    } catch {
      // A torn last line: Journal.open has cut it off already.
    }
  }
  return n;
}
