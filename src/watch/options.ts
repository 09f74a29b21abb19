/** What `hcs25 watch` is given (the action `watchRegistry`'s parameters) and what it returns. */
import type { EvaluateAgentsParameters, Hcs10AskParameters } from '../evaluate/evaluate-agents.js';
import type { PublishSignalsParameters } from '../publish/publish-signals.js';
import type { EvalKind, GraderId } from '../evaluate/types.js';
import type { PackMode } from '../format/pack.js';
import type { Subscribe } from './follow.js';
import type { WatchStatus } from './status.js';

export const DEFAULT_WATCH_EVERY_MS = 24 * 3_600_000;
export const DEFAULT_PER_HOST = 60;
export const DEFAULT_MIN_RUN_MS = 30_000;
export const DEFAULT_KEEP_JOURNALS_MS = 7 * 86_400_000;
export const DEFAULT_MAX_FEE_PER_DAY_HBAR = 20;
export const DEFAULT_MAX_RUN_SIGNALS = 30_000;

export interface WatchRegistryParameters {
  registry: string;
  topic: string;
  /** Cycle length: every agent is asked once per cycle (default 24 h). */
  everyMs?: number;
  /**
   * Signals one run holds at most (default 30,000): a cycle whose registry is larger is published as several runs in
   * turn, so what the publisher holds for its run stays bounded whatever the registry's size.
   */
  maxRunSignals?: number;
  /**
   * The youngest a run is closed at to ask an updated agent again (default 30 s): a registry updating its agents
   * often costs one reveal per this period at most, and an update waits no longer than this for its run.
   */
  minRunMs?: number;
  /** Asks per endpoint host per minute (default 60). */
  perHost?: number;
  /** Daily fee cap, ℏ (default 20). */
  maxFeePerDayHbar?: number;
  evals?: EvalKind[];
  /** How a cycle's signals are packed (default json); a cycle resumed after a restart packs as it began. */
  pack?: PackMode;
  grader?: GraderId;
  scienceBank?: string;
  /** Keep raw agent responses in the journals (default false: a watcher's journals would grow with every answer). */
  keepResponses?: boolean;
  /** How long the journal of a revealed run is kept, ms (default 7 days); null keeps every journal. */
  keepJournalsMs?: number | null;
  force?: boolean;
  flushMs?: number;
  hcs10?: Hcs10AskParameters;
  /** Follow the registry over mirror gRPC (default true); REST polling is the fallback either way. */
  grpc?: boolean;
  /** REST polling period, ms (default 2000). */
  pollMs?: number;
  /** The most a graceful stop waits for receipts, ms (default 30 s); then it stops at once (the journal is safe). */
  shutdownMs?: number;
  /** Graceful stop: no new asks, packs flushed, receipts awaited. */
  signal?: AbortSignal;
  /** Called once the watcher is running, with a live view of its status (the CLI serves it). */
  onReady?: (status: () => WatchStatus) => void | Promise<void>;
  onNote?: (line: string) => void;
  /** Tests and benches. */
  now?: () => number;
  submitter?: PublishSignalsParameters['submitter'];
  runner?: EvaluateAgentsParameters['runner'];
  subscribe?: Subscribe;
}

export interface WatchRegistryReturnType {
  status: WatchStatus;
  /** Runs this process published to, oldest first. */
  runs: string[];
}
