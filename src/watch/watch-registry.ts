/**
 * `hcs25 watch` as one action: follow a registry and keep every agent's signals fresh (src/watch/watcher.ts).
 */
import type { Hcs25Client } from '../client.js';
import type { WatchRegistryParameters, WatchRegistryReturnType } from './options.js';
import { Watcher } from './watcher.js';

export {
  DEFAULT_MAX_FEE_PER_DAY_HBAR,
  DEFAULT_MAX_RUN_SIGNALS,
  DEFAULT_PER_HOST,
  DEFAULT_WATCH_EVERY_MS,
  type WatchRegistryParameters,
  type WatchRegistryReturnType,
} from './options.js';

export async function watchRegistry(
  client: Hcs25Client,
  parameters: WatchRegistryParameters,
): Promise<WatchRegistryReturnType> {
  return new Watcher(client, parameters).run();
}
