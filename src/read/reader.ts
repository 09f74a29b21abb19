/**
 * The reader: an HCS-25 signal topic from any mirror node → validated, allow-listed, deduplicated signals. Each message
 * is read by `readMessage` (format/read.ts: v1, v2, packs, zlib packs, each version by its own parser); this module
 * filters by the publisher allow-list, drops duplicate signals, and yields signals, records (score, reveal), counted
 * unknowns (versions, ops, signal ids, vocabulary values and field names this reader does not know) and rejections
 * (malformed only; in a pack, per signal) in consensus order.
 * A hostile topic produces reasons, never a crash. Incremental (resume after a sequence number) and able to follow
 * the topic. The action `readSignals` and the verifier read through it; the serve indexer too.
 */
import { MirrorRestClient, type DroppedChunk } from '../hedera/mirror-rest.js';
import { signalKey, type SignalMessageV2 } from '../format/schema-v2.js';
import { countUnknown, emptyUnknownCounts, readMessage, type UnknownCounts } from '../format/read.js';
import { consensusMs, isoOfMs, msToConsensus } from '../core/consensus-time.js';
import { hash } from 'node:crypto';
import type { ReadRecord, ReadSignal, ReaderEvent, RejectedMessage, RejectedReason, TopicEvent } from './types.js';
import type { SignalMessage } from '../format/schema-v1.js';

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
   * Dedupe state carried across calls (resume, follow restarts): key → the first copy seen. Pass the same map to a
   * later call to keep "first wins" (and conflict detection) across both.
   */
  seen?: SeenSignals;
  /** Keep polling for new messages after reaching the end of the topic, until `signal` aborts. */
  follow?: boolean | FollowOptions;
  signal?: AbortSignal;
  /**
   * The compact read: each signal is handed to this sink (a ScoreAccumulator is one) as its message is read, instead
   * of being yielded as a `signal` event, so no ReadSignal is built for it. Everything else is yielded as before.
   */
  into?: SignalSink;
}

/** Takes signals as the reader has them in hand: the validated message and, of its transaction, primitives only. */
export interface SignalSink {
  addSignal(
    message: SignalMessage | SignalMessageV2,
    sequenceNumber: number,
    consensusMs: number,
    payerAccountId: string,
  ): void;
}

export interface FollowOptions {
  /** First wait after an empty poll, ms (default 1000); doubled per empty poll up to `maxIntervalMs`. */
  minIntervalMs?: number;
  /** Longest wait between polls, ms (default 15 000). */
  maxIntervalMs?: number;
}

const DETAIL_MAX = 160;

/** The first copy of a signal: where it was read and a digest of its content, to tell a conflicting copy. */
export interface SeenCopy {
  sequence: number;
  digest: string;
}
/** Dedupe state: the first copy of each signal read, by a digest of its dedupe key. */
export type SeenSignals = Map<string, SeenCopy>;

/**
 * Dedupe key (DESIGN §3.1): one signal per publisher, run, signal id and subject; the first one wins, whether it came
 * alone or in a pack. v1 ids count as their catalog ids.
 */
export function dedupeKey(payer: string, message: { run: string; signal: string; subject: string }): string {
  return `${payer}\u0000${signalKey(message)}`;
}

/**
 * The dedupe key as `SeenSignals` holds it: a digest, since the state keeps one per signal read and the key spells out
 * the subject's UAID (docs/performance.md, "Compact dedupe state").
 */
function seenKey(payer: string, message: { run: string; signal: string; subject: string }): string {
  return hash('sha256', dedupeKey(payer, message), 'base64url');
}

/**
 * What a copy of a signal says, as a short digest: its expanded message without the format version, so the same signal
 * alone, packed or in another format is one content, and any other value is another. Readers hand on messages with
 * their known keys in schema order (zod and the pack expansions build them so), so their JSON is the same whatever
 * order a publisher wrote; sorting every key of every signal cost the consumer benchmark a tenth of its time.
 */
export function signalDigest(message: SignalMessage | SignalMessageV2): string {
  const { v: _version, ...content } = message as { v?: unknown };
  // The whole digest: a slice of it would keep the whole string alive beside it.
  return hash('sha256', JSON.stringify(content), 'base64url');
}

/**
 * Yields events in sequence order (and index order within a message): `signal`, `record` (score or reveal),
 * `unknown` (a version, op, signal id, value or field this reader does not know: count it, it is not an error) and
 * `rejected`. Rejection reasons: the parser's (too-large, not-utf8, bad-json, bad-zlib, not-hcs25, schema; a malformed
 * signal of a pack alone, with its index), `publisher-not-allowed`, `duplicate` and `conflict` (per signal), `incomplete-chunks`.
 */
export async function* readTopic(options: ReadSignalsOptions): AsyncGenerator<TopicEvent> {
  const owned = typeof options.mirror === 'string';
  const mirror =
    typeof options.mirror === 'string' ? new MirrorRestClient({ baseUrl: options.mirror }) : options.mirror;
  const allowed = new Set(options.publishers ?? []);
  const seen: SeenSignals = options.seen ?? new Map();
  const sinceMs = options.since === undefined ? Number.NEGATIVE_INFINITY : instant(options.since, 'since');
  const untilMs = options.until === undefined ? Number.POSITIVE_INFINITY : instant(options.until, 'until');
  const follow = options.follow === true ? {} : options.follow || undefined;
  const { subject, into } = options;
  const sink: SignalSink | undefined =
    into && subject !== undefined
      ? { addSignal: (message, ...origin) => message.subject === subject && into.addSignal(message, ...origin) }
      : into;
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
        for (const event of classify(m, allowed, seen, sink, ms)) {
          if (event.type === 'signal' && subject !== undefined && event.signal.message.subject !== subject) continue;
          yield event;
        }
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

/**
 * A signal as `hcs25 signals --json` prints it and the serve API returns it (schemas/serve-openapi.json's ReadSignal):
 * without the parsed time the reader adds for scoring.
 */
export function signalRow({ consensusMs: _parsed, ...row }: ReadSignal): Omit<ReadSignal, 'consensusMs'> {
  return row;
}

/**
 * One mirror message → its events (what `readTopic` yields for it); `seen` carries "first one wins" across calls.
 * With `into`, its signals go there instead of into events (`ms`: its consensus time, when the caller has it).
 */
export function classify(
  m: { sequenceNumber: number; consensusTimestamp: string; payerAccountId: string; message: Buffer },
  allowed: ReadonlySet<string>,
  seen: SeenSignals,
  into?: SignalSink,
  ms?: number,
): TopicEvent[] {
  const origin = {
    sequenceNumber: m.sequenceNumber,
    consensusTimestamp: m.consensusTimestamp,
    payerAccountId: m.payerAccountId,
  };
  const reject = (reason: RejectedReason, detail: string, index?: number): TopicEvent => ({
    type: 'rejected',
    rejected: {
      ...origin,
      ...(index !== undefined ? { index } : {}),
      reason,
      detail: detail.length > DETAIL_MAX ? `${detail.slice(0, DETAIL_MAX - 1)}…` : detail,
    },
  });
  // The allow-list comes first: a message from an untrusted payer is not worth parsing, whatever it says.
  if (allowed.size > 0 && !allowed.has(m.payerAccountId)) {
    return [
      reject('publisher-not-allowed', `payer ${m.payerAccountId || '(none)'} is not in the publisher allow-list`),
    ];
  }
  const parsed = readMessage(m.message);
  if (!parsed.ok) return [reject(parsed.reason, parsed.detail)];
  const time = ms ?? consensusMs(m.consensusTimestamp);
  const consensusAt = isoOfMs(time);
  // A single signal may come with unknown items of its own (index 0); only a pack has signals at other indexes.
  const packed = parsed.items.some((item) => item.index > 0);
  const events: TopicEvent[] = [];
  for (const item of parsed.items) {
    if (item.kind === 'rejected') {
      // One malformed signal of a pack: the rest of the message reads.
      events.push(reject(item.reason, item.detail, item.index));
      continue;
    }
    if (item.kind === 'unknown') {
      events.push({ type: 'unknown', unknown: { ...origin, index: item.index, kind: item.unknown, name: item.name } });
      continue;
    }
    if (item.kind !== 'signal') {
      const record: ReadRecord = {
        ...origin,
        consensusAt,
        index: item.index,
        kind: item.kind,
        v: item.v,
        validated: item.validated,
        message: item.message,
      };
      events.push({ type: 'record', record });
      continue;
    }
    const key = seenKey(m.payerAccountId, item.message);
    const first = seen.get(key);
    const digest = signalDigest(item.message);
    if (first !== undefined) {
      // A copy that says something else is the publisher contradicting itself (equivocation), not a resend.
      const same = first.digest === digest;
      const event = reject(
        same ? 'duplicate' : 'conflict',
        `same publisher, run, signal and subject as sequence ${first.sequence}${same ? '' : ', different content'}`,
        packed ? item.index : undefined,
      );
      if (!same && event.type === 'rejected') {
        const { run, signal, subject } = item.message;
        event.rejected.conflict = { run, signal, subject, firstSequence: first.sequence };
      }
      events.push(event);
      continue;
    }
    seen.set(key, { sequence: m.sequenceNumber, digest });
    if (into) into.addSignal(item.message, m.sequenceNumber, time, m.payerAccountId);
    else
      events.push({
        type: 'signal',
        signal: { ...origin, consensusAt, consensusMs: time, index: item.index, message: item.message },
      });
  }
  return events;
}

function* drain(dropped: DroppedChunk[]): Generator<ReaderEvent> {
  while (dropped.length > 0) {
    const d = dropped.shift()!;
    const rejected: RejectedMessage = {
      sequenceNumber: d.sequenceNumber,
      consensusTimestamp: '',
      payerAccountId: '',
      reason: 'incomplete-chunks',
      detail: d.reason.slice(0, DETAIL_MAX),
    };
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
  /** Score and reveal records, in sequence order. */
  records: ReadRecord[];
  /** What this reader does not know, counted by kind and name (not errors). */
  unknown: UnknownCounts;
  /** Highest sequence number seen (resume point), or undefined for an empty read. */
  lastSequence: number | undefined;
}

/** Reads to the end of the topic (never follows) and returns everything at once. */
export async function collectTopicSignals(
  options: Omit<ReadSignalsOptions, 'follow' | 'into'>,
): Promise<CollectedSignals> {
  const out: CollectedSignals = {
    signals: [],
    rejected: [],
    records: [],
    unknown: emptyUnknownCounts(),
    lastSequence: undefined,
  };
  for await (const event of readTopic(options)) {
    const seq = eventSequence(event);
    out.lastSequence = Math.max(out.lastSequence ?? 0, seq);
    if (event.type === 'signal') out.signals.push(event.signal);
    else if (event.type === 'rejected') out.rejected.push(event.rejected);
    else if (event.type === 'record') out.records.push(event.record);
    else countUnknown(out.unknown, event.unknown.kind, event.unknown.name);
  }
  return out;
}

export function eventSequence(event: TopicEvent): number {
  switch (event.type) {
    case 'signal':
      return event.signal.sequenceNumber;
    case 'rejected':
      return event.rejected.sequenceNumber;
    case 'record':
      return event.record.sequenceNumber;
    case 'unknown':
      return event.unknown.sequenceNumber;
  }
}

/** Rejections counted by reason, keys sorted. */
export function countReasons(rejected: readonly RejectedMessage[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rejected) counts[r.reason] = (counts[r.reason] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Parses a user-given point in time: ISO 8601, or a consensus timestamp. */
function parseInstant(value: string | Date): number {
  if (value instanceof Date) return value.getTime();
  const ms = consensusMs(value);
  return Number.isNaN(ms) ? Date.parse(value) : ms;
}
