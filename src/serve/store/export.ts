/**
 * Reads for sync and export (schemas/serve/010_sync_export.sql): the subjects whose score changed since a position,
 * a topic's signals over a time window, and one subject's signals by payer. Each is bounded: a page, or one subject.
 */
import { z } from 'zod';
import type { SubjectScore } from '../../score/scores.js';
import { currentRevision, hash32, type SignalRow, type SqlContext, toReadSignal } from './context.js';
import { IDENTITY_COLUMNS, IDENTITY_JOIN, type IdentityColumns, identityOf } from './identity.js';
import { decodeCursor, paged, pageLimit } from './paging.js';
import type { ChangedSubject, ServeStore } from './types.js';

export type SqlExportReads = Pick<ServeStore, 'updatedSubjects' | 'topicSignals' | 'subjectSignalsOf'>;

/** A sync position: after this revision, and after this subject within it (null: after all of the revision). */
type Position = [rev: number, subject: string | null];
const positionSchema = z.tuple([z.number().int().min(0), z.string().nullable()]);

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A time as a mirror consensus timestamp (`seconds.nanos`, ten-digit seconds): byte order is time order. */
export function consensusText(at: Date): string {
  const ms = at.getTime();
  const seconds = Math.floor(ms / 1000);
  return `${String(seconds).padStart(10, '0')}.${String((ms - seconds * 1000) * 1_000_000).padStart(9, '0')}`;
}

export function createExportReads(ctx: SqlContext): SqlExportReads {
  const { driver } = ctx;
  return {
    async updatedSubjects(topic, since, limit) {
      const size = pageLimit(limit === undefined ? {} : { limit });
      let after: Position;
      if (typeof since === 'string') after = decodeCursor(since, positionSchema)!;
      else {
        // Read first: a rescoring that commits after it has a larger revision, so the empty answer's token finds it.
        const revision = await currentRevision(driver);
        const [first] = await driver.query<{ rev: number }>(
          `SELECT s.rev::float8 AS rev FROM subject_scores s JOIN topics t USING (tid)
           WHERE t.topic = $1 AND s.score IS NOT NULL AND s.updated_at >= $2
           ORDER BY s.updated_at, s.rev LIMIT 1`,
          [topic, since.toISOString()],
        );
        after = first ? [first.rev - 1, null] : [revision, null];
      }
      const rows = await driver.query<
        { topic: string; subject: string; rev: number; score: SubjectScore } & IdentityColumns
      >(
        `SELECT t.topic, s.subject, s.rev::float8 AS rev, s.score, ${IDENTITY_COLUMNS}
         FROM subject_scores s JOIN topics t USING (tid) ${IDENTITY_JOIN}
         WHERE t.topic = $1 AND s.score IS NOT NULL AND s.rev >= $2
           AND (s.rev > $2 OR ($3::text IS NOT NULL AND s.subject > $3))
         ORDER BY s.rev, s.subject LIMIT $4`,
        [topic, after[0], after[1], size + 1],
      );
      const more = rows.length > size;
      const items: ChangedSubject[] = (more ? rows.slice(0, size) : rows).map((r) => ({
        topic: r.topic,
        subject: r.subject,
        rev: r.rev,
        score: r.score,
        identity: identityOf(r, r.subject),
      }));
      const last = items.at(-1);
      return { items, more, token: encode(last ? [last.rev, last.subject] : after) };
    },

    async topicSignals(topic, { from, to }, page = {}) {
      const limit = pageLimit(page);
      const after = decodeCursor(page.cursor, z.tuple([z.string().regex(/^\d+\.\d+$/), z.number().int()]));
      // Without a cursor: from the window's start, every index of its first message included.
      const [start, idx] = after ?? [consensusText(from), -1];
      const rows = await driver.query<SignalRow>(
        `SELECT s.tid, s.seq::float8 AS seq, s.idx, s.consensus, s.payer, s.message FROM signals s
         WHERE s.tid = (SELECT tid FROM topics WHERE topic = $1)
           AND ((s.consensus COLLATE "C"), s.idx) > ($2::text COLLATE "C", $3::int)
           AND (s.consensus COLLATE "C") < ($4::text COLLATE "C")
         ORDER BY (s.consensus COLLATE "C"), s.idx LIMIT $5`,
        [topic, start, idx, consensusText(to), limit + 1],
      );
      return paged(rows, limit, toReadSignal, (r) => [r.consensus, r.idx]);
    },

    async subjectSignalsOf(topic, subject, publishers) {
      const rows = await driver.query<SignalRow>(
        `SELECT s.tid, s.seq::float8 AS seq, s.idx, s.consensus, s.payer, s.message FROM signals s
         WHERE s.sh = $3 AND s.tid = (SELECT tid FROM topics WHERE topic = $1) AND s.message ->> 'subject' = $2
           AND ($4::text[] IS NULL OR s.payer = ANY ($4::text[]))
         ORDER BY s.seq, s.idx`,
        [topic, subject, hash32(subject), publishers ? [...publishers] : null],
      );
      return rows.map(toReadSignal);
    },
  };
}
