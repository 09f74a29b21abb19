/**
 * Subject identities in the SQL store (migration 006): the citations a batch's signals make (recorded in the batch's
 * transaction, so a restart loses none), the subjects due for resolving, what a registry said about them, and the
 * columns and join the score reads add to every answer.
 */
import { z } from 'zod';
import { parseHrl } from '../../core/hrl.js';
import { parseUaid } from '../../discover/uaid.js';
import type { ReadSignal } from '../../read/types.js';
import { bump, type SqlContext } from './context.js';
import { decodeCursor, pageLimit, paged } from './paging.js';
import type { DueIdentity, DueRegistry, IdentityStatus, ServeStore, SqlExecutor, SubjectIdentity } from './types.js';

export type SqlIdentities = Pick<
  ServeStore,
  'identitiesDue' | 'dueIdentities' | 'saveIdentities' | 'identitiesUnavailable'
>;

/** A subject is due while its newest citation is newer than the one its entry was resolved for (the partial index). */
const due = (i = '') => `(${i}resolved_seq IS NULL OR ${i}resolved_seq < ${i}cited_seq)`;

export function createIdentities(ctx: SqlContext): SqlIdentities {
  const { driver } = ctx;
  return {
    async identitiesDue({ limit = 16 } = {}) {
      const rows = await driver.query<{ registry: string; until: string; unresolved: number }>(
        `SELECT registry, max(cited_at) AS until, count(*) FILTER (WHERE resolved_seq IS NULL)::float8 AS unresolved
         FROM subject_identities WHERE ${due()} GROUP BY registry
         ORDER BY count(*) FILTER (WHERE resolved_seq IS NULL) > 0 DESC, registry LIMIT $1`,
        [Math.max(1, Math.min(limit, 1000))],
      );
      // `max` over consensus texts: the same number of seconds digits for centuries, so the text order is the time's.
      return rows.map((r): DueRegistry => ({ registry: r.registry, until: r.until, unresolved: r.unresolved }));
    },

    async dueIdentities(registry, page = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.number().int(), z.string()]));
      const rows = await driver.query<{ tid: number; topic: string; subject: string; cited_seq: number }>(
        `SELECT i.tid, t.topic, i.subject, i.cited_seq::float8 AS cited_seq
         FROM subject_identities i JOIN topics t USING (tid)
         WHERE i.registry = $1 AND ${due('i.')}
           AND ($2::int IS NULL OR (i.tid, i.subject) > ($2::int, $3::text))
         ORDER BY i.registry, i.tid, i.subject LIMIT $4`,
        [registry, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
      );
      return paged(
        rows,
        limit,
        (r): DueIdentity => ({ topic: r.topic, subject: r.subject, citedSeq: r.cited_seq }),
        (r) => [r.tid, r.subject],
      );
    },

    async saveIdentities(updates) {
      if (updates.length === 0) return;
      const tids: number[] = [];
      for (const u of updates) tids.push(await ctx.tidOf(driver, u.topic));
      const col = <T>(f: (u: (typeof updates)[number]) => T) => updates.map(f);
      await ctx.written(
        driver.transaction(async (tx) => {
          const revision = await bump(tx);
          // An answer for an older citation than the stored one's is dropped; one for an older citation than the
          // newest still counts (it names the entry then), and the subject stays due.
          const changed = await tx.query<{ tid: number; subject: string }>(
            `UPDATE subject_identities i SET status = u.status, note = NULL, resolved_seq = u.cited_seq, name = u.name,
               protocol = u.protocol, endpoint = u.endpoint, account_id = u.account_id, entry = u.entry,
               entry_seq = u.entry_seq
             FROM unnest($1::int[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
               $8::text[], $9::text[], $10::bigint[], $11::text[])
               AS u(tid, subject, cited_seq, status, name, protocol, endpoint, account_id, entry, entry_seq, registry)
             WHERE i.tid = u.tid AND i.subject = u.subject AND i.registry = u.registry
               AND (i.resolved_seq IS NULL OR i.resolved_seq < u.cited_seq)
             RETURNING i.tid, i.subject`,
            [
              tids,
              col((u) => u.subject),
              col((u) => u.citedSeq),
              col((u) => u.status),
              col((u) => u.entry?.name ?? null),
              col((u) => u.entry?.protocol ?? null),
              col((u) => u.entry?.endpoint ?? null),
              col((u) => u.entry?.accountId ?? null),
              col((u) => u.entry?.entry ?? null),
              col((u) => u.entry?.sequence ?? null),
              col((u) => u.registry),
            ],
          );
          await touchScores(tx, changed, revision);
        }),
      );
    },

    async identitiesUnavailable(registry, note) {
      // Unchanged by a retry that fails alike: no write, no new revision, no cached answer dropped.
      const [stale] = await driver.query(
        `SELECT 1 FROM subject_identities WHERE registry = $1 AND ${due()} AND note IS DISTINCT FROM $2 LIMIT 1`,
        [registry, note],
      );
      if (!stale) return 0;
      return ctx.written(
        driver.transaction(async (tx) => {
          const revision = await bump(tx);
          const changed = await tx.query<{ tid: number; subject: string }>(
            `UPDATE subject_identities SET note = $2,
               status = CASE WHEN resolved_seq IS NULL THEN 'unavailable' ELSE status END
             WHERE registry = $1 AND ${due()} AND note IS DISTINCT FROM $2 RETURNING tid, subject`,
            [registry, note],
          );
          await touchScores(tx, changed, revision);
          return changed.length;
        }),
      );
    },
  };
}

/** The score answers carry the identity: their revision moves, so caches drop and reload them. */
async function touchScores(
  tx: SqlExecutor,
  changed: ReadonlyArray<{ tid: number; subject: string }>,
  revision: number,
): Promise<void> {
  if (changed.length === 0) return;
  await tx.query(
    `UPDATE subject_scores s SET rev = $3 FROM unnest($1::int[], $2::text[]) AS c(tid, subject)
     WHERE s.tid = c.tid AND s.subject = c.subject`,
    [changed.map((c) => c.tid), changed.map((c) => c.subject), revision],
  );
}

/**
 * Records the registries the stored signals of a batch cite: per subject, the newest signal's first HCS-2 or HCS-10
 * source. A citation newer than the stored one makes the subject due again; one of another registry forgets the entry
 * of the old one.
 */
export async function recordCitations(tx: SqlExecutor, tid: number, signals: readonly ReadSignal[]): Promise<void> {
  const newest = new Map<string, { registry: string; seq: number; at: string }>();
  for (const s of signals) {
    const registry = citedRegistry(s.message.sources);
    // Signals come in (sequence, index) order: a later one replaces an earlier one.
    if (registry !== undefined)
      newest.set(s.message.subject, { registry, seq: s.sequenceNumber, at: s.consensusTimestamp });
  }
  if (newest.size === 0) return;
  const list = [...newest];
  await tx.query(
    `INSERT INTO subject_identities (tid, subject, registry, cited_seq, cited_at)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[])
     ON CONFLICT (tid, subject) DO UPDATE SET cited_seq = excluded.cited_seq, cited_at = excluded.cited_at,
       registry = excluded.registry,
       status = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.status ELSE 'pending' END,
       resolved_seq = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.resolved_seq END,
       name = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.name END,
       protocol = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.protocol END,
       endpoint = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.endpoint END,
       account_id = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.account_id END,
       entry = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.entry END,
       entry_seq = CASE WHEN subject_identities.registry = excluded.registry THEN subject_identities.entry_seq END
     WHERE excluded.cited_seq > subject_identities.cited_seq`,
    [
      tid,
      list.map(([subject]) => subject),
      list.map(([, c]) => c.registry),
      list.map(([, c]) => c.seq),
      list.map(([, c]) => c.at),
    ],
  );
}

/** The topic id of the first registry (HCS-2 or HCS-10 HRL) among a signal's sources, as RegistryCitations keys it. */
function citedRegistry(sources: readonly string[] | undefined): string | undefined {
  for (const source of sources ?? []) {
    const hrl = parseHrl(source);
    if (hrl && (hrl.standard === 2 || hrl.standard === 10)) return hrl.topicId;
  }
  return undefined;
}

/** The identity columns a score read selects, beside `IDENTITY_JOIN` (alias `i`). */
export const IDENTITY_COLUMNS =
  'i.status AS i_status, i.note AS i_note, i.name AS i_name, i.protocol AS i_protocol, i.endpoint AS i_endpoint, ' +
  'i.account_id AS i_account, i.registry AS i_registry, i.entry AS i_entry, i.entry_seq::float8 AS i_seq';

/** The join for a subject_scores row `s`. */
export const IDENTITY_JOIN = 'LEFT JOIN subject_identities i ON i.tid = s.tid AND i.subject = s.subject';

export type IdentityColumns = {
  i_status: string | null;
  i_note: string | null;
  i_name: string | null;
  i_protocol: string | null;
  i_endpoint: string | null;
  i_account: string | null;
  i_registry: string | null;
  i_entry: string | null;
  i_seq: number | null;
};

/** A row's identity; a subject no signal cites a registry for is `uncited`, with its UAID's protocol. */
export function identityOf(row: IdentityColumns, subject: string): SubjectIdentity {
  const proto = parseUaid(subject).proto ?? null;
  return {
    name: row.i_name,
    protocol: row.i_protocol ?? (proto === 'rest' ? 'http' : proto),
    endpoint: row.i_endpoint,
    accountId: row.i_account,
    registry: row.i_registry,
    entry: row.i_entry,
    sequence: row.i_seq,
    status: (row.i_status ?? 'uncited') as IdentityStatus,
    note: row.i_note,
  };
}

/** `q` as an ILIKE pattern: a substring, with the pattern's own characters taken literally. */
export function substringPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
