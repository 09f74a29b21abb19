/**
 * `hcs25 run` as a library: discover (or read an agents file) → evaluate → build → journal → submit, pipelined:
 * each result is journaled and handed to the submitter the moment the runner yields it, while other agents are
 * still being asked. `resume` continues a journaled run: it re-evaluates only what has no result, resubmits only
 * what has no receipt (under the ids it already had, so nothing lands twice), and keeps the run's seed and key.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { AccountBalanceQuery, type Client } from '@hashgraph/sdk';
import { z } from 'zod';
import { ulid } from 'ulid';
import { requireOperator, type ResolvedConfig } from '../config/load.js';
import { Hcs25Error, UsageError, errorMessage } from '../errors.js';
import type { AnyEvalResult, EvalKind, GraderId } from '../evals/types.js';
import { GRADER_IDS } from '../evals/graders.js';
import { loadScienceBank } from '../evals/science.js';
import type { Progress } from '../evals/progress.js';
import { evaluateAgents, type RunnerOptions } from '../evals/runner.js';
import { randomSeed } from '../evals/rng.js';
import { createClient, parsePrivateKey } from '../hedera/client.js';
import { MirrorRestClient } from '../hedera/mirror-rest.js';
import type { Agent } from '../registry/types.js';
import type { SkippedEntry } from '../registry/skips.js';
import { buildSignalMessage, type BuiltMessage } from '../signals/build.js';
import { decodeRunKey, encodeRunKey, newRunKey } from '../signals/hashing.js';
import { TRANSACTION_MEMOS, type SignalMessage } from '../signals/schemas.js';
import { FeeCapError, FeeMeter, estimateSubmitFee, formatHbar, hbarToTinybar } from './fees.js';
import { Journal, resultKey, signalKey, type RunConfigSummary, type RunState, type SignalState } from './journal.js';
import { withTransientRetry } from './retry.js';
import { confirmOnMirror, type Expected } from './confirm.js';
import { operatorSigner } from './signer.js';
import { Submitter, SubmitError, nodesOf, type SubmitOutcome, type SubmitterOptions } from './submitter.js';
import { isSignalTopicMemo } from './topic.js';

export class RunError extends Hcs25Error {
  constructor(code: string, message: string, hint: string) {
    super(code, message, { hint });
    this.name = 'RunError';
  }
}

export type AgentSource = { registry: string } | { agentsFile: string } | { agents: Agent[] };

export interface RunOptions {
  config: ResolvedConfig;
  /** Agents of a new run. Ignored on resume (the journal's list is used). */
  source?: AgentSource;
  /** Signal topic. A resume uses the journal's and refuses a different one. Optional for a dry run. */
  topic?: string;
  evals?: EvalKind[];
  seed?: string;
  dryRun?: boolean;
  /** Run id to resume. */
  resume?: string;
  /** Keep raw responses in the journal (default true). */
  keepResponses?: boolean;
  /** Grader of a new run (default first-token@1); a resume uses the journal's. */
  grader?: GraderId;
  /** A private SimpleScience bank file for a new run; a resume uses the journal's (and checks it is unchanged). */
  scienceBank?: string;
  signal?: AbortSignal;
  onProgress?: (progress: RunProgress) => void;
  /** Called with each message of a dry run. */
  onDryRunMessage?: (entry: DryRunEntry) => void;
  /** Notes for the user (warnings, resume facts); the CLI prints them on stderr. */
  onNote?: (line: string) => void;
  /** For tests and benches: a prepared client (not closed by the run), submitter tuning, runner transports. */
  client?: Client;
  submitter?: Partial<Pick<SubmitterOptions, 'window' | 'validSeconds' | 'retryBudgetMs' | 'minBackoffMs' | 'maxBackoffMs' | 'mirrorGraceMs'>>;
  runner?: Partial<Pick<RunnerOptions, 'transportFactory' | 'http' | 'scienceBank' | 'grader' | 'protocolTransports'>>;
  /** HCS-10 agents: their own ask budget (default 120 s: every hop is a consensus transaction) and HIP-991 topic fees. */
  hcs10?: { budgetMs?: number; topicFees?: { allow: boolean; maxHbar: number } };
}

export interface RunProgress {
  evals: Progress;
  submitted: { confirmed: number; pending: number; retries: number };
}

export interface DryRunEntry {
  key: string;
  json: string;
  bytes: number;
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
  fees: { spentTinybar: string; spent: string; estimatePerSignalTinybar: string; cap: string };
  durationMs: number;
  /** Read back from the mirror node after publishing: at the receipt's sequence number, byte for byte. */
  mirror?: { confirmed: number; missing: number; mismatched: number };
  error?: { code: string; message: string; hint?: string };
  list: SignalSummary[];
}

interface RunContext {
  options: RunOptions;
  mirror: MirrorRestClient;
  started: number;
}

export const DEFAULT_EVALS: EvalKind[] = ['availability', 'math', 'science'];

export async function runSignals(options: RunOptions): Promise<RunReport> {
  const mirror = new MirrorRestClient({ baseUrl: options.config.network.mirrorRestUrl });
  const ctx: RunContext = { options, mirror, started: Date.now() };
  try {
    if (options.resume) return await resumeRun(ctx, options.resume);
    if (options.dryRun) return await dryRun(ctx);
    return await newRun(ctx);
  } finally {
    await mirror.close();
  }
}

// ---------- new runs ----------

async function newRun(ctx: RunContext): Promise<RunReport> {
  const { options, mirror } = ctx;
  const { config } = options;
  const operator = requireOperator(config);
  if (!options.topic) throw new UsageError('a run needs a signal topic (--topic ID or HCS25_TOPIC)', { hint: 'create one with `hcs25 topic create`' });
  const topic = options.topic;
  const evals = options.evals ?? DEFAULT_EVALS;
  await checkTopic(ctx, topic);
  const { agents, skipped } = await loadAgents(ctx);
  const estimate = await estimateSubmitFee(config.network.ledger, mirror);
  checkForecast(agents.length * evals.length, estimate.tinybar, config.maxFeeHbar);

  const run = ulid();
  const seed = options.seed ?? randomSeed();
  const runKey = newRunKey();
  const summary: RunConfigSummary = {
    network: config.network.ledger,
    operator: operator.accountId,
    ...(options.source && 'registry' in options.source ? { registry: options.source.registry } : {}),
    ...(options.source && 'agentsFile' in options.source ? { agentsFile: options.source.agentsFile } : {}),
    evals,
    concurrency: config.concurrency,
    budgetMs: config.budgetMs,
    maxFeeHbar: config.maxFeeHbar,
    keepResponses: options.keepResponses ?? true,
    ...gradingExtra(options),
  };
  const journal = await Journal.create(config.stateDir, { run, seed, runKey: encodeRunKey(runKey), topic, config: summary, agents });
  options.onNote?.(`run ${run}: ${agents.length} agents × ${evals.length} evals → topic ${topic} (journal ${journal.path})`);
  const state: RunState = {
    start: { t: 'start', v: 1, at: new Date().toISOString(), run, seed, runKey: encodeRunKey(runKey), topic, config: summary, agents },
    signals: new Map(),
    failures: [],
    spentTinybar: 0n,
    resumes: 0,
    reveals: new Map(),
  };
  return publish(ctx, journal, state, { runKey, evals, skipped, estimate: estimate.tinybar, resumed: false });
}

async function resumeRun(ctx: RunContext, runId: string): Promise<RunReport> {
  const { options } = ctx;
  const { config } = options;
  if (options.dryRun) throw new UsageError('--dry-run and --resume cannot be combined', { hint: 'a dry run has no journal to resume' });
  const operator = requireOperator(config);
  const { journal, state } = await Journal.open(config.stateDir, runId);
  const start = state.start;
  if (options.topic && options.topic !== start.topic) {
    await journal.close();
    throw new UsageError(`run ${runId} publishes to topic ${start.topic}, not ${options.topic}`, { hint: 'omit --topic when resuming' });
  }
  if (start.config.operator && start.config.operator !== operator.accountId) {
    // Pre-set transaction ids belong to the account that made them: another payer cannot resend them.
    await journal.close();
    throw new UsageError(`run ${runId} was started by operator ${start.config.operator}, not ${operator.accountId}`, {
      hint: 'resume with the same operator account (HCS25_OPERATOR_ID)',
    });
  }
  if (start.config.network !== config.network.ledger) {
    await journal.close();
    throw new UsageError(`run ${runId} ran on ${start.config.network}, not ${config.network.ledger}`, { hint: `pass --network ${start.config.network}` });
  }
  journal.append({ t: 'resume' });
  await journal.flush();
  const pending = [...state.signals.values()].filter((s) => s.message && !s.receipt).length;
  options.onNote?.(`resuming run ${runId}: ${state.signals.size} results journaled, ${pending} of them not yet confirmed`);
  const estimate = await estimateSubmitFee(config.network.ledger, ctx.mirror);
  return publish(ctx, journal, state, {
    runKey: decodeRunKey(start.runKey),
    evals: start.config.evals as EvalKind[],
    skipped: [],
    estimate: estimate.tinybar,
    resumed: true,
  });
}

interface PublishPlan {
  runKey: Buffer;
  evals: EvalKind[];
  skipped: SkippedEntry[];
  estimate: bigint;
  resumed: boolean;
}

/** The pipeline proper, shared by new and resumed runs. */
async function publish(ctx: RunContext, journal: Journal, state: RunState, plan: PublishPlan): Promise<RunReport> {
  const { options, mirror } = ctx;
  const { config } = options;
  const operator = requireOperator(config);
  const start = state.start;
  const keepResponses = start.config.keepResponses;
  const ownsClient = !options.client;
  const client = options.client ?? createClient(config, { grpcDeadlineMs: 5_000, requestTimeoutMs: 30_000 });
  const outcomes = new Map<string, SubmitOutcome>();
  const stop = new AbortController();
  const onAbort = () => {
    stop.abort(options.signal?.reason);
    // Nothing new is sent; what is in flight still gets its receipt, so the journal stays exact.
    submitter?.stop(new SubmitError('INTERRUPTED', 'the run was interrupted', { hint: 'resume it with --resume' }));
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let evalProgress: Progress = { total: 0, done: 0, running: 0, correct: 0, wrong: 0, failed: 0, skipped: 0 };
  let submitter: Submitter | undefined;
  let fees: FeeMeter | undefined;
  let status: RunReport['status'] = 'complete';
  let error: unknown;
  let mirrorCheck: RunReport['mirror'];
  let journaledSpent = state.spentTinybar;

  const progress = () =>
    options.onProgress?.({
      evals: evalProgress,
      submitted: { confirmed: submitter?.stats.confirmed ?? 0, pending: (submitter?.stats.sent ?? 0) - (submitter?.stats.confirmed ?? 0), retries: submitter?.stats.retries ?? 0 },
    });

  try {
    // An explicit node list, as in the submitter: see its receipt query.
    const query = async () =>
      BigInt((await new AccountBalanceQuery().setAccountId(operator.accountId).setNodeAccountIds(nodesOf(client).slice(0, 3)).execute(client, 5_000)).hbars.toTinybars().toString());
    const balance = (final: boolean) => (final ? withTransientRetry(query, { attempts: 4 }) : query());
    fees = new FeeMeter({
      capTinybar: hbarToTinybar(capHbar(config, state)),
      estimateTinybar: plan.estimate,
      spentBefore: state.spentTinybar,
      balance,
      onSample: (spent, confirmed) => {
        journaledSpent = spent;
        journal.append({ t: 'fees', spentTinybar: spent.toString(), confirmed });
      },
    });
    await fees.begin();
    submitter = new Submitter({
      client,
      signer: operatorSigner(parsePrivateKey(operator)),
      operatorId: operator.accountId,
      topicId: start.topic,
      journal,
      memo: TRANSACTION_MEMOS.signal,
      mirror,
      fees,
      ...options.submitter,
      onEvent: (e) => {
        if (e.type === 'confirmed' || e.type === 'retry') progress();
        if (e.type === 'stopped') stop.abort(e.error);
      },
    });
    const s = submitter;
    if (options.signal?.aborted) onAbort();
    const track = (key: string, p: Promise<SubmitOutcome>) => void p.then((o) => outcomes.set(key, o));

    // 1. What an earlier attempt journaled but never confirmed goes first, under the ids it already has.
    for (const sig of state.signals.values()) {
      if (sig.message && !sig.receipt) track(sig.key, s.submit({ key: sig.key, json: sig.message.json, prior: sig.txIds }));
    }

    // 2. Evaluate what has no result yet, grouped by which evals each agent still lacks.
    const grading = gradingOf(start.config);
    const work = missingWork(start.agents, plan.evals, state);
    const protocolTransports = await hcs10Transports(options, client, mirror, work.flatMap((g) => g.agents));
    for (const group of work) {
      if (stop.signal.aborted) break;
      const base = evalProgress;
      const results = evaluateAgents(group.agents, {
        evals: group.evals,
        budgetMs: start.config.budgetMs,
        concurrency: start.config.concurrency,
        seed: start.seed,
        ...grading,
        allowPrivateEndpoints: config.allowPrivateEndpoints,
        agentHeaders: config.agentHeaders,
        signal: stop.signal,
        onProgress: (p) => {
          evalProgress = addProgress(base, p);
          progress();
        },
        ...(protocolTransports && { protocolTransports }),
        ...options.runner,
      });
      for await (const result of results) {
        const key = resultKey(result);
        if (state.signals.has(key)) continue;
        const built = tryBuild(result, start.run, plan.runKey);
        const stored = keepResponses || result.kind === 'availability' ? result : { ...result, response: null };
        journal.append({ t: 'result', key, result: stored, ...built.record });
        state.signals.set(key, { key, result: stored, ...built.record, txIds: [] });
        if (built.message) track(key, s.submit({ key, json: built.message.json }));
        else await journal.flush();
      }
    }
    await s.drain();
    if (options.signal?.aborted) {
      status = 'interrupted';
    } else if (s.fatal) {
      status = 'stopped';
      error = s.fatal;
    } else {
      mirrorCheck = await readBack(ctx, state, outcomes, journal);
    }
  } catch (err) {
    status = options.signal?.aborted ? 'interrupted' : 'stopped';
    error = err;
    submitter?.stop(err instanceof SubmitError || err instanceof FeeCapError ? err : new SubmitError('ABORTED', `the run stopped: ${errorMessage(err)}`));
    await submitter?.drain();
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await fees?.end().catch(() => undefined);
    if (fees && fees.spentTinybar !== journaledSpent) journal.append({ t: 'fees', spentTinybar: fees.spentTinybar.toString(), confirmed: submitter?.stats.confirmed ?? 0 });
    const reason = error instanceof Error ? error.message : status === 'interrupted' ? 'interrupted' : undefined;
    journal.append({ t: 'end', status, ...(reason ? { reason } : {}) });
    await journal.close().catch(() => undefined);
    if (ownsClient) client.close();
  }

  if (status === 'complete' && error === undefined) {
    const missing = [...state.signals.values()].filter((sig) => sig.message && !sig.receipt && outcomes.get(sig.key)?.status !== 'confirmed');
    if (missing.length > 0) status = 'stopped';
  }
  const report = buildReport(ctx, state, outcomes, {
    status,
    resumed: plan.resumed,
    skipped: plan.skipped,
    evals: evalProgress,
    fees,
    submitter,
    journal: journal.path,
    ...(error !== undefined ? { error } : {}),
  });
  if (mirrorCheck) report.mirror = mirrorCheck;
  return report;
}

/** Reads the run's signals back from the mirror node and journals their consensus timestamps. Best effort: a lagging mirror leaves some missing. */
async function readBack(ctx: RunContext, state: RunState, outcomes: Map<string, SubmitOutcome>, journal: Journal): Promise<RunReport['mirror']> {
  const expected: Expected[] = [];
  for (const sig of state.signals.values()) {
    const outcome = outcomes.get(sig.key);
    const receipt = sig.receipt ?? (outcome?.status === 'confirmed' ? { seq: outcome.seq, consensusTimestamp: outcome.consensusTimestamp } : undefined);
    if (receipt && sig.message && !receipt.consensusTimestamp) expected.push({ key: sig.key, seq: receipt.seq, json: sig.message.json });
  }
  if (expected.length === 0) return undefined;
  try {
    const found = await confirmOnMirror(ctx.mirror, state.start.topic, expected, { ...(ctx.options.signal ? { signal: ctx.options.signal } : {}) });
    if (found.confirmed.length > 0) journal.append({ t: 'landed', entries: found.confirmed });
    if (found.missing.length > 0) ctx.options.onNote?.(`note: the mirror node does not show ${found.missing.length} of the signals yet (mirror lag); their receipts are journaled`);
    for (const m of found.mismatched.slice(0, 3)) {
      ctx.options.onNote?.(`warning: the mirror node shows other content at sequence ${m.seq} than signal ${m.key} whose receipt named it`);
    }
    return { confirmed: found.confirmed.length, missing: found.missing.length, mismatched: found.mismatched.length };
  } catch (err) {
    ctx.options.onNote?.(`note: could not read the signals back from the mirror node (${errorMessage(err)}); their receipts are journaled`);
    return undefined;
  }
}

// ---------- dry run ----------

async function dryRun(ctx: RunContext): Promise<RunReport> {
  const { options, mirror } = ctx;
  const { config } = options;
  const evals = options.evals ?? DEFAULT_EVALS;
  if (options.topic) await checkTopic(ctx, options.topic);
  const { agents, skipped } = await loadAgents(ctx);
  const estimate = await estimateSubmitFee(config.network.ledger, mirror);
  const expected = agents.length * evals.length;
  const forecast = BigInt(expected) * estimate.tinybar;
  if (forecast > hbarToTinybar(config.maxFeeHbar)) {
    options.onNote?.(`warning: ${expected} signals at ~${formatHbar(estimate.tinybar)} each (${formatHbar(forecast)}) exceed --max-fee-hbar ${config.maxFeeHbar}; a real run would refuse to start`);
  }
  const run = ulid();
  const runKey = newRunKey();
  const seed = options.seed ?? randomSeed();
  const state: RunState = {
    start: {
      t: 'start',
      v: 1,
      at: new Date().toISOString(),
      run,
      seed,
      runKey: encodeRunKey(runKey),
      topic: options.topic ?? '',
      config: { network: config.network.ledger, evals, concurrency: config.concurrency, budgetMs: config.budgetMs, maxFeeHbar: config.maxFeeHbar, keepResponses: false, ...gradingExtra(options) },
      agents,
    },
    signals: new Map(),
    failures: [],
    spentTinybar: 0n,
    resumes: 0,
    reveals: new Map(),
  };
  let evalProgress: Progress = { total: 0, done: 0, running: 0, correct: 0, wrong: 0, failed: 0, skipped: 0 };
  const results = evaluateAgents(agents, {
    evals,
    budgetMs: config.budgetMs,
    concurrency: config.concurrency,
    seed,
    ...gradingOf(state.start.config),
    allowPrivateEndpoints: config.allowPrivateEndpoints,
    agentHeaders: config.agentHeaders,
    ...(options.signal ? { signal: options.signal } : {}),
    onProgress: (p) => {
      evalProgress = p;
      options.onProgress?.({ evals: p, submitted: { confirmed: 0, pending: 0, retries: 0 } });
    },
    ...options.runner,
  });
  for await (const result of results) {
    const key = resultKey(result);
    const built = tryBuild(result, run, runKey);
    state.signals.set(key, { key, result, ...built.record, txIds: [] });
    if (built.message) options.onDryRunMessage?.({ key, json: built.message.json, bytes: built.message.bytes, estimatedFeeTinybar: estimate.tinybar });
  }
  return buildReport(ctx, state, new Map(), {
    status: options.signal?.aborted ? 'interrupted' : 'dry-run',
    resumed: false,
    skipped,
    evals: evalProgress,
    dryRunEstimate: estimate.tinybar,
  });
}

// ---------- pieces ----------

const gradingSchema = z.object({ grader: z.enum(GRADER_IDS).optional(), scienceBank: z.string().optional(), scienceBankSha256: z.string().optional() });

/** The grading choices of a new run, journaled so that a resume grades and asks exactly as the run began. */
function gradingExtra(options: RunOptions): Pick<RunConfigSummary, 'extra'> {
  if (!options.grader && !options.scienceBank) return {};
  const extra: z.infer<typeof gradingSchema> = { ...(options.grader && { grader: options.grader }) };
  if (options.scienceBank) {
    const path = resolvePath(options.scienceBank);
    loadScienceBank(path); // refuse a bad bank before anything is journaled
    Object.assign(extra, { scienceBank: path, scienceBankSha256: fileSha256(path) });
  }
  return { extra };
}

/** Runner options for the journaled grading choices; a science bank that changed since the run began is refused. */
function gradingOf(config: RunConfigSummary): Partial<Pick<RunnerOptions, 'grader' | 'scienceBank'>> {
  const extra = gradingSchema.parse(config.extra ?? {});
  if (!extra.scienceBank) return extra.grader ? { grader: extra.grader } : {};
  if (fileSha256(extra.scienceBank) !== extra.scienceBankSha256) {
    throw new UsageError(`the science bank ${extra.scienceBank} changed since the run began`, {
      hint: 'restore the file the run started with: its questions decide which question hashes were published',
    });
  }
  return { ...(extra.grader && { grader: extra.grader }), scienceBank: loadScienceBank(extra.scienceBank) };
}

function fileSha256(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (err) {
    throw new UsageError(`cannot read the science bank ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/**
 * HCS-10 agents are asked over HCS, which needs the runner to be an HCS-10 agent itself: its identity is made once
 * per operator and network (inbound/outbound topics, HCS-11 profile) and reused. Dry runs never get here: asking
 * over HCS-10 submits transactions.
 */
async function hcs10Transports(options: RunOptions, client: Client, mirror: MirrorRestClient, agents: Agent[]): Promise<RunnerOptions['protocolTransports']> {
  if (options.runner?.protocolTransports || !agents.some((a) => a.protocol === 'hcs-10')) return undefined;
  const [{ ensureRunnerIdentity }, { createHcs10Transport }] = await Promise.all([import('../hcs10/identity.js'), import('../transports/hcs10.js')]);
  const { identity, created } = await ensureRunnerIdentity({
    client,
    stateDir: options.config.stateDir,
    network: options.config.network.ledger,
    ...(options.onNote && { onProgress: options.onNote }),
  });
  if (created) options.onNote?.(`made the runner an HCS-10 agent: inbound topic ${identity.inboundTopicId}`);
  const { budgetMs, topicFees } = options.hcs10 ?? {};
  return {
    'hcs-10': (agent) => createHcs10Transport(agent, { client, identity, mirror, ...(budgetMs !== undefined && { budgetMs }), ...(topicFees && { topicFees }) }),
  };
}

async function loadAgents(ctx: RunContext): Promise<{ agents: Agent[]; skipped: SkippedEntry[] }> {
  const { options, mirror } = ctx;
  const { config } = options;
  const source = options.source;
  if (!source) throw new UsageError('a run needs agents: --registry ID or --agents FILE');
  let found: { agents: Agent[]; skipped: SkippedEntry[] };
  if ('agents' in source) {
    found = { agents: source.agents, skipped: [] };
  } else if ('registry' in source) {
    const { discoverAgents } = await import('../registry/discover.js');
    const result = await discoverAgents({
      registry: source.registry,
      network: config.network.ledger,
      mirror,
      allowPrivateEndpoints: config.allowPrivateEndpoints,
      ...(config.ipfsGateway ? { ipfsGateway: config.ipfsGateway } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    found = { agents: result.agents, skipped: result.skipped };
  } else {
    const { loadAgentsFile } = await import('../registry/agents-file.js');
    found = await loadAgentsFile(source.agentsFile, { network: config.network.ledger, mirror, allowPrivateEndpoints: config.allowPrivateEndpoints });
  }
  if (found.agents.length === 0) {
    const why = found.skipped.length > 0 ? ` (${found.skipped.length} entries skipped; first: ${found.skipped[0]!.reason})` : '';
    throw new RunError('NO_AGENTS', `there are no agents to evaluate${why}`, 'check the registry or agents file with `hcs25 discover`');
  }
  return found;
}

/** The topic should exist and look like a signal topic. A topic created seconds ago may not be on the mirror node yet, so absence is a warning. */
async function checkTopic(ctx: RunContext, topic: string): Promise<void> {
  const { options, mirror } = ctx;
  let info;
  try {
    info = await mirror.getTopic(topic, options.signal);
  } catch (err) {
    options.onNote?.(`warning: could not read topic ${topic} from the mirror node (${errorMessage(err)})`);
    return;
  }
  if (info === null) {
    options.onNote?.(`warning: the mirror node does not know topic ${topic} (yet); if it does not exist, submission will stop with INVALID_TOPIC_ID`);
    return;
  }
  if (info.deleted) throw new RunError('TOPIC_DELETED', `topic ${topic} is deleted`, 'create a new one with `hcs25 topic create`');
  if (!isSignalTopicMemo(info.memo)) options.onNote?.(`warning: topic ${topic} has memo "${info.memo.slice(0, 60)}", not an HCS-25 signal topic memo (hcs-25:0:{ttl})`);
}

/** The run's fee cap: as given now (flag, env, file), else as the run was started with. */
function capHbar(config: ResolvedConfig, state: RunState): number {
  return config.sources.maxFeeHbar === 'default' ? state.start.config.maxFeeHbar : config.maxFeeHbar;
}

function checkForecast(expected: number, estimate: bigint, capHbar: number): void {
  const forecast = BigInt(expected) * estimate;
  const cap = hbarToTinybar(capHbar);
  if (forecast > cap) {
    throw new FeeCapError(
      `${expected} signals at an estimated ${formatHbar(estimate)} each come to ${formatHbar(forecast)}, more than --max-fee-hbar ${capHbar}`,
      'raise --max-fee-hbar, evaluate fewer agents or evals, or check the cost first with --dry-run',
    );
  }
}

function tryBuild(
  result: AnyEvalResult,
  run: string,
  runKey: Buffer,
): { message?: BuiltMessage<SignalMessage>; record: Pick<SignalState, 'message' | 'buildError'> } {
  try {
    const message = buildSignalMessage(result, { run, runKey });
    return { message, record: { message: { json: message.json, bytes: message.bytes } } };
  } catch (err) {
    // Too large (MessageTooLargeError) or a result the schema refuses: journaled as a reason, never published.
    const code = err instanceof Hcs25Error ? err.code : 'BUILD';
    return { record: { buildError: { code, message: errorMessage(err) } } };
  }
}

/** Agents grouped by the evals they still lack (at most 2^3 groups). */
function missingWork(agents: Agent[], evals: EvalKind[], state: RunState): { agents: Agent[]; evals: EvalKind[] }[] {
  const groups = new Map<string, { agents: Agent[]; evals: EvalKind[] }>();
  for (const agent of agents) {
    const lacking = evals.filter((kind) => !state.signals.has(signalKey(kind, agent.subject)));
    if (lacking.length === 0) continue;
    const id = lacking.join(',');
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { agents: [], evals: lacking }));
    group.agents.push(agent);
  }
  return [...groups.values()];
}

function addProgress(base: Progress, p: Progress): Progress {
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

function buildReport(
  ctx: RunContext,
  state: RunState,
  outcomes: Map<string, SubmitOutcome>,
  extra: {
    status: RunReport['status'];
    resumed: boolean;
    skipped: SkippedEntry[];
    evals: Progress;
    fees?: FeeMeter;
    submitter?: Submitter;
    journal?: string;
    error?: unknown;
    dryRunEstimate?: bigint;
  },
): RunReport {
  const { config } = ctx.options;
  const list: SignalSummary[] = [];
  const tally = { total: 0, correct: 0, wrong: 0, failed: 0, skipped: 0 };
  let published = 0;
  let duplicates = 0;
  let unsent = 0;
  let buildErrors = 0;
  for (const sig of state.signals.values()) {
    const message = sig.message ? (JSON.parse(sig.message.json) as SignalMessage) : undefined;
    countOutcome(tally, sig);
    const outcome = outcomes.get(sig.key);
    const receipt = sig.receipt ?? (outcome?.status === 'confirmed' ? { seq: outcome.seq, txId: outcome.txId, duplicate: outcome.duplicate } : undefined);
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
  const spent = extra.status === 'dry-run' ? BigInt(list.filter((l) => l.bytes > 0).length) * estimate : (extra.fees?.spentTinybar ?? state.spentTinybar);
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
    fees: {
      spentTinybar: spent.toString(),
      spent: formatHbar(spent),
      estimatePerSignalTinybar: estimate.toString(),
      cap: formatHbar(hbarToTinybar(capHbar(config, state))),
    },
    durationMs: Date.now() - ctx.started,
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
