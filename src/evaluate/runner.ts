/**
 * The concurrent eval runner. One file over 500 lines: its scheduling, back-pressure, budgets and retries share one
 * loop's state, and split they would pass that state around.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { UsageError } from '../core/errors.js';
import type { Agent, Protocol } from '../core/agent.js';
import type { AskFailure, AskResult, Transport } from './transports/types.js';
import { createTransport } from './transports/index.js';
import { HttpClient, type HttpClientOptions } from '../net/http-client.js';
import { abortableSleep } from '../net/deadline.js';
import { resolveAgentHeaders, type AgentHeaderConfig } from './transports/headers.js';
import type { AnyEvalResult, EvalKind, EvalOutcome, EvalResult, GraderId, ProbeEvalResult, Question } from './types.js';
import { EVAL_KINDS } from './types.js';
import { createRng } from './rng.js';
import { generateMathQuestion } from './math.js';
import { loadScienceBank, pickScienceQuestion, type ScienceBankEntry } from './science.js';
import { DEFAULT_GRADER, gradeQuestion } from './graders.js';
import { emptyProgress, type Progress } from './progress.js';
import { Channel } from '../core/channel.js';

export type { Progress } from './progress.js';

export interface RunnerOptions {
  evals: EvalKind[];
  /** Per eval, including its one retry (default 30000). */
  budgetMs: number;
  /** Evals in flight at once, across all agents (default 16). */
  concurrency: number;
  seed: string;
  grader?: GraderId;
  scienceBank?: ScienceBankEntry[];
  allowPrivateEndpoints: boolean;
  signal?: AbortSignal;
  /** Tests and benches inject transports; by default one HTTP transport per agent over a shared client. */
  transportFactory?: (agent: Agent) => Transport;
  /** Transports for protocols the HTTP layer does not speak (HCS-10), used by the default factory. */
  protocolTransports?: Partial<Record<Protocol, (agent: Agent) => Transport>>;
  onProgress?: (p: Progress) => void;
  /** Per-agent headers naming env vars: the config's `agentHeaders` (operator config only, never the registry). */
  agentHeaders?: AgentHeaderConfig;
  env?: NodeJS.ProcessEnv;
  /** HTTP client tuning: per-host cap, and for tests an injected resolver/dialler. */
  http?: Omit<HttpClientOptions, 'allowPrivateEndpoints'>;
  /** Tests: filled with what the runner holds in memory (bounded by the concurrency, never by the agents). */
  footprint?: RunnerFootprint;
}

export const DEFAULT_BUDGET_MS = 30_000;
export const DEFAULT_CONCURRENCY = 16;
/** Wait before retrying a transient failure that named no Retry-After. */
const RETRY_BACKOFF_MS = 500;
/** A retry is only worth it with at least this much budget left after the wait. */
const MIN_RETRY_BUDGET_MS = 1_000;

/** Deterministic per (seed, subject, eval): a resumed run asks every agent the same question again. */
export function questionFor(
  kind: 'math' | 'science',
  subject: string,
  seed: string,
  bank: readonly ScienceBankEntry[],
): Question {
  const rng = createRng(`${seed}\u0000${subject}\u0000${kind}`);
  return kind === 'math' ? generateMathQuestion(rng) : pickScienceQuestion(bank, rng);
}

/** Transport failure → eval outcome (DESIGN §3.1: timeout → timeout; auth/payment → skipped; agent-side → upstream-error). */
export function failureOutcome(failure: AskFailure): EvalOutcome {
  switch (failure.kind) {
    case 'timeout':
      return 'timeout';
    case 'auth-required':
      return 'skipped';
    case 'http-error':
    case 'rate-limited':
    case 'agent-error':
      return 'upstream-error';
    default:
      return 'error';
  }
}

function validate(agents: Agent[], options: RunnerOptions): void {
  if (options.evals.length === 0 || options.evals.some((e) => !EVAL_KINDS.includes(e))) {
    throw new UsageError(`evals must be some of ${EVAL_KINDS.join(', ')}`);
  }
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
    throw new UsageError('concurrency must be a whole number ≥ 1');
  if (!(options.budgetMs > 0)) throw new UsageError('the eval budget must be a positive number of milliseconds');
  const seen = new Set<string>();
  for (const agent of agents) {
    if (seen.has(agent.subject))
      throw new UsageError(`agent ${agent.subject} is listed twice`, {
        hint: 'deduplicate subjects before evaluating',
      });
    seen.add(agent.subject);
  }
}

interface Task {
  agentIndex: number;
  kind: EvalKind;
}

/** Results a runner holds for a consumer that has not pulled them yet, per unit of concurrency, before its workers wait. */
const READY_PER_SLOT = 2;

/**
 * Evaluates agents: availability probe, SimpleMath and SimpleScience (as selected), each within its budget and
 * with at most one retry on a transient failure, at most `concurrency` at a time. Results stream out as each
 * eval finishes, so a publisher can submit while later agents are still being asked.
 *
 * When the availability probe is among the evals it runs first for each agent, and an agent it finds unreachable is
 * not asked its other evals: they come out at once as not measured (`skipped`, reason `probe-unreachable: …`),
 * without a transport call or budget spent. Other agents' evals fill the slots, so the schedule stays dense.
 *
 * Memory: what the runner holds is bounded by the concurrency, not by the number of agents — tasks are derived from
 * a cursor, follow-up evals of probed agents wait in a queue of at most `concurrency × evals`, and workers pause
 * while `concurrency × 2` results wait for the consumer (back-pressure: a slow consumer slows the asking).
 *
 * Stopping: abort `signal`, or stop iterating. Iteration ends at once without error; in-flight asks are aborted
 * and their results dropped (an aborted ask is not the agent's timeout), as are results not yet handed out.
 */
export function runEvals(agents: Agent[], options: RunnerOptions): AsyncIterable<AnyEvalResult> {
  return { [Symbol.asyncIterator]: () => runEvaluation(agents, options) };
}

/** The runner's in-memory footprint, for tests: entries held now and the most held at once. */
export interface RunnerFootprint {
  ready: number;
  maxReady: number;
  queued: number;
  maxQueued: number;
  openTransports: number;
  maxOpenTransports: number;
}

/** Reason text of an eval not asked because the agent's probe found it unreachable (reason code `probe-unreachable`). */
export const PROBE_UNREACHABLE = 'probe-unreachable';

async function* runEvaluation(agents: Agent[], options: RunnerOptions): AsyncGenerator<AnyEvalResult> {
  validate(agents, options);
  const grader = options.grader ?? DEFAULT_GRADER;
  const bank = options.evals.includes('science') ? (options.scienceBank ?? loadScienceBank()) : [];
  if (options.evals.includes('science') && bank.length === 0) throw new UsageError('the science bank is empty');

  let client: HttpClient | undefined;
  let factory = options.transportFactory;
  if (!factory) {
    const rules = options.agentHeaders ?? {};
    const env = options.env ?? process.env;
    // Every agent's headers are resolved up front so a missing variable fails the run before anything is asked,
    // and again when its transport opens (not kept: a registry's worth of header maps is not worth the memory).
    for (const a of agents) resolveAgentHeaders(rules, a, env);
    const shared = new HttpClient({ ...options.http, allowPrivateEndpoints: options.allowPrivateEndpoints });
    client = shared;
    factory = (agent) =>
      options.protocolTransports?.[agent.protocol]?.(agent) ??
      createTransport(agent, { client: shared, headers: resolveAgentHeaders(rules, agent, env) });
  }
  const makeTransport = factory;

  const stop = new AbortController();
  // Every eval in flight listens on this signal: `concurrency` listeners is expected, not a leak.
  setMaxListeners(0, stop.signal);
  const onOuterAbort = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) stop.abort(options.signal.reason);
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const probeFirst = options.evals.includes('availability');
  const followUps = probeFirst ? options.evals.filter((k) => k !== 'availability') : options.evals.slice(1);
  const total = agents.length * options.evals.length;
  const progress = emptyProgress(total);
  const report = () => options.onProgress?.({ ...progress });
  // Results wait here until the consumer pulls them: a worker's push waits while too many wait.
  const results = new Channel<AnyEvalResult>(Math.max(1, options.concurrency * READY_PER_SLOT));
  const footprint = options.footprint;
  const note = () => {
    if (!footprint) return;
    footprint.ready = results.length;
    footprint.maxReady = Math.max(footprint.maxReady, footprint.ready);
    footprint.queued = queue.length;
    footprint.maxQueued = Math.max(footprint.maxQueued, footprint.queued);
    footprint.openTransports = open.size;
    footprint.maxOpenTransports = Math.max(footprint.maxOpenTransports, open.size);
  };
  const deliver = async (result: AnyEvalResult) => {
    count(progress, result);
    await results.push(result);
    note();
  };

  // One transport per agent, opened on its first eval and closed after its last.
  const open = new Map<number, { transport: Transport; left: number }>();
  const transportFor = (i: number): Transport => {
    let entry = open.get(i);
    if (!entry) {
      entry = { transport: makeTransport(agents[i]!), left: options.evals.length };
      open.set(i, entry);
    }
    return entry.transport;
  };
  const releaseTransport = async (i: number, evals = 1): Promise<void> => {
    const entry = open.get(i);
    if (!entry) return;
    entry.left -= evals;
    if (entry.left <= 0) {
      open.delete(i);
      await entry.transport.close?.().catch(() => undefined);
    }
  };

  // Evals of agents whose probe came back (or every eval after an agent's first when there is no probe) go first,
  // so an agent's transport closes soon after it opens and the queue stays short.
  const queue: Task[] = [];
  let nextAgent = 0;
  const take = (): Task | undefined => {
    const queued = queue.shift();
    if (queued) return queued;
    if (nextAgent >= agents.length) return undefined;
    const agentIndex = nextAgent++;
    if (probeFirst) return { agentIndex, kind: 'availability' };
    for (const kind of followUps) queue.push({ agentIndex, kind });
    return { agentIndex, kind: options.evals[0]! };
  };

  let probing = 0;
  const idle: (() => void)[] = [];
  const wakeIdle = () => {
    for (const w of idle.splice(0)) w();
  };

  const worker = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      const task = take();
      if (!task) {
        // Probes still running may queue follow-up evals: wait for them rather than leave slots idle at the end.
        if (probing === 0) break;
        await new Promise<void>((resolve) => idle.push(resolve));
        continue;
      }
      if (task.kind === 'availability') probing++;
      const agent = agents[task.agentIndex]!;
      progress.running += 1;
      report();
      note();
      let result: AnyEvalResult;
      try {
        result = await runOne(
          agent,
          task.kind,
          transportFor(task.agentIndex),
          options.budgetMs,
          stop.signal,
          bank,
          options.seed,
          grader,
        );
      } finally {
        progress.running -= 1;
        await releaseTransport(task.agentIndex);
      }
      if (task.kind === 'availability') probing--;
      if (stop.signal.aborted) break;
      await deliver(result);
      if (task.kind === 'availability' && followUps.length > 0) {
        if (result.kind === 'availability' && !result.reachable) {
          await releaseTransport(task.agentIndex, followUps.length);
          for (const kind of followUps)
            await deliver(
              notAsked(
                agent,
                kind as 'math' | 'science',
                result,
                questionFor(kind as 'math' | 'science', agent.subject, options.seed, bank).id,
                grader,
              ),
            );
        } else {
          for (const kind of followUps) queue.push({ agentIndex: task.agentIndex, kind });
        }
      }
      if (task.kind === 'availability') wakeIdle();
      report();
    }
  };

  let failure: unknown;
  const workers = Promise.all(Array.from({ length: Math.min(options.concurrency, total) }, worker)).then(
    () => results.close(),
    (err: unknown) => {
      // A push refused because the run was stopped is not a failure of its own.
      if (!stop.signal.aborted) failure = err;
      stop.abort(err);
      results.close();
    },
  );
  // A stop ends the results at once: waiting workers wake (their pushes are refused) and so does the consumer.
  stop.signal.addEventListener(
    'abort',
    () => {
      results.close();
      wakeIdle();
    },
    { once: true },
  );

  try {
    for await (const result of results) {
      if (stop.signal.aborted) break;
      note();
      yield result;
    }
    if (failure !== undefined) throw failure;
  } finally {
    stop.abort();
    options.signal?.removeEventListener('abort', onOuterAbort);
    await workers;
    await Promise.all([...open.values()].map((e) => e.transport.close?.().catch(() => undefined)));
    await client?.close();
  }
}

/** An eval that was not asked because the agent's probe found it unreachable: not measured, nothing spent. */
function notAsked(
  agent: Agent,
  kind: 'math' | 'science',
  probe: ProbeEvalResult,
  questionId: string,
  grader: GraderId,
): EvalResult {
  // The question it would have been asked: a v1 signal carries its hash even when skipped.
  const why = `${PROBE_UNREACHABLE}: not asked, the availability probe found the agent unreachable${probe.reason ? ` (${probe.reason})` : ''}`;
  return skipped(kind, agent, questionId, grader, why, probe.fetchedAt);
}

/** An eval that asked nothing: skipped, score 0, no answer. */
function skipped(
  kind: 'math' | 'science',
  agent: Agent,
  questionId: string,
  grader: GraderId,
  reason: string,
  fetchedAt: string,
): EvalResult {
  return evalResult(kind, agent, questionId, grader, 'skipped', null, false, 0, null, fetchedAt, reason);
}

function count(p: Progress, r: AnyEvalResult): void {
  p.done += 1;
  if (r.kind === 'availability') {
    if (r.reachable) p.correct += 1;
    else p.failed += 1;
    return;
  }
  switch (r.outcome) {
    case 'correct':
      p.correct += 1;
      break;
    case 'wrong':
    case 'unparseable':
    case 'empty':
      p.wrong += 1;
      break;
    case 'skipped':
      p.skipped += 1;
      break;
    default:
      p.failed += 1;
  }
}

async function runOne(
  agent: Agent,
  kind: EvalKind,
  transport: Transport,
  budgetMs: number,
  signal: AbortSignal,
  bank: readonly ScienceBankEntry[],
  seed: string,
  grader: GraderId,
): Promise<AnyEvalResult> {
  if (kind === 'availability') {
    const probe = await transport.probe({ signal, budgetMs });
    const result: ProbeEvalResult = {
      kind: 'availability',
      agent,
      reachable: probe.reachable,
      latencyMs: probe.latencyMs,
      transport: agent.protocol,
      fetchedAt: new Date().toISOString(),
    };
    if (probe.httpStatus !== undefined) result.httpStatus = probe.httpStatus;
    if (probe.reason !== undefined) result.reason = probe.reason;
    return result;
  }
  const question = questionFor(kind, agent.subject, seed, bank);
  if (!transport.canAsk) {
    return skipped(
      kind,
      agent,
      question.id,
      grader,
      agent.protocol === 'mcp' ? 'MCP has no chat operation' : `no way to ask a ${agent.protocol} agent`,
      new Date().toISOString(),
    );
  }
  const { attempt, retried } = await askWithRetry(transport, question.prompt, budgetMs, signal);
  const fetchedAt = new Date().toISOString();
  if (!attempt.ok) {
    const reason = `${attempt.kind}: ${attempt.message}${retried ? ' (after one retry)' : ''}`;
    return evalResult(
      kind,
      agent,
      question.id,
      grader,
      failureOutcome(attempt),
      null,
      false,
      attempt.latencyMs,
      null,
      fetchedAt,
      reason,
    );
  }
  const grade = gradeQuestion(question, attempt.text, grader);
  const reason = retried ? (grade.reason ? `${grade.reason}; answered on retry` : 'answered on retry') : grade.reason;
  return evalResult(
    kind,
    agent,
    question.id,
    grader,
    grade.outcome,
    grade.answer,
    grade.compliant,
    attempt.latencyMs,
    attempt.text,
    fetchedAt,
    reason || undefined,
  );
}

/**
 * Every eval result is made here, with its fields in one order: one object shape for all of them (a registry-scale run
 * makes hundreds of thousands, and the journal and the builder read them all).
 */
function evalResult(
  kind: 'math' | 'science',
  agent: Agent,
  questionId: string,
  grader: GraderId,
  outcome: EvalOutcome,
  answer: string | null,
  compliant: boolean,
  latencyMs: number,
  response: string | null,
  fetchedAt: string,
  reason: string | undefined,
): EvalResult {
  const result: EvalResult = {
    kind,
    agent,
    questionId,
    transport: agent.protocol,
    grader,
    outcome,
    score: outcome === 'correct' ? 100 : 0,
    answer,
    compliant,
    latencyMs,
    response,
    fetchedAt,
  };
  if (reason !== undefined) result.reason = reason;
  return result;
}

/**
 * One ask, and at most one more when the failure is transient (connection reset, 502/503/504, or a 429 that names
 * its Retry-After) and the wait still leaves a useful part of the same budget. Deterministic failures are never
 * retried; nor is a 429 without Retry-After, whose wait we could only guess (DESIGN §5).
 */
async function askWithRetry(
  transport: Transport,
  prompt: string,
  budgetMs: number,
  signal: AbortSignal,
): Promise<{ attempt: AskResult; retried: boolean }> {
  const started = performance.now();
  const first = await transport.ask(prompt, { signal, budgetMs });
  if (first.ok || !first.transient || signal.aborted) return { attempt: first, retried: false };
  if (first.kind === 'rate-limited' && first.retryAfterMs === undefined) return { attempt: first, retried: false };
  const wait = first.retryAfterMs ?? RETRY_BACKOFF_MS;
  const left = budgetMs - (performance.now() - started) - wait;
  if (left < MIN_RETRY_BUDGET_MS) return { attempt: first, retried: false };
  try {
    await abortableSleep(wait, signal);
  } catch {
    return { attempt: first, retried: false };
  }
  return { attempt: await transport.ask(prompt, { signal, budgetMs: left }), retried: true };
}
