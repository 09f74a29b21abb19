import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Secret } from '../config/secret.js';
import { Hcs25Error, UsageError } from '../core/errors.js';
import { entityIdFlag, withClient } from './context.js';
import {
  action,
  collect,
  exitCodeForStop,
  globals,
  intOption,
  note,
  printJson,
  printLine,
  stopSignal,
} from './shared.js';

interface ServeFlags {
  topic?: string[];
  publisher?: string[];
  database?: string;
  port: number;
  host: string;
  cors?: string[];
  scoringConfig?: string;
  rateLimit?: number;
  workers: number;
  scoreCacheMb?: number;
  adminTokenFile?: string;
  allowPrivateHooks?: boolean;
}

/** The environment variable that may hold the admin token itself (else --admin-token-file names a file with it). */
export const ADMIN_TOKEN_ENV = 'HCS25_SERVE_ADMIN_TOKEN';
const MIN_ADMIN_TOKEN_LENGTH = 16;

export function register(program: Command): void {
  program
    .command('serve')
    .description('index signal topics and serve trust scores: HTTP API (/v1, /openapi.json) and a live page')
    .option('--topic <id>', 'signal topic to index and serve; repeat for more (env HCS25_TOPIC)', collect)
    .option(
      '--publisher <account>',
      'trusted publisher (payer account); repeat for more (env HCS25_PUBLISHERS)',
      collect,
    )
    .option(
      '--database <url>',
      'postgres://… (a PostgreSQL server several instances share), a directory, or memory:// (default: <state dir>/serve-db, embedded)',
    )
    .option('--port <n>', 'HTTP port (0: any free port)', intOption('--port', 0, 65535), 8025)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--cors <origin>', 'allow browsers on this origin to call the API (`*`: any); repeat for more', collect)
    .option('--scoring-config <file>', 'HCS-25 scoring configuration (JSON); default: built in, as hcs25 scores')
    .option(
      '--rate-limit <n>',
      'requests per second per client address (0: no limit)',
      intOption('--rate-limit', 0, 1_000_000),
    )
    .option(
      '--workers <n>',
      'server processes sharing the port (needs --database postgres://…; one indexes, all answer)',
      intOption('--workers', 1, 64),
      1,
    )
    .option(
      '--score-cache-mb <n>',
      'memory per process for finished score answers, MiB (0: ask the database every time)',
      intOption('--score-cache-mb', 0, 65_536),
    )
    .option(
      '--admin-token-file <file>',
      `file holding the admin token that enables the webhook API /v1/hooks (or env ${ADMIN_TOKEN_ENV}); never printed`,
    )
    .option('--allow-private-hooks', 'allow webhook receivers on loopback/private addresses (refused by default)')
    .addHelpText(
      'after',
      '\nEndpoints: /v1/subjects, /v1/subjects/{uaid}/score, /v1/subjects/{uaid}/signals, /v1/topics, /v1/runs,\n' +
        '/v1/runs/{run}/verification, /v1/events (server-sent events), /openapi.json, /healthz, and the live page at /.\n' +
        'Several instances may share one --database postgres://…: one indexes (an advisory lock decides), all answer;\n' +
        '--workers N starts N such instances on one port (node:cluster).\n' +
        `With an admin token (--admin-token-file or ${ADMIN_TOKEN_ENV}): webhooks at /v1/hooks (docs/serve.md, "Webhooks").`,
    )
    .action(
      action(async (flags: ServeFlags, cmd: Command) => {
        const topics = (flags.topic ?? []).map((t) => entityIdFlag('--topic', t));
        for (const p of flags.publisher ?? []) entityIdFlag('--publisher', p);
        for (const origin of flags.cors ?? []) {
          if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin))
            throw new UsageError(
              `--cors takes an origin like https://example.com (or *), got ${JSON.stringify(origin)}`,
            );
        }
        const token = adminToken(flags.adminTokenFile, process.env[ADMIN_TOKEN_ENV]);
        const json = globals(cmd).json === true;
        const { isServeWorker, reportServeWorkerReady, serveWorkerOrphaned, startServerWorkers } = await import(
          '../serve/serve-workers.js'
        );
        const worker = isServeWorker();
        if (flags.workers > 1 && !/^postgres(ql)?:\/\//i.test(flags.database ?? '')) {
          throw new UsageError('--workers needs --database postgres://…', {
            hint: 'the embedded database (PGlite) belongs to one process; several processes share a PostgreSQL server',
          });
        }
        const { loadScoringConfig, DEFAULT_SCORING_CONFIG } = await import('../score/scoring-config.js');
        const scoring = flags.scoringConfig ? loadScoringConfig(flags.scoringConfig) : DEFAULT_SCORING_CONFIG;
        // Ctrl-C / SIGTERM from the start: the database may take a moment to open.
        const stop = stopSignal();
        try {
          return await withClient(
            cmd,
            { publishers: flags.publisher, ...(topics[0] !== undefined && { topic: topics[0] }) },
            async (client) => {
              const all = topics.length > 0 ? topics : client.config.topic ? [client.config.topic] : [];
              if (all.length === 0)
                throw new UsageError('no signal topic given', {
                  hint: 'pass --topic 0.0.1234 (repeat for more) or set HCS25_TOPIC',
                });
              if (!worker) {
                // A topic the mirror node does not know is a typo or the wrong network: said now, not by empty pages
                // forever. An unreachable mirror is not refused here: the indexer retries it and says so.
                const { getSignalTopic } = await import('../read/read-signals.js');
                for (const topic of all)
                  await getSignalTopic(client, topic).catch((err: unknown) => {
                    if (err instanceof Hcs25Error && err.code === 'TOPIC_NOT_FOUND') throw err;
                  });
              }
              const publishers = client.config.publishers;
              if (publishers.length === 0 && !worker)
                note(
                  'warning: no publisher allow-list; signals from any paying account are indexed (use --publisher or HCS25_PUBLISHERS)',
                );
              const database =
                flags.database === undefined ? `${client.config.stateDir}/serve-db` : withoutPassword(flags.database);
              if (flags.workers > 1 && !worker) {
                const cluster = await startServerWorkers({ workers: flags.workers, onNote: note });
                if (json)
                  printJson({
                    url: cluster.url,
                    engine: cluster.engine,
                    database,
                    topics: all,
                    publishers,
                    workers: flags.workers,
                  });
                else {
                  printLine(
                    `hcs25 serve: ${cluster.url}/ (live page) · API ${cluster.url}/v1 · ${cluster.url}/openapi.json`,
                  );
                  printLine(
                    `  ${all.length === 1 ? 'topic' : 'topics'} ${all.join(', ')} · ${cluster.engine} at ${database} · ${flags.workers} workers (one indexes, all answer) · Ctrl-C stops`,
                  );
                }
                const signal = await stop.stopped;
                note(`stopping (${signal}): stopping ${flags.workers} workers…`);
                await cluster.close();
                return exitCodeForStop(signal);
              }
              const { startServer } = await import('../serve/serve-scores.js');
              const aborted = new AbortController();
              const server = await startServer(client, {
                topics: all,
                publishers,
                ...(flags.database !== undefined && { database: flags.database }),
                host: flags.host,
                port: flags.port,
                cors: flags.cors ?? [],
                scoring,
                ...(flags.rateLimit !== undefined && { limits: { requestsPerSecond: flags.rateLimit } }),
                ...(flags.scoreCacheMb !== undefined && { scoreCacheBytes: flags.scoreCacheMb * 1024 * 1024 }),
                ...(token && { adminToken: token }),
                ...(flags.allowPrivateHooks && { allowPrivateHooks: true }),
                signal: aborted.signal,
                onNote: note,
              });
              if (worker)
                reportServeWorkerReady({ url: server.url, engine: server.engine, indexing: server.indexing() });
              else if (json) printJson({ url: server.url, engine: server.engine, database, topics: all, publishers });
              else {
                printLine(
                  `hcs25 serve: ${server.url}/ (live page) · API ${server.url}/v1 · ${server.url}/openapi.json`,
                );
                printLine(
                  `  ${all.length === 1 ? 'topic' : 'topics'} ${all.join(', ')} · ${server.engine} at ${database} · ${server.indexing() ? 'indexing' : 'answering (another instance indexes)'} · Ctrl-C stops`,
                );
              }
              // A worker whose primary is gone stops as on SIGTERM.
              const signal = worker
                ? await Promise.race([stop.stopped, serveWorkerOrphaned().then(() => 'SIGTERM' as const)])
                : await stop.stopped;
              // The primary stops its workers (and kills one that takes too long): a second signal (Ctrl-C reaches the
              // whole process group, then the primary's SIGTERM) must not cut a worker's close short.
              if (worker) for (const again of ['SIGINT', 'SIGTERM'] as const) process.on(again, () => {});
              aborted.abort();
              note(`stopping (${signal}): closing the HTTP server, the indexer and the store…`);
              await server.close();
              return exitCodeForStop(signal);
            },
          );
        } finally {
          stop.dispose();
        }
      }),
    );
}

/**
 * The admin token from --admin-token-file or the environment, held as a Secret (never printed). Errors name where it
 * came from and its length, never the value.
 */
function adminToken(file: string | undefined, env: string | undefined): Secret | undefined {
  if (file !== undefined && env !== undefined && env !== '')
    throw new UsageError(`both --admin-token-file and ${ADMIN_TOKEN_ENV} are set`, { hint: 'keep one of them' });
  let value: string;
  if (file !== undefined) {
    try {
      value = readFileSync(file, 'utf8').trim();
    } catch {
      throw new UsageError('--admin-token-file: cannot read the file', {
        hint: 'check the path; the file holds only the token',
      });
    }
  } else if (env !== undefined && env !== '') value = env.trim();
  else return undefined;
  // What a Bearer header can carry: printable ASCII without spaces.
  if (value.length < MIN_ADMIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(value))
    throw new UsageError(
      `the admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} printable ASCII characters without spaces (it has ${value.length} characters)`,
      { hint: 'generate one, e.g. openssl rand -hex 32' },
    );
  return new Secret(value);
}

/** A database URL as it may be printed: never its password. */
function withoutPassword(database: string): string {
  try {
    const url = new URL(database);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return database;
  }
}
