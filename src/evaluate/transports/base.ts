import type { AskFailure, AskOptions, AskResult, ProbeResult } from './types.js';
import { Deadline, classifyError, type HttpClient, type TransportError } from '../../net/http-client.js';

/** What every transport instance shares: the run's HTTP client and this agent's own headers (from env). */
export interface TransportContext {
  client: HttpClient;
  /** Per-agent headers (credentials) resolved from environment variables; dropped on cross-origin redirects. */
  secretHeaders: Record<string, string>;
}

export function toAskFailure(err: TransportError, latencyMs: number): AskFailure {
  return {
    ok: false,
    kind: err.kind,
    message: err.message,
    ...(err.httpStatus === undefined ? {} : { httpStatus: err.httpStatus }),
    ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }),
    transient: err.transient,
    latencyMs,
  };
}

function slotAborted(): AskFailure {
  return { ok: false, kind: 'timeout', message: 'aborted by the caller', transient: false, latencyMs: 0 };
}

/**
 * Runs one ask under a host slot and a fresh Deadline (started after the slot is granted, so queueing behind other
 * asks to the same host is not charged to this agent), and turns whatever is thrown into a classified failure.
 */
export async function runAsk(
  ctx: TransportContext,
  url: string,
  options: AskOptions,
  fn: (deadline: Deadline) => Promise<{ text: string; meta: Record<string, unknown> }>,
): Promise<AskResult> {
  try {
    return await ctx.client.withHostSlot(url, options.signal, async () => {
      const deadline = new Deadline(options.budgetMs, options.signal);
      try {
        const { text, meta } = await fn(deadline);
        return { ok: true, text, latencyMs: deadline.elapsed(), meta };
      } catch (err) {
        return toAskFailure(classifyError(err, deadline), deadline.elapsed());
      } finally {
        deadline.dispose();
      }
    });
  } catch {
    return slotAborted();
  }
}

export async function runProbe(
  ctx: TransportContext,
  url: string,
  options: AskOptions,
  fn: (deadline: Deadline) => Promise<Omit<ProbeResult, 'latencyMs'>>,
): Promise<ProbeResult> {
  try {
    return await ctx.client.withHostSlot(url, options.signal, async () => {
      const deadline = new Deadline(options.budgetMs, options.signal);
      try {
        const result = await fn(deadline);
        return { ...result, latencyMs: deadline.elapsed() };
      } catch (err) {
        const failure = classifyError(err, deadline);
        return {
          reachable: false,
          latencyMs: deadline.elapsed(),
          ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
          reason: `${failure.kind}: ${failure.message}`,
        };
      } finally {
        deadline.dispose();
      }
    });
  } catch {
    return { reachable: false, latencyMs: 0, reason: 'timeout: aborted by the caller' };
  }
}

/**
 * The availability rule shared by the HTTP-style transports: the agent's server answered with anything below 500.
 * A 404 or 405 on the probe path still proves a live server; 5xx, HTML error walls of proxies and silence do not.
 */
export function reachableByStatus(status: number, detail: string): Omit<ProbeResult, 'latencyMs'> {
  const reachable = status < 500;
  return { reachable, httpStatus: status, reason: reachable ? detail : 'server error' };
}
