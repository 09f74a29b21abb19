import { performance } from 'node:perf_hooks';
import { sleep } from '../core/retry.js';

/**
 * One time budget for one ask: an AbortSignal that fires when the budget runs out or the caller aborts, and
 * enough bookkeeping to tell the two apart afterwards (a budget overrun is a scored `timeout`; a caller abort is not
 * the agent's fault).
 */
export class Deadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = performance.now();
  private readonly onParentAbort: () => void;
  private timedOutFlag = false;

  constructor(
    readonly budgetMs: number,
    private readonly parent?: AbortSignal,
  ) {
    this.signal = this.controller.signal;
    this.timer = setTimeout(
      () => {
        this.timedOutFlag = true;
        this.controller.abort(new Error(`no answer within ${budgetMs} ms`));
      },
      Math.max(0, budgetMs),
    );
    this.onParentAbort = () => this.controller.abort(parent?.reason);
    if (parent?.aborted) this.controller.abort(parent.reason);
    else parent?.addEventListener('abort', this.onParentAbort, { once: true });
  }

  get timedOut(): boolean {
    return this.timedOutFlag;
  }

  get callerAborted(): boolean {
    return this.parent?.aborted === true && !this.timedOutFlag;
  }

  elapsed(): number {
    return Math.round(performance.now() - this.startedAt);
  }

  remaining(): number {
    return Math.max(0, this.budgetMs - (performance.now() - this.startedAt));
  }

  /** Waits `ms`, or rejects as soon as the deadline fires. */
  sleep(ms: number): Promise<void> {
    return abortableSleep(ms, this.signal);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }
}

/** `sleep` that always rejects with an Error (an abort reason may be any value). */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch((reason: unknown) => {
    throw reason instanceof Error ? reason : new Error('aborted');
  });
}
