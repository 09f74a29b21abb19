/**
 * Fires and delivers webhooks, in the instance that holds the indexer lock (so several instances on one database
 * deliver each alert once). Each tick compares the subjects rescored since the last one with what was seen of them
 * (store.queueHookDeliveries, planDeliveries), then posts the due deliveries. The queue is in the database, so the
 * backoff between attempts is a due time (the shared schedule, core/retry.ts `backoffDelay`) rather than a sleeping
 * retry loop: it survives restarts and a lock handover, and one slow receiver holds up nobody else.
 */
import { backoffDelay, type BackoffOptions } from '../../core/retry.js';
import { Deadline, HttpClient, classifyError } from '../../net/http-client.js';
import { PrivateAddressError, type Resolver } from '../../net/guard.js';
import type { HookStore } from '../store/hook-types.js';
import { planDeliveries } from './match.js';
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signDelivery } from './signature.js';

export interface HookDispatcherOptions {
  store: Pick<HookStore, 'queueHookDeliveries' | 'dueHookDeliveries' | 'recordHookAttempt' | 'pruneHookDeliveries'>;
  /** Whether this instance delivers: it holds the indexer lock. */
  active: () => boolean;
  /** Receivers on loopback and private addresses are allowed (`--allow-private-hooks`). */
  allowPrivate: boolean;
  /** Injected DNS (tests). */
  resolver?: Resolver;
  /** Tries per delivery, the first included. */
  maxAttempts?: number;
  backoff?: BackoffOptions;
  /** A receiver that has not answered within this is cut off (the attempt fails as a timeout). */
  timeoutMs?: number;
  /** How often due deliveries are looked for besides the wake-ups (a retry falls due, another instance stopped). */
  pollMs?: number;
  /** Deliveries posted at once. */
  concurrency?: number;
  onError?: (err: unknown) => void;
}

export const DEFAULT_HOOK_ATTEMPTS = 6;
/** 10 s, 40 s, 2 min 40 s, 10 min 40 s, 42 min 40 s (each up to half shorter): the last try about an hour after the first. */
export const DEFAULT_HOOK_BACKOFF: BackoffOptions = { minMs: 10_000, maxMs: 3_600_000, factor: 4, jitter: true };
const DEFAULT_TIMEOUT_MS = 10_000;
/** Finished deliveries and their log are kept this long. */
const KEEP_MS = 30 * 24 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;
const USER_AGENT = 'hcs25-serve-webhooks';

export class HookDispatcher {
  private readonly http: HttpClient;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private prunedAt = 0;
  /** Cuts deliveries in flight on close (each then counts as a failed attempt, retried by whoever delivers next). */
  private readonly stopping = new AbortController();

  constructor(private readonly options: HookDispatcherOptions) {
    // The agents' client: the private-address guard checks the address actually dialled, at every delivery. A
    // redirect is not followed (a receiver answers where it was registered).
    this.http = new HttpClient({
      allowPrivateEndpoints: options.allowPrivate,
      maxRedirects: 0,
      ...(options.resolver && { resolver: options.resolver }),
    });
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 1_000);
    this.timer.unref();
    this.wake();
  }

  /** Something may have changed (a revision, a new hook): a tick runs now, or again after the one under way. */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.tick()
      .catch((err: unknown) => this.options.onError?.(err))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Queues what the changes call for, then delivers what is due (only while this instance holds the lock). */
  async tick(): Promise<void> {
    if (!this.options.active()) return;
    while ((await this.queue()).more && !this.closed);
    while ((await this.deliverDue()) > 0 && !this.closed);
    const now = Date.now();
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = now;
      await this.options.store.pruneHookDeliveries(new Date(now - KEEP_MS));
    }
  }

  /** One step of the comparison: the deliveries queued and whether rescored subjects remain. */
  queue(): Promise<{ queued: number; more: boolean }> {
    const now = new Date();
    return this.options.store.queueHookDeliveries((changes, hooks) => planDeliveries(changes, hooks, now), { now });
  }

  /** Posts the deliveries due now, each attempt logged; returns how many were attempted. */
  async deliverDue(): Promise<number> {
    const concurrency = this.options.concurrency ?? 4;
    const due = await this.options.store.dueHookDeliveries(new Date(), concurrency * 4);
    for (let i = 0; i < due.length && !this.closed; i += concurrency)
      await Promise.all(due.slice(i, i + concurrency).map((d) => this.attempt(d)));
    return due.length;
  }

  private async attempt(d: Awaited<ReturnType<HookStore['dueHookDeliveries']>>[number]): Promise<void> {
    const at = new Date();
    const timestamp = Math.floor(at.getTime() / 1000);
    const deadline = new Deadline(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS, this.stopping.signal);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await this.http.request(d.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          [EVENT_HEADER]: d.event,
          [DELIVERY_HEADER]: d.id,
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signDelivery(d.secret, timestamp, d.body),
        },
        body: d.body,
        deadline,
        truncateBody: true,
      });
      status = res.status;
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      const failure = classifyError(err, deadline);
      status = failure.httpStatus ?? null;
      error = refusedByGuard(err)
        ? 'refused: the receiver is on a non-public address (see --allow-private-hooks)'
        : deadline.callerAborted
          ? 'cut off: the server stopped during the attempt'
          : status !== null && status >= 300 && status < 400
            ? `HTTP ${status}: redirects are not followed`
            : failure.message;
    } finally {
      deadline.dispose();
    }
    const attempt = d.attempts + 1;
    const ok = error === null;
    const last = attempt >= (this.options.maxAttempts ?? DEFAULT_HOOK_ATTEMPTS);
    const nextAt =
      ok || last
        ? null
        : new Date(at.getTime() + backoffDelay(attempt - 1, this.options.backoff ?? DEFAULT_HOOK_BACKOFF));
    await this.options.store.recordHookAttempt(d.n, { attempt, at, status, error, ok, nextAt });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.stopping.abort();
    await this.running;
    await this.http.close();
  }
}

function refusedByGuard(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof PrivateAddressError) return true;
  return false;
}
