import type { Protocol } from '../../core/agent.js';
import type { FailureKind } from '../../net/failure.js';

export type { FailureKind };

export interface AskOptions {
  /** Aborts the request (the runner's budget or the user's Ctrl-C). */
  signal?: AbortSignal;
  /** Time budget for this one ask, in ms; the transport fails with `timeout` when it runs out. */
  budgetMs: number;
}

export interface AskSuccess {
  ok: true;
  /** The agent's answer text, as extracted from the protocol envelope (not yet graded). */
  text: string;
  latencyMs: number;
  /** Protocol details worth keeping locally (dialect, task state, http status); never put on-chain raw. */
  meta: Record<string, unknown>;
}

export interface AskFailure {
  ok: false;
  kind: FailureKind;
  /** One line, safe to show and to publish (no response bodies, no secrets). */
  message: string;
  httpStatus?: number;
  /** From Retry-After, when the agent sent one. */
  retryAfterMs?: number;
  /** Whether one retry could help (connection reset, 502/503, 429). */
  transient: boolean;
  latencyMs: number;
}

export type AskResult = AskSuccess | AskFailure;

export interface ProbeResult {
  reachable: boolean;
  latencyMs: number;
  httpStatus?: number;
  reason?: string;
}

export interface Transport {
  readonly protocol: Protocol;
  ask(prompt: string, options: AskOptions): Promise<AskResult>;
  probe(options: AskOptions): Promise<ProbeResult>;
  /** Whether this transport can carry an eval question at all (MCP cannot: its evals are `skipped`). */
  readonly canAsk: boolean;
  close?(): Promise<void>;
}
