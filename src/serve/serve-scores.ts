/**
 * Serve: signal topics → an indexed store → an HTTP API and a live page (`hcs25 serve`). The store is the embedded
 * PGlite database in the state dir by default, or a PostgreSQL server (`postgres://…`) that several instances share:
 * one of them indexes (an advisory lock decides, and another takes over when it dies), all of them answer.
 */
import type { Hcs25Client } from '../client.js';
import type { Secret } from '../config/secret.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from '../score/scoring-config.js';
import type { ServeLimits } from './limits.js';

export interface StartServerParameters {
  /** Signal topics to follow and serve; the first is the live page's default. */
  topics: readonly string[];
  /** Publisher allow-list (payer accounts); empty: any payer (say so to users). */
  publishers?: readonly string[];
  /** `postgres://…` for a PostgreSQL server, a directory or `memory://` for the embedded engine; default `<stateDir>/serve-db`. */
  database?: string;
  host?: string;
  /** Default 8025; 0 picks a free port. */
  port?: number;
  /** Origins allowed to call the API from a browser (`*` for any). */
  cors?: readonly string[];
  scoring?: ScoringConfig;
  limits?: Partial<ServeLimits>;
  /**
   * Memory for finished score answers (bytes, the least recently asked dropped first; default 256 MiB, about 140,000
   * subjects); 0 asks the store on every lookup.
   */
  scoreCacheBytes?: number;
  /**
   * The operator's admin token: enables the webhook API (/v1/hooks) and the delivery of alerts (by the instance that
   * indexes). Without it there are no webhooks.
   */
  adminToken?: Secret;
  /** Webhook receivers on loopback and private addresses are allowed (by default they are refused). */
  allowPrivateHooks?: boolean;
  /** Stops indexing when aborted (the caller then calls `close`). */
  signal?: AbortSignal;
  /** Indexer and server notes (outages, fallbacks, the lock passing), one line each; never a secret. */
  onNote?: (line: string) => void;
}

export interface StartServerReturnType {
  url: string;
  engine: 'pglite' | 'postgres';
  /** Whether this instance indexes (holds the indexer lock; another instance on the same database may instead). */
  indexing(): boolean;
  /** Stops the HTTP server, the indexer and the store, in that order. */
  close(): Promise<void>;
}

export const DEFAULT_SERVE_PORT = 8025;

export async function startServer(
  client: Hcs25Client,
  parameters: StartServerParameters,
): Promise<StartServerReturnType> {
  const [
    { openStore },
    { startIndexer },
    { ServeEvents },
    { startHttpServer },
    { livePage },
    { DEFAULT_LIMITS },
    { ScoreCache, DEFAULT_SCORE_CACHE_BYTES },
    { HookDispatcher },
    { hookApi },
  ] = await Promise.all([
    import('./store/index.js'),
    import('./indexer.js'),
    import('./events.js'),
    import('./http.js'),
    import('./live.js'),
    import('./limits.js'),
    import('./cache.js'),
    import('./hooks/dispatcher.js'),
    import('./hooks/routes.js'),
  ]);
  const scoring = parameters.scoring ?? DEFAULT_SCORING_CONFIG;
  const publishers = parameters.publishers ?? [];
  const limits = { ...DEFAULT_LIMITS, ...parameters.limits };
  const onError = (err: unknown) => parameters.onNote?.(`serve: ${err instanceof Error ? err.message : String(err)}`);

  const store = await openStore(parameters.database, { stateDir: client.config.stateDir, scoring });
  const closers: Array<() => Promise<void> | void> = [() => store.close()];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        onError(err);
      }
    }
  };
  try {
    await store.migrate();
    // Asked once up front so the caller can say at once whether this instance indexes (the indexer asks again).
    const lockedAtStart = await store.tryIndexerLock();
    const scores = new ScoreCache(store, parameters.scoreCacheBytes ?? DEFAULT_SCORE_CACHE_BYTES);
    let dispatcher: InstanceType<typeof HookDispatcher> | undefined;
    const events = new ServeEvents({
      store,
      topics: parameters.topics,
      scores,
      maxClients: limits.maxEventClients,
      onError,
      onRevision: () => dispatcher?.wake(),
    });
    events.start();
    closers.push(() => events.close());
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    parameters.signal?.addEventListener('abort', onAbort, { once: true });
    closers.push(() => parameters.signal?.removeEventListener('abort', onAbort));
    const indexer = startIndexer(client, {
      store,
      topics: parameters.topics,
      publishers,
      signal: stop.signal,
      // A stored batch: announced at once with its subjects (the revision watch would find it a poll later, without
      // them); announcing drops their cached answers first, as no longer fresh.
      onLag: (lag) => {
        if (lag.subjects)
          events.indexed({
            topic: lag.topic,
            fromSequence: null,
            sequence: lag.lastSequence,
            subjects: [...lag.subjects],
          });
      },
      ...(parameters.onNote && { onNote: parameters.onNote }),
    });
    closers.push(async () => {
      stop.abort();
      await indexer.done;
    });
    const allowPrivate = parameters.allowPrivateHooks === true;
    if (parameters.adminToken) {
      const hooks = new HookDispatcher({ store, active: () => indexer.indexing, allowPrivate, onError });
      dispatcher = hooks;
      hooks.start();
      closers.push(() => hooks.close());
    }
    const http = await startHttpServer({
      store,
      events,
      topics: parameters.topics,
      publishers,
      scoring,
      network: client.network,
      live: livePage({
        store,
        scoring,
        publishers,
        network: client.network.ledger,
        mirrorRestUrl: client.network.mirrorRestUrl,
        revision: () => events.revision(),
      }),
      host: parameters.host ?? '127.0.0.1',
      port: parameters.port ?? DEFAULT_SERVE_PORT,
      cors: parameters.cors ?? [],
      limits,
      onError,
      ...(parameters.adminToken && {
        hooks: hookApi({
          store,
          token: parameters.adminToken,
          topics: parameters.topics,
          allowPrivate,
          limits,
          onChange: () => dispatcher?.wake(),
        }),
      }),
    });
    closers.push(() => http.close());
    return { url: http.url, engine: store.engine, indexing: () => indexer.indexing || lockedAtStart, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
