/**
 * Registry discovery: a registry topic (HCS-2 or HCS-10, told apart by its memo) → the live agents it lists, plus
 * every skipped entry with its reason. Hostile registries produce reasons, never crashes: messages are folded one
 * at a time (memory grows with live entries only), every document is size-capped, reference chains are
 * cycle-checked, and resolution runs with bounded concurrency.
 */
import type { LedgerName } from '../config/networks.js';
import { Hcs25Error, UsageError } from '../core/errors.js';
import type { TopicInfo } from '../hedera/mirror-rest.js';
import { isEntityId } from '../core/ids.js';
import type { Agent } from '../core/agent.js';
import { AgentBuilder, dedupeAgents, mapLimit, type Origin } from './agents.js';
import { DEFAULT_FOLD_LIMITS, Hcs2Folder, parseHcs2Memo, type FoldLimits, type Hcs2Entry } from './hcs2.js';
import { Hcs10Folder, parseHcs10RegistryMemo, type Hcs10Entry } from './hcs10.js';
import { openResolveContext, type ResolveSettings } from './resolve.js';
import { quoteInput } from '../config/secret.js';
import { preview } from '../core/terminal.js';
import { SkipList, messageRef, type SkippedEntry } from './skips.js';
import { formatHrl, parseHrl } from '../core/hrl.js';
import { consensusNanos } from '../core/consensus-time.js';

export type RegistryKind = 'hcs-2' | 'hcs-10';

export interface DiscoverOptions extends ResolveSettings {
  /** Registry topic: `0.0.1234` or `hcs://2/0.0.1234`. */
  registry: string;
  network: LedgerName;
  /** Read a topic whose memo does not say what it is as this kind of registry (indexed). */
  kind?: RegistryKind;
  /** Entries resolved at once. Default 16. */
  concurrency?: number;
  /** Registry messages read at most (per topic). Default 1,000,000. */
  maxMessages?: number;
  /** Only messages at or before this consensus time (`seconds.nanos`): the registry as it was then. */
  until?: string;
  /** Skip reasons listed at most; the rest are counted. Default 10,000. */
  maxSkipped?: number;
  /** Largest inline metadata, bytes. Default 8 KiB. */
  maxMetadataBytes?: number;
  /** See AgentBuilderOptions. Default true. */
  preferEndpointHints?: boolean;
}

export interface RegistryInfo {
  topicId: string;
  kind: RegistryKind;
  indexed: boolean;
  ttl: number;
  /** Registry messages read (every topic followed). */
  messages: number;
  /** Set when the registry migrated and the new topic was read instead. */
  migratedTo?: string;
}

export interface DiscoverResult {
  registry: RegistryInfo;
  agents: Agent[];
  skipped: SkippedEntry[];
}

export class RegistryError extends Hcs25Error {
  constructor(code: 'REGISTRY_NOT_FOUND' | 'NOT_A_REGISTRY', message: string, hint: string) {
    super(code, message, { hint });
    this.name = 'RegistryError';
  }
}

type Folded =
  | { kind: 'hcs-2'; entries: Hcs2Entry[]; migrateTo?: string; messages: number }
  | { kind: 'hcs-10'; entries: Hcs10Entry[]; migrateTo?: string; messages: number };

export async function discoverRegistry(options: DiscoverOptions): Promise<DiscoverResult> {
  const topicId = parseRegistryId(options.registry);
  const foldSkips = new SkipList(options.maxSkipped ?? 10_000);
  const skips = new SkipList(options.maxSkipped ?? 10_000);
  const limits: FoldLimits = {
    ...DEFAULT_FOLD_LIMITS,
    ...(options.maxMetadataBytes !== undefined && { maxMetadataBytes: options.maxMetadataBytes }),
  };
  const { ctx, close } = openResolveContext(options);
  try {
    const topic = await options.mirror.getTopic(topicId, options.signal);
    if (topic === null) {
      throw new RegistryError(
        'REGISTRY_NOT_FOUND',
        `registry topic ${topicId} does not exist on this network`,
        'check the topic id and --network',
      );
    }
    const shape = registryShape(topic, options.kind);
    const info: RegistryInfo = { topicId, kind: shape.kind, indexed: shape.indexed, ttl: shape.ttl, messages: 0 };
    let folded = await foldTopic(topicId, shape, options, foldSkips, limits);
    info.messages = folded.messages;
    if (folded.migrateTo !== undefined) {
      const target = folded.migrateTo;
      const targetTopic = await options.mirror.getTopic(target, options.signal);
      const targetShape = targetTopic === null ? null : tryRegistryShape(targetTopic, options.kind);
      if (targetShape === null || targetShape.kind !== shape.kind) {
        skips.add(
          formatHrl(2, topicId),
          `migrate to ${target} not followed: it is not an ${shape.kind} registry; entries are read from ${topicId}`,
        );
      } else {
        const next = await foldTopic(target, targetShape, options, foldSkips, limits);
        if (next.migrateTo !== undefined)
          skips.add(formatHrl(2, target), `second migrate (to ${next.migrateTo}) not followed`);
        info.messages += next.messages;
        info.migratedTo = target;
        info.indexed = targetShape.indexed;
        info.ttl = targetShape.ttl;
        folded = next;
      }
    }
    const sourceTopic = info.migratedTo ?? topicId;
    const builder = new AgentBuilder(ctx, skips, {
      network: options.network,
      ...(options.preferEndpointHints !== undefined && { preferEndpointHints: options.preferEndpointHints }),
    });
    // One string for every agent's source: a registry-scale run holds each agent until it ends.
    const source = formatHrl(2, sourceTopic);
    const origin = (uid: number): Origin => ({ ref: messageRef(sourceTopic, uid), source, registrySeq: uid });
    const concurrency = options.concurrency ?? 16;
    const built =
      folded.kind === 'hcs-2'
        ? await mapLimit(folded.entries, concurrency, (e) => {
            const metadata = e.metadata ?? `hcs://1/${e.tId}`;
            return builder.fromMetadata(metadata, origin(e.uid));
          })
        : await mapLimit(folded.entries, concurrency, (e) => builder.fromAccount(e, origin(e.uid)));
    const listed = built.flatMap((agent) =>
      agent === null ? [] : [{ agent, ref: messageRef(sourceTopic, agent.registrySeq!) }],
    );
    const agents = dedupeAgents(listed, skips);
    return { registry: info, agents, skipped: SkipList.combine(foldSkips, skips) };
  } finally {
    await close();
  }
}

export interface Shape {
  kind: RegistryKind;
  indexed: boolean;
  ttl: number;
}

function tryRegistryShape(topic: TopicInfo, kind: RegistryKind | undefined): Shape | null {
  const hcs2 = parseHcs2Memo(topic.memo);
  if (hcs2) return { kind: 'hcs-2', ...hcs2 };
  const hcs10 = parseHcs10RegistryMemo(topic.memo);
  if (hcs10) return { kind: 'hcs-10', indexed: true, ttl: hcs10.ttl };
  return kind ? { kind, indexed: true, ttl: 86_400 } : null;
}

export function registryShape(topic: TopicInfo, kind: RegistryKind | undefined): Shape {
  const shape = tryRegistryShape(topic, kind);
  if (shape === null) {
    throw new RegistryError(
      'NOT_A_REGISTRY',
      `topic ${topic.topic_id} is not an HCS-2 or HCS-10 registry (memo ${preview(topic.memo, 60)})`,
      'registry memos look like hcs-2:0:86400 or hcs-10:0:60:3; pass --kind hcs-2|hcs-10 to read it anyway',
    );
  }
  return shape;
}

async function foldTopic(
  topicId: string,
  shape: Shape,
  options: DiscoverOptions,
  skips: SkipList,
  limits: FoldLimits,
): Promise<Folded> {
  const folder =
    shape.kind === 'hcs-2'
      ? new Hcs2Folder(topicId, shape.indexed, skips, limits)
      : new Hcs10Folder(topicId, skips, limits);
  const maxMessages = options.maxMessages ?? 1_000_000;
  const stream = options.mirror.topicMessages(topicId, {
    onDropped: (d) => skips.add(messageRef(topicId, d.sequenceNumber), d.reason),
    ...(options.signal && { signal: options.signal }),
  });
  const until = options.until === undefined ? undefined : consensusNanos(options.until);
  for await (const msg of stream) {
    // Messages come in consensus order: the first later one ends the registry as it was at `until`.
    if (until !== undefined && (consensusNanos(msg.consensusTimestamp) ?? until + 1n) > until) break;
    if (folder.messages >= maxMessages) {
      skips.add(formatHrl(2, topicId), `stopped after ${maxMessages} messages; later entries were not read`);
      break;
    }
    folder.add(msg);
  }
  const migrateTo = folder.migrateTo;
  return folder instanceof Hcs2Folder
    ? {
        kind: 'hcs-2',
        entries: folder.entries(),
        messages: folder.messages,
        ...(migrateTo !== undefined && { migrateTo }),
      }
    : {
        kind: 'hcs-10',
        entries: folder.entries(),
        messages: folder.messages,
        ...(migrateTo !== undefined && { migrateTo }),
      };
}

/** `0.0.1234`, `hcs://2/0.0.1234` (or `hcs://10/…`) → `0.0.1234`. */
export function parseRegistryId(value: string): string {
  const v = value.trim();
  const id = parseHrl(v)?.topicId ?? v;
  if (!isEntityId(id)) {
    throw new UsageError(`registry must be a topic id like 0.0.1234 or hcs://2/0.0.1234, got ${quoteInput(v, 60)}`, {
      hint: 'pass --registry with the registry topic id',
    });
  }
  return id;
}
