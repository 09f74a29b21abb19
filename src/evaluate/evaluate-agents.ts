/**
 * Evaluate: agents → results of the availability probe and the HCS-25 simple evals (SimpleMath, SimpleScience),
 * streamed as each finishes, over whatever protocol each agent speaks. HCS-10 agents are asked over HCS itself, so
 * the client's HCS-10 runner identity is made (once) when the list holds one.
 */
import type { Hcs25Client } from '../client.js';
import type { Agent } from '../core/agent.js';
import { runEvals, type RunnerOptions } from './runner.js';
import type { AnyEvalResult, EvalKind, GraderId } from './types.js';
import type { Progress } from './progress.js';
import type { ScienceBankEntry } from './science.js';
import type { SubmittedOp } from '../hcs10/messages.js';

export interface Hcs10AskParameters {
  /** Budget of one HCS-10 ask (default 120 s: every hop is a consensus transaction). */
  budgetMs?: number;
  /** HIP-991 fee-gated inbound topics: pay at most `maxHbar` per connection request, or skip such agents. */
  topicFees?: { allow: boolean; maxHbar: number };
  /** Told of every transaction an HCS-10 ask submits (fee accounting). */
  onSubmitted?: (op: SubmittedOp) => void;
}

export interface EvaluateAgentsParameters {
  agents: Agent[];
  evals: EvalKind[];
  /** Question seed: the same seed and subject ask the same questions. */
  seed: string;
  grader?: GraderId;
  scienceBank?: ScienceBankEntry[];
  /** Default: the client's config (`HCS25_BUDGET_MS`, `HCS25_CONCURRENCY`). */
  budgetMs?: number;
  concurrency?: number;
  hcs10?: Hcs10AskParameters;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /** Notes for the user (an HCS-10 identity made). */
  onNote?: (line: string) => void;
  /** Tests and benches: injected transports, HTTP tuning. */
  runner?: Partial<Pick<RunnerOptions, 'transportFactory' | 'http' | 'protocolTransports'>>;
}

export type EvaluateAgentsReturnType = AsyncIterable<AnyEvalResult>;

export function evaluateAgents(client: Hcs25Client, parameters: EvaluateAgentsParameters): EvaluateAgentsReturnType {
  return {
    async *[Symbol.asyncIterator]() {
      const { config } = client;
      const protocolTransports = parameters.runner?.protocolTransports ?? (await hcs10Transports(client, parameters));
      yield* runEvals(parameters.agents, {
        evals: parameters.evals,
        budgetMs: parameters.budgetMs ?? config.budgetMs,
        concurrency: parameters.concurrency ?? config.concurrency,
        seed: parameters.seed,
        ...(parameters.grader && { grader: parameters.grader }),
        ...(parameters.scienceBank && { scienceBank: parameters.scienceBank }),
        allowPrivateEndpoints: config.allowPrivateEndpoints,
        agentHeaders: config.agentHeaders,
        ...(parameters.signal && { signal: parameters.signal }),
        ...(parameters.onProgress && { onProgress: parameters.onProgress }),
        ...parameters.runner,
        ...(protocolTransports && { protocolTransports }),
      });
    },
  };
}

/** The HCS-10 transport factory when some agent needs it; asking over HCS-10 submits transactions as the runner. */
async function hcs10Transports(
  client: Hcs25Client,
  parameters: EvaluateAgentsParameters,
): Promise<RunnerOptions['protocolTransports']> {
  if (parameters.runner?.transportFactory || !parameters.agents.some((a) => a.protocol === 'hcs-10')) return undefined;
  const [{ identity, created }, { createHcs10Transport }] = await Promise.all([
    client.hcs10Identity(),
    import('./transports/hcs10.js'),
  ]);
  if (created) parameters.onNote?.(`made the runner an HCS-10 agent: inbound topic ${identity.inboundTopicId}`);
  const { budgetMs, topicFees, onSubmitted } = parameters.hcs10 ?? {};
  const options = {
    client: client.sdk,
    identity,
    mirror: client.mirror,
    ...(budgetMs !== undefined && { budgetMs }),
    ...(topicFees && { topicFees }),
    ...(onSubmitted && { onSubmitted }),
  };
  return { 'hcs-10': (agent) => createHcs10Transport(agent, options) };
}
