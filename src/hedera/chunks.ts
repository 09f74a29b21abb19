/**
 * Reassembly of chunked topic messages (HCS chunk_info): chunks are grouped by their first transaction id and joined
 * in order once all have arrived. Memory is bounded: groups that can no longer complete, or too many at once, are
 * dropped and reported.
 */
import type { DroppedChunk, RawTopicMessage, TopicMessage } from './mirror-schemas.js';

const MAX_CHUNKS_PER_MESSAGE = 20;
/** Open chunk groups kept at once; beyond this the oldest is dropped, so a hostile topic cannot grow memory. */
const MAX_OPEN_GROUPS = 1000;
/** A chunk's transaction is valid for at most 180 s after the first chunk's valid start; later, the group is dead. */
const CHUNK_GROUP_WINDOW_NS = 180n * 1_000_000_000n;

interface ChunkGroup {
  key: string;
  total: number;
  parts: (RawTopicMessage | undefined)[];
  received: number;
  validStartNs: bigint;
}

/**
 * Joins chunks by initial transaction id. A group is given up when it cannot complete any more (consensus has moved
 * past the chunk validity window), when its chunk info contradicts itself, or when too many groups are open.
 */
export class ChunkAssembler {
  private readonly groups = new Map<string, ChunkGroup>();
  constructor(private readonly onDropped?: (d: DroppedChunk) => void) {}

  add(raw: RawTopicMessage): TopicMessage | null {
    const info = raw.chunkInfo;
    if (info === null || (info.total === 1 && info.number === 1)) {
      this.expire(raw.consensusTimestamp);
      return single(raw);
    }
    if (
      info.initialTransactionId === null ||
      info.total < 1 ||
      info.total > MAX_CHUNKS_PER_MESSAGE ||
      info.number < 1 ||
      info.number > info.total
    ) {
      this.drop(raw.sequenceNumber, `chunk ${info.number}/${info.total} has invalid chunk info`);
      return null;
    }
    const key = info.initialTransactionId;
    let group = this.groups.get(key);
    if (group === undefined) {
      this.expire(raw.consensusTimestamp);
      if (this.groups.size >= MAX_OPEN_GROUPS) this.evictOldest();
      group = { key, total: info.total, parts: new Array(info.total), received: 0, validStartNs: validStartNs(key) };
      this.groups.set(key, group);
    }
    if (group.total !== info.total) {
      this.drop(
        raw.sequenceNumber,
        `chunk ${info.number}/${info.total} disagrees with its group's total of ${group.total}`,
      );
      return null;
    }
    if (group.parts[info.number - 1] !== undefined) {
      this.drop(raw.sequenceNumber, `chunk ${info.number}/${info.total} is a duplicate`);
      return null;
    }
    group.parts[info.number - 1] = raw;
    if (++group.received < group.total) return null;
    this.groups.delete(key);
    return joined(group.parts as RawTopicMessage[]);
  }

  /** Reports every open group as dropped. */
  flush(reason: string): void {
    for (const group of this.groups.values()) this.dropGroup(group, reason);
    this.groups.clear();
  }

  private expire(consensusTimestamp: string): void {
    if (this.groups.size === 0) return;
    const now = timestampNs(consensusTimestamp);
    for (const group of this.groups.values()) {
      const age = now - group.validStartNs;
      if (age > CHUNK_GROUP_WINDOW_NS || age < -CHUNK_GROUP_WINDOW_NS) {
        this.groups.delete(group.key);
        this.dropGroup(group, 'its remaining chunks can no longer reach consensus');
      }
    }
  }

  private evictOldest(): void {
    const oldest = this.groups.values().next().value;
    if (oldest === undefined) return;
    this.groups.delete(oldest.key);
    this.dropGroup(oldest, `more than ${MAX_OPEN_GROUPS} chunked messages were incomplete at once`);
  }

  private dropGroup(group: ChunkGroup, reason: string): void {
    for (const part of group.parts) {
      if (part !== undefined)
        this.drop(part.sequenceNumber, `chunk of an incomplete message (${group.received}/${group.total}): ${reason}`);
    }
  }

  private drop(sequenceNumber: number, reason: string): void {
    this.onDropped?.({ sequenceNumber, reason });
  }
}

function single(raw: RawTopicMessage): TopicMessage {
  return {
    sequenceNumber: raw.sequenceNumber,
    firstSequenceNumber: raw.sequenceNumber,
    consensusTimestamp: raw.consensusTimestamp,
    payerAccountId: raw.payerAccountId,
    message: raw.message,
    runningHash: raw.runningHash,
    chunks: 1,
  };
}

function joined(parts: RawTopicMessage[]): TopicMessage {
  let first = parts[0]!;
  let last = parts[0]!;
  for (const p of parts) {
    if (p.sequenceNumber < first.sequenceNumber) first = p;
    if (p.sequenceNumber > last.sequenceNumber) last = p;
  }
  return {
    sequenceNumber: last.sequenceNumber,
    firstSequenceNumber: first.sequenceNumber,
    consensusTimestamp: last.consensusTimestamp,
    payerAccountId: first.payerAccountId,
    message: Buffer.concat(parts.map((p) => p.message)),
    runningHash: last.runningHash,
    chunks: parts.length,
  };
}

function timestampNs(ts: string): bigint {
  const [s, n = '0'] = ts.split('.');
  try {
    return BigInt(s ?? '0') * 1_000_000_000n + BigInt(n.padEnd(9, '0').slice(0, 9));
  } catch {
    return 0n;
  }
}

function validStartNs(groupKey: string): bigint {
  const at = groupKey.indexOf('@');
  const end = groupKey.search(/[/?]/);
  return timestampNs(groupKey.slice(at + 1, end === -1 ? undefined : end));
}
