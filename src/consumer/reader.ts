/**
 * Reads an HCS-25 signal topic from any mirror node: validates every message, filters by the publisher allow-list,
 * drops duplicates, and yields signals and rejections (with reasons) in consensus order. A hostile topic produces
 * reasons, never a crash. Incremental (resume after a sequence number) and able to follow the topic live.
 */
import { MirrorRestClient, type DroppedChunk } from '../hedera/mirror-rest.js';
import { parseSignalMessage } from '../signals/parse.js';
import type { SignalMessage } from '../signals/schemas.js';
import { consensusIso, consensusMs, parseInstant } from './time.js';
import type { ReadSignal, ReaderEvent, RejectedMessage, RejectedReason } from './types.js';

export interface ReadSignalsOptions {
  topic: string;
  /** A mirror REST client, or its base URL (a client is then made and closed here). */
  mirror: MirrorRestClient | string;
  /** Publisher allow-list (payer accounts). Empty or absent: every payer is accepted. */
  publishers?: readonly string[];
  /** Only messages at or after this consensus time (ISO 8601, consensus timestamp, or Date). */
  since?: string | Date;
  /** Only messages at or before this consensus time. */
  until?: string | Date;
  /** Only signals about this subject (others are skipped, not rejected). */
  subject?: string;
  /** Resume point: only messages with a higher sequence number. */
  afterSequence?: number;
  /**
   * Dedupe state carried across calls (resume, follow restarts): key → sequence number of the first one seen.
   * Pass the same map to a later call to keep "first wins" across both.
   */
  seen?: Map<string, number>;
  /** Keep polling for new messages after reaching the end of the topic, until `signal` aborts. */
  follow?: boolean | FollowOptions;
  signal?: AbortSignal;
}

export interface FollowOptions {
  /** First wait after an empty poll, ms (default 1000); doubled per empty poll up to `maxIntervalMs`. */
  minIntervalMs?: number;
  /** Longest wait between polls, ms (default 15 000). */
  maxIntervalMs?: number;
}

const DETAIL_MAX = 160;

/** Dedupe key (DESIGN §3.1): one signal per publisher, run, signal id and subject; the first one wins. */
export function dedupeKey(payer: string, message: SignalMessage): string {
  return `${payer}\u0000${message.run}\u0000${message.signal}\u0000${message.subject}`;
}

/**
 * Yields `{type:'signal'}` and `{type:'rejected'}` events in sequence order. Rejection reasons: the parser's
 * (too-large, not-utf8, bad-json, not-hcs25, unknown-version, unknown-op, schema), `other-op` (a valid score or
 * reveal message), `publisher-not-allowed`, `duplicate`, `incomplete-chunks`.
 */
export async function* streamTopicSignals(options: ReadSignalsOptions): AsyncGenerator<ReaderEvent> {
  const owned = typeof options.mirror === 'string';
  const mirror = typeof options.mirror === 'string' ? new MirrorRestClient({ baseUrl: options.mirror }) : options.mirror;
  const allowed = new Set(options.publishers ?? []);
  const seen = options.seen ?? new Map<string, number>();
  const sinceMs = options.since === undefined ? Number.NEGATIVE_INFINITY : instant(options.since, 'since');
  const untilMs = options.until === undefined ? Number.POSITIVE_INFINITY : instant(options.until, 'until');
  const follow = options.follow === true ? {} : options.follow || undefined;
  let after = options.afterSequence;
  let wait = follow?.minIntervalMs ?? 1000;

  try {
    for (;;) {
      const dropped: DroppedChunk[] = [];
      let progressed = false;
      const messages = mirror.topicMessages(options.topic, {
        ...(after !== undefined ? { afterSequence: after } : {}),
        // The mirror node narrows by time, so `since` does not page through a topic's whole history. (`until`
        // stays here: reading stops at the first later message, and a chunk group it cuts is not reported.)
        ...(Number.isFinite(sinceMs) ? { fromTimestamp: msToConsensus(sinceMs) } : {}),
        onDropped: (d) => dropped.push(d),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      for await (const m of messages) {
        yield* drain(dropped);
        progressed = true;
        after = Math.max(after ?? 0, m.sequenceNumber);
        const ms = consensusMs(m.consensusTimestamp);
        if (ms > untilMs) return;
        if (ms < sinceMs) continue;
        const event = classify(m, allowed, seen);
        if (event.type === 'signal' && options.subject !== undefined && event.signal.message.subject !== options.subject) continue;
        yield event;
      }
      yield* drain(dropped);
      if (!follow) return;
      // Poll again after a pause: short while messages keep coming, backing off while the topic is quiet.
      wait = progressed ? (follow.minIntervalMs ?? 1000) : Math.min(wait * 2, follow.maxIntervalMs ?? 15_000);
      if (!(await pause(wait, options.signal))) return;
    }
  } finally {
    if (owned) await mirror.close();
  }
}

function classify(
  m: { sequenceNumber: number; consensusTimestamp: string; payerAccountId: string; message: Buffer },
  allowed: ReadonlySet<string>,
  seen: Map<string, number>,
): ReaderEvent {
  const reject = (reason: RejectedReason, detail: string): ReaderEvent => ({
    type: 'rejected',
    rejected: {
      sequenceNumber: m.sequenceNumber,
      consensusTimestamp: m.consensusTimestamp,
      payerAccountId: m.payerAccountId,
      reason,
      detail: detail.length > DETAIL_MAX ? `${detail.slice(0, DETAIL_MAX - 1)}…` : detail,
    },
  });
  // The allow-list comes first: a message from an untrusted payer is not worth parsing, whatever it says.
  if (allowed.size > 0 && !allowed.has(m.payerAccountId)) {
    return reject('publisher-not-allowed', `payer ${m.payerAccountId || '(none)'} is not in the publisher allow-list`);
  }
  const parsed = parseSignalMessage(m.message);
  if (!parsed.ok) return reject(parsed.reason, parsed.detail);
  const message = parsed.message;
  if (message.op !== 'signal') return reject('other-op', `op "${message.op}" is a valid HCS-25 message but not a signal`);
  const key = dedupeKey(m.payerAccountId, message);
  const first = seen.get(key);
  if (first !== undefined) return reject('duplicate', `same publisher, run, signal and subject as sequence ${first}`);
  seen.set(key, m.sequenceNumber);
  const signal: ReadSignal = {
    sequenceNumber: m.sequenceNumber,
    consensusTimestamp: m.consensusTimestamp,
    consensusAt: consensusIso(m.consensusTimestamp),
    payerAccountId: m.payerAccountId,
    message,
  };
  return { type: 'signal', signal };
}

function* drain(dropped: DroppedChunk[]): Generator<ReaderEvent> {
  while (dropped.length > 0) {
    const d = dropped.shift()!;
    const rejected: RejectedMessage = { sequenceNumber: d.sequenceNumber, consensusTimestamp: '', payerAccountId: '', reason: 'incomplete-chunks', detail: d.reason.slice(0, DETAIL_MAX) };
    yield { type: 'rejected', rejected };
  }
}

function instant(value: string | Date, name: string): number {
  const ms = parseInstant(value);
  if (!Number.isFinite(ms)) throw new RangeError(`${name} is not a time: ${String(value).slice(0, 40)}`);
  return ms;
}

/** Resolves true after `ms`, false when aborted first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface CollectedSignals {
  signals: ReadSignal[];
  rejected: RejectedMessage[];
  /** Highest sequence number seen (resume point), or undefined for an empty read. */
  lastSequence: number | undefined;
}

/** Reads to the end of the topic (never follows) and returns everything at once. */
export async function collectTopicSignals(options: Omit<ReadSignalsOptions, 'follow'>): Promise<CollectedSignals> {
  const signals: ReadSignal[] = [];
  const rejected: RejectedMessage[] = [];
  let lastSequence: number | undefined;
  for await (const event of streamTopicSignals(options)) {
    const seq = event.type === 'signal' ? event.signal.sequenceNumber : event.rejected.sequenceNumber;
    lastSequence = Math.max(lastSequence ?? 0, seq);
    if (event.type === 'signal') signals.push(event.signal);
    else rejected.push(event.rejected);
  }
  return { signals, rejected, lastSequence };
}

/** Rejections counted by reason, keys sorted. */
export function countReasons(rejected: readonly RejectedMessage[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rejected) counts[r.reason] = (counts[r.reason] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Milliseconds as a mirror-node `seconds.nanos`, rounded down so it never filters more than `since` does. */
function msToConsensus(ms: number): string {
  const whole = Math.floor(ms);
  return `${Math.floor(whole / 1000)}.${String((whole % 1000) * 1_000_000).padStart(9, '0')}`;
}
