import { classifySend } from './send-failure.js';

export interface RetryOptions {
  attempts?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Runs a one-off SDK call (topic create, balance query) again while it fails for a transient reason: a busy
 * node, or a single-node network whose only node the SDK has put in backoff after a dropped connection ("All nodes
 * are unhealthy", "failed to find a healthy working node"). Anything else is thrown at once.
 */
export async function withTransientRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 6;
  const min = options.minBackoffMs ?? 250;
  const max = options.maxBackoffMs ?? 4_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || classifySend(err).kind !== 'transient') throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.min(min * 2 ** (attempt - 1), max)));
    }
  }
}
