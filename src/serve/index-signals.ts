/**
 * Index: signal topics on the mirror node → a serve store (PGlite or PostgreSQL), followed live. Each topic resumes
 * from the store's cursor; only the instance holding the store's indexer lock indexes. See src/serve/indexer.ts.
 */
import type { Hcs25Client } from '../client.js';
import type { Indexer, IndexerOptions } from './indexer.js';

export type IndexSignalsParameters = IndexerOptions;
export type IndexSignalsReturnType = Indexer;

export async function indexSignals(
  client: Hcs25Client,
  parameters: IndexSignalsParameters,
): Promise<IndexSignalsReturnType> {
  const { startIndexer } = await import('./indexer.js');
  return startIndexer(client, parameters);
}
