/**
 * The server engine: a `pg` Pool for `postgres://` URLs. Several serve instances may share one database; the one
 * holding the advisory lock (on a dedicated connection, released by PostgreSQL when that connection ends) indexes.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Pool, PoolClient, Client } from 'pg';
import { Hcs25Error, errorMessage } from '../../core/errors.js';
import type { ScoringConfig } from '../../score/scoring-config.js';
import { createSqlStore } from './sql.js';
import type { ServeStore, SqlExecutor } from './types.js';

/** pg_try_advisory_lock key for "the indexer of this database". */
const INDEXER_LOCK = 0x6863_3235_0001;

type CopyFrom = typeof import('pg-copy-streams')['from'];

function executor(q: Pool | PoolClient, copyFrom: CopyFrom): SqlExecutor {
  return {
    query: async <T>(text: string, params?: readonly unknown[]) =>
      (await q.query(text, params ? [...params] : undefined)).rows as T[],
    exec: async (text: string) => {
      await q.query(text);
    },
    copyFrom: async (sql: string, data: string) => {
      // A COPY runs on one connection: a pool lends one for it.
      const client = 'release' in q ? q : await q.connect();
      try {
        await pipeline(Readable.from([data]), client.query(copyFrom(sql)));
      } finally {
        if (client !== q) client.release();
      }
    },
  };
}

/** The URL as it may be shown: no user name or password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

export async function openPostgresStore(
  url: string,
  options: { scoring?: ScoringConfig; max?: number } = {},
): Promise<ServeStore> {
  const pg = (await import('pg')).default;
  const { from: copyFrom } = await import('pg-copy-streams');
  const where = redactUrl(url);
  const unavailable = (err: unknown) =>
    new Hcs25Error(
      'DATABASE_UNAVAILABLE',
      `cannot use PostgreSQL at ${where}: ${errorMessage(err).split('\n')[0]!.replaceAll(url, where)}`,
      {
        hint: 'check that the server runs, the database exists and the user may connect (--database postgres://user:pass@host:port/db)',
        cause: err,
      },
    );
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw unavailable(err);
  }

  let lock: Client | undefined;
  let held = false;
  const tryIndexerLock = async (): Promise<boolean> => {
    if (held) return true;
    if (!lock) {
      const c = new pg.Client({ connectionString: url });
      c.on('error', () => {
        held = false;
        if (lock === c) lock = undefined;
      });
      c.on('end', () => {
        held = false;
        if (lock === c) lock = undefined;
      });
      await c.connect();
      lock = c;
    }
    const { rows } = await lock.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [INDEXER_LOCK]);
    held = rows[0]!.ok;
    return held;
  };

  const store = createSqlStore({
    engine: 'postgres',
    driver: {
      ...executor(pool, copyFrom),
      async transaction(fn) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const out = await fn(executor(client, copyFrom));
          await client.query('COMMIT');
          return out;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    },
    tryIndexerLock,
    onClose: async () => {
      const c = lock;
      lock = undefined;
      held = false;
      await c?.end().catch(() => {});
    },
    ...(options.scoring ? { scoring: options.scoring } : {}),
  });
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err instanceof Hcs25Error ? err : unavailable(err);
  }
  return store;
}
