/**
 * openStore: `postgres://…` (or `postgresql://…`) → the PostgreSQL engine; anything else is the embedded one:
 * `memory://`, a directory, or by default `<stateDir>/serve-db`.
 */
import { join } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { quoteInput } from '../../config/secret.js';
import type { OpenStoreOptions, ServeStore } from './types.js';

export * from './types.js';

export async function openStore(url: string | undefined, options: OpenStoreOptions): Promise<ServeStore> {
  const scoring = options.scoring ? { scoring: options.scoring } : {};
  if (url !== undefined && /^postgres(ql)?:\/\//i.test(url)) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(url, scoring);
  }
  // Any other URL would be taken for a directory of that name.
  if (url !== undefined && url !== 'memory://' && /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    // Without the user and password a URL may carry.
    const shown = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');
    throw new UsageError(`--database must be postgres://…, memory:// or a directory, got ${quoteInput(shown, 60)}`, {
      hint: 'the embedded engine (PGlite) takes a directory; PostgreSQL a postgres://user:pass@host:port/db URL',
    });
  }
  const { openPgliteStore } = await import('./pglite.js');
  return openPgliteStore(url ?? join(options.stateDir, 'serve-db'), scoring);
}
