/**
 * What every command needs before it calls the library: the resolved configuration and the hcs25 client that owns
 * the connections. Loaded lazily, so `hcs25 --help` never imports the Hedera SDK.
 */
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import type { Hcs25Client } from '../client.js';
import type { ResolvedConfig } from '../config/load.js';
import { UsageError } from '../core/errors.js';
import { isEntityId } from '../core/ids.js';
import { globals, note } from './shared.js';
import { quoteInput } from '../config/secret.js';

/** The configuration from the global flags (`--network`, `--config`, `--dotenv`) plus the command's own. */
export async function commandConfig(cmd: Command, flags: Record<string, unknown> = {}): Promise<ResolvedConfig> {
  const { loadConfig } = await import('../config/load.js');
  const g = globals(cmd);
  return loadConfig({
    flags: { network: g.network, mirrorTimeoutMs: g.mirrorTimeout, config: g.config, envFile: g.dotenv, ...flags },
  });
}

/**
 * Runs `fn` with an hcs25 client for the command's configuration and closes the client afterwards, whatever
 * happens. Notes (an HCS-10 identity being made) go to stderr unless `--json`.
 */
export async function withClient<T>(
  cmd: Command,
  flags: Record<string, unknown>,
  fn: (client: Hcs25Client) => Promise<T>,
): Promise<T> {
  const config = await commandConfig(cmd, flags);
  const { createHcs25Client } = await import('../client.js');
  const client = createHcs25Client(config, globals(cmd).json ? {} : { onNote: note });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** An entity id flag (topic, account), checked before any network call. */
export function entityIdFlag(flag: string, value: string): string {
  const v = value.trim();
  if (!isEntityId(v)) throw new UsageError(`${flag} must be an id like 0.0.1234, got ${quoteInput(v)}`);
  return v;
}

/** A local input file named by a flag, checked before any network call: it must exist and be a file. */
export function inputFileFlag(flag: string, path: string): string {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${flag} ${quoteInput(path)}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'cannot be read')}`,
      { hint: `check the path given to ${flag}` },
    );
  }
  if (!stats.isFile())
    throw new UsageError(`${flag} ${quoteInput(path)} is not a file`, { hint: `give ${flag} a file` });
  return path;
}
