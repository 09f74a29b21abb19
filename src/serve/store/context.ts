/**
 * What the parts of one SQL store share: the driver, the scoring configuration, the topic ids, the revision, the
 * count of the store's own writes, and the row forms several parts read. The parts: sql.ts (the store and its reads),
 * ingest.ts (the indexer's writes) and rescore.ts (score upkeep).
 */
import { hash } from 'node:crypto';
import type { ScoringConfig } from '../../score/scoring-config.js';
import { consensusIso } from '../../core/consensus-time.js';
import type { ReadSignal } from '../../read/types.js';
import type { SqlDriver, SqlExecutor } from './types.js';

export class SqlContext {
  /** Writes of this store that ended (committed or not): what the sole writer's shortcuts compare. */
  writes = 0;
  closed = false;
  /** Topic ids by topic: a topic row is never deleted, so its id never changes. */
  private readonly tids = new Map<string, number>();

  constructor(
    readonly driver: SqlDriver,
    readonly scoring: ScoringConfig,
    /**
     * One process owns the database (PGlite): only this store's writes change it, so the periodic questions (has the
     * revision moved, is anything to rescore, is a score due to turn stale) are answered without a query while this
     * store wrote nothing since they were last asked. On PGlite every query runs on the event loop, between lookups.
     */
    readonly sole: boolean,
  ) {}

  /** `write`, counted in `writes` once it ends. */
  written<T>(write: Promise<T>): Promise<T> {
    return write.finally(() => {
      this.writes++;
    });
  }

  async tidOf(db: SqlExecutor, topic: string): Promise<number> {
    const known = this.tids.get(topic);
    if (known !== undefined) return known;
    await db.query('INSERT INTO topics (topic) VALUES ($1) ON CONFLICT (topic) DO NOTHING', [topic]);
    const [row] = await db.query<{ tid: number }>('SELECT tid FROM topics WHERE topic = $1', [topic]);
    this.tids.set(topic, row!.tid);
    return row!.tid;
  }
}

/**
 * Called first in a writing transaction: the row lock it takes on serve_meta is held until commit, so revisions
 * commit in order, and every row the transaction marks with the new revision is visible once that revision is.
 */
export async function bump(db: SqlExecutor): Promise<number> {
  const [row] = await db.query<{ value: number }>(
    "UPDATE serve_meta SET value = value + 1 WHERE key = 'revision' RETURNING value::float8 AS value",
  );
  return row!.value;
}

export async function currentRevision(db: SqlExecutor): Promise<number> {
  const [row] = await db.query<{ value: number }>(
    "SELECT value::float8 AS value FROM serve_meta WHERE key = 'revision'",
  );
  return row!.value;
}

/** The index key of a subject or run: the first 4 bytes of its md5, as a signed 32-bit integer. */
export function hash32(value: string): number {
  return hash('md5', value, 'buffer').readInt32BE(0);
}

/** `seconds.nanos` → seconds as a SQL timestamptz. */
export const TS = (col: string) =>
  `to_timestamp(split_part(${col}, '.', 1)::float8 + ('0.' || split_part(${col}, '.', 2))::float8)`;

/** A stored signal as queries select it: `tid, seq::float8 AS seq, idx, consensus, payer, message`. */
export interface SignalRow extends Record<string, unknown> {
  tid: number;
  seq: number;
  idx: number;
  consensus: string;
  payer: string;
  message: ReadSignal['message'];
}

export function toReadSignal(r: SignalRow): ReadSignal {
  return {
    sequenceNumber: r.seq,
    consensusTimestamp: r.consensus,
    consensusAt: consensusIso(r.consensus),
    payerAccountId: r.payer,
    index: r.idx,
    message: r.message,
  };
}

export function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
