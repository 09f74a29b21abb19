/**
 * `hcs25 watch` as one action: a long-running publisher that follows a registry and keeps every agent's signals fresh.
 *
 * Run model — one run per cycle. A cycle lasts `every` (default 24 h) and is one HCS-25 run: its id, seed and key
 * are in its journal's start record; every agent is asked once per cycle, at a slot spread evenly over the period (a
 * hash of its subject), at most `perHost` asks per endpoint host per minute, with bounded concurrency. An agent
 * registered (or updated) while the watcher runs is asked at once, in the current cycle. One updated after it was
 * already asked in the current run cannot be asked in that run again (a run holds one signal per (eval, subject)): the
 * run is closed early, once it is `minRunMs` old, and the cycle goes on in a new run that asks it first. At the end
 * of a cycle its publisher drains, the run is revealed (`reveal-run`) and the next cycle starts a new journal. A
 * cycle whose signals would pass `maxRunSignals` is published as several runs in turn (each drained and revealed
 * before the next begins; agents asked in an earlier run of the cycle are not asked again): what the publisher holds
 * stays bounded by one run, and the watcher's own per-agent state is a few small map entries.
 *
 * Restart rule — everything goes through the run journal and publishSignals, as `hcs25 run --resume` does: a result
 * is journaled before it is packed, a pack before its transaction id is used. After SIGKILL the watcher reopens the
 * current cycle's journal: journaled-but-unconfirmed packs are resent under their journaled ids, journaled results in
 * no pack are packed anew, and an agent is asked again only for the evals that have no journaled result. A result
 * that was not journaled never reached the topic, so asking again cannot publish anything twice: each (run, signal,
 * subject) is on the topic exactly once. The registry cursor and the cycle are in `<stateDir>/watch/…json`.
 *
 * Fees: a daily cap (`maxFeePerDayHbar`, default 20 ℏ), see DailyBudget; when reached, asking pauses until 00:00 UTC.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { setMaxListeners } from 'node:events';
import { ulid } from 'ulid';
import type { Hcs25Client } from '../client.js';
import { sameAsk, type Agent } from '../core/agent.js';
import { Hcs25Error, UsageError, errorMessage } from '../core/errors.js';
import { DEFAULT_EVALS } from '../evals/eval-list.js';
import { randomSeed } from '../evals/rng.js';
import type { AnyEvalResult, EvalKind, GraderId } from '../evals/types.js';
import type { SubmittedOp } from '../hcs10/messages.js';
import { parsePrivateKey } from '../hedera/client.js';
import { estimateSubmitFee, expectedMessages, formatHbar, hbarToTinybar } from '../publisher/fees.js';
import { gradingExtra, runQuestionSource } from '../publisher/grading.js';
import { Journal, PACK_KEY_PREFIX, emptyRunState, hasResult, journalPath, readJournal, signalKey, type JournalInput, type RunState } from '../publisher/journal.js';
import { checkSignalTopic } from '../publisher/topic.js';
import type { PackMode } from '../signals/pack.js';
import { decodeRunKey, encodeRunKey, newRunKey } from '../signals/hashing.js';
import { DailyBudget, utcDay } from '../watch/budget.js';
import { Channel } from '../watch/channel.js';
import { AgentTable } from '../watch/agent-table.js';
import { RegistryFollower, mirrorSubscription, type RegistryChange, type Subscribe } from '../watch/follow.js';
import { HostLimiter, askHost } from '../watch/limiter.js';
import { loadWatchState, saveWatchState, watchStatePath, type WatchState } from '../watch/state.js';
import type { WatchPhase, WatchStatus } from '../watch/status.js';
import { buildSignal, type BuiltSignal } from './build-signals.js';
import { evaluateAgents, type EvaluateAgentsParameters, type Hcs10AskParameters } from './evaluate-agents.js';
import { publishSignals, type PublishSignalsParameters, type PublishSignalsReturnType } from './publish-signals.js';
import { revealRun } from './reveal-run.js';

export const DEFAULT_WATCH_EVERY_MS = 24 * 3_600_000;
export const DEFAULT_PER_HOST = 60;
const DEFAULT_MIN_RUN_MS = 30_000;
const DEFAULT_KEEP_JOURNALS_MS = 7 * 86_400_000;
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
  pack?: Exclude<PackMode, 'none'> | 'none';
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

export async function watchRegistry(client: Hcs25Client, parameters: WatchRegistryParameters): Promise<WatchRegistryReturnType> {
  return new Watcher(client, parameters).run();
}

interface Cycle {
  run: string;
  journal: Journal;
  state: RunState;
  startedAt: number;
  endsAt: number;
  runKey: Buffer;
  /** Agents scheduled this cycle, by slot; `next` is the first not yet due. */
  order: Schedule;
  next: number;
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

const TICK_MS = 250;
const NO_AGENTS = new AgentTable();
/** The registry table's flag for agents asked in this cycle's earlier runs (a cycle of a large registry spans several). */
const ASKED_IN_CYCLE = 1;

/**
 * A cycle's agents in slot order, as registry-table rows (with each row's generation, so a row freed and reused since
 * is told apart) and their slots: no subject string per agent for the whole cycle.
 */
interface Schedule {
  rows: Int32Array;
  generations: Uint32Array;
  slots: Float64Array;
}

class Watcher {
  private readonly now: () => number;
  private readonly evals: EvalKind[];
  private readonly everyMs: number;
  private readonly concurrency: number;
  private readonly limiter: HostLimiter;
  /**
   * Every live agent by subject: the follower's table (the watcher keeps no copy; records off the JavaScript heap, an
   * Agent made when asked for), with the registry sequence of each agent's last change and whether it was asked in
   * the cycle's earlier runs (ASKED_IN_CYCLE).
   */
  private get known(): AgentTable {
    return this.follower?.agents ?? NO_AGENTS;
  }
  /** New or updated agents, asked before scheduled ones. */
  private readonly front = new Set<string>();
  /** Scheduled agents whose slot has come (waiting for a host token, the fee cap or a free slot). */
  private readonly due = new Set<string>();
  /**
   * At start, agents the registry changed after the saved cursor, while this watcher was down; those of them the cycle
   * asked in an older form are asked again (`updatedWhileDown`, once the cycle is open), as a live update would be.
   */
  private changedWhileDown = new Set<string>();
  private updatedWhileDown: string[] = [];
  /** The schedule of the cycle in progress, kept across its runs. */
  private schedule: { order: Schedule; next: number } | undefined;
  private budget!: DailyBudget;
  private estimate = 0n;
  private follower!: RegistryFollower;
  private cycle: Cycle | undefined;
  private watchState!: WatchState;
  private readonly statePath: string;
  private phase: WatchPhase = 'starting';
  private detail: string | undefined;
  private lastError: WatchStatus['lastError'];
  private readonly counters: WatchStatus['counters'] = { cycles: 0, evaluations: 0, asks: 0, signalsJournaled: 0, signalsPublished: 0, messagesPublished: 0, errors: 0 };
  private readonly stopping = new AbortController();
  /** Aborts every publisher at once: a graceful stop that took longer than `shutdownMs`. */
  private readonly hardStop = new AbortController();
  /** Runs still asking or publishing (a full run drains while the next one asks). */
  private readonly open = new Set<Cycle>();
  /** Runs draining and being revealed in the background. */
  private readonly background = new Set<Promise<void>>();
  private readonly followAbort = new AbortController();
  private readonly runs: string[] = [];
  private savedAt = 0;

  constructor(
    private readonly client: Hcs25Client,
    private readonly p: WatchRegistryParameters,
  ) {
    this.now = p.now ?? Date.now;
    this.evals = p.evals ?? [...DEFAULT_EVALS];
    this.everyMs = p.everyMs ?? DEFAULT_WATCH_EVERY_MS;
    this.concurrency = client.config.concurrency;
    this.limiter = new HostLimiter({ perMinute: p.perHost ?? DEFAULT_PER_HOST, now: this.now });
    this.statePath = watchStatePath(client.config.stateDir, p.registry, p.topic);
    // Long-lived signals that every registry read (up to 16 resolutions at once) and every run's publisher listen on.
    setMaxListeners(0, this.followAbort.signal, this.hardStop.signal, this.stopping.signal);
    if (this.everyMs < 1_000) throw new UsageError('--every must be at least 1s');
  }

  status(): WatchStatus {
    const c = this.cycle;
    return {
      state: this.phase,
      ...(this.detail && { detail: this.detail }),
      registry: this.p.registry,
      topic: this.p.topic,
      ...(c && { run: c.run, cycleStartedAt: new Date(c.startedAt).toISOString(), cycleEndsAt: new Date(c.endsAt).toISOString() }),
      registryLagSeconds: this.follower?.headReadAt ? (this.now() - this.follower.headReadAt) / 1000 : null,
      registrySeq: this.follower?.seq ?? 0,
      agentsKnown: this.known.size,
      queue: this.front.size + this.due.size,
      evaluating: c?.asking.size ?? 0,
      counters: { ...this.counters },
      feesTodayTinybar: (this.budget?.spentTinybar ?? 0n).toString(),
      feeCapTinybar: hbarToTinybar(this.p.maxFeePerDayHbar ?? DEFAULT_MAX_FEE_PER_DAY_HBAR).toString(),
      ...(this.lastError && { lastError: this.lastError }),
    };
  }

  async run(): Promise<WatchRegistryReturnType> {
    const { client, p } = this;
    const onStop = () => {
      this.stopping.abort();
      // Stop asking everywhere; answers not journaled yet are asked again after a restart.
      for (const c of this.open) {
        c.closing = true;
        c.abort.abort();
      }
      setTimeout(() => this.hardStop.abort(new Error('stopped')), p.shutdownMs ?? 30_000).unref();
    };
    p.signal?.addEventListener('abort', onStop, { once: true });
    if (p.signal?.aborted) onStop();
    let following: Promise<void> | undefined;
    try {
      client.requireOperator();
      await client.connect();
      await checkSignalTopic(client.mirror, p.topic, {
        operatorKey: parsePrivateKey(client.requireOperator()).publicKey.toStringRaw(),
        ...(p.force && { force: true }),
        ...(p.onNote && { onNote: p.onNote }),
        signal: this.stopping.signal,
      });
      this.estimate = (await estimateSubmitFee(client.network.ledger, client.mirror)).tinybar;
      this.budget = new DailyBudget({ capTinybar: hbarToTinybar(p.maxFeePerDayHbar ?? DEFAULT_MAX_FEE_PER_DAY_HBAR), estimateTinybar: this.estimate, now: this.now });
      this.watchState = await loadWatchState(this.statePath, p.registry, p.topic);
      const today = utcDay(this.now());
      const { feeDay, askFees } = this.watchState;
      this.budget.restore(feeDay?.day === today ? feeDay.confirmed : 0, askFees?.day === today ? BigInt(askFees.tinybar) : 0n);

      const subscribe = p.subscribe ?? (p.grpc === false ? undefined : await mirrorSubscription(client.sdk).catch(() => undefined));
      this.follower = new RegistryFollower({
        registry: p.registry,
        mirror: client.mirror,
        network: client.network.ledger,
        allowPrivateEndpoints: client.config.allowPrivateEndpoints,
        ...(client.config.ipfsGateway !== undefined && { ipfsGateway: client.config.ipfsGateway }),
        ...(subscribe && { subscribe }),
        ...(p.pollMs !== undefined && { pollMs: p.pollMs }),
        onChanges: (changes, head) => this.onRegistry(changes, head),
        onNote: (line) => p.onNote?.(line),
        onError: (err) => this.error(err),
        signal: this.followAbort.signal,
      });
      let ready!: () => void;
      const initialRead = new Promise<void>((resolve) => (ready = resolve));
      this.readyForCycles = ready;
      following = this.follower.run();
      await Promise.race([initialRead, following, aborted(this.stopping.signal)]);
      // An HCS-10 agent's asks cost a request, its questions and a close, each with a record on our outbound topic.
      let hcs10Agents = 0;
      for (const agent of this.known.values()) if (agent.protocol === 'hcs-10') hcs10Agents++;
      const questions = questionsOf(this.evals);
      const askMessages = questions > 0 ? hcs10Agents * (questions + 4) : 0;
      const forecast = BigInt(expectedMessages(this.known.size, this.evals.length, p.pack ?? 'dense') + askMessages) * this.estimate;
      const perDay = (forecast * 86_400_000n) / BigInt(this.everyMs);
      p.onNote?.(
        `watching registry ${this.follower.topicId} (${this.known.size} agents) → topic ${p.topic}: every agent every ${formatDuration(this.everyMs)}, ` +
          `≤ ${p.perHost ?? DEFAULT_PER_HOST} asks/host/min; forecast ~${formatHbar(perDay)}/day at today's registry, cap ${formatHbar(this.budget.cap)}/day`,
      );
      if (perDay > this.budget.cap) p.onNote?.('warning: the forecast passes the daily fee cap: some agents will wait for the next UTC day (raise --max-fee-per-day or --every)');
      await p.onReady?.(() => this.status());
      await this.dropUnopenedRun();
      await this.pruneJournals();
      // Runs closed before the last stop that may still lack receipts or their reveal.
      for (const run of this.watchState.unrevealed ?? []) this.inBackground(this.finishRun(run));
      while (!this.stopping.signal.aborted) {
        const cycle = await this.openCycle();
        const { rotated, finish } = await this.runCycle(cycle);
        if (rotated && !this.stopping.signal.aborted) {
          // The next run of the cycle starts asking now; this one drains and is revealed meanwhile.
          await this.closeRun(cycle, false);
          this.inBackground(finish.then((published) => this.completeRun(cycle.run, published, cycle.state)));
          continue;
        }
        const published = await finish;
        if (published.status !== 'complete') {
          if (this.stopping.signal.aborted) break;
          throw published.error ?? new Hcs25Error('STOPPED', `run ${cycle.run} stopped (${published.status})`, { hint: `finish it with \`hcs25 run --resume ${cycle.run}\`` });
        }
        if (this.stopping.signal.aborted && this.now() < cycle.endsAt && !rotated) break;
        await this.closeRun(cycle, this.now() >= cycle.endsAt);
        await this.completeRun(cycle.run, published, cycle.state);
      }
      await Promise.all(this.background);
      this.phase = 'stopped';
      this.detail = undefined;
      return { status: this.status(), runs: this.runs };
    } catch (err) {
      this.error(err);
      this.phase = 'stopped';
      throw err;
    } finally {
      p.signal?.removeEventListener('abort', onStop);
      this.followAbort.abort();
      await following?.catch(() => undefined);
      await Promise.all(this.background);
      if (this.watchState) await this.save(true).catch(() => undefined);
    }
  }

  private readyForCycles: (() => void) | undefined;

  // ---------- registry ----------

  private onRegistry(changes: RegistryChange[], head: { initial: boolean }): void {
    const cursor = this.watchState.cursor?.seq ?? 0;
    for (const change of changes) {
      if (change.type === 'delete') {
        this.hosts.delete(change.subject);
        this.front.delete(change.subject);
        this.due.delete(change.subject);
        if (this.watchState.reask) delete this.watchState.reask[change.subject];
        this.changedWhileDown.delete(change.subject);
        continue;
      }
      const { agent, seq, previous: before } = change;
      // Its endpoint may have changed.
      this.hosts.delete(agent.subject);
      // At start, only what changed after the saved cursor is new to us; the rest waits for its slot.
      if (head.initial && seq <= cursor) continue;
      if (head.initial) this.changedWhileDown.add(agent.subject);
      // An entry rewritten without a change to how the agent is asked (its description, say) is no update.
      if (before && sameAsk(before, agent)) continue;
      if (this.cycle && this.askedThisCycle(agent.subject)) this.askAgain(this.cycle, agent.subject);
      this.front.add(agent.subject);
    }
    this.saveSoon();
    this.tick();
    if (head.initial) this.readyForCycles?.();
  }

  // ---------- cycles ----------

  private async openCycle(): Promise<Cycle> {
    const { client, p } = this;
    const saved = this.watchState.cycle;
    let journal: Journal;
    let state: RunState;
    let startedAt: number;
    let periodMs: number;
    // What the cycle asked the agents changed while we were down, as the journals recorded it.
    const changed = this.changedWhileDown;
    this.changedWhileDown = new Set();
    const askedAs = new Map<string, Agent>();
    const onResult = (r: AnyEvalResult) => {
      if (changed.has(r.agent.subject)) askedAs.set(r.agent.subject, r.agent);
    };
    if (saved && !this.schedule) {
      // A restart: agents asked in the cycle's earlier runs are not asked again (their journals are read one at a time).
      const reask = this.watchState.reask ?? {};
      for (const run of saved.previous ?? []) {
        const { state: earlier } = await readJournal(journalPath(client.config.stateDir, run), { keep: 'pending', onResult });
        for (const subject of earlier.done.keys()) {
          // An updated agent asked again in a run its update allows is done (a half-asked one is finished there).
          if (reask[subject] && carriesReask(reask[subject], run)) delete reask[subject];
          if (!reask[subject]) this.known.setFlag(subject, ASKED_IN_CYCLE, true);
        }
      }
      for (const subject of Object.keys(reask)) if (this.known.has(subject)) this.front.add(subject);
    }
    if (saved?.run) {
      ({ journal, state } = await Journal.open(client.config.stateDir, saved.run, { onResult }));
      if (state.start.topic !== p.topic) {
        await journal.close();
        throw new UsageError(`the watch state names run ${saved.run}, which publishes to ${state.start.topic}`, { hint: `remove ${this.statePath} to start over` });
      }
      journal.append({ t: 'resume' });
      await journal.flush();
      startedAt = saved.startedAt;
      periodMs = saved.periodMs;
      const unpacked = [...state.signals.values()].filter((s) => s.message && !s.pack).length;
      const unconfirmed = [...state.packs.values()].filter((k) => !k.receipt).length;
      this.budget.carry(unpacked, unconfirmed);
      this.budget.restore(await receiptsOn(journal.path, utcDay(this.now())));
      p.onNote?.(`resuming cycle ${saved.run}: ${state.results} signals journaled, ${unconfirmed} packs to confirm, ${unpacked} signals to pack`);
    } else {
      const grading = gradingExtra(p);
      const start = {
        run: ulid(),
        seed: randomSeed(),
        runKey: encodeRunKey(newRunKey()),
        topic: p.topic,
        config: {
          network: client.config.network.ledger,
          operator: client.requireOperator().accountId,
          registry: p.registry,
          evals: this.evals,
          concurrency: client.config.concurrency,
          budgetMs: client.config.budgetMs,
          // The run's own cap never binds before the daily one: the days a cycle spans, plus one.
          maxFeeHbar: (p.maxFeePerDayHbar ?? DEFAULT_MAX_FEE_PER_DAY_HBAR) * (Math.ceil(this.everyMs / 86_400_000) + 1),
          keepResponses: p.keepResponses ?? false,
          pack: p.pack ?? 'dense',
          ...grading,
        },
        // Agents join a cycle as the registry lists them: each result record names its agent.
        agents: [],
      };
      this.watchState.opening = start.run;
      await this.save(true);
      journal = await Journal.create(client.config.stateDir, start);
      state = emptyRunState({ t: 'start', v: 1, at: new Date().toISOString(), ...start });
      startedAt = saved?.startedAt ?? this.now();
      periodMs = saved?.periodMs ?? this.everyMs;
      this.watchState.cycle = { run: start.run, startedAt, periodMs, previous: saved?.previous ?? [] };
      delete this.watchState.opening;
      await this.save(true);
      p.onNote?.(`${saved ? 'next run of the cycle' : 'cycle started'}: run ${start.run}, ${this.known.size} agents, until ${new Date(startedAt + periodMs).toISOString()} (journal ${journal.path})`);
    }
    if (!saved) {
      this.counters.cycles++;
      this.known.clearFlag(ASKED_IN_CYCLE);
      // Updated agents waiting for a run of the last cycle are asked first in this one, as new ones.
      delete this.watchState.reask;
      this.schedule = undefined;
      // The host cache holds waiting agents only: those that leave with the last cycle's queue take their entries.
      for (const subject of this.due) if (!this.front.has(subject)) this.hosts.delete(subject);
      this.due.clear();
    }
    for (const [subject, asked] of askedAs) {
      const k = this.known.get(subject);
      if (k && !sameAsk(asked, k)) this.updatedWhileDown.push(subject);
    }
    this.runs.push(state.start.run);
    const abort = new AbortController();
    // Every agent being asked listens on it: `concurrency` listeners is expected, not a leak.
    setMaxListeners(0, abort.signal);
    this.schedule ??= { order: bySlot(this.known), next: 0 };
    const { order, next } = this.schedule;
    return {
      run: state.start.run,
      journal,
      state,
      startedAt,
      endsAt: startedAt + periodMs,
      runKey: decodeRunKey(state.start.runKey),
      order,
      next,
      openedAt: this.now(),
      asking: new Set(),
      abort,
      channel: new Channel<BuiltSignal>(256),
      unjournaled: new Map(),
      closing: false,
    };
  }

  /**
   * Asks agents for a run until the cycle ends, a stop is asked, the run is full (`rotated`) or its publisher stops.
   * `finish` then waits for the run's last asks, closes its signal stream and resolves with what publishing returned.
   */
  private async runCycle(cycle: Cycle): Promise<{ rotated: boolean; finish: Promise<PublishSignalsReturnType> }> {
    const channel = cycle.channel;
    const stop = new AbortController();
    this.cycle = cycle;
    for (const subject of this.updatedWhileDown) {
      this.askAgain(cycle, subject);
      this.front.add(subject);
    }
    this.updatedWhileDown = [];
    this.open.add(cycle);
    this.phase = 'running';
    const publishing = this.publish(cycle.journal, cycle.state, channel, stop, cycle);
    void publishing.finally(() => this.open.delete(cycle));
    // The publisher stopped for good (a fatal error): stop asking.
    stop.signal.addEventListener('abort', () => cycle.abort.abort(), { once: true });
    const ticker = setInterval(() => this.tick(), TICK_MS);
    // The run goes on until the cycle's end, a stop request, the run being full, or the publisher stopping.
    let done!: () => void;
    const over = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, cycle.endsAt - this.now()));
      done = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    cycle.rotate = () => {
      cycle.rotated = true;
      done();
    };
    this.stopping.signal.addEventListener('abort', done, { once: true });
    stop.signal.addEventListener('abort', done, { once: true });
    void publishing.finally(done);
    this.tick();
    await over;
    // The watcher's stop signal outlives every run: a listener left on it would keep this run's state alive.
    this.stopping.signal.removeEventListener('abort', done);
    clearInterval(ticker);
    cycle.closing = true;
    if (this.stopping.signal.aborted) this.phase = 'stopping';
    const finish = (async () => {
      if (cycle.asking.size > 0) await new Promise<void>((resolve) => (cycle.onIdle = resolve));
      channel.close();
      return publishing;
    })();
    return { rotated: cycle.rotated === true, finish };
  }

  /** publishSignals for one run, its journal observed (counts, the fee budget); every run stops with `hardStop`. */
  private publish(journal: Journal, state: RunState, signals: AsyncIterable<BuiltSignal>, stop: AbortController, cycle?: Cycle): Promise<PublishSignalsReturnType> {
    const { client, p } = this;
    return publishSignals(client, {
      journal: this.observe(journal, state, cycle),
      state,
      signals,
      estimateTinybar: this.estimate,
      ...(p.flushMs !== undefined && { flushMs: p.flushMs }),
      stop,
      signal: this.hardStop.signal,
      ...(p.onNote && { onNote: p.onNote }),
      ...(p.submitter && { submitter: p.submitter }),
    });
  }

  private inBackground(task: Promise<void>): void {
    const tracked = task.catch((err) => this.error(err)).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  /**
   * A stop between a new run's journal and the save naming it as the cycle's run: nothing was asked in that run (asks
   * start after the save), so its journal holds a start record only and is removed; one with more is kept to finish.
   */
  private async dropUnopenedRun(): Promise<void> {
    const run = this.watchState.opening;
    if (!run) return;
    const path = journalPath(this.client.config.stateDir, run);
    const found = existsSync(path) ? await readJournal(path, { keep: 'pending' }) : undefined;
    if (found && (found.state.results > 0 || found.state.packCount > 0)) {
      this.watchState.unrevealed = [...(this.watchState.unrevealed ?? []), run];
    } else if (found) {
      await rm(path);
      this.p.onNote?.(`run ${run} was created but never used before the last stop: its journal is removed`);
    }
    delete this.watchState.opening;
    await this.save(true);
  }

  /**
   * A run closed before a restart: ask what its agents still lack, resend what it journaled but did not confirm, then
   * reveal it. A run closes while its last agents are still being asked, so a stop can leave an agent with some of
   * its evals journaled: the restart counts that agent as asked in the cycle, so only this run can still ask the rest.
   */
  private async finishRun(run: string): Promise<void> {
    const { journal, state } = await Journal.open(this.client.config.stateDir, run);
    journal.append({ t: 'resume' });
    const partial: { agent: Agent; lacking: EvalKind[] }[] = [];
    for (const [subject, lacking] of halfAsked(state)) {
      const agent = this.known.get(subject);
      if (agent) partial.push({ agent, lacking });
      else this.p.onNote?.(`run ${run}: ${subject} lacks ${lacking.join(', ')} and is no longer in the registry: not asked`);
    }
    const unpacked = [...state.signals.values()].filter((s) => s.message && !s.pack).length;
    const unconfirmed = [...state.packs.values()].filter((k) => !k.receipt).length;
    // The cap admitted these asks before the stop: they are carried, not reserved again.
    this.budget.carry(
      unpacked + partial.reduce((n, a) => n + a.lacking.length, 0),
      unconfirmed,
      partial.reduce((t, a) => t + this.askWorstCase(a.agent, a.lacking), 0n),
    );
    this.p.onNote?.(`finishing run ${run}: ${partial.length} agents to complete, ${unconfirmed} packs to confirm, ${unpacked} signals to pack`);
    const stop = new AbortController();
    const published = await this.publish(journal, state, this.completeAgents(state, partial, stop.signal), stop);
    await this.completeRun(run, published, state);
  }

  /** The evals `partial` agents lack, asked in their own run (its seed, key and grading), as signals to publish. */
  private async *completeAgents(state: RunState, partial: { agent: Agent; lacking: EvalKind[] }[], signal: AbortSignal): AsyncGenerator<BuiltSignal> {
    const runKey = decodeRunKey(state.start.runKey);
    for (const { agent, lacking } of partial) {
      if (signal.aborted || this.stopping.signal.aborted) return;
      let journaled = 0;
      try {
        for await (const result of this.evaluate(state, agent, lacking, this.stopping.signal)) {
          yield buildSignal(result, { run: state.start.run, runKey });
          journaled++;
        }
      } finally {
        this.budget.release(lacking.length - journaled, this.askWorstCase(agent, lacking));
      }
    }
  }

  /**
   * A run takes no more signals: agents it asked are not asked again this cycle, and the watch state names it as
   * unrevealed until `completeRun`, so a restart finishes it. Then the next cycle starts, or — when the run was full
   * before the cycle's end — the cycle goes on in a new run.
   */
  private async closeRun(cycle: Cycle, cycleOver: boolean): Promise<void> {
    const saved = this.watchState.cycle!;
    this.watchState.unrevealed = [...(this.watchState.unrevealed ?? []), cycle.run];
    if (cycleOver) {
      this.watchState.cycle = null;
    } else {
      for (const subject of [...cycle.state.done.keys(), ...cycle.asking]) {
        // Updated after this run asked it: the next run asks it again.
        if (this.needsNextRun(cycle, subject)) continue;
        if (this.watchState.reask) delete this.watchState.reask[subject];
        this.known.setFlag(subject, ASKED_IN_CYCLE, true);
      }
      this.watchState.cycle = { ...saved, run: null, previous: [...(saved.previous ?? []), cycle.run] };
      this.schedule = { order: cycle.order, next: cycle.next };
    }
    if (this.cycle === cycle) this.cycle = undefined;
    await this.save(true);
  }

  /** A closed run has published everything: reveal it (its key re-derives the questions). */
  private async completeRun(run: string, published: PublishSignalsReturnType, state: RunState): Promise<void> {
    const { client, p } = this;
    if (published.status !== 'complete') {
      // Left unrevealed: the next start finishes it.
      if (!this.stopping.signal.aborted) this.error(published.error ?? new Error(`run ${run} stopped (${published.status})`));
      return;
    }
    // A stop cut an agent's asks short: the next start asks the rest in this run, so it is not revealed yet.
    if (this.stopping.signal.aborted && halfAsked(state).size > 0) return;
    try {
      const revealed = await revealRun(client, { run, state });
      p.onNote?.(`run ${run} complete and revealed (topic sequence ${revealed.seq})`);
      this.watchState.revealed = [...(this.watchState.revealed ?? []), { run, at: this.now() }];
    } catch (err) {
      this.error(err);
      p.onNote?.(`run ${run} complete; its reveal failed (${errorMessage(err)}): reveal it with \`hcs25 reveal ${run}\``);
    }
    this.watchState.unrevealed = (this.watchState.unrevealed ?? []).filter((r) => r !== run);
    // Messages confirmed today survive the rotation (a restart reads only the current run's journal).
    this.watchState.feeDay = { day: utcDay(this.now()), confirmed: this.budget.confirmedToday };
    await this.pruneJournals();
    await this.save(true);
  }

  /**
   * Removes the journals of runs revealed longer than `keepJournalsMs` ago. A revealed run is on the topic for good,
   * reveal included, so its journal serves only `hcs25 verify` (the responses, when kept) and re-grading; a watcher
   * would otherwise fill the disk with about 1.5 KB per signal, every cycle. Runs of the cycle in progress are kept:
   * a restart reads them to know whom the cycle asked.
   */
  private async pruneJournals(): Promise<void> {
    const keepMs = this.p.keepJournalsMs ?? DEFAULT_KEEP_JOURNALS_MS;
    const revealed = this.watchState.revealed;
    if (keepMs === null || !revealed) return;
    const inCycle = new Set(this.watchState.cycle?.previous ?? []);
    const before = this.now() - keepMs;
    const kept: typeof revealed = [];
    for (const r of revealed) {
      if (r.at >= before || inCycle.has(r.run)) {
        kept.push(r);
        continue;
      }
      const path = journalPath(this.client.config.stateDir, r.run);
      await rm(path, { force: true });
      this.p.onNote?.(`removed the journal of run ${r.run}, revealed ${formatDuration(this.now() - r.at)} ago (--keep-journals)`);
    }
    this.watchState.revealed = kept;
  }

  // ---------- asking ----------

  private askedThisCycle(subject: string): boolean {
    const c = this.cycle;
    if (!c) return false;
    return c.asking.has(subject) || this.known.hasFlag(subject, ASKED_IN_CYCLE) || this.lacking(c, subject).length === 0;
  }

  /**
   * `subject` was updated after it was asked this cycle: it is asked again in the current run when that run has not
   * asked it (it was asked in an earlier run of the cycle), or else in the next run. Saved, so a restart keeps it.
   */
  private askAgain(c: Cycle, subject: string): void {
    const inThisRun = c.asking.has(subject) || c.state.done.has(subject);
    this.watchState.reask = { ...this.watchState.reask, [subject]: { run: c.run, inclusive: !inThisRun } };
    this.known.setFlag(subject, ASKED_IN_CYCLE, false);
  }

  /** The current run asked `subject` before its update: only a later run can ask it again. */
  private needsNextRun(c: Cycle, subject: string): boolean {
    const r = this.watchState.reask?.[subject];
    return r !== undefined && !carriesReask(r, c.run);
  }

  private lacking(cycle: Cycle, subject: string): EvalKind[] {
    return this.evals.filter((kind) => !hasResult(cycle.state, signalKey(kind, subject)));
  }

  /** Starts every ask it may: new agents first, then due ones; per-host tokens, the fee cap and concurrency permitting. */
  private tick(): void {
    const c = this.cycle;
    if (!c || c.closing || c.abort.signal.aborted || this.stopping.signal.aborted) return;
    const now = this.now();
    const elapsed = (now - c.startedAt) / (c.endsAt - c.startedAt);
    const { rows, generations, slots } = c.order;
    while (c.next < rows.length) {
      const row = rows[c.next]!;
      const subject = this.known.generation(row) === generations[c.next] ? this.known.subjectAt(row) : undefined;
      if (subject !== undefined && slots[c.next]! > elapsed) break;
      c.next++;
      if (subject !== undefined && !this.front.has(subject)) this.due.add(subject);
    }
    const blocked = new Set<string>();
    let paused = false;
    for (const queue of [this.front, this.due]) {
      for (const subject of queue) {
        if (c.asking.size >= this.concurrency) break;
        // Agents of a host out of tokens are passed over first and cheaply: a queue of one busy host is met whole
        // on every tick, and its host is parsed once (cached while the agent waits), its record not read again.
        const cached = blocked.size > 0 ? this.hosts.get(subject) : undefined;
        if (cached !== undefined && blocked.has(cached)) continue;
        const k = this.known.get(subject);
        if (k && blocked.size > 0 && blocked.has(this.hostOf(k))) continue;
        if (k && !c.asking.has(subject) && this.needsNextRun(c, subject)) {
          if (now - c.openedAt < (this.p.minRunMs ?? DEFAULT_MIN_RUN_MS)) continue;
          // The cycle goes on in a new run, which asks this updated agent first.
          c.closing = true;
          c.rotate?.();
          return;
        }
        const lacking = k && !this.known.hasFlag(subject, ASKED_IN_CYCLE) ? this.lacking(c, subject) : [];
        if (!k || lacking.length === 0 || c.asking.has(subject)) {
          if (!c.asking.has(subject)) {
            queue.delete(subject);
            this.hosts.delete(subject);
          }
          continue;
        }
        const host = this.hostOf(k);
        // The run is full (counting what is being asked): the cycle goes on in a new run.
        const signals = c.state.results + c.asking.size * this.evals.length;
        if (signals > 0 && signals + lacking.length > (this.p.maxRunSignals ?? DEFAULT_MAX_RUN_SIGNALS)) {
          c.closing = true;
          c.rotate?.();
          return;
        }
        const askTinybar = this.askWorstCase(k, lacking);
        if (!this.budget.tryReserve(lacking.length, askTinybar)) {
          paused = true;
          break;
        }
        if (this.limiter.take(host, lacking.length) > 0) {
          this.budget.release(lacking.length, askTinybar);
          blocked.add(host);
          continue;
        }
        queue.delete(subject);
        this.hosts.delete(subject);
        void this.ask(c, k, lacking, askTinybar);
      }
      if (paused) break;
    }
    this.phase = paused ? 'paused-fee-cap' : 'running';
    this.detail = paused ? `daily fee cap reached; asking resumes at 00:00 UTC (in ${formatDuration(this.budget.msUntilNextDay())})` : undefined;
  }

  /**
   * The host each waiting agent is asked at, by subject, kept while it waits in a queue (tick() drops it when the
   * agent is asked or leaves the queue; a registry change drops it, as the endpoint may have changed), so a long
   * queue does not hold a string per agent for good.
   */
  private readonly hosts = new Map<string, string>();

  private hostOf(agent: Agent): string {
    let host = this.hosts.get(agent.subject);
    if (host === undefined) this.hosts.set(agent.subject, (host = askHost(agent)));
    return host;
  }

  /** `askTinybar`: what tick() reserved for asking over HCS-10 (askWorstCase), released once the asks are over. */
  private async ask(c: Cycle, agent: Agent, lacking: EvalKind[], askTinybar: bigint): Promise<void> {
    const subject = agent.subject;
    c.asking.add(subject);
    this.counters.asks += lacking.length;
    let journaled = 0;
    try {
      for await (const result of this.evaluate(c.state, agent, lacking, c.abort.signal)) {
        // Cut short: an answer not journaled is asked again after a restart, never published twice.
        if (c.abort.signal.aborted) break;
        const built = buildSignal(result, { run: c.run, runKey: c.runKey });
        // Before the push: the publisher may take and journal it before the push returns.
        c.unjournaled.set(built.key, subject);
        await c.channel.push(built);
        journaled++;
      }
      this.counters.evaluations++;
      const reask = this.watchState.reask?.[subject];
      if (journaled === lacking.length && reask && carriesReask(reask, c.run)) {
        delete this.watchState.reask![subject];
        this.saveSoon();
      }
    } catch (err) {
      if (!c.abort.signal.aborted) this.error(err);
    } finally {
      this.budget.release(lacking.length - journaled, askTinybar);
      c.asking.delete(subject);
      if (c.asking.size === 0) c.onIdle?.();
      this.saveSoon();
      this.tick();
    }
  }

  /**
   * What asking an agent can cost besides its signals: nothing over HTTP; over HCS-10, per question a connection
   * request and its outbound record (a failed ask drops its connection, so each question may open one) and the
   * question, plus the close and its record, and the inbound topic's HIP-991 fee per request when fees are allowed.
   * The availability probe only reads the mirror node.
   */
  private askWorstCase(agent: Agent, lacking: EvalKind[]): bigint {
    if (agent.protocol !== 'hcs-10') return 0n;
    const questions = BigInt(questionsOf(lacking));
    if (questions === 0n) return 0n;
    const topicFees = this.p.hcs10?.topicFees;
    const feePerRequest = topicFees?.allow ? hbarToTinybar(topicFees.maxHbar) : 0n;
    return (questions * 3n + 2n) * this.estimate + questions * feePerRequest;
  }

  /** An HCS-10 ask's transaction was submitted: charged to today's budget, and saved (no journal records it). */
  private charged(op: SubmittedOp): void {
    this.budget.chargeAsk(BigInt(op.topicFeeTinybars ?? 0));
    this.watchState.askFees = { day: this.budget.today, tinybar: this.budget.askTinybarToday.toString() };
    this.saveSoon();
  }

  /** Asks one agent the evals it lacks, with its run's questions (seed, grader, bank) and budget. */
  private evaluate(state: RunState, agent: Agent, lacking: EvalKind[], signal: AbortSignal) {
    const { p } = this;
    return evaluateAgents(this.client, {
      agents: [agent],
      evals: lacking,
      seed: state.start.seed,
      budgetMs: state.start.config.budgetMs,
      concurrency: lacking.length,
      ...questionOptions(state),
      signal,
      hcs10: { ...p.hcs10, onSubmitted: (op) => this.charged(op) },
      ...(p.onNote && { onNote: p.onNote }),
      ...(p.runner && { runner: p.runner }),
    });
  }

  /**
   * The journal as publishSignals sees it, with each record also counted here (published signals, the fee budget) and
   * each result of `cycle` no longer unjournaled.
   */
  private observe(journal: Journal, state: RunState, cycle?: Cycle): Journal {
    const on = (r: JournalInput) => {
      if (r.t === 'result') {
        // The cursor may pass the agent now: saved (after a flush) soon.
        if (cycle?.unjournaled.delete(r.key)) this.saveSoon();
        if (r.message) this.counters.signalsJournaled++;
        else this.budget.release(1);
      } else if (r.t === 'pack') this.budget.packed(r.signals.length);
      else if (r.t === 'receipt' && r.key.startsWith(PACK_KEY_PREFIX)) {
        this.counters.messagesPublished++;
        this.counters.signalsPublished += state.packs.get(r.key)?.signals.length ?? 0;
        this.budget.confirmed();
      }
    };
    return new Proxy(journal, {
      get(target, prop) {
        if (prop === 'append' || prop === 'write') {
          return (r: JournalInput) => {
            const out = prop === 'append' ? target.append(r) : target.write(r);
            on(r);
            return out;
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  // ---------- state ----------

  private saveTimer: NodeJS.Timeout | undefined;

  private saveSoon(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      void this.save(false).catch((err) => this.error(err));
    }, 1_000);
    this.saveTimer.unref();
  }

  /**
   * Saves the registry cursor: the last message folded, or, while new agents still wait to be asked or their answers
   * to be journaled, just before the earliest of them, so that a restart finds them new again and asks them first.
   */
  private async save(force: boolean): Promise<void> {
    if (!force && this.now() - this.savedAt < 1_000) return this.saveSoon();
    this.savedAt = this.now();
    if (this.follower && this.follower.seq > 0) {
      let seq = this.follower.seq;
      const before = (s: string) => (seq = Math.min(seq, (this.seqOf(s) ?? seq + 1) - 1));
      for (const s of this.front) before(s);
      for (const c of this.open) {
        for (const s of c.asking) before(s);
        for (const s of c.unjournaled.values()) before(s);
      }
      this.watchState.cursor = { seq, consensusTimestamp: this.follower.consensusTimestamp };
    }
    // One write at a time (they share the temporary file), each with the state as it was when asked for.
    const snapshot = structuredClone(this.watchState);
    // The results of agents the cursor now passes are appended but may not be on disk yet (the publisher flushes with
    // its packs): they must be before the cursor is.
    const flushed = Promise.all([...this.open].map((c) => c.journal.flush()));
    const write = Promise.all([this.saving, flushed]).then(() => saveWatchState(this.statePath, snapshot));
    this.saving = write.catch(() => undefined);
    await write;
  }

  private saving: Promise<void> = Promise.resolve();

  /** Registry sequence of the message that last changed a known agent. */
  private seqOf(subject: string): number | undefined {
    return this.known.changedSeq(subject);
  }

  private error(err: unknown): void {
    this.counters.errors++;
    this.lastError = { at: new Date(this.now()).toISOString(), message: errorMessage(err) };
  }
}

/** Whether run `run` may carry the new ask of an agent updated during run `r.run` (run ids are ULIDs: time-ordered). */
function carriesReask(r: { run: string; inclusive: boolean }, run: string): boolean {
  return r.inclusive ? run >= r.run : run > r.run;
}

/** Subjects with some of the run's evals journaled and not all, with the evals they lack. */
function halfAsked(state: RunState): Map<string, EvalKind[]> {
  const evals = state.start.config.evals as EvalKind[];
  const out = new Map<string, EvalKind[]>();
  for (const subject of state.done.keys()) {
    const lacking = evals.filter((kind) => !hasResult(state, signalKey(kind, subject)));
    if (lacking.length > 0) out.set(subject, lacking);
  }
  return out;
}

/** Where in each cycle an agent is asked: a hash of its subject, so slots are spread evenly and stable across restarts. */
export function slotOf(subject: string): number {
  return createHash('sha256').update(subject).digest().readUInt32BE(0) / 2 ** 32;
}

/** How many of `kinds` ask the agent a question (the availability probe asks none). */
function questionsOf(kinds: readonly EvalKind[]): number {
  return kinds.filter((kind) => kind !== 'availability').length;
}

/** The table's agents in slot order (each slot hashed once). */
function bySlot(table: AgentTable): Schedule {
  const all = Array.from(table.liveRows());
  const slotOfRow = new Float64Array(all.length);
  all.forEach((row, i) => (slotOfRow[i] = slotOf(table.subjectAt(row)!)));
  const order = Array.from(all.keys()).sort((a, b) => slotOfRow[a]! - slotOfRow[b]!);
  const rows = new Int32Array(order.length);
  const generations = new Uint32Array(order.length);
  const slots = new Float64Array(order.length);
  order.forEach((i, at) => {
    rows[at] = all[i]!;
    generations[at] = table.generation(all[i]!);
    slots[at] = slotOfRow[i]!;
  });
  return { rows, generations, slots };
}

function questionOptions(state: RunState): Pick<EvaluateAgentsParameters, 'grader' | 'scienceBank'> {
  const { grader, bank } = runQuestionSource(state.start.config);
  return { grader, ...(bank && { scienceBank: bank.entries }) };
}

/** Packs of a journal confirmed on `day` (UTC): what the cycle has paid today, read back after a restart. */
async function receiptsOn(path: string, day: string): Promise<number> {
  const { createReadStream } = await import('node:fs');
  const { createInterface } = await import('node:readline');
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY })) {
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

function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export function formatDuration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1)}h`;
  return `${Math.round(ms / 1000)}s`;
}
