/**
 * One file over 500 lines: the run loop, the registry follower's reports and the run rotation share the watcher's
 * state; the asking (asking.ts), runs (runs.ts) and cycles (cycle.ts) are apart already.
 *
 * `hcs25 watch`: a long-running publisher that follows a registry and keeps every agent's signals fresh.
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
 *
 * Parts: asking.ts starts the asks, runs.ts publishes, finishes and reveals runs; this class follows the registry,
 * opens and closes the cycle's runs and keeps the watch state.
 */
import { setMaxListeners } from 'node:events';
import type { BuiltSignal } from '../publish/build-signals.js';
import type { PublishSignalsReturnType } from '../publish/publish-signals.js';
import type { Hcs25Client } from '../client.js';
import { sameAsk, type Agent } from '../core/agent.js';
import { Hcs25Error, UsageError, errorMessage } from '../core/errors.js';
import { DEFAULT_EVALS } from '../evaluate/eval-list.js';
import type { AnyEvalResult, EvalKind } from '../evaluate/types.js';
import { parsePrivateKey } from '../hedera/client.js';
import { estimateSubmitFee, expectedMessages, formatHbar, hbarToTinybar } from '../publish/fees.js';
import { Journal, emptyRunState, journalPath, readJournal, type RunState } from '../publish/journal.js';
import { checkSignalTopic } from '../publish/topic.js';
import { decodeRunKey } from '../format/hashing.js';
import { RegistryAgents } from './agents.js';
import { Asker } from './asking.js';
import { DailyBudget, utcDay } from './budget.js';
import { Channel } from '../core/channel.js';
import { carriesReask, newRunStart, questionsOf, receiptsOn, unpaid, type Cycle, type WatchContext } from './cycle.js';
import { RegistryFollower, mirrorSubscription, type RegistryChange } from './follow.js';
import {
  DEFAULT_MAX_FEE_PER_DAY_HBAR,
  DEFAULT_PER_HOST,
  DEFAULT_WATCH_EVERY_MS,
  type WatchRegistryParameters,
  type WatchRegistryReturnType,
} from './options.js';
import { Runs } from './runs.js';
import { Schedule } from './schedule.js';
import { loadWatchState, saveWatchState, watchStatePath, type WatchState } from './state.js';
import { formatDuration, type WatchPhase, type WatchStatus } from './status.js';

const TICK_MS = 250;
const NO_AGENTS = new RegistryAgents();

export class Watcher implements WatchContext {
  readonly now: () => number;
  readonly evals: EvalKind[];
  private readonly everyMs: number;
  budget!: DailyBudget;
  estimate = 0n;
  watchState!: WatchState;
  readonly counters: WatchStatus['counters'] = {
    cycles: 0,
    evaluations: 0,
    asks: 0,
    signalsJournaled: 0,
    signalsPublished: 0,
    messagesPublished: 0,
    errors: 0,
  };
  private readonly asker: Asker;
  private readonly runs: Runs;
  /**
   * At start, agents the registry changed after the saved cursor, while this watcher was down; those of them the cycle
   * asked in an older form are asked again (`updatedWhileDown`, once the cycle is open), as a live update would be.
   */
  private changedWhileDown = new Set<string>();
  private updatedWhileDown: string[] = [];
  /** The schedule of the cycle in progress, kept across its runs. */
  private schedule: Schedule | undefined;
  private follower!: RegistryFollower;
  private cycle: Cycle | undefined;
  private readonly statePath: string;
  private phase: WatchPhase = 'starting';
  private detail: string | undefined;
  private lastError: WatchStatus['lastError'];
  private readonly stopper = new AbortController();
  /** Aborts every publisher at once: a graceful stop that took longer than `shutdownMs`. */
  private readonly hardStop = new AbortController();
  /** Runs still asking or publishing (a full run drains while the next one asks). */
  private readonly open = new Set<Cycle>();
  private readonly followAbort = new AbortController();
  private readonly published: string[] = [];
  private savedAt = 0;
  private saveTimer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();
  private readyForCycles: (() => void) | undefined;

  constructor(
    readonly client: Hcs25Client,
    readonly p: WatchRegistryParameters,
  ) {
    this.now = p.now ?? Date.now;
    this.evals = p.evals ?? [...DEFAULT_EVALS];
    this.everyMs = p.everyMs ?? DEFAULT_WATCH_EVERY_MS;
    this.statePath = watchStatePath(client.config.stateDir, p.registry, p.topic);
    // Long-lived signals that every registry read (up to 16 resolutions at once) and every run's publisher listen on.
    setMaxListeners(0, this.followAbort.signal, this.hardStop.signal, this.stopper.signal);
    if (this.everyMs < 1_000) throw new UsageError('--every must be at least 1s');
    this.asker = new Asker(
      this,
      () => this.cycle,
      (detail) => {
        this.phase = detail ? 'paused-fee-cap' : 'running';
        this.detail = detail;
      },
    );
    this.runs = new Runs(this, this.asker, this.hardStop.signal);
  }

  /** Every live agent by subject: the follower's view. */
  get known(): RegistryAgents {
    return this.follower?.agents ?? NO_AGENTS;
  }

  get stopping(): AbortSignal {
    return this.stopper.signal;
  }

  status(): WatchStatus {
    const c = this.cycle;
    const lagMs = this.follower?.lagMs(this.now()) ?? null;
    return {
      state: this.phase,
      ...(this.detail && { detail: this.detail }),
      registry: this.p.registry,
      topic: this.p.topic,
      ...(c && {
        run: c.run,
        cycleStartedAt: new Date(c.startedAt).toISOString(),
        cycleEndsAt: new Date(c.endsAt).toISOString(),
      }),
      registryLagSeconds: lagMs === null ? null : lagMs / 1000,
      registrySeq: this.follower?.seq ?? 0,
      agentsKnown: this.known.size,
      queue: this.asker.waiting,
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
      this.stopper.abort();
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
        signal: this.stopping,
      });
      this.estimate = (await estimateSubmitFee(client.network.ledger, client.mirror)).tinybar;
      this.budget = new DailyBudget({
        capTinybar: hbarToTinybar(p.maxFeePerDayHbar ?? DEFAULT_MAX_FEE_PER_DAY_HBAR),
        estimateTinybar: this.estimate,
        now: this.now,
      });
      this.watchState = await loadWatchState(this.statePath, p.registry, p.topic);
      const today = utcDay(this.now());
      const { feeDay, askFees } = this.watchState;
      this.budget.restore(
        feeDay?.day === today ? feeDay.confirmed : 0,
        askFees?.day === today ? BigInt(askFees.tinybar) : 0n,
      );

      const subscribe =
        p.subscribe ?? (p.grpc === false ? undefined : await mirrorSubscription(client.sdk).catch(() => undefined));
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
      await Promise.race([initialRead, following, aborted(this.stopping)]);
      this.noteForecast();
      await p.onReady?.(() => this.status());
      await this.runs.dropUnopenedRun();
      await this.runs.pruneJournals();
      // Runs closed before the last stop that may still lack receipts or their reveal.
      for (const run of this.watchState.unrevealed ?? []) this.runs.inBackground(this.runs.finishRun(run));
      while (!this.stopping.aborted) {
        const cycle = await this.openCycle();
        const { rotated, finish } = await this.runCycle(cycle);
        if (rotated && !this.stopping.aborted) {
          // The next run of the cycle starts asking now; this one drains and is revealed meanwhile.
          await this.closeRun(cycle, false);
          this.runs.inBackground(finish.then((published) => this.runs.completeRun(cycle.run, published, cycle.state)));
          continue;
        }
        const published = await finish;
        if (published.status !== 'complete') {
          if (this.stopping.aborted) break;
          throw (
            published.error ??
            new Hcs25Error('STOPPED', `run ${cycle.run} stopped (${published.status})`, {
              hint: `finish it with \`hcs25 run --resume ${cycle.run}\``,
            })
          );
        }
        if (this.stopping.aborted && this.now() < cycle.endsAt && !rotated) break;
        await this.closeRun(cycle, this.now() >= cycle.endsAt);
        await this.runs.completeRun(cycle.run, published, cycle.state);
      }
      await this.runs.settled();
      this.phase = 'stopped';
      this.detail = undefined;
      return { status: this.status(), runs: this.published };
    } catch (err) {
      this.error(err);
      this.phase = 'stopped';
      throw err;
    } finally {
      p.signal?.removeEventListener('abort', onStop);
      this.followAbort.abort();
      await following?.catch(() => undefined);
      await this.runs.settled();
      if (this.watchState) await this.save(true).catch(() => undefined);
    }
  }

  /** What watching today's registry will cost a day, against the cap. */
  private noteForecast(): void {
    const { p } = this;
    // An HCS-10 agent's asks cost a request, its questions and a close, each with a record on our outbound topic.
    let hcs10Agents = 0;
    for (const agent of this.known.values()) if (agent.protocol === 'hcs-10') hcs10Agents++;
    const questions = questionsOf(this.evals);
    const askMessages = questions > 0 ? hcs10Agents * (questions + 4) : 0;
    const forecast =
      BigInt(expectedMessages(this.known.size, this.evals.length, p.pack ?? 'json') + askMessages) * this.estimate;
    const perDay = (forecast * 86_400_000n) / BigInt(this.everyMs);
    p.onNote?.(
      `watching registry ${this.follower.topicId} (${this.known.size} agents) → topic ${p.topic}: every agent every ${formatDuration(this.everyMs)}, ` +
        `≤ ${p.perHost ?? DEFAULT_PER_HOST} asks/host/min; forecast ~${formatHbar(perDay)}/day at today's registry, cap ${formatHbar(this.budget.cap)}/day`,
    );
    if (perDay > this.budget.cap)
      p.onNote?.(
        'warning: the forecast passes the daily fee cap: some agents will wait for the next UTC day (raise --max-fee-per-day or --every)',
      );
  }

  private onRegistry(changes: RegistryChange[], head: { initial: boolean }): void {
    const cursor = this.watchState.cursor?.seq ?? 0;
    const { asker } = this;
    for (const change of changes) {
      if (change.type === 'delete') {
        asker.changed(change.subject, true);
        if (this.watchState.reask) delete this.watchState.reask[change.subject];
        this.changedWhileDown.delete(change.subject);
        continue;
      }
      const { agent, seq, previous: before } = change;
      asker.changed(agent.subject, false);
      // At start, only what changed after the saved cursor is new to us; the rest waits for its slot.
      if (head.initial && seq <= cursor) continue;
      if (head.initial) this.changedWhileDown.add(agent.subject);
      // An entry rewritten without a change to how the agent is asked (its description, say) is no update.
      if (before && sameAsk(before, agent)) continue;
      if (this.cycle && asker.askedThisCycle(agent.subject)) asker.askAgain(this.cycle, agent.subject);
      asker.front.add(agent.subject);
    }
    this.saveSoon();
    asker.tick();
    if (head.initial) this.readyForCycles?.();
  }

  private async openCycle(): Promise<Cycle> {
    const { client, p, asker } = this;
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
        const { state: earlier } = await readJournal(journalPath(client.config.stateDir, run), {
          keep: 'pending',
          onResult,
        });
        for (const subject of earlier.done.keys()) {
          // An updated agent asked again in a run its update allows is done (a half-asked one is finished there).
          if (reask[subject] && carriesReask(reask[subject], run)) delete reask[subject];
          if (!reask[subject] && this.known.has(subject)) asker.askedInCycle.add(subject);
        }
      }
      for (const subject of Object.keys(reask)) if (this.known.has(subject)) asker.front.add(subject);
    }
    if (saved?.run) {
      ({ journal, state } = await Journal.open(client.config.stateDir, saved.run, { onResult }));
      if (state.start.topic !== p.topic) {
        await journal.close();
        throw new UsageError(`the watch state names run ${saved.run}, which publishes to ${state.start.topic}`, {
          hint: `remove ${this.statePath} to start over`,
        });
      }
      journal.append({ t: 'resume' });
      await journal.flush();
      startedAt = saved.startedAt;
      periodMs = saved.periodMs;
      const { unpacked, unconfirmed } = unpaid(state);
      this.budget.carry(unpacked, unconfirmed);
      this.budget.restore(await receiptsOn(journal.path, utcDay(this.now())));
      p.onNote?.(
        `resuming cycle ${saved.run}: ${state.results} signals journaled, ${unconfirmed} packs to confirm, ${unpacked} signals to pack`,
      );
    } else {
      const start = newRunStart(client, p, this.evals, this.everyMs);
      this.watchState.opening = start.run;
      await this.save(true);
      journal = await Journal.create(client.config.stateDir, start);
      state = emptyRunState({ t: 'start', v: 1, at: new Date().toISOString(), ...start });
      startedAt = saved?.startedAt ?? this.now();
      periodMs = saved?.periodMs ?? this.everyMs;
      this.watchState.cycle = { run: start.run, startedAt, periodMs, previous: saved?.previous ?? [] };
      delete this.watchState.opening;
      await this.save(true);
      p.onNote?.(
        `${saved ? 'next run of the cycle' : 'cycle started'}: run ${start.run}, ${this.known.size} agents, until ${new Date(startedAt + periodMs).toISOString()} (journal ${journal.path})`,
      );
    }
    if (!saved) {
      this.counters.cycles++;
      // Updated agents waiting for a run of the last cycle are asked first in this one, as new ones.
      delete this.watchState.reask;
      this.schedule = undefined;
      asker.newCycle();
    }
    for (const [subject, asked] of askedAs) {
      const k = this.known.get(subject);
      if (k && !sameAsk(asked, k)) this.updatedWhileDown.push(subject);
    }
    this.published.push(state.start.run);
    const abort = new AbortController();
    // Every agent being asked listens on it: `concurrency` listeners is expected, not a leak.
    setMaxListeners(0, abort.signal);
    this.schedule ??= new Schedule(this.known.keys());
    return {
      run: state.start.run,
      journal,
      state,
      startedAt,
      endsAt: startedAt + periodMs,
      runKey: decodeRunKey(state.start.runKey),
      schedule: this.schedule,
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
    const { asker } = this;
    const channel = cycle.channel;
    const stop = new AbortController();
    this.cycle = cycle;
    for (const subject of this.updatedWhileDown) {
      asker.askAgain(cycle, subject);
      asker.front.add(subject);
    }
    this.updatedWhileDown = [];
    this.open.add(cycle);
    this.phase = 'running';
    const publishing = this.runs.publish(cycle.journal, cycle.state, channel, stop, cycle);
    void publishing.finally(() => this.open.delete(cycle));
    // The publisher stopped for good (a fatal error): stop asking.
    stop.signal.addEventListener('abort', () => cycle.abort.abort(), { once: true });
    const ticker = setInterval(() => asker.tick(), TICK_MS);
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
    this.stopping.addEventListener('abort', done, { once: true });
    stop.signal.addEventListener('abort', done, { once: true });
    void publishing.finally(done);
    asker.tick();
    await over;
    // The watcher's stop signal outlives every run: a listener left on it would keep this run's state alive.
    this.stopping.removeEventListener('abort', done);
    clearInterval(ticker);
    cycle.closing = true;
    if (this.stopping.aborted) this.phase = 'stopping';
    const finish = (async () => {
      if (cycle.asking.size > 0) await new Promise<void>((resolve) => (cycle.onIdle = resolve));
      channel.close();
      return publishing;
    })();
    return { rotated: cycle.rotated === true, finish };
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
        if (this.asker.needsNextRun(cycle, subject)) continue;
        if (this.watchState.reask) delete this.watchState.reask[subject];
        if (this.known.has(subject)) this.asker.askedInCycle.add(subject);
      }
      this.watchState.cycle = { ...saved, run: null, previous: [...(saved.previous ?? []), cycle.run] };
    }
    if (this.cycle === cycle) this.cycle = undefined;
    await this.save(true);
  }

  saveSoon(): void {
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
  async save(force: boolean): Promise<void> {
    if (!force && this.now() - this.savedAt < 1_000) return this.saveSoon();
    this.savedAt = this.now();
    if (this.follower && this.follower.seq > 0) {
      let seq = this.follower.seq;
      const before = (s: string) => (seq = Math.min(seq, (this.known.changedSeq(s) ?? seq + 1) - 1));
      for (const s of this.asker.front) before(s);
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

  error(err: unknown): void {
    this.counters.errors++;
    this.lastError = { at: new Date(this.now()).toISOString(), message: errorMessage(err) };
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
