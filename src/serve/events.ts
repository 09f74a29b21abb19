/**
 * `/v1/events`: server-sent events. The server watches the store's revision (cheap, polled), so an instance that
 * does not index (another one holds the lock on a shared database) still sees new data; an indexer in this process
 * announces its batches directly with the subjects they touched. Events:
 *   `indexed` {topic, fromSequence, sequence, subjects?}: new data on a topic (subjects when this process indexed it);
 *   `revision` {revision}: anything changed (a batch, or scores recomputed after one): views re-read;
 *   `lag`     {topic, lagMs, behind, source}: each topic's indexing lag, every `lagEveryMs` and when it changes;
 * and a comment line as a heartbeat, so proxies keep the stream open and clients notice a dead server.
 * The score cache (`scores`) drops what changed before anything is announced, so no announced change is answered
 * from the cache with the answer it replaced.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ScoreCache } from './cache.js';
import { sendError } from './headers.js';
import type { ServeStore, TopicStatus } from './store/types.js';

export interface IndexedEvent {
  topic: string;
  fromSequence: number | null;
  sequence: number;
  /** Subjects the batch touched, when this process indexed it (at most 100 named; `subjectCount` counts all). */
  subjects?: string[];
  subjectCount?: number;
}

export interface ServeEventsOptions {
  store: Pick<ServeStore, 'revision' | 'topics' | 'watch' | 'changesSince'>;
  /** The topics this server follows: another the store still holds (followed before) is not announced. Default: all. */
  topics?: readonly string[];
  /** Finished score answers, kept current from the store's change revisions. */
  scores?: ScoreCache;
  maxClients: number;
  pollMs?: number;
  heartbeatMs?: number;
  lagEveryMs?: number;
  onError?: (err: unknown) => void;
  /** Told of each revision change this hub handles (the webhook dispatcher then compares the rescored subjects). */
  onRevision?: (revision: number) => void;
}

interface Client {
  res: ServerResponse;
  topic: string | undefined;
}

const MAX_NAMED_SUBJECTS = 100;
/** More changed subjects than this in one revision step: the whole score cache is emptied and filled again instead. */
const MAX_INVALIDATIONS = 50_000;

export class ServeEvents {
  private readonly clients = new Set<Client>();
  private readonly timers: NodeJS.Timeout[] = [];
  private unwatch: (() => void) | undefined;
  private known: Promise<number> | undefined;
  /** Last sequence announced per topic, so a batch the indexer announced is not announced again on the revision change. */
  private readonly announced = new Map<string, number>();
  private readonly lagSent = new Map<string, string>();
  private nextId = 1;
  /** The revision the score cache reflects (undefined: unknown, the next change drops it all). */
  private cached: number | undefined;
  /** A fill of the score cache after it was cleared is under way; another is due when it ends. */
  private refilling = false;
  private refillAgain = false;
  /**
   * Revision changes are handled one at a time; those that come meanwhile are handled together, as the newest one
   * (changesSince names everything since the last one handled), so a slow database never makes a backlog.
   */
  private handling = false;
  private newest: number | undefined;
  private closed = false;
  /** Set when the cache starts filling (subscribe); `warming` follows it from start(). */
  private filling: Promise<number> = Promise.resolve(0);
  private warming: Promise<number> = Promise.resolve(0);

  constructor(private readonly options: ServeEventsOptions) {}

  /** Answers the score cache took from the store when this hub started (see ScoreCache.warm). */
  get warmed(): Promise<number> {
    return this.warming;
  }

  /** The score cache this hub keeps current, if any (the HTTP server answers lookups from it). */
  get scores(): ScoreCache | undefined {
    return this.options.scores;
  }

  start(): void {
    this.known = this.options.store.revision();
    void this.known.then(
      (revision) => {
        this.subscribe(revision);
        return this.onChange(true);
      },
      (err: unknown) => {
        this.subscribe(undefined);
        this.options.onError?.(err);
      },
    );
    // Registered after the subscription above, so it runs after it.
    this.warming = this.known.then(
      () => this.filling,
      () => 0,
    );
    const beat = setInterval(() => this.broadcastRaw(': heartbeat\n\n'), this.options.heartbeatMs ?? 15_000);
    const lag = setInterval(() => void this.sendLag(true), this.options.lagEveryMs ?? 5_000);
    for (const t of [beat, lag]) t.unref();
    this.timers.push(beat, lag);
  }

  private subscribe(since: number | undefined): void {
    if (this.closed) return;
    // Answers cached before the revision was known may predate it; from now on changes drop what they touch, so the
    // cache may be filled from the store.
    const scores = this.options.scores;
    scores?.clear();
    this.cached = since;
    if (scores) {
      this.filling = scores.warm().catch((err: unknown) => {
        this.options.onError?.(err);
        return 0;
      });
    }
    this.unwatch = this.options.store.watch(
      (revision) => {
        this.newest = revision;
        if (!this.handling) void this.handleChanges();
      },
      { intervalMs: this.options.pollMs ?? 250, ...(since !== undefined && { since }) },
    );
  }

  private async handleChanges(): Promise<void> {
    this.handling = true;
    try {
      while (this.newest !== undefined && !this.closed) {
        const revision = this.newest;
        this.newest = undefined;
        await this.changed(revision);
      }
    } finally {
      this.handling = false;
    }
  }

  private async changed(revision: number): Promise<void> {
    const scores = this.options.scores;
    // The changed answers are dropped at once, before the change is announced; new scores are read back behind it.
    // (Only those: a subject merely marked dirty by newer signals is rescored soon, and reading it back meanwhile
    // would cost the indexer's database a question per batch.)
    let reloading: Promise<unknown> | undefined;
    if (scores) {
      try {
        const changes =
          this.cached === undefined ? null : await this.options.store.changesSince(this.cached, MAX_INVALIDATIONS);
        if (changes) {
          scores.invalidate(changes);
          const rescored = changes.filter((c) => c.rescored);
          reloading = scores.reload(rescored).catch((err: unknown) => this.report(err));
        } else this.refill();
      } catch (err) {
        this.refill();
        this.report(err);
      }
      this.cached = revision;
    }
    this.known = Promise.resolve(revision);
    this.options.onRevision?.(revision);
    this.broadcast('revision', { revision });
    await this.onChange(false);
    await reloading;
  }

  /** A failure of the store while this hub runs (after close, the store is gone: nothing to say). */
  private report(err: unknown): void {
    if (!this.closed) this.options.onError?.(err);
  }

  /** Clears the score cache and fills it again from the store. */
  private refill(): void {
    this.options.scores?.clear();
    this.fill();
  }

  /** One fill at a time; a clear during one calls for another (what it had added before the clear is gone). */
  private fill(): void {
    const scores = this.options.scores;
    if (!scores || this.closed) return;
    if (this.refilling) {
      this.refillAgain = true;
      return;
    }
    this.refilling = true;
    void scores
      .warm()
      .catch((err: unknown) => this.report(err))
      .finally(() => {
        this.refilling = false;
        if (this.refillAgain) {
          this.refillAgain = false;
          this.fill();
        }
      });
  }

  /**
   * The store revision as of the last change this server noticed (one poll interval at most behind), so an ETag costs
   * no query. It is read before the data, so a body is never older than the revision its ETag names.
   */
  revision(): Promise<number> {
    this.known ??= this.options.store.revision();
    return this.known;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** From the indexer in this process: a batch was stored (its subjects' cached answers are no longer fresh). */
  indexed(event: IndexedEvent): void {
    if (event.subjects)
      this.options.scores?.invalidate(event.subjects.map((subject) => ({ topic: event.topic, subject })));
    const seen = this.announced.get(event.topic);
    if (seen !== undefined && event.sequence <= seen) return;
    this.announced.set(event.topic, event.sequence);
    const subjects = event.subjects ? [...new Set(event.subjects)] : undefined;
    this.send(event.topic, 'indexed', {
      ...event,
      ...(subjects && { subjects: subjects.slice(0, MAX_NAMED_SUBJECTS), subjectCount: subjects.length }),
    });
  }

  attach(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const topic = url.searchParams.get('topic') ?? undefined;
    const unknown = [...url.searchParams.keys()].find((k) => k !== 'topic');
    if (unknown !== undefined || (topic !== undefined && !/^\d+\.\d+\.\d+$/.test(topic))) {
      sendError(
        res,
        400,
        'BAD_QUERY',
        unknown !== undefined
          ? `unknown query parameter ${JSON.stringify(unknown.slice(0, 40))}; known: topic`
          : 'query parameter "topic": an id like 0.0.1234',
      );
      return;
    }
    if (this.clients.size >= this.options.maxClients) {
      res.setHeader('Retry-After', '5');
      sendError(res, 503, 'TOO_MANY_STREAMS', `this server already serves ${this.options.maxClients} event streams`);
      return;
    }
    // A stream lives as long as the client wants it.
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    if (req.method === 'HEAD') return void res.end();
    const client: Client = { res, topic };
    this.clients.add(client);
    res.write('retry: 2000\n\n');
    const drop = () => this.clients.delete(client);
    req.on('close', drop);
    res.on('error', drop);
    void this.sendLag(false, client);
  }

  close(): void {
    this.closed = true;
    this.unwatch?.();
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
    for (const c of this.clients) c.res.end();
    this.clients.clear();
  }

  /** The revision moved: announce each topic whose last sequence moved past what was announced. */
  private async onChange(first: boolean): Promise<void> {
    try {
      const topics = await this.followedTopics();
      for (const t of topics) {
        const seen = this.announced.get(t.topic);
        if (first) this.announced.set(t.topic, t.lastSequence);
        else if (seen === undefined || t.lastSequence > seen)
          this.indexed({ topic: t.topic, fromSequence: seen ?? null, sequence: t.lastSequence });
      }
      this.sendLagOf(topics, false);
    } catch (err) {
      this.report(err);
    }
  }

  private async sendLag(always: boolean, only?: Client): Promise<void> {
    if (this.clients.size === 0) return;
    try {
      this.sendLagOf(await this.followedTopics(), always, only);
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private async followedTopics(): Promise<TopicStatus[]> {
    const all = await this.options.store.topics();
    const followed = this.options.topics;
    return followed ? all.filter((t) => followed.includes(t.topic)) : all;
  }

  private sendLagOf(topics: readonly TopicStatus[], always: boolean, only?: Client): void {
    for (const t of topics) {
      const data = { topic: t.topic, lagMs: t.lagMs, behind: t.behind, source: t.source };
      const key = JSON.stringify(data);
      if (!always && !only && this.lagSent.get(t.topic) === key) continue;
      this.lagSent.set(t.topic, key);
      if (only) write(only, 'lag', data, this.nextId++);
      else this.send(t.topic, 'lag', data);
    }
  }

  private send(topic: string, event: string, data: unknown): void {
    const id = this.nextId++;
    for (const c of this.clients) if (c.topic === undefined || c.topic === topic) write(c, event, data, id);
  }

  private broadcast(event: string, data: unknown): void {
    const id = this.nextId++;
    for (const c of this.clients) write(c, event, data, id);
  }

  private broadcastRaw(text: string): void {
    for (const c of this.clients) c.res.write(text);
  }
}

function write(c: Client, event: string, data: unknown, id: number): void {
  // JSON.stringify escapes every line break, so one `data:` line holds the whole event.
  c.res.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
