/**
 * Asking agents for the watcher: who waits (new or updated agents first, then scheduled ones whose slot has come),
 * and starting each ask as the per-host limit, the daily fee cap, the run's size and concurrency allow. An ask's
 * results go to its run's publisher through the run's channel, so each is journaled before it is packed.
 */
import { buildSignal } from '../publish/build-signals.js';
import { evaluateAgents } from '../evaluate/evaluate-agents.js';
import { askHost, type Agent } from '../core/agent.js';
import type { EvalKind } from '../evaluate/types.js';
import type { SubmittedOp } from '../hcs10/messages.js';
import { hbarToTinybar } from '../publish/fees.js';
import { hasResult, runFormat, signalKey, type RunState } from '../publish/journal.js';
import { carriesReask, questionOptions, questionsOf, type Cycle, type WatchContext } from './cycle.js';
import { RateLimiter } from '../core/rate-limit.js';
import { DEFAULT_MAX_RUN_SIGNALS, DEFAULT_MIN_RUN_MS, DEFAULT_PER_HOST } from './options.js';
import { formatDuration } from './status.js';

export class Asker {
  /** New or updated agents, asked before scheduled ones. */
  readonly front = new Set<string>();
  /** Scheduled agents whose slot has come (waiting for a host token, the fee cap or a free slot). */
  readonly due = new Set<string>();
  /** Agents asked in the cycle's earlier runs (a cycle of a large registry spans several). */
  readonly askedInCycle = new Set<string>();
  /**
   * The host each waiting agent is asked at, by subject, kept while it waits in a queue (tick() drops it when the
   * agent is asked or leaves the queue; a registry change drops it, as the endpoint may have changed): a long queue
   * of one busy host is met whole on every tick, and its hosts are not parsed again each time.
   */
  private readonly hosts = new Map<string, string>();
  private readonly limiter: RateLimiter;
  private readonly concurrency: number;

  /**
   * `current`: the run being asked, if any. `onPause`: after each tick, why asking is paused (the daily fee cap), or
   * undefined when it is not.
   */
  constructor(
    private readonly ctx: WatchContext,
    private readonly current: () => Cycle | undefined,
    private readonly onPause: (detail: string | undefined) => void,
  ) {
    this.limiter = new RateLimiter({ capacity: ctx.p.perHost ?? DEFAULT_PER_HOST, refillMs: 60_000, now: ctx.now });
    this.concurrency = ctx.client.config.concurrency;
  }

  /** Agents waiting to be asked. */
  get waiting(): number {
    return this.front.size + this.due.size;
  }

  /** The registry changed `subject`'s agent (its endpoint may be new) or deleted it (`deleted`). */
  changed(subject: string, deleted: boolean): void {
    this.hosts.delete(subject);
    if (!deleted) return;
    this.front.delete(subject);
    this.due.delete(subject);
    this.askedInCycle.delete(subject);
  }

  /** A new cycle: nobody is asked in it yet, and the last cycle's due agents are scheduled again in this one. */
  newCycle(): void {
    this.askedInCycle.clear();
    // The host cache holds waiting agents only: those that leave with the last cycle's queue take their entries.
    for (const subject of this.due) if (!this.front.has(subject)) this.hosts.delete(subject);
    this.due.clear();
  }

  askedThisCycle(subject: string): boolean {
    const c = this.current();
    if (!c) return false;
    return c.asking.has(subject) || this.askedInCycle.has(subject) || this.lacking(c, subject).length === 0;
  }

  /**
   * `subject` was updated after it was asked this cycle: it is asked again in the current run when that run has not
   * asked it (it was asked in an earlier run of the cycle), or else in the next run. Saved, so a restart keeps it.
   */
  askAgain(c: Cycle, subject: string): void {
    const inThisRun = c.asking.has(subject) || c.state.done.has(subject);
    this.ctx.watchState.reask = { ...this.ctx.watchState.reask, [subject]: { run: c.run, inclusive: !inThisRun } };
    this.askedInCycle.delete(subject);
  }

  /** The current run asked `subject` before its update: only a later run can ask it again. */
  needsNextRun(c: Cycle, subject: string): boolean {
    const r = this.ctx.watchState.reask?.[subject];
    return r !== undefined && !carriesReask(r, c.run);
  }

  private lacking(cycle: Cycle, subject: string): EvalKind[] {
    return this.ctx.evals.filter((kind) => !hasResult(cycle.state, signalKey(kind, subject)));
  }

  /** Starts every ask it may: new agents first, then due ones; per-host tokens, the fee cap and concurrency permitting. */
  tick(): void {
    const { ctx } = this;
    const c = this.current();
    if (!c || c.closing || c.abort.signal.aborted || ctx.stopping.aborted) return;
    const now = ctx.now();
    const elapsed = (now - c.startedAt) / (c.endsAt - c.startedAt);
    for (const subject of c.schedule.due(elapsed, (s) => ctx.known.has(s))) {
      if (!this.front.has(subject)) this.due.add(subject);
    }
    const blocked = new Set<string>();
    let paused = false;
    for (const queue of [this.front, this.due]) {
      for (const subject of queue) {
        if (c.asking.size >= this.concurrency) break;
        // Agents of a host out of tokens are passed over first.
        const cached = blocked.size > 0 ? this.hosts.get(subject) : undefined;
        if (cached !== undefined && blocked.has(cached)) continue;
        const k = ctx.known.get(subject);
        if (k && blocked.size > 0 && blocked.has(this.hostOf(k))) continue;
        if (k && !c.asking.has(subject) && this.needsNextRun(c, subject)) {
          if (now - c.openedAt < (ctx.p.minRunMs ?? DEFAULT_MIN_RUN_MS)) continue;
          // The cycle goes on in a new run, which asks this updated agent first.
          c.closing = true;
          c.rotate?.();
          return;
        }
        const lacking = k && !this.askedInCycle.has(subject) ? this.lacking(c, subject) : [];
        if (!k || lacking.length === 0 || c.asking.has(subject)) {
          if (!c.asking.has(subject)) {
            queue.delete(subject);
            this.hosts.delete(subject);
          }
          continue;
        }
        const host = this.hostOf(k);
        // The run is full (counting what is being asked): the cycle goes on in a new run.
        const signals = c.state.results + c.asking.size * ctx.evals.length;
        if (signals > 0 && signals + lacking.length > (ctx.p.maxRunSignals ?? DEFAULT_MAX_RUN_SIGNALS)) {
          c.closing = true;
          c.rotate?.();
          return;
        }
        const askTinybar = this.askWorstCase(k, lacking);
        if (!ctx.budget.tryReserve(lacking.length, askTinybar)) {
          paused = true;
          break;
        }
        if (this.limiter.take(host, lacking.length) > 0) {
          ctx.budget.release(lacking.length, askTinybar);
          blocked.add(host);
          continue;
        }
        queue.delete(subject);
        this.hosts.delete(subject);
        void this.ask(c, k, lacking, askTinybar);
      }
      if (paused) break;
    }
    const resumesIn = () => formatDuration(ctx.budget.msUntilNextDay());
    this.onPause(paused ? `daily fee cap reached; asking resumes at 00:00 UTC (in ${resumesIn()})` : undefined);
  }

  private hostOf(agent: Agent): string {
    let host = this.hosts.get(agent.subject);
    if (host === undefined) {
      host = askHost(agent);
      this.hosts.set(agent.subject, host);
    }
    return host;
  }

  /** `askTinybar`: what tick() reserved for asking over HCS-10 (askWorstCase), released once the asks are over. */
  private async ask(c: Cycle, agent: Agent, lacking: EvalKind[], askTinybar: bigint): Promise<void> {
    const { ctx } = this;
    const subject = agent.subject;
    c.asking.add(subject);
    ctx.counters.asks += lacking.length;
    let journaled = 0;
    try {
      for await (const result of this.evaluate(c.state, agent, lacking, c.abort.signal)) {
        // Cut short: an answer not journaled is asked again after a restart, never published twice.
        if (c.abort.signal.aborted) break;
        const built = buildSignal(result, { run: c.run, runKey: c.runKey, version: runFormat(c.state.start.config) });
        // Before the push: the publisher may take and journal it before the push returns.
        c.unjournaled.set(built.key, subject);
        await c.channel.push(built);
        journaled++;
      }
      ctx.counters.evaluations++;
      const reask = ctx.watchState.reask?.[subject];
      if (journaled === lacking.length && reask && carriesReask(reask, c.run)) {
        delete ctx.watchState.reask![subject];
        ctx.saveSoon();
      }
    } catch (err) {
      if (!c.abort.signal.aborted) ctx.error(err);
    } finally {
      ctx.budget.release(lacking.length - journaled, askTinybar);
      c.asking.delete(subject);
      if (c.asking.size === 0) c.onIdle?.();
      ctx.saveSoon();
      this.tick();
    }
  }

  /**
   * What asking an agent can cost besides its signals: nothing over HTTP; over HCS-10, per question a connection
   * request and its outbound record (a failed ask drops its connection, so each question may open one) and the
   * question, plus the close and its record, and the inbound topic's HIP-991 fee per request when fees are allowed.
   * The availability probe only reads the mirror node.
   */
  askWorstCase(agent: Agent, lacking: EvalKind[]): bigint {
    if (agent.protocol !== 'hcs-10') return 0n;
    const questions = BigInt(questionsOf(lacking));
    if (questions === 0n) return 0n;
    const topicFees = this.ctx.p.hcs10?.topicFees;
    const feePerRequest = topicFees?.allow ? hbarToTinybar(topicFees.maxHbar) : 0n;
    return (questions * 3n + 2n) * this.ctx.estimate + questions * feePerRequest;
  }

  /** An HCS-10 ask's transaction was submitted: charged to today's budget, and saved (no journal records it). */
  private charged(op: SubmittedOp): void {
    const { budget, watchState } = this.ctx;
    budget.chargeAsk(BigInt(op.topicFeeTinybars ?? 0));
    watchState.askFees = { day: budget.today, tinybar: budget.askTinybarToday.toString() };
    this.ctx.saveSoon();
  }

  /** Asks one agent the evals it lacks, with its run's questions (seed, grader, bank) and budget. */
  evaluate(state: RunState, agent: Agent, lacking: EvalKind[], signal: AbortSignal) {
    const { p } = this.ctx;
    return evaluateAgents(this.ctx.client, {
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
}
