/**
 * Topic messages as a mirror node returns them, the indexer's batch path over them, and the two store engines, for the
 * store tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { classify, type SeenSignals } from '../../src/read/reader.js';
import { SignalPacker, type PackMode } from '../../src/format/pack.js';
import type { SignalMessageV2 } from '../../src/format/schema-v2.js';
import { BatchBuilder } from '../../src/serve/batch.js';
import type { IndexBatch, ServeStore } from '../../src/serve/store/types.js';
import type { ReadSignal } from '../../src/read/types.js';
import { openStore } from '../../src/serve/store/index.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';

export interface MirrorMessage {
  sequenceNumber: number;
  consensusTimestamp: string;
  payerAccountId: string;
  message: Buffer;
}

export const PAYER = '0.0.1001';
const T0 = 1_795_000_000; // 2026-11-18, seconds

/** Messages numbered from `firstSequence`, one second apart. */
export function toMessages(bodies: Buffer[], firstSequence = 1, payer = PAYER): MirrorMessage[] {
  return bodies.map((message, i) => {
    const seq = firstSequence + i;
    return { sequenceNumber: seq, consensusTimestamp: `${T0 + seq}.000000001`, payerAccountId: payer, message };
  });
}

/** Signals as a publisher writes them: packed (dense, zlib), or one per message (`none`). */
export function packed(signals: readonly SignalMessageV2[], mode: PackMode = 'dense'): Buffer[] {
  const packer = new SignalPacker({ mode });
  return [...signals.flatMap((s) => packer.add(s)), ...packer.flush()].map((m) => m.bytes);
}

/** The indexer's path: classify each message (allow-list, in-batch dedupe) and build one batch. */
export function batchOf(messages: readonly MirrorMessage[], publishers: readonly string[] = []): IndexBatch {
  const builder = new BatchBuilder();
  const seen: SeenSignals = new Map();
  for (const m of messages) for (const e of classify(m, new Set(publishers), seen)) builder.add(e);
  return builder.take('rest')!;
}

/** What a store double's answers wait behind: `hold()` closes it and returns the function that opens it again. */
export class Gate {
  private closed: Promise<void> | undefined;

  hold(): () => void {
    let open!: () => void;
    this.closed = new Promise((r) => (open = r));
    return () => {
      this.closed = undefined;
      open();
    };
  }

  /** Resolves once the gate is open (at once when it is). */
  passed(): Promise<void> | undefined {
    return this.closed;
  }
}

/**
 * Stores `signals` (in topic order) on `topic` as one batch whose cursor is the last of them, then rescores until
 * nothing is dirty, `perRound` subjects a round (default: the store's).
 */
export async function indexAndScore(
  store: ServeStore,
  topic: string,
  signals: readonly ReadSignal[],
  now: Date,
  perRound?: number,
): Promise<void> {
  const last = signals.at(-1)!;
  await store.applyBatch(topic, {
    signals,
    records: [],
    unknown: [],
    rejected: [],
    cursor: { sequence: last.sequenceNumber, consensusTimestamp: last.consensusTimestamp },
    source: 'rest',
  });
  while ((await store.rescoreDirty({ now, ...(perRound !== undefined && { limit: perRound }) })).more);
}

/**
 * The engines a store test runs on: PGlite in memory, and a fresh database on a PostgreSQL server started for the test
 * file. Registers the file's beforeAll/afterAll, which stop the server and remove `stateDir`.
 */
export function storeEngines(prefix: string) {
  const stateDir = mkdtempSync(join(tmpdir(), `hcs25-${prefix}-`));
  let pg: PostgresServer | undefined;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const postgres = (): PostgresServer => {
    if (!pg) throw new Error('PostgreSQL is started in beforeAll');
    return pg;
  };
  const engines = [
    { name: 'pglite', open: () => openStore('memory://', { stateDir }) },
    {
      name: 'postgres',
      open: async () =>
        openStore(await postgres().database(`db_${Math.random().toString(36).slice(2, 10)}`), { stateDir }),
    },
  ];
  return { stateDir, postgres, engines };
}
