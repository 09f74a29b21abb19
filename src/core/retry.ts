/**
 * The one backoff schedule and retry loop. Callers decide what is worth retrying; this module decides how long to
 * wait and stops waiting when the caller's signal aborts.
 */

export interface BackoffOptions {
  /** The first wait, ms. */
  minMs: number;
  /** The longest wait, ms. */
  maxMs: number;
  /** Growth per attempt (default 2). */
  factor?: number;
  /**
   * Wait a random time in the upper half of the step: clients that failed together (a mirror node restart) do not
   * come back together.
   */
  jitter?: boolean;
}

/** The wait before retry number `attempt` (0 for the first retry): minMs × factor^attempt, at most maxMs. */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const step = Math.min(options.minMs * (options.factor ?? 2) ** attempt, options.maxMs);
  return options.jitter ? step / 2 + Math.random() * (step / 2) : step;
}

/** Waits `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface RetryOptions extends BackoffOptions {
  /** Tries in all, the first included. */
  attempts: number;
  /** Whether a failure is worth another try (default: every failure is). */
  retryable?: (err: unknown) => boolean;
  /** The wait before retry `attempt` after `err` (default: the backoff schedule). */
  delayMs?: (attempt: number, err: unknown) => number;
  /** Stops the loop: checked before each try, and ends a wait at once (rejecting with the signal's reason). */
  signal?: AbortSignal;
  /** Told before each wait: the try that failed (0 for the first), its error and the wait, ms. */
  onRetry?: (attempt: number, err: unknown, delayMs: number) => void;
}

/** Calls `fn` until it resolves, a failure is not retryable, or `attempts` tries have failed (the last error is thrown). */
export async function retry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt + 1 >= options.attempts || options.retryable?.(err) === false) throw err;
      const delayMs = options.delayMs ? options.delayMs(attempt, err) : backoffDelay(attempt, options);
      options.onRetry?.(attempt, err, delayMs);
      await sleep(delayMs, options.signal);
    }
  }
}
