/**
 * The indexer's writes to the SQL store: the publisher allow-list a topic is indexed under, its cursor, and its
 * batches, each applied in one transaction with the topic's new cursor (see ServeStore in types.ts).
 */
import { hash } from 'node:crypto';
import { dedupeKey } from '../../read/reader.js';
import type { ReadSignal } from '../../read/types.js';
import { Hcs25Error } from '../../core/errors.js';
import { TS, bump, currentRevision, hash32, type SqlContext } from './context.js';
import { recordCitations } from './identity.js';
import type { ApplyResult, IndexBatch, ServeStore, SqlExecutor, TopicState } from './types.js';

export type SqlIngest = Pick<ServeStore, 'useAllowList' | 'cursor' | 'applyBatch' | 'setTopicState'>;

export function createIngest(ctx: SqlContext): SqlIngest {
  const { driver } = ctx;
  const queues = new Map<string, Promise<ApplyResult>>();
  /** Topics with a failed batch: applyBatch refuses them until cursor() is read (the caller resumes from it). */
  const failed = new Set<string>();

  async function writeBatch(topic: string, batch: IndexBatch, prepared: PreparedBatch): Promise<ApplyResult> {
    // Outside the transaction: a topic row is harmless on its own, and a rolled-back one must not stay cached.
    const tid = await ctx.tidOf(driver, topic);
    return ctx.written(
      driver.transaction(async (tx): Promise<ApplyResult> => {
        // The row lock orders concurrent writers (two indexers after a lock takeover race): the cursor guard below
        // then sees the other's batch, so nothing is stored twice whatever the advisory lock did.
        const [cur] = await tx.query<{ seq: number }>(
          'SELECT last_sequence::float8 AS seq FROM topics WHERE tid = $1 FOR UPDATE',
          [tid],
        );
        const last = cur!.seq;
        if (batch.cursor.sequence <= last)
          return { signals: 0, duplicates: 0, applied: false, revision: await currentRevision(tx) };
        const revision = await bump(tx);
        const after = <T extends { sequenceNumber: number }>(list: readonly T[]) =>
          list.filter((x) => x.sequenceNumber > last);
        const records = after(batch.records);

        const fresh = after(batch.signals);
        const rows =
          fresh.length === batch.signals.length
            ? prepared.signals
            : prepared.signals.filter((_, i) => batch.signals[i]!.sequenceNumber > last);
        const stored = fresh.length > 0 ? await insertSignals(tx, tid, fresh, rows) : [];
        const inserted = stored.length;
        if (inserted > 0) {
          await recordCitations(tx, tid, stored);
          await tx.query(INSERT_RUNS, [tid, ...runsOf(stored)]);
          // A row per waiting subject (docs/performance.md, "Subjects waiting for their rescoring, one row each"); one
          // already waiting keeps its earliest cursor (its score misses signals since then).
          await tx.query(
            `INSERT INTO pending_subjects (tid, subject, after_seq, rev) SELECT $1, unnest($2::text[]), $3, $4
             ON CONFLICT (tid, subject) DO UPDATE
               SET after_seq = least(pending_subjects.after_seq, excluded.after_seq), rev = excluded.rev`,
            [tid, [...new Set(stored.map((x) => x.message.subject))], last, revision],
          );
        }
        if (records.length > 0) await tx.query(INSERT_RECORDS, [tid, prepared.records, last]);

        const duplicates = fresh.length - inserted;
        const counts = new Map<string, number>();
        const count = (category: string, name: string, n = 1) => {
          const key = `${category}\u0000${name}`;
          counts.set(key, (counts.get(key) ?? 0) + n);
        };
        for (const r of records) count('record', r.kind);
        for (const u of after(batch.unknown)) count('unknown', `${u.kind}:${u.name}`);
        for (const r of after(batch.rejected)) count('rejected', r.reason);
        if (duplicates > 0) count('rejected', 'duplicate', duplicates);
        if (counts.size > 0) {
          const keys = [...counts.keys()].map((k) => k.split('\u0000'));
          await tx.query(
            `INSERT INTO topic_counts (tid, category, name, n)
           SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[])
           ON CONFLICT (tid, category, name) DO UPDATE SET n = topic_counts.n + excluded.n`,
            [tid, keys.map((k) => k[0]), keys.map((k) => k[1]), [...counts.values()]],
          );
        }
        const ts = batch.cursor.consensusTimestamp;
        await tx.query(
          `UPDATE topics SET last_sequence = $2, last_consensus = COALESCE($3, last_consensus),
           last_consensus_at = COALESCE(${TS('$3::text')}, last_consensus_at),
           signals = signals + $4, source = $5, updated_at = now() WHERE tid = $1`,
          [tid, batch.cursor.sequence, ts, inserted, batch.source],
        );
        return { signals: inserted, duplicates, applied: true, revision };
      }),
    );
  }

  return {
    async useAllowList(topic, publishers) {
      const want = publishers && publishers.length > 0 ? [...new Set(publishers)].sort() : null;
      const tid = await ctx.tidOf(driver, topic);
      return ctx.written(
        driver.transaction(async (tx) => {
          const [row] = await tx.query<{ publishers: string[] | null; known: boolean; seq: number }>(
            'SELECT publishers, publishers_known AS known, last_sequence::float8 AS seq FROM topics WHERE tid = $1 FOR UPDATE',
            [tid],
          );
          const had = row!.publishers === null ? null : [...row!.publishers].sort();
          const same =
            had === null || want === null
              ? had === want
              : had.length === want.length && had.every((p, i) => p === want[i]);
          const reset = row!.known && !same && row!.seq > 0;
          if (reset) {
            // Every answer of the topic changes: its subjects are marked at a new revision (caches drop them) and
            // rescored once the topic is indexed again.
            const revision = await bump(tx);
            await tx.query('DELETE FROM pending_subjects WHERE tid = $1', [tid]);
            await tx.query(
              `INSERT INTO pending_subjects (tid, subject, after_seq, rev)
               SELECT tid, subject, 0, $2 FROM subject_scores WHERE tid = $1 ORDER BY subject`,
              [tid, revision],
            );
            await tx.query(
              `UPDATE subject_scores SET total = NULL, confidence = NULL, signals = 0, last_at = NULL, publishers = '{}', score = NULL,
               stale_at = NULL, rev = $2 WHERE tid = $1`,
              [tid, revision],
            );
            for (const table of ['signals', 'records', 'runs', 'topic_counts'])
              await tx.query(`DELETE FROM ${table} WHERE tid = $1`, [tid]);
            await tx.query(
              `UPDATE topics SET last_sequence = 0, last_consensus = NULL, last_consensus_at = NULL, signals = 0, behind = NULL,
               note = 'indexed again from the start: the publisher allow-list changed' WHERE tid = $1`,
              [tid],
            );
          }
          await tx.query('UPDATE topics SET publishers = $2::text[], publishers_known = true WHERE tid = $1', [
            tid,
            want,
          ]);
          return reset;
        }),
      );
    },

    async cursor(topic) {
      // Wait for the topic's queued batches, so the cursor read is after them; a failure among them is the caller's
      // to learn from applyBatch: here it only ends the wait.
      await queues.get(topic)?.catch(() => {});
      failed.delete(topic);
      const [row] = await driver.query<{ seq: number; consensus: string | null }>(
        'SELECT last_sequence::float8 AS seq, last_consensus AS consensus FROM topics WHERE topic = $1',
        [topic],
      );
      return row && row.seq > 0 ? { sequence: row.seq, consensusTimestamp: row.consensus } : null;
    },

    applyBatch(topic, batch) {
      // The JSON is built now, while an earlier batch of the topic may still be writing: the caller's CPU work
      // overlaps the database's. The writes themselves run one at a time per topic, in call order, and none after a
      // failed one (its successors fail with it; the next call after them starts afresh).
      if (failed.has(topic)) {
        return Promise.reject(
          new Hcs25Error(
            'DATABASE_UNAVAILABLE',
            `an earlier batch of topic ${topic} failed; resume from the stored cursor`,
            {
              hint: 'read cursor(topic) and apply what comes after it',
            },
          ),
        );
      }
      const prepared = prepareBatch(batch);
      const previous = queues.get(topic) ?? Promise.resolve();
      const run = previous.then(() => writeBatch(topic, batch, prepared));
      queues.set(topic, run);
      run.then(
        () => {
          if (queues.get(topic) === run) queues.delete(topic);
        },
        () => {
          // Until the caller reads the cursor again, later batches would skip what this one held.
          failed.add(topic);
          if (queues.get(topic) === run) queues.delete(topic);
        },
      );
      return run;
    },

    async setTopicState(topic, state: TopicState) {
      const tid = await ctx.tidOf(driver, topic);
      await driver.query(
        `UPDATE topics SET source = COALESCE($2, source),
           behind = CASE WHEN $3 THEN $4::bigint ELSE behind END,
           note = CASE WHEN $5 THEN $6::text ELSE note END, updated_at = now() WHERE tid = $1`,
        [
          tid,
          state.source ?? null,
          state.behind !== undefined,
          state.behind ?? null,
          state.note !== undefined,
          state.note ?? null,
        ],
      );
    },
  };
}

const SIGNAL_COLUMNS = 'tid, seq, idx, sh, rh, consensus, payer, dedupe, message';
const UNIQUE_VIOLATION = '23505';

/**
 * Stores signals (after the cursor guard) and returns those stored, in order. COPY is the cheapest way in (an INSERT
 * over json_to_recordset parses every message twice), but it has no ON CONFLICT: a signal whose dedupe key is already
 * stored (a publisher that re-publishes; rare) makes the unique index refuse the whole COPY, and the batch then goes
 * through a staging table and INSERT … ON CONFLICT DO NOTHING, in sequence order, so the first of each key wins.
 */
async function insertSignals(
  tx: SqlExecutor,
  tid: number,
  signals: readonly ReadSignal[],
  rows: readonly PreparedSignal[],
): Promise<readonly ReadSignal[]> {
  const data = rows.map((r) => `${tid}\t${r.line}`).join('');
  await tx.exec('SAVEPOINT signals_copy');
  try {
    await tx.copyFrom(`COPY signals (${SIGNAL_COLUMNS}) FROM STDIN`, data);
    await tx.exec('RELEASE SAVEPOINT signals_copy');
    return signals;
  } catch (err) {
    if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    await tx.exec('ROLLBACK TO SAVEPOINT signals_copy');
  }
  await tx.exec('CREATE TEMP TABLE IF NOT EXISTS signals_stage (LIKE signals) ON COMMIT DELETE ROWS');
  await tx.copyFrom(`COPY signals_stage (${SIGNAL_COLUMNS}) FROM STDIN`, data);
  const inserted = await tx.query<{ dedupe: string }>(
    `INSERT INTO signals SELECT * FROM signals_stage ORDER BY seq, idx ON CONFLICT (tid, dedupe) DO NOTHING
     RETURNING replace(dedupe::text, '-', '') AS dedupe`,
  );
  const keys = new Set(inserted.map((r) => r.dedupe));
  // A key twice in the batch was inserted once, by its first signal.
  return signals.filter((_, i) => keys.delete(rows[i]!.dedupe));
}

/** Stored signals per run: runs, counts, first and last consensus timestamps (INSERT_RUNS's arrays). */
function runsOf(signals: readonly ReadSignal[]): [string[], number[], string[], string[]] {
  const runs = new Map<string, { n: number; first: string; last: string }>();
  for (const s of signals) {
    const ts = s.consensusTimestamp;
    const r = runs.get(s.message.run);
    if (!r) runs.set(s.message.run, { n: 1, first: ts, last: ts });
    else {
      r.n++;
      if (consensusBefore(ts, r.first)) r.first = ts;
      if (consensusBefore(r.last, ts)) r.last = ts;
    }
  }
  const list = [...runs];
  return [
    list.map(([run]) => run),
    list.map(([, r]) => r.n),
    list.map(([, r]) => r.first),
    list.map(([, r]) => r.last),
  ];
}

/** `seconds.nanos` order: more seconds digits is later, else the text orders them (nanos have 9 digits). */
function consensusBefore(a: string, b: string): boolean {
  const da = a.indexOf('.');
  const db = b.indexOf('.');
  return da !== db ? (da < 0 ? a.length : da) < (db < 0 ? b.length : db) : a < b;
}

const INSERT_RUNS = `
INSERT INTO runs (tid, run, signals, first_at, last_at)
SELECT $1, run, n, ${TS('f')}, ${TS('l')} FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[]) AS u(run, n, f, l)
ON CONFLICT (tid, run) DO UPDATE SET signals = runs.signals + excluded.signals,
  first_at = least(runs.first_at, excluded.first_at), last_at = greatest(runs.last_at, excluded.last_at), verify_dirty = true`;

const INSERT_RECORDS = `
WITH ins AS (
  INSERT INTO records (tid, seq, idx, consensus, payer, kind, v, validated, run, message)
  SELECT $1, u.* FROM json_to_recordset($2::json)
    AS u(seq bigint, idx int, consensus text, payer text, kind text, v int, validated boolean, run text, message json)
  WHERE u.seq > $3
  ON CONFLICT DO NOTHING
  RETURNING kind, validated, run
)
INSERT INTO runs (tid, run, revealed) SELECT DISTINCT $1::int, run, true FROM ins WHERE kind = 'reveal' AND validated AND run IS NOT NULL
ON CONFLICT (tid, run) DO UPDATE SET revealed = true, verify_dirty = true`;

interface PreparedSignal {
  /** The COPY text line after the topic id column. */
  line: string;
  /** The dedupe key, 32 hex digits (a uuid as PostgreSQL reads it). */
  dedupe: string;
}

interface PreparedBatch {
  signals: PreparedSignal[];
  /** A JSON document for json_to_recordset. */
  records: string;
}

/** Encoded before the batch's turn to write, while an earlier batch of the topic may still be writing. */
function prepareBatch(batch: IndexBatch): PreparedBatch {
  const signals = batch.signals.map((s): PreparedSignal => {
    const dedupe = dedupeHex(s);
    const { subject, run } = s.message;
    return {
      dedupe,
      line: `${s.sequenceNumber}\t${s.index}\t${hash32(subject)}\t${hash32(run)}\t${copyText(s.consensusTimestamp)}\t${copyText(s.payerAccountId)}\t${dedupe}\t${copyText(JSON.stringify(s.message))}\n`,
    };
  });
  const records = batch.records.map((r) => ({
    seq: r.sequenceNumber,
    idx: r.index,
    consensus: r.consensusTimestamp,
    payer: r.payerAccountId,
    kind: r.kind,
    v: r.v,
    validated: r.validated,
    run: typeof r.message.run === 'string' ? r.message.run : null,
    message: r.message,
  }));
  return { signals, records: JSON.stringify(records) };
}

/** The reader's dedupe key (publisher, run, signal id, subject), hashed to 16 bytes. */
function dedupeHex(s: ReadSignal): string {
  return hash('md5', dedupeKey(s.payerAccountId, s.message), 'hex');
}

/** A value in COPY's text format: backslash, tab and line breaks escaped (JSON text has no raw tabs or newlines). */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : value;
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
