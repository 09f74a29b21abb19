/**
 * The embedded engine: PGlite (Postgres compiled to WebAssembly) in this process, persisted to a directory or kept in
 * memory (`memory://`, for tests). One process owns it, so the indexer lock is always granted.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hcs25Error, errorMessage } from '../../core/errors.js';
import { isAlive } from '../../publish/journal.js';
import type { ScoringConfig } from '../../score/scoring-config.js';
import { createSqlStore } from './sql.js';
import type { ServeStore, SqlExecutor } from './types.js';

interface PgliteQueryable {
  query<T>(text: string, params?: unknown[], options?: { blob?: Blob }): Promise<{ rows: T[] }>;
  exec(text: string): Promise<unknown>;
}

export function pgliteExecutor(q: PgliteQueryable): SqlExecutor {
  return {
    query: async <T>(text: string, params?: readonly unknown[]) =>
      (await q.query<T>(text, params ? [...params] : undefined)).rows,
    exec: async (text: string) => {
      await q.exec(text);
    },
    // PGlite has no client protocol stream: COPY reads its data from the /dev/blob device.
    copyFrom: async (sql: string, data: string) => {
      await q.query(sql.replace(/FROM STDIN$/, "FROM '/dev/blob'"), [], { blob: new Blob([data]) });
    },
  };
}

/** `dir` is a directory path, or `memory://` for a database that lives as long as the store. */
export async function openPgliteStore(dir: string, options: { scoring?: ScoringConfig } = {}): Promise<ServeStore> {
  const { PGlite } = await import('@electric-sql/pglite');
  const memory = dir === 'memory://' || dir === '';
  let db: InstanceType<typeof PGlite>;
  let release = () => {};
  try {
    if (!memory) release = claim(dir);
    db = await PGlite.create(memory ? undefined : dir);
  } catch (err) {
    release();
    if (err instanceof Hcs25Error) throw err;
    throw new Hcs25Error(
      'DATABASE_UNAVAILABLE',
      `cannot open the embedded database in ${dir}: ${errorMessage(err).split('\n')[0]}`,
      {
        hint: 'check the directory is writable and no other hcs25 serve uses it (PGlite is single-process)',
        cause: err,
      },
    );
  }
  const store = createSqlStore({
    engine: 'pglite',
    driver: {
      ...pgliteExecutor(db),
      transaction: (fn) => db.transaction((tx) => fn(pgliteExecutor(tx))),
      close: async () => {
        await db.close();
        release();
      },
    },
    tryIndexerLock: async () => true,
    soleWriter: true,
    ...(options.scoring ? { scoring: options.scoring } : {}),
  });
  await store.migrate();
  return store;
}

/**
 * PGlite is single-process: two processes on one directory would corrupt it. A pid file claims the directory; a
 * claim whose process is gone (killed) is taken over.
 */
const claimed = new Set<string>();

function claim(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'hcs25-serve.pid');
  if (claimed.has(file)) holderError(dir, process.pid);
  let holder: number | undefined;
  try {
    holder = Number(readFileSync(file, 'utf8').trim());
  } catch {
    holder = undefined;
  }
  if (holder && holder !== process.pid && isAlive(holder)) holderError(dir, holder);
  writeFileSync(file, String(process.pid));
  claimed.add(file);
  return () => {
    claimed.delete(file);
    rmSync(file, { force: true });
  };
}

function holderError(dir: string, pid: number): never {
  throw new Hcs25Error('DATABASE_UNAVAILABLE', `the embedded database in ${dir} is in use by process ${pid}`, {
    hint: 'stop that hcs25 serve, or use PostgreSQL (--database postgres://…) to run several instances',
  });
}
