/**
 * Follows a registry topic (HCS-2 or HCS-10) for `hcs25 watch`: reads it from the start up to the mirror node's
 * head, then reads each new message as it reaches the mirror node and reports what changed — agents registered or
 * updated (upsert) and agents deleted. Messages are folded by the same folders as discovery (updates and deletes of
 * indexed HCS-2 entries, HCS-10 re-registrations) and entries become agents through the same AgentBuilder.
 *
 * New messages are noticed through a mirror gRPC subscription to the topic (a wake-up: the messages themselves are
 * read over REST after the cursor, so chunked messages are assembled as discovery does), with REST polling as the
 * fallback when the subscription is unavailable or fails, and as a slow safety net when it works.
 * Memory: the folder's live entries (without the metadata an agent was built from), each entry's agent subject by uid,
 * and each subject's agent (RegistryAgents, the watcher's view of the registry).
 * Work per read: the folder notes which entries the new messages touched, and only those are compared and built, so
 * a read costs what it folded, not the registry's size.
 */
import type { LedgerName } from '../config/networks.js';
import type { Agent } from '../core/agent.js';
import { errorMessage } from '../core/errors.js';
import type { MirrorRestClient, TopicMessage } from '../hedera/mirror-rest.js';
import { AgentBuilder, mapLimit, type Origin } from '../discover/agents.js';
import { RegistryError, parseRegistryId, registryShape, type RegistryKind } from '../discover/discover.js';
import { Hcs2Folder, isInlineMetadata, type Hcs2Entry } from '../discover/hcs2.js';
import { Hcs10Folder, type Hcs10Entry } from '../discover/hcs10.js';
import { openResolveContext } from '../discover/resolve.js';
import { abortableSleep } from '../net/deadline.js';
import { SkipList, messageRef } from '../discover/skips.js';
import { RegistryAgents } from './agents.js';

/** `previous`: the subject's agent before this upsert (none: new to the registry). */
export type RegistryChange =
  | { type: 'upsert'; agent: Agent; previous?: Agent; seq: number }
  | { type: 'delete'; subject: string; seq: number };

/** A live subscription's wake-ups: `onMessage` when the topic has a new message, `onError` when it broke for good. */
export type Subscribe = (
  topicId: string,
  handlers: { onMessage: (seq: number) => void; onError: (err: unknown) => void },
) => { unsubscribe(): void };

export interface RegistryFollowerOptions {
  registry: string;
  mirror: MirrorRestClient;
  network: LedgerName;
  allowPrivateEndpoints?: boolean;
  ipfsGateway?: string;
  kind?: RegistryKind;
  preferEndpointHints?: boolean;
  /** The mirror gRPC subscription; none: REST polling only. */
  subscribe?: Subscribe;
  /** REST polling period without a working subscription, ms (default 2000); with one, 15× this as a safety net. */
  pollMs?: number;
  /**
   * The least time between two reads woken by the subscription, ms (default 200): what arrives meanwhile is folded by
   * one read. The subscription wakes the follower once per registry message, and each read costs REST round trips
   * and a resolve context whatever it folds: a busy registry would otherwise cost one read per agent.
   */
  minReadGapMs?: number;
  /** Every change, in registry order; `initial` for the read up to the head at start. Awaited before the next read. */
  onChanges: (
    changes: RegistryChange[],
    head: { seq: number; consensusTimestamp: string; initial: boolean },
  ) => void | Promise<void>;
  onNote?: (line: string) => void;
  onError?: (err: unknown) => void;
  signal: AbortSignal;
}

type Entry = Hcs2Entry | Hcs10Entry;

const DEFAULT_MIN_READ_GAP_MS = 200;

export class RegistryFollower {
  readonly topicId: string;
  /** The last registry message folded. */
  seq = 0;
  consensusTimestamp = '0.0';
  /** When the registry was last read up to the mirror node's head (ms), 0 before. */
  headReadAt = 0;
  /** When the subscription first reported a message not read yet (ms); undefined when it reported none. */
  private unreadSince: number | undefined;
  private folder!: Hcs2Folder | Hcs10Folder;
  /**
   * uid → the subject of the agent its entry made (entries that did not make one have none). An HCS-2 entry's inline
   * metadata is released by the folder once its agent is here: the agent is what the watcher asks with, and an update
   * bringing `t_id` alone cannot change it (metadata wins), so the metadata text would only be kept twice. Such an
   * update reports the subject's agent as `agents` holds it (the last entry describing it).
   */
  private readonly built = new Map<number, string>();
  /**
   * Every live subject's agent, as the last change reported it, with the sequence of that change: the watcher's
   * registry view (it keeps no copy). Updated when the changes are reported.
   */
  readonly agents = new RegistryAgents();
  /** Subjects that more than one live entry describes, with how many (rare: one entry per subject is kept as none). */
  private readonly shared = new Map<string, number>();
  private wake: (() => void) | undefined;
  private woken = false;
  private subscribed = false;
  private migrateNoted = false;
  /** Every agent's `source`: one string for all of them. */
  private readonly source: string;

  constructor(private readonly options: RegistryFollowerOptions) {
    this.topicId = parseRegistryId(options.registry);
    this.source = `hcs://2/${this.topicId}`;
  }

  /** Reads up to the head (reporting every live agent as `initial`), then follows until the signal aborts. */
  async run(): Promise<void> {
    const { mirror, signal } = this.options;
    const topic = await mirror.getTopic(this.topicId, signal);
    if (topic === null)
      throw new RegistryError(
        'REGISTRY_NOT_FOUND',
        `registry topic ${this.topicId} does not exist on this network`,
        'check the topic id and --network',
      );
    const shape = registryShape(topic, this.options.kind);
    // Folding skips are counted, not kept: a registry followed for days must not accumulate reasons.
    const skips = new SkipList(0);
    this.folder =
      shape.kind === 'hcs-2'
        ? new Hcs2Folder(this.topicId, shape.indexed, skips)
        : new Hcs10Folder(this.topicId, skips);
    this.folder.trackChanges();
    this.startSubscription();
    await this.readNew(true);
    const pollMs = this.options.pollMs ?? 2_000;
    const gapMs = this.options.minReadGapMs ?? DEFAULT_MIN_READ_GAP_MS;
    while (!signal.aborted) {
      const readAt = Date.now();
      await this.sleep(this.subscribed ? pollMs * 15 : pollMs);
      const early = readAt + gapMs - Date.now();
      if (early > 0) await abortableSleep(early, signal).catch(() => undefined);
      if (signal.aborted) break;
      // What woke it so far is read now (a wake-up during the read wakes the next one).
      this.woken = false;
      this.unreadSince = undefined;
      try {
        await this.readNew(false);
      } catch (err) {
        if (signal.aborted) break;
        this.options.onError?.(err);
      }
    }
    this.unsubscribe?.();
  }

  private unsubscribe: (() => void) | undefined;

  private startSubscription(): void {
    const subscribe = this.options.subscribe;
    if (!subscribe) return;
    try {
      const handle = subscribe(this.topicId, {
        onMessage: () => this.poke(),
        onError: (err) => {
          if (!this.subscribed) return;
          this.subscribed = false;
          this.options.onNote?.(
            `registry subscription (mirror gRPC) failed: ${errorMessage(err)}; polling the mirror REST API instead`,
          );
          this.poke();
        },
      });
      this.subscribed = true;
      this.unsubscribe = () => handle.unsubscribe();
    } catch (err) {
      this.options.onNote?.(
        `no registry subscription (mirror gRPC): ${errorMessage(err)}; polling the mirror REST API`,
      );
    }
  }

  /**
   * How far behind the registry the fold may be, ms (null before the first read). With a working subscription, 0 while
   * it has reported nothing unread: an idle registry is not lag. Without one, the time since the last whole read.
   */
  lagMs(now: number): number | null {
    if (this.headReadAt === 0) return null;
    if (this.subscribed && this.unreadSince === undefined) return 0;
    return Math.max(0, now - (this.unreadSince ?? this.headReadAt));
  }

  private poke(): void {
    this.unreadSince ??= Date.now();
    this.woken = true;
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.options.signal.removeEventListener('abort', done);
        this.wake = undefined;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
      this.options.signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Folds every message after the cursor, then reports the entries that changed. */
  private async readNew(initial: boolean): Promise<void> {
    const { mirror, signal } = this.options;
    const before = this.seq;
    let last: TopicMessage | undefined;
    // The cursor moves only past whole messages: a chunked registration still arriving is read again, whole, later.
    for await (const msg of mirror.topicMessages(this.topicId, {
      ...(this.seq > 0 && { afterSequence: this.seq }),
      signal,
    })) {
      this.folder.add(msg);
      last = msg;
      this.seq = msg.sequenceNumber;
      this.consensusTimestamp = msg.consensusTimestamp;
    }
    this.headReadAt = Date.now();
    if (!initial && this.seq === before) return;
    if (this.folder.migrateTo !== undefined && !this.migrateNoted) {
      this.migrateNoted = true;
      this.options.onNote?.(
        `registry ${this.topicId} migrated to ${this.folder.migrateTo}; later entries are on that topic (watch it with --registry ${this.folder.migrateTo})`,
      );
    }
    const changes = await this.diff();
    if (changes.length > 0 || initial)
      await this.options.onChanges(changes, {
        seq: this.seq,
        consensusTimestamp: last?.consensusTimestamp ?? this.consensusTimestamp,
        initial,
      });
  }

  private async diff(): Promise<RegistryChange[]> {
    const changed: Entry[] = [];
    const changes: RegistryChange[] = [];
    for (const uid of this.folder.takeChanged()) {
      const entry = this.folder.entryOf(uid);
      if (entry) changed.push(entry);
      else this.drop(uid, this.seq, changes);
    }
    if (changed.length === 0) return changes;
    let agents: (Agent | null)[];
    const { ctx, close } = openResolveContext({
      mirror: this.options.mirror,
      signal: this.options.signal,
      ...(this.options.allowPrivateEndpoints !== undefined && {
        allowPrivateEndpoints: this.options.allowPrivateEndpoints,
      }),
      ...(this.options.ipfsGateway !== undefined && { ipfsGateway: this.options.ipfsGateway }),
    });
    try {
      const builder = new AgentBuilder(ctx, new SkipList(0), {
        network: this.options.network,
        ...(this.options.preferEndpointHints !== undefined && {
          preferEndpointHints: this.options.preferEndpointHints,
        }),
      });
      const origin = (uid: number): Origin => ({
        ref: messageRef(this.topicId, uid),
        source: this.source,
        registrySeq: uid,
      });
      agents = await mapLimit(changed, 16, async (e) => {
        if ('accountId' in e) return builder.fromAccount(e, origin(e.uid));
        // Released metadata: the entry's agent is built already, and this change (an update with t_id alone) keeps it.
        if (e.metadata === null) return this.agentOf(e.uid) ?? null;
        return builder.fromMetadata(e.metadata ?? `hcs://1/${e.tId}`, origin(e.uid));
      });
    } finally {
      await close();
    }
    // No await from here to the report: the watcher reads `agents` while it runs, and sees them change with the report.
    changed.forEach((e, i) => {
      const agent = agents[i];
      const at = 'seq' in e ? e.seq : e.uid;
      const prev = this.built.get(e.uid);
      if (prev !== undefined && prev !== agent?.subject) this.drop(e.uid, at, changes);
      if (!agent) return;
      const previous = this.agents.get(agent.subject);
      if (prev !== agent.subject && previous !== undefined)
        this.shared.set(agent.subject, (this.shared.get(agent.subject) ?? 1) + 1);
      this.agents.set(agent, at);
      this.built.set(e.uid, agent.subject);
      // Only inline metadata that made an agent is released: a reference (short) is fetched again on an update, as its
      // target may have changed, and metadata that made no agent is tried again.
      if (!('accountId' in e) && e.metadata && isInlineMetadata(e.metadata) && this.folder instanceof Hcs2Folder)
        this.folder.release(e.uid);
      changes.push({ type: 'upsert', agent, ...(previous && { previous }), seq: at });
    });
    return changes;
  }

  private agentOf(uid: number): Agent | undefined {
    const subject = this.built.get(uid);
    return subject === undefined ? undefined : this.agents.get(subject);
  }

  /** An entry no longer describes its agent: the agent is deleted when no other entry describes it. */
  private drop(uid: number, seq: number, changes: RegistryChange[]): void {
    const subject = this.built.get(uid);
    if (subject === undefined) return;
    this.built.delete(uid);
    const n = this.shared.get(subject);
    if (n === undefined) {
      this.agents.delete(subject);
      changes.push({ type: 'delete', subject, seq });
    } else if (n > 2) this.shared.set(subject, n - 1);
    else this.shared.delete(subject);
  }
}

/** A mirror gRPC subscription (the SDK's TopicMessageQuery) from now on, used as a wake-up. */
export async function mirrorSubscription(sdk: import('@hashgraph/sdk').Client): Promise<Subscribe> {
  const { TopicMessageQuery, Timestamp } = await import('@hashgraph/sdk');
  return (topicId, handlers) =>
    new TopicMessageQuery()
      .setTopicId(topicId)
      .setStartTime(Timestamp.fromDate(new Date()))
      .setMaxAttempts(5)
      .subscribe(
        sdk,
        (_m, err) => handlers.onError(err),
        (m) => handlers.onMessage(m.sequenceNumber.toNumber()),
      );
}
