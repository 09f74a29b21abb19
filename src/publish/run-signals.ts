/**
 * `hcs25 run` as one action: discover → evaluate → build → pack → publish, pipelined (each result is built, journaled
 * and handed to the packer the moment the runner yields it, while other agents are still being asked; each packed
 * message is journaled and submitted as soon as it is full or its flush timer fires).
 * A resume continues a journaled run: it re-evaluates only what has no result, resubmits only what has no receipt
 * (under the ids it already had, so nothing lands twice), and keeps the run's seed and key. A dry run evaluates and
 * builds but submits nothing.
 */
import { ulid } from 'ulid';
import type { Hcs25Client } from '../client.js';
import { UsageError } from '../core/errors.js';
import type { Agent } from '../core/agent.js';
import type { EvalKind, GraderId } from '../evaluate/types.js';
import type { Progress } from '../evaluate/progress.js';
import { emptyProgress } from '../evaluate/progress.js';
import { randomSeed } from '../evaluate/rng.js';
import { estimateSubmitFee, feeForecast } from './fees.js';
import { gradingExtra, runQuestionSource } from './grading.js';
import {
  Journal,
  addResult,
  emptyRunState,
  hasResult,
  runFormat,
  settleSignal,
  signalKey,
  type RunConfigSummary,
  type RunState,
} from './journal.js';
import { addProgress, buildReport, type DryRunEntry, type RunProgress, type RunReport } from './report.js';
import type { PackMode } from '../format/pack.js';
import { readableJsonV3 } from '../format/pack-v3.js';
import { SignalPackingV3 } from './packing-v3.js';
import type { PackedOut } from './packing-base.js';
import { RunError, checkSignalTopic } from './topic.js';
import { parsePrivateKey } from '../hedera/client.js';
import type { SkippedEntry } from '../discover/skips.js';
import { decodeRunKey, encodeRunKey, newRunKey } from '../format/hashing.js';
import { buildSignals } from './build-signals.js';
import { discoverAgents } from '../discover/discover-agents.js';
import { DEFAULT_EVALS } from '../evaluate/eval-list.js';
import { evaluateAgents, type EvaluateAgentsParameters, type Hcs10AskParameters } from '../evaluate/evaluate-agents.js';
import { publishSignals, type PublishSignalsParameters } from './publish-signals.js';

export type { DryRunEntry, RunProgress, RunReport, SignalSummary } from './report.js';

export type AgentSource = { registry: string } | { agentsFile: string } | { agents: Agent[] };

export interface RunSignalsParameters {
  /** Agents of a new run. Ignored on resume (the journal's list is used). */
  source?: AgentSource;
  /** Signal topic. A resume uses the journal's and refuses a different one. Optional for a dry run. */
  topic?: string;
  evals?: EvalKind[];
  seed?: string;
  dryRun?: boolean;
  /** Run id to resume. */
  resume?: string;
  /** How signals are packed into messages (default json); a resume packs as the run began, in its format. */
  pack?: PackMode;
  /** A partly filled pack is sent when no signal has completed it for this long, ms (default 2000). */
  flushMs?: number;
  /** How long to ride out a busy or unreachable network before stopping, ms (publishSignals `retryForMs`). */
  retryForMs?: number;
  /** Keep raw responses in the journal (default true). */
  keepResponses?: boolean;
  /** Publish to a topic whose memo is not an HCS-25 signal topic's (on purpose). */
  force?: boolean;
  /** Grader of a new run (default first-token@1); a resume uses the journal's. */
  grader?: GraderId;
  /** A private SimpleScience bank file for a new run; a resume uses the journal's (and checks it is unchanged). */
  scienceBank?: string;
  hcs10?: Hcs10AskParameters;
  signal?: AbortSignal;
  onProgress?: (progress: RunProgress) => void;
  /** Called with each message of a dry run. */
  onDryRunMessage?: (entry: DryRunEntry) => void;
  /** Notes for the user (warnings, resume facts); the CLI prints them on stderr. */
  onNote?: (line: string) => void;
  /** Tests and benches: submitter tuning, runner transports. */
  submitter?: PublishSignalsParameters['submitter'];
  runner?: EvaluateAgentsParameters['runner'];
}

export type RunSignalsReturnType = RunReport;

export async function runSignals(client: Hcs25Client, parameters: RunSignalsParameters): Promise<RunSignalsReturnType> {
  const started = Date.now();
  if (parameters.resume) {
    if (parameters.dryRun)
      throw new UsageError('--dry-run and --resume cannot be combined', { hint: 'a dry run has no journal to resume' });
    await client.connect();
    const { journal, state } = await openRun(client, parameters.resume, parameters);
    return publishRun(client, parameters, journal, state, { skipped: [], resumed: true, started });
  }
  const evals = parameters.evals ?? [...DEFAULT_EVALS];
  if (!parameters.dryRun) {
    client.requireOperator();
    if (!parameters.topic)
      throw new UsageError('a run needs a signal topic (--topic ID or HCS25_TOPIC)', {
        hint: 'create one with `hcs25 topic create`',
      });
    // An unreachable network is found out now, not after every agent was evaluated.
    await client.connect();
  }
  if (parameters.topic) {
    await checkSignalTopic(client.mirror, parameters.topic, {
      ...(!parameters.dryRun && { operatorKey: parsePrivateKey(client.requireOperator()).publicKey.toStringRaw() }),
      ...(parameters.force && { force: true }),
      ...(parameters.dryRun && { warnOnly: true }),
      ...(parameters.onNote && { onNote: parameters.onNote }),
      ...(parameters.signal && { signal: parameters.signal }),
    });
  }
  const { agents, skipped } = await loadAgents(client, parameters);
  const state = newRunState(client, parameters, agents, evals);
  if (parameters.dryRun) return dryRun(client, parameters, state, { skipped, started });
  const estimate = await estimateSubmitFee(client.network.ledger, client.mirror);
  const forecast = feeForecast(
    agents.length,
    evals.length,
    state.start.config.pack,
    estimate.tinybar,
    client.config.maxFeeHbar,
  );
  parameters.onNote?.(forecast.line);
  if (forecast.over) throw forecast.refusal;
  const { run, seed, runKey, topic, config, agents: listed } = state.start;
  const journal = await Journal.create(client.config.stateDir, { run, seed, runKey, topic, config, agents: listed });
  parameters.onNote?.(
    `run ${run}: ${agents.length} agent${agents.length === 1 ? '' : 's'} × ${evals.length} eval${evals.length === 1 ? '' : 's'} → topic ${topic} (journal ${journal.path})`,
  );
  return publishRun(client, parameters, journal, state, {
    skipped,
    resumed: false,
    started,
    estimate: estimate.tinybar,
  });
}

/** Evaluate what the run still lacks → build → publish, and report. */
async function publishRun(
  client: Hcs25Client,
  parameters: RunSignalsParameters,
  journal: Journal,
  state: RunState,
  extra: { skipped: SkippedEntry[]; resumed: boolean; started: number; estimate?: bigint },
): Promise<RunReport> {
  const estimate = extra.estimate ?? (await estimateSubmitFee(client.network.ledger, client.mirror)).tinybar;
  let evals: Progress = emptyProgress(0);
  let submitted: RunProgress['submitted'] = { confirmed: 0, pending: 0, retries: 0 };
  const progress = () => parameters.onProgress?.({ evals, submitted });
  const stop = new AbortController();
  const results = evaluateMissing(client, parameters, state, stop.signal, (p) => {
    evals = p;
    progress();
  });
  const published = await publishSignals(client, {
    journal,
    state,
    signals: buildSignals(results, {
      run: state.start.run,
      runKey: decodeRunKey(state.start.runKey),
      version: runFormat(state.start.config),
    }),
    estimateTinybar: estimate,
    ...(parameters.flushMs !== undefined && { flushMs: parameters.flushMs }),
    ...(parameters.retryForMs !== undefined && { retryForMs: parameters.retryForMs }),
    stop,
    ...(parameters.signal && { signal: parameters.signal }),
    onSubmitted: (s) => {
      submitted = s;
      progress();
    },
    ...(parameters.onNote && { onNote: parameters.onNote }),
    ...(parameters.submitter && { submitter: parameters.submitter }),
  });
  const report = buildReport(client.config, state, published.outcomes, {
    status: published.status,
    resumed: extra.resumed,
    skipped: extra.skipped,
    evals,
    journal: journal.path,
    durationMs: Date.now() - extra.started,
    ...(published.fees && { fees: published.fees }),
    ...(published.submitter && { submitter: published.submitter }),
    ...(published.error !== undefined && { error: published.error }),
  });
  if (published.mirror) report.mirror = published.mirror;
  return report;
}

/** The evals each agent still lacks, asked group by group (at most 2^3 groups: agents lacking the same evals). */
async function* evaluateMissing(
  client: Hcs25Client,
  parameters: RunSignalsParameters,
  state: RunState,
  signal: AbortSignal,
  onProgress: (p: Progress) => void,
): AsyncGenerator<import('../evaluate/types.js').AnyEvalResult> {
  const start = state.start;
  const grading = questionOptions(start.config);
  let done = emptyProgress(0);
  for (const group of missingWork(start.agents, start.config.evals as EvalKind[], state)) {
    if (signal.aborted) return;
    const base = done;
    yield* evaluateAgents(client, {
      agents: group.agents,
      evals: group.evals,
      seed: start.seed,
      budgetMs: start.config.budgetMs,
      concurrency: start.config.concurrency,
      ...grading,
      signal,
      onProgress: (p) => {
        done = addProgress(base, p);
        onProgress(done);
      },
      ...(parameters.hcs10 && { hcs10: parameters.hcs10 }),
      ...(parameters.onNote && { onNote: parameters.onNote }),
      ...(parameters.runner && { runner: parameters.runner }),
    });
  }
}

async function dryRun(
  client: Hcs25Client,
  parameters: RunSignalsParameters,
  state: RunState,
  extra: { skipped: SkippedEntry[]; started: number },
): Promise<RunReport> {
  const { config } = client;
  const start = state.start;
  const estimate = await estimateSubmitFee(config.network.ledger, client.mirror);
  const forecast = feeForecast(
    start.agents.length,
    start.config.evals.length,
    start.config.pack,
    estimate.tinybar,
    config.maxFeeHbar,
  );
  parameters.onNote?.(forecast.line);
  if (forecast.over)
    parameters.onNote?.(
      `warning: a real run would refuse to start: ${forecast.refusal.message} (${forecast.refusal.hint})`,
    );
  let evals = emptyProgress(0);
  const results = evaluateAgents(client, {
    agents: start.agents,
    evals: start.config.evals as EvalKind[],
    seed: start.seed,
    ...questionOptions(start.config),
    ...(parameters.signal && { signal: parameters.signal }),
    onProgress: (p) => {
      evals = p;
      parameters.onProgress?.({ evals: p, submitted: { confirmed: 0, pending: 0, retries: 0 } });
    },
    // Asking over HCS-10 submits transactions: a dry run never does.
    runner: { protocolTransports: {}, ...parameters.runner },
  });
  // No flush timer: a dry run shows the messages a run fills when agents answer without long pauses.
  const messages = { count: 0, bytes: 0, maxBytes: 0 };
  const show = (packed: PackedOut[]) => {
    for (const m of packed) {
      messages.count++;
      messages.bytes += m.bytes.length;
      messages.maxBytes = Math.max(messages.maxBytes, m.bytes.length);
      if (parameters.onDryRunMessage) parameters.onDryRunMessage(dryRunEntry(m, estimate.tinybar));
    }
  };
  // A dry run is a new run: format 3.
  const packing = new SignalPackingV3({
    mode: start.config.pack ?? 'json',
    flushMs: Number.POSITIVE_INFINITY,
    perSubject: start.config.evals.length,
    onPacked: show,
  });
  for await (const built of buildSignals(results, { run: start.run, runKey: decodeRunKey(start.runKey) })) {
    const record = built.message
      ? { message: { json: built.message.json, bytes: built.message.bytes } }
      : built.buildError
        ? { buildError: built.buildError }
        : {};
    addResult(state, { key: built.key, result: built.result, ...record });
    // Nothing is sent: the signal is counted (and listed while the list has room) and let go.
    const sig = state.signals.get(built.key);
    if (sig) settleSignal(state, sig);
    if (built.message) packing.add(built.key, built.message.json);
  }
  packing.flush();
  return buildReport(config, state, new Map(), {
    status: parameters.signal?.aborted ? 'interrupted' : 'dry-run',
    resumed: false,
    skipped: extra.skipped,
    evals,
    dryRunEstimate: estimate.tinybar,
    dryRunMessages: messages,
    durationMs: Date.now() - extra.started,
  });
}

// ---------- pieces ----------

function newRunState(
  client: Hcs25Client,
  parameters: RunSignalsParameters,
  agents: Agent[],
  evals: EvalKind[],
): RunState {
  const { config } = client;
  const dry = parameters.dryRun === true;
  const summary: RunConfigSummary = {
    network: config.network.ledger,
    ...(!dry && { operator: client.requireOperator().accountId }),
    ...(!dry && parameters.source && 'registry' in parameters.source && { registry: parameters.source.registry }),
    ...(!dry && parameters.source && 'agentsFile' in parameters.source && { agentsFile: parameters.source.agentsFile }),
    evals,
    concurrency: config.concurrency,
    budgetMs: config.budgetMs,
    maxFeeHbar: config.maxFeeHbar,
    keepResponses: dry ? false : (parameters.keepResponses ?? true),
    pack: parameters.pack ?? 'json',
    format: 3,
    ...gradingExtra(parameters),
  };
  return emptyRunState({
    t: 'start',
    v: 1,
    at: new Date().toISOString(),
    run: ulid(),
    seed: parameters.seed ?? randomSeed(),
    runKey: encodeRunKey(newRunKey()),
    topic: parameters.topic ?? '',
    config: summary,
    agents,
  });
}

/** Opens a journaled run for a resume, after checking it can be resumed here (topic, operator, network). */
async function openRun(
  client: Hcs25Client,
  runId: string,
  parameters: RunSignalsParameters,
): Promise<{ journal: Journal; state: RunState }> {
  const { config } = client;
  const operator = client.requireOperator();
  const { journal, state } = await Journal.open(config.stateDir, runId);
  const start = state.start;
  const refuse = async (message: string, hint: string): Promise<never> => {
    await journal.close();
    throw new UsageError(message, { hint });
  };
  if (parameters.topic && parameters.topic !== start.topic)
    await refuse(
      `run ${runId} publishes to topic ${start.topic}, not ${parameters.topic}`,
      'omit --topic when resuming',
    );
  // Pre-set transaction ids belong to the account that made them: another payer cannot resend them.
  if (start.config.operator && start.config.operator !== operator.accountId) {
    await refuse(
      `run ${runId} was started by operator ${start.config.operator}, not ${operator.accountId}`,
      'resume with the same operator account (HCS25_OPERATOR_ID)',
    );
  }
  if (start.config.network !== config.network.ledger)
    await refuse(
      `run ${runId} ran on ${start.config.network}, not ${config.network.ledger}`,
      `pass --network ${start.config.network}`,
    );
  journal.append({ t: 'resume' });
  await journal.flush();
  // A compact state holds exactly the journaled signals whose message is not yet confirmed.
  const pending = [...state.signals.values()].filter((s) => s.message).length;
  parameters.onNote?.(
    `resuming run ${runId}: ${state.results} results journaled, ${pending} of them not yet confirmed`,
  );
  return { journal, state };
}

async function loadAgents(
  client: Hcs25Client,
  parameters: RunSignalsParameters,
): Promise<{ agents: Agent[]; skipped: SkippedEntry[] }> {
  const source = parameters.source;
  if (!source) throw new UsageError('a run needs agents: --registry ID or --agents FILE');
  const found =
    'agents' in source
      ? { agents: source.agents, skipped: [] }
      : await discoverAgents(client, { ...source, ...(parameters.signal && { signal: parameters.signal }) });
  if (found.agents.length === 0) {
    const why =
      found.skipped.length > 0 ? ` (${found.skipped.length} entries skipped; first: ${found.skipped[0]!.reason})` : '';
    throw new RunError(
      'NO_AGENTS',
      `there are no agents to evaluate${why}`,
      'check the registry or agents file with `hcs25 discover`',
    );
  }
  return found;
}

/** A packed message as a dry run shows it: a zlib message is inflated for the preview. */
function dryRunEntry(m: PackedOut, estimate: bigint): DryRunEntry {
  const { text, zlib } = readableJsonV3(Buffer.from(m.bytes));
  return {
    encoding: zlib ? 'zlib' : 'json',
    bytes: m.bytes.length,
    signals: m.keys.length,
    preview: text,
    estimatedFeeTinybar: estimate,
  };
}

/** Agents grouped by the evals they still lack. */
function missingWork(agents: Agent[], evals: EvalKind[], state: RunState): { agents: Agent[]; evals: EvalKind[] }[] {
  const groups = new Map<string, { agents: Agent[]; evals: EvalKind[] }>();
  for (const agent of agents) {
    const lacking = evals.filter((kind) => !hasResult(state, signalKey(kind, agent.subject)));
    if (lacking.length === 0) continue;
    const id = lacking.join(',');
    let group = groups.get(id);
    if (!group) {
      group = { agents: [], evals: lacking };
      groups.set(id, group);
    }
    group.agents.push(agent);
  }
  return [...groups.values()];
}

/** The runner's grader and science bank for a journaled run (as the run began). */
function questionOptions(
  config: RunState['start']['config'],
): Pick<EvaluateAgentsParameters, 'grader' | 'scienceBank'> {
  const { grader, bank } = runQuestionSource(config);
  return { grader, ...(bank && { scienceBank: bank.entries }) };
}
