/**
 * The watcher's runs once they take no more asks: publishing each one through its journal, finishing the runs a stop
 * left open, revealing a run once everything it journaled is on the topic, and removing old journals.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { buildSignal, type BuiltSignal } from '../publish/build-signals.js';
import { publishSignals, type PublishSignalsReturnType } from '../publish/publish-signals.js';
import { revealRun } from '../publish/reveal-run.js';
import type { Agent } from '../core/agent.js';
import { Hcs25Error, errorMessage } from '../core/errors.js';
import type { EvalKind } from '../evaluate/types.js';
import {
  Journal,
  PACK_KEY_PREFIX,
  journalPath,
  readJournal,
  runFormat,
  type JournalInput,
  type RunState,
} from '../publish/journal.js';
import { decodeRunKey } from '../format/hashing.js';
import type { Asker } from './asking.js';
import { utcDay } from './budget.js';
import { halfAsked, unpaid, type Cycle, type WatchContext } from './cycle.js';
import { DEFAULT_KEEP_JOURNALS_MS } from './options.js';
import { formatDuration } from './status.js';

export class Runs {
  /** Runs draining and being revealed in the background. */
  private readonly background = new Set<Promise<void>>();

  /** `hardStop`: aborts every publisher at once (a graceful stop that took longer than `shutdownMs`). */
  constructor(
    private readonly ctx: WatchContext,
    private readonly asker: Asker,
    private readonly hardStop: AbortSignal,
  ) {}

  /** publishSignals for one run, its journal observed (counts, the fee budget); every run stops with `hardStop`. */
  publish(
    journal: Journal,
    state: RunState,
    signals: AsyncIterable<BuiltSignal>,
    stop: AbortController,
    cycle?: Cycle,
  ): Promise<PublishSignalsReturnType> {
    const { client, p } = this.ctx;
    return publishSignals(client, {
      journal: this.observe(journal, state, cycle),
      state,
      signals,
      estimateTinybar: this.ctx.estimate,
      ...(p.flushMs !== undefined && { flushMs: p.flushMs }),
      // A watcher never stops for a busy network: it waits, saying so, until the network answers.
      retryForMs: Number.POSITIVE_INFINITY,
      stop,
      signal: this.hardStop,
      ...(p.onNote && { onNote: p.onNote }),
      ...(p.submitter && { submitter: p.submitter }),
    });
  }

  inBackground(task: Promise<void>): void {
    const tracked = task.catch((err) => this.ctx.error(err)).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  /** Waits for the runs draining or being revealed in the background. */
  async settled(): Promise<void> {
    await Promise.all(this.background);
  }

  /**
   * A stop between a new run's journal and the save naming it as the cycle's run: nothing was asked in that run (asks
   * start after the save), so its journal holds a start record only and is removed; one with more is kept to finish.
   */
  async dropUnopenedRun(): Promise<void> {
    const { ctx } = this;
    const run = ctx.watchState.opening;
    if (!run) return;
    const path = journalPath(ctx.client.config.stateDir, run);
    const found = existsSync(path) ? await readJournal(path, { keep: 'pending' }) : undefined;
    if (found && (found.state.results > 0 || found.state.packCount > 0)) {
      ctx.watchState.unrevealed = [...(ctx.watchState.unrevealed ?? []), run];
    } else if (found) {
      await rm(path);
      ctx.p.onNote?.(`run ${run} was created but never used before the last stop: its journal is removed`);
    }
    delete ctx.watchState.opening;
    await ctx.save(true);
  }

  /**
   * A run closed before a restart: ask what its agents still lack, resend what it journaled but did not confirm, then
   * reveal it. A run closes while its last agents are still being asked, so a stop can leave an agent with some of
   * its evals journaled: the restart counts that agent as asked in the cycle, so only this run can still ask the rest.
   */
  async finishRun(run: string): Promise<void> {
    const { ctx } = this;
    const { journal, state } = await Journal.open(ctx.client.config.stateDir, run);
    journal.append({ t: 'resume' });
    const partial: { agent: Agent; lacking: EvalKind[] }[] = [];
    for (const [subject, lacking] of halfAsked(state)) {
      const agent = ctx.known.get(subject);
      if (agent) partial.push({ agent, lacking });
      else
        ctx.p.onNote?.(
          `run ${run}: ${subject} lacks ${lacking.join(', ')} and is no longer in the registry: not asked`,
        );
    }
    const { unpacked, unconfirmed } = unpaid(state);
    // The cap admitted these asks before the stop: they are carried, not reserved again.
    ctx.budget.carry(
      unpacked + partial.reduce((n, a) => n + a.lacking.length, 0),
      unconfirmed,
      partial.reduce((t, a) => t + this.asker.askWorstCase(a.agent, a.lacking), 0n),
    );
    ctx.p.onNote?.(
      `finishing run ${run}: ${partial.length} agent${partial.length === 1 ? '' : 's'} to complete, ${unconfirmed} pack${unconfirmed === 1 ? '' : 's'} to confirm, ${unpacked} signal${unpacked === 1 ? '' : 's'} to pack`,
    );
    const stop = new AbortController();
    const published = await this.publish(journal, state, this.completeAgents(state, partial, stop.signal), stop);
    await this.completeRun(run, published, state);
  }

  /** The evals `partial` agents lack, asked in their own run (its seed, key and grading), as signals to publish. */
  private async *completeAgents(
    state: RunState,
    partial: { agent: Agent; lacking: EvalKind[] }[],
    signal: AbortSignal,
  ): AsyncGenerator<BuiltSignal> {
    const { ctx } = this;
    const runKey = decodeRunKey(state.start.runKey);
    for (const { agent, lacking } of partial) {
      if (signal.aborted || ctx.stopping.aborted) return;
      let journaled = 0;
      try {
        for await (const result of this.asker.evaluate(state, agent, lacking, ctx.stopping)) {
          yield buildSignal(result, { run: state.start.run, runKey, version: runFormat(state.start.config) });
          journaled++;
        }
      } finally {
        ctx.budget.release(lacking.length - journaled, this.asker.askWorstCase(agent, lacking));
      }
    }
  }

  /** A closed run has published everything: reveal it (its key re-derives the questions). */
  async completeRun(run: string, published: PublishSignalsReturnType, state: RunState): Promise<void> {
    const { ctx } = this;
    const { client, p, watchState } = ctx;
    if (published.status !== 'complete') {
      // Left unrevealed: the next start finishes it.
      if (!ctx.stopping.aborted)
        ctx.error(published.error ?? new Hcs25Error('STOPPED', `run ${run} stopped (${published.status})`));
      return;
    }
    // A stop cut an agent's asks short: the next start asks the rest in this run, so it is not revealed yet.
    if (ctx.stopping.aborted && halfAsked(state).size > 0) return;
    try {
      const revealed = await revealRun(client, { run, state });
      p.onNote?.(`run ${run} complete and revealed (topic sequence ${revealed.seq})`);
      watchState.revealed = [...(watchState.revealed ?? []), { run, at: ctx.now() }];
    } catch (err) {
      ctx.error(err);
      p.onNote?.(
        `run ${run} complete; its reveal failed (${errorMessage(err)}): reveal it with \`hcs25 reveal ${run}\``,
      );
    }
    watchState.unrevealed = (watchState.unrevealed ?? []).filter((r) => r !== run);
    // Messages confirmed today survive the rotation (a restart reads only the current run's journal).
    watchState.feeDay = { day: utcDay(ctx.now()), confirmed: ctx.budget.confirmedToday };
    await this.pruneJournals();
    await ctx.save(true);
  }

  /**
   * Removes the journals of runs revealed longer than `keepJournalsMs` ago. A revealed run is on the topic for good,
   * reveal included, so its journal serves only `hcs25 verify` (the responses, when kept) and re-grading; a watcher
   * would otherwise fill the disk with every signal of every cycle. Runs of the cycle in progress are kept:
   * a restart reads them to know whom the cycle asked.
   */
  async pruneJournals(): Promise<void> {
    const { ctx } = this;
    const keepMs = ctx.p.keepJournalsMs ?? DEFAULT_KEEP_JOURNALS_MS;
    const revealed = ctx.watchState.revealed;
    if (keepMs === null || !revealed) return;
    const inCycle = new Set(ctx.watchState.cycle?.previous ?? []);
    const before = ctx.now() - keepMs;
    const kept: typeof revealed = [];
    for (const r of revealed) {
      if (r.at >= before || inCycle.has(r.run)) {
        kept.push(r);
        continue;
      }
      const path = journalPath(ctx.client.config.stateDir, r.run);
      await rm(path, { force: true });
      ctx.p.onNote?.(
        `removed the journal of run ${r.run}, revealed ${formatDuration(ctx.now() - r.at)} ago (--keep-journals)`,
      );
    }
    ctx.watchState.revealed = kept;
  }

  /**
   * The journal as publishSignals sees it, with each record also counted here (published signals, the fee budget) and
   * each result of `cycle` no longer unjournaled.
   */
  private observe(journal: Journal, state: RunState, cycle?: Cycle): Journal {
    const { ctx } = this;
    const on = (r: JournalInput) => {
      if (r.t === 'result') {
        // The cursor may pass the agent now: saved (after a flush) soon.
        if (cycle?.unjournaled.delete(r.key)) ctx.saveSoon();
        if (r.message) ctx.counters.signalsJournaled++;
        else ctx.budget.release(1);
      } else if (r.t === 'pack') ctx.budget.packed(r.signals.length);
      else if (r.t === 'receipt' && r.key.startsWith(PACK_KEY_PREFIX)) {
        ctx.counters.messagesPublished++;
        ctx.counters.signalsPublished += state.packs.get(r.key)?.signals.length ?? 0;
        ctx.budget.confirmed();
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
}
