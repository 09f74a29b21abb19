/**
 * The embedded engine: PGlite (Postgres compiled to WebAssembly) in this process, persisted to a directory or kept in
 * memory (`memory://`, for tests). One process owns it, so the indexer lock is always granted.
 */
import { mkdirSync } from 'node:fs';
import { Hcs25Error, errorMessage } from '../../core/errors.js';
import type { ScoringConfig } from '../../consumer/scoring-config.js';
import { createSqlStore, type SqlExecutor } from './sql.js';
import type { ServeStore } from './types.js';

interface PgliteQueryable {
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  exec(text: string): Promise<unknown>;
}

function executor(q: PgliteQueryable): SqlExecutor {
  return {
    query: async <T,>(text: string, params?: readonly unknown[]) => (await q.query<T>(text, params ? [...params] : undefined)).rows,
    exec: async (text: string) => {
      await q.exec(text);
    },
  };
}

/** `dir` is a directory path, or `memory://` for a database that lives as long as the store. */
export async function openPgliteStore(dir: string, options: { scoring?: ScoringConfig } = {}): Promise<ServeStore> {
  const { PGlite } = await import('@electric-sql/pglite');
  const memory = dir === 'memory://' || dir === '';
  let db: InstanceType<typeof PGlite>;
  try {
    if (!memory) mkdirSync(dir, { recursive: true });
    db = await PGlite.create(memory ? undefined : dir);
  } catch (err) {
    throw new Hcs25Error('DATABASE_UNAVAILABLE', `cannot open the embedded database in ${dir}: ${errorMessage(err).split('\n')[0]}`, {
      hint: 'check the directory is writable and no other hcs25 serve uses it (PGlite is single-process)',
      cause: err,
    });
  }
  const store = createSqlStore({
    engine: 'pglite',
    driver: {
      ...executor(db),
      transaction: (fn) => db.transaction((tx) => fn(executor(tx))),
      close: () => db.close(),
    },
    tryIndexerLock: async () => true,
    ...(options.scoring ? { scoring: options.scoring } : {}),
  });
  await store.migrate();
  return store;
}
