import { describe, expect, it, vi } from 'vitest';
import { backoffDelay, retry, sleep } from '../../src/core/retry.js';

describe('backoffDelay', () => {
  it('doubles from minMs up to maxMs', () => {
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, { minMs: 250, maxMs: 4_000 }));
    expect(delays).toEqual([250, 500, 1_000, 2_000, 4_000, 4_000]);
  });

  it('grows by the given factor and never overflows to NaN', () => {
    expect(backoffDelay(2, { minMs: 100, maxMs: 10_000, factor: 1.5 })).toBe(225);
    expect(backoffDelay(5_000, { minMs: 100, maxMs: 10_000 })).toBe(10_000);
  });

  it('with jitter, waits in the upper half of the step', () => {
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(3, { minMs: 100, maxMs: 10_000, jitter: true });
      expect(d).toBeGreaterThanOrEqual(400);
      expect(d).toBeLessThanOrEqual(800);
    }
  });
});

describe('retry', () => {
  it('tries until fn resolves, waiting the schedule between tries', async () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      const result = retry(
        async (attempt) => {
          calls++;
          if (attempt < 2) throw new Error(`fail ${attempt}`);
          return 'ok';
        },
        { attempts: 5, minMs: 100, maxMs: 1_000 },
      );
      await vi.advanceTimersByTimeAsync(99);
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toBe(2);
      await vi.advanceTimersByTimeAsync(200);
      await expect(result).resolves.toBe('ok');
      expect(calls).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('throws the last error after `attempts` tries', async () => {
    let calls = 0;
    const fail = async (): Promise<never> => {
      throw new Error(`fail ${++calls}`);
    };
    await expect(retry(fail, { attempts: 3, minMs: 1, maxMs: 1 })).rejects.toThrow('fail 3');
  });

  it('throws at once what is not retryable', async () => {
    let calls = 0;
    const fail = async (): Promise<never> => {
      throw new Error(`fail ${++calls}`);
    };
    await expect(retry(fail, { attempts: 3, minMs: 1, maxMs: 1, retryable: () => false })).rejects.toThrow('fail 1');
  });

  it('uses delayMs when given', async () => {
    const waits: number[] = [];
    const fail = async (): Promise<never> => {
      throw new Error('x');
    };
    const delayMs = (attempt: number): number => {
      waits.push(attempt);
      return 0;
    };
    await expect(retry(fail, { attempts: 3, minMs: 1_000_000, maxMs: 1_000_000, delayMs })).rejects.toThrow('x');
    expect(waits).toEqual([0, 1]);
  });

  it('stops waiting when the signal aborts, with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('stopped');
    const fail = async (): Promise<never> => {
      throw new Error('x');
    };
    const result = retry(fail, { attempts: 10, minMs: 60_000, maxMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(reason), 10);
    await expect(result).rejects.toBe(reason);
  });

  it('does not start when the signal has aborted', async () => {
    let calls = 0;
    const fn = async (): Promise<number> => ++calls;
    await expect(
      retry(fn, { attempts: 3, minMs: 1, maxMs: 1, signal: AbortSignal.abort(new Error('no')) }),
    ).rejects.toThrow('no');
    expect(calls).toBe(0);
  });
});

describe('sleep', () => {
  it('resolves after the time, rejects at once on an aborted signal', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    await expect(sleep(60_000, AbortSignal.abort('why'))).rejects.toBe('why');
  });
});
