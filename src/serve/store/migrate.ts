/**
 * A tiny migrator: schemas/serve/NNN_name.sql files applied in order, each in its own transaction with its id written
 * to `schema_migrations`. A transaction-scoped advisory lock keeps instances that start at once from racing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Hcs25Error } from '../../core/errors.js';
import type { SqlDriver } from './types.js';

/** Resolves from src/serve/store and dist/serve/store alike (schemas/ ships with the package). */
const SCHEMA_DIR = fileURLToPath(new URL('../../../schemas/serve/', import.meta.url));
const MIGRATION_LOCK = 0x6863_3235; // "hc25"

export interface Migration {
  id: string;
  sql: string;
}

export function migrations(): Migration[] {
  return readdirSync(SCHEMA_DIR)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ id: f.replace(/\.sql$/, ''), sql: readFileSync(SCHEMA_DIR + f, 'utf8') }));
}

export async function migrate(driver: SqlDriver, list: readonly Migration[] = migrations()): Promise<string[]> {
  const known = new Set(list.map((m) => m.id));
  const applied: string[] = [];
  for (const m of list) {
    const done = await driver.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const ids = (await tx.query<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id);
      const unknown = ids.filter((id) => !known.has(id));
      if (unknown.length > 0) {
        throw new Hcs25Error(
          'DATABASE_SCHEMA',
          `the database has schema migration ${unknown[0]}, which this hcs25 does not know`,
          {
            hint: 'upgrade hcs25, or point --database at another database',
          },
        );
      }
      if (ids.includes(m.id)) return false;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [m.id]);
      return true;
    });
    if (done) applied.push(m.id);
  }
  return applied;
}
