/**
 * The serve indexer: follows signal topics into a ServeStore.
 *
 * Messages are read from the mirror REST API with the same reader as `hcs25 signals` (readTopic: validation, the
 * publisher allow-list, in-batch dedupe) from the store's cursor, and applied in batches, each atomically with its new
 * cursor; dedupe across batches and restarts is the store's (stored keys). A mirror gRPC subscription, where the
 * network has one, wakes the reader the moment a message reaches the mirror node, so new signals are indexed within
 * a poll round trip; without it (or while it fails) the reader polls. REST is what carries the data either way: a
 * mirror gRPC message has no payer unless it was chunked, and the payer is what the allow-list and dedupe key on.
 * Mirror outages are retried with backoff and reported through `onNote`; only the holder of the store's indexer lock
 * indexes, the others retry the lock (and take over when the holder dies). Beside indexing, subjects are named from
 * the registry entries their signals cite (identities.ts).
 */
import type { Hcs25Client } from '../client.js';
import { errorMessage } from '../core/errors.js';
import { backoffDelay } from '../core/retry.js';
import { consensusMs } from '../core/consensus-time.js';
import { eventSequence, readTopic, type SeenSignals } from '../read/reader.js';
import { BatchBuilder } from './batch.js';
import { identityResolver, type IdentityResolverOptions } from './identities.js';
import type { IndexBatch, IndexSource, ServeStore } from './store/types.js';

export interface IndexerLag {
  topic: string;
  /** now − consensus time of the last indexed message, ms. */
  lagMs: number | null;
  /** Messages on the mirror node after the cursor: 0 after reading to the end, null when unknown. */
  behind: number | null;
  source: IndexSource;
  lastSequence: number;
  /** After a stored batch: the subjects its signals are about (the live page and /v1/events announce them). */
  subjects?: readonly string[];
}

export interface IndexerOptions {
  store: ServeStore;
  topics: readonly string[];
  /** Publisher allow-list (payer accounts); empty or absent: every payer. */
  publishers?: readonly string[];
  signal: AbortSignal;
  /** After every stored batch and every read to the end of a topic. */
  onLag?: (lag: IndexerLag) => void;
  /** Outages, fallbacks, lock changes: one line each. */
  onNote?: (message: string) => void;
  /** Events per stored batch (default 1000). */
  batchSize?: number;
  /** Use the mirror gRPC subscription to wake up (default: when the network has a mirror gRPC endpoint). */
  grpc?: boolean;
  /** Poll interval bounds, ms: while gRPC is up the longest is `grpcPollMs` (a safety net), else `maxPollMs`. */
  minPollMs?: number;
  maxPollMs?: number;
  grpcPollMs?: number;
  /** Backoff after a failure, ms (doubles up to maxRetryMs). */
  minRetryMs?: number;
  maxRetryMs?: number;
  /** How often a non-holder asks for the indexer lock again, ms (default 2000). */
  lockRetryMs?: number;
  /** Subjects rescored per round (default 200). */
  rescoreLimit?: number;
  /** Name subjects from the registry entries their signals cite (identities.ts); false: never read registries. */
  identities?:
    | false
    | Pick<IdentityResolverOptions, 'registriesPerRound' | 'refreshMs' | 'minRetryMs' | 'maxRetryMs' | 'discover'>;
  /** How often due identities are looked for when no batch brings new signals, ms (default 2000). */
  identityPollMs?: number;
}

export interface Indexer {
  /** Resolves when `signal` aborts and every loop has stopped. */
  readonly done: Promise<void>;
  /** Whether this process holds the lock and indexes. */
  readonly indexing: boolean;
}

export function startIndexer(client: Hcs25Client, options: IndexerOptions): Indexer {
  const { store, signal } = options;
  const note = (message: string) => options.onNote?.(message);
  const batchSize = options.batchSize ?? 1000;
  const rescore = new Wake();
  const name = new Wake();
  let indexing = false;

  async function holdLock(): Promise<boolean> {
    let waiting = false;
    while (!signal.aborted) {
      let got = false;
      try {
        got = await store.tryIndexerLock();
      } catch (err) {
        note(`indexer lock: ${errorMessage(err)}`);
      }
      if (got) {
        if (waiting) note('indexer lock taken: this instance indexes now');
        return true;
      }
      if (!waiting) note('another instance holds the indexer lock: serving only, retrying the lock');
      waiting = true;
      await sleep(options.lockRetryMs ?? 2000, signal);
    }
    return false;
  }

  async function followTopic(topic: string): Promise<void> {
    const kick = new Wake();
    const grpc = options.grpc ?? client.network.mirrorGrpc.length > 0;
    const watcher = grpc ? watchGrpc(client, topic, signal, () => kick.wake(), note) : undefined;
    const minPoll = options.minPollMs ?? 200;
    let poll = minPoll;
    let failures = 0;
    const seen: SeenSignals = new Map();
    let allowListRecorded = false;
    while (!signal.aborted) {
      if (!(await store.tryIndexerLock().catch(() => false))) {
        indexing = false;
        note(`${topic}: lost the indexer lock`);
        if (!(await holdLock())) break;
        indexing = true;
      }
      const source: IndexSource = watcher?.up ? 'grpc' : 'rest';
      let read = 0;
      const builder = new BatchBuilder();
      const apply = async (batch: IndexBatch) => {
        const r = await store.applyBatch(topic, batch);
        read += r.signals;
        if (r.signals > 0) {
          rescore.wake();
          name.wake();
        }
        const ts = batch.cursor.consensusTimestamp;
        const subjects = [...new Set(batch.signals.map((x) => x.message.subject))];
        options.onLag?.({
          topic,
          lagMs: ts ? Math.max(0, Date.now() - consensusMs(ts)) : null,
          behind: null,
          source,
          lastSequence: batch.cursor.sequence,
          subjects,
        });
      };
      // One batch is stored while the next is read and classified (the store writes a topic's batches in call
      // order, and none after a failed one until the cursor is read again).
      let inFlight: Promise<void> = Promise.resolve();
      const flush = async (drain = true) => {
        const batch = builder.take(source);
        seen.clear(); // the store holds the keys of what was taken; in-memory dedupe is per batch
        const previous = inFlight;
        if (batch) {
          inFlight = apply(batch);
          inFlight.catch(() => {});
        }
        await (drain ? inFlight : previous);
      };
      try {
        if (!allowListRecorded) {
          if (await store.useAllowList(topic, options.publishers ?? null)) {
            note(`${topic}: indexed under another publisher allow-list before: indexing it again from the start`);
          }
          allowListRecorded = true;
        }
        const cursor = await store.cursor(topic);
        for await (const event of readTopic({
          topic,
          mirror: client.mirror,
          ...(options.publishers ? { publishers: options.publishers } : {}),
          ...(cursor ? { afterSequence: cursor.sequence } : {}),
          seen,
          signal,
        })) {
          // Batches end between messages: a cursor covers whole messages (a pack's signals travel together).
          if (builder.length >= batchSize && eventSequence(event) !== builder.sequence) await flush(false);
          builder.add(event);
        }
        await flush();
        if (failures > 0) {
          note(`${topic}: mirror node reachable again`);
          await store.setTopicState(topic, { note: null });
        }
        failures = 0;
        await store.setTopicState(topic, { source, behind: 0 });
        const after = await store.cursor(topic);
        options.onLag?.({
          topic,
          lagMs: after?.consensusTimestamp ? Math.max(0, Date.now() - consensusMs(after.consensusTimestamp)) : null,
          behind: 0,
          source,
          lastSequence: after?.sequence ?? 0,
        });
        poll =
          read > 0
            ? minPoll
            : Math.min(poll * 2, watcher?.up ? (options.grpcPollMs ?? 5000) : (options.maxPollMs ?? 1000));
        await kick.wait(poll, signal);
        if (kick.woken) poll = minPoll;
      } catch (err) {
        if (signal.aborted) break;
        // What was read before the failure is valid and in order: keep it.
        await flush().catch(() => {});
        failures++;
        const wait = backoffDelay(failures - 1, {
          minMs: options.minRetryMs ?? 500,
          maxMs: options.maxRetryMs ?? 30_000,
        });
        const line = `${topic}: ${errorMessage(err).split('\n')[0]}; retrying in ${(wait / 1000).toFixed(1)} s`;
        note(line);
        await store.setTopicState(topic, { note: line, behind: null }).catch(() => {});
        await sleep(wait, signal);
      }
    }
    watcher?.stop();
  }

  async function rescoreLoop(): Promise<void> {
    while (!signal.aborted) {
      try {
        const limit = Math.max(1, options.rescoreLimit ?? 200);
        const r = await store.rescoreDirty({ limit });
        // Scores that turned stale with time alone are looked for once the dirty ones are done, not every round, and a
        // round's worth at a time (so lookups are answered in between).
        if (r.more || (await store.markStale({ limit })) > 0) {
          // PGlite answers on the event loop without giving it a turn: without this, HTTP waits for the whole backlog.
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
      } catch (err) {
        if (signal.aborted) break;
        note(`rescoring: ${errorMessage(err)}`);
      }
      await rescore.wait(1000, signal);
    }
  }

  /**
   * Rounds at most every `identityPollMs`, when a batch brought signals or a skipped registry may be read again (or
   * each minute): not once per batch while a large topic is indexed.
   */
  async function identityLoop(): Promise<void> {
    if (options.identities === false) return;
    const resolver = identityResolver(client, { store, signal, note, ...options.identities });
    const gap = options.identityPollMs ?? 2000;
    while (!signal.aborted) {
      let wait = 60_000;
      try {
        const r = await resolver.round();
        if (r.more) wait = 0;
        else if (r.nextAt !== null) wait = Math.min(wait, Math.max(0, r.nextAt - Date.now()));
      } catch (err) {
        if (signal.aborted) break;
        note(`naming subjects: ${errorMessage(err)}`);
      }
      await sleep(gap, signal);
      if (wait > gap) await name.wait(wait - gap, signal);
    }
  }

  const done = (async () => {
    if (!(await holdLock())) return;
    indexing = true;
    await Promise.all([...options.topics.map(followTopic), rescoreLoop(), identityLoop()]);
    indexing = false;
  })();

  return {
    done,
    get indexing() {
      return indexing;
    },
  };
}

/**
 * A mirror gRPC subscription used as a doorbell: every message rings `onMessage`. When it fails it says so, stays
 * down for a while (the REST polling carries on) and subscribes again: back to gRPC when it recovers.
 */
function watchGrpc(
  client: Hcs25Client,
  topic: string,
  signal: AbortSignal,
  onMessage: () => void,
  note: (message: string) => void,
): { readonly up: boolean; stop(): void } {
  let up = false;
  let stopped = false;
  let handle: { unsubscribe(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  // Handlers of a replaced subscription (its late error or end) must not count against the new one.
  let generation = 0;

  const subscribe = async () => {
    if (stopped || signal.aborted) return;
    const gen = ++generation;
    const down = (err: unknown) => gen === generation && failed(err);
    try {
      const { TopicMessageQuery, Timestamp } = await import('@hashgraph/sdk');
      const sdk = client.sdk;
      handle = new TopicMessageQuery()
        .setTopicId(topic)
        .setStartTime(Timestamp.fromDate(new Date()))
        // Retries are ours (with a note and REST meanwhile); the SDK's would retry silently for minutes.
        .setMaxAttempts(0)
        .setCompletionHandler(() => down(new Error('the mirror node ended the subscription')))
        .subscribe(
          sdk,
          (_m, err) => down(err),
          () => {
            if (gen !== generation) return;
            up = true;
            failures = 0;
            onMessage();
          },
        );
      // A subscription that has not failed by now is taken as up (a quiet topic sends nothing to prove it).
      timer = setTimeout(() => {
        if (!stopped && handle) {
          if (!up && failures > 0) note(`${topic}: mirror gRPC subscription back`);
          up = true;
          failures = 0;
        }
      }, 1000);
    } catch (err) {
      failed(err);
    }
  };

  const failed = (err: unknown) => {
    if (stopped || signal.aborted) return;
    generation++;
    handle?.unsubscribe();
    handle = undefined;
    clearTimeout(timer);
    const wasUp = up;
    up = false;
    failures++;
    const wait = backoffDelay(failures - 1, { minMs: 1000, maxMs: 30_000 });
    if (wasUp || failures === 1)
      note(
        `${topic}: mirror gRPC subscription failed (${errorMessage(err).split('\n')[0]}); polling REST, retrying gRPC in ${(wait / 1000).toFixed(0)} s`,
      );
    onMessage(); // read now: messages may have arrived while the stream was failing
    timer = setTimeout(() => void subscribe(), wait);
  };

  void subscribe();
  return {
    get up() {
      return up;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      handle?.unsubscribe();
    },
  };
}

/** A wake-up call that can arrive before anyone waits for it. */
class Wake {
  private pending = false;
  private resolve: (() => void) | undefined;
  woken = false;

  wake(): void {
    this.pending = true;
    this.resolve?.();
  }

  /** Waits up to `ms` or until woken (or aborted); `woken` says which. */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    this.woken = false;
    // An abort that came before the wait fires no event: without this, a stop would wait out the whole `ms`.
    if (signal.aborted) return;
    if (this.pending) {
      this.pending = false;
      this.woken = true;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.resolve = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.resolve = () => {
        this.woken = true;
        this.pending = false;
        done();
      };
    });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Wake().wait(ms, signal);
}
