/**
 * openStore: `postgres://…` (or `postgresql://…`) → the PostgreSQL engine; anything else is the embedded one:
 * `memory://`, a directory, or by default `<stateDir>/serve-db`.
 */
import { join } from 'node:path';
import type { OpenStoreOptions, ServeStore } from './types.js';

export * from './types.js';

export async function openStore(url: string | undefined, options: OpenStoreOptions): Promise<ServeStore> {
  const scoring = options.scoring ? { scoring: options.scoring } : {};
  if (url !== undefined && /^postgres(ql)?:\/\//i.test(url)) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(url, scoring);
  }
  const { openPgliteStore } = await import('./pglite.js');
  return openPgliteStore(url ?? join(options.stateDir, 'serve-db'), scoring);
}
