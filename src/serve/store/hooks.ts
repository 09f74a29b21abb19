/**
 * The webhook part of the SQL store (migration 009; the interface is in hook-types.ts): hooks, the delivery queue and
 * its log, and the comparison of rescored subjects with what the alerting saw of them last. Times are the caller's
 * (`now`, `at`), never the database's, so a queue can be driven by a test's clock.
 */
import { Hcs25Error } from '../../core/errors.js';
import { currentRevision, hash32, iso, type SqlContext } from './context.js';
import type {
  DueDelivery,
  HookAttempt,
  HookDeliveryCounts,
  HookDeliveryState,
  HookEvent,
  HookStore,
  StoredHook,
  SubjectChange,
} from './hook-types.js';
import { DEFAULT_PAGE, MAX_PAGE, type Page, type PageOptions, type SqlExecutor } from './types.js';

/** The availability signal id (v1 and v2 alike): its `data.reachable` is a subject's availability. */
const PROBE_SIGNAL = 'availability.probe';
/** Rescored subjects compared per call (whole revisions: one larger revision is taken at once). */
const DEFAULT_CHANGES = 2000;

interface HookRow extends Record<string, unknown> {
  id: string;
  url: string;
  events: HookEvent[];
  thresholds: number[] | null;
  subjects: string[] | null;
  topic: string | null;
  created_at: Date | string;
}

const HOOK_COLUMNS = 'id, url, events, thresholds, subjects, topic, created_at';

function toHook(r: HookRow): StoredHook {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    thresholds: r.thresholds,
    subjects: r.subjects,
    topic: r.topic,
    createdAt: iso(r.created_at),
  };
}

export function createHookStore(ctx: SqlContext): HookStore {
  const { driver } = ctx;
  return {
    async createHook(hook) {
      const [row] = await ctx.written(
        driver.query<HookRow>(
          `INSERT INTO hooks (id, url, secret, events, thresholds, subjects, topic, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${HOOK_COLUMNS}`,
          [
            hook.id,
            hook.url,
            hook.secret,
            hook.events,
            hook.thresholds,
            hook.subjects,
            hook.topic,
            hook.createdAt.toISOString(),
          ],
        ),
      );
      return toHook(row!);
    },

    async hookCount() {
      const [row] = await driver.query<{ n: number }>('SELECT count(*)::int AS n FROM hooks');
      return row!.n;
    },

    async hooks(page: PageOptions = {}) {
      const limit = pageLimit(page);
      const after = decodeKey(page.cursor);
      const rows = await driver.query<HookRow & { n: number }>(
        `SELECT ${HOOK_COLUMNS}, n FROM hooks WHERE $1::int IS NULL OR n > $1 ORDER BY n LIMIT $2`,
        [after?.[0] ?? null, limit + 1],
      );
      return paged(rows, limit, toHook, (r) => [r.n]);
    },

    async hook(id) {
      const [row] = await driver.query<HookRow>(`SELECT ${HOOK_COLUMNS} FROM hooks WHERE id = $1`, [id]);
      if (!row) return null;
      const counts = await driver.query<{ state: HookDeliveryState; n: number }>(
        'SELECT state, count(*)::int AS n FROM hook_deliveries WHERE hook = $1 GROUP BY state',
        [id],
      );
      const deliveries: HookDeliveryCounts = { pending: 0, delivered: 0, failed: 0 };
      for (const c of counts) deliveries[c.state] = c.n;
      return { ...toHook(row), deliveries };
    },

    async deleteHook(id) {
      const rows = await ctx.written(driver.query('DELETE FROM hooks WHERE id = $1 RETURNING id', [id]));
      return rows.length > 0;
    },

    async hookAttempts(id, page: PageOptions = {}) {
      const limit = pageLimit(page);
      const after = decodeKey(page.cursor);
      const rows = await driver.query<{
        n: number;
        delivery: string;
        event: HookEvent;
        topic: string;
        subject: string;
        attempt: number;
        at: Date | string;
        status: number | null;
        error: string | null;
        ok: boolean;
        state: HookDeliveryState;
      }>(
        `SELECT a.n::float8 AS n, d.id AS delivery, d.event, d.topic, d.subject, a.attempt, a.at, a.status, a.error,
           a.ok, d.state
         FROM hook_attempts a JOIN hook_deliveries d ON d.n = a.delivery
         WHERE a.hook = $1 AND ($2::bigint IS NULL OR a.n < $2)
         ORDER BY a.n DESC LIMIT $3`,
        [id, after?.[0] ?? null, limit + 1],
      );
      return paged(
        rows,
        limit,
        ({ n: _n, at, ...r }): HookAttempt => ({ ...r, at: iso(at) }),
        (r) => [r.n],
      );
    },

    async queueHookDeliveries(plan, { now, limit = DEFAULT_CHANGES }) {
      // Asked every second or so: when nothing was rescored since, one read answers, and no write is counted (the
      // sole writer's shortcuts stay valid).
      const [meta] = await driver.query<{ seen: number; current: number }>(
        `SELECT max(value) FILTER (WHERE key = 'hooks_revision')::float8 AS seen,
           max(value) FILTER (WHERE key = 'revision')::float8 AS current FROM serve_meta`,
      );
      if (meta!.current <= meta!.seen) return { changes: 0, queued: 0, more: false };
      return ctx.written(
        driver.transaction(async (tx) => {
          // The row lock serialises callers; the revision read is committed, and revisions commit in order, so every
          // subject rescored at or before it is visible.
          const [cursorRow] = await tx.query<{ value: number }>(
            "SELECT value::float8 AS value FROM serve_meta WHERE key = 'hooks_revision' FOR UPDATE",
          );
          const from = cursorRow!.value;
          const current = await currentRevision(tx);
          if (current <= from) return { changes: 0, queued: 0, more: false };
          const [cut] = await tx.query<{ rev: number }>(
            `SELECT rev::float8 AS rev FROM subject_scores WHERE rev > $1 AND rev <= $2 ORDER BY rev OFFSET $3 LIMIT 1`,
            [from, current, limit],
          );
          // Whole revisions only: the cursor is a revision.
          const upto = cut === undefined ? current : cut.rev - 1 > from ? cut.rev - 1 : cut.rev;
          const changes = await changedSubjects(tx, from, upto);
          let queued = 0;
          if (changes.length > 0) {
            const hooks = (await tx.query<HookRow>(`SELECT ${HOOK_COLUMNS} FROM hooks ORDER BY n`)).map(toHook);
            const deliveries = hooks.length > 0 ? plan(changes, hooks) : [];
            if (deliveries.length > 0) {
              await tx.query(
                `INSERT INTO hook_deliveries (id, hook, event, topic, subject, body, state, next_at, created_at)
                 SELECT d.id, d.hook, d.event, d.topic, d.subject, d.body, 'pending', $7, $7
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                   AS d(id, hook, event, topic, subject, body)
                 JOIN hooks h ON h.id = d.hook`,
                [
                  deliveries.map((d) => d.id),
                  deliveries.map((d) => d.hook),
                  deliveries.map((d) => d.event),
                  deliveries.map((d) => d.topic),
                  deliveries.map((d) => d.subject),
                  deliveries.map((d) => d.body),
                  now.toISOString(),
                ],
              );
              queued = deliveries.length;
            }
            await tx.query(
              `INSERT INTO hook_subject_state (tid, subject, total, reachable)
               SELECT t.tid, k.subject, k.total, k.reachable
               FROM unnest($1::text[], $2::text[], $3::float8[], $4::boolean[]) AS k(topic, subject, total, reachable)
               JOIN topics t ON t.topic = k.topic
               ON CONFLICT (tid, subject) DO UPDATE SET total = excluded.total,
                 reachable = coalesce(excluded.reachable, hook_subject_state.reachable)`,
              [
                changes.map((c) => c.topic),
                changes.map((c) => c.subject),
                changes.map((c) => c.total),
                changes.map((c) => c.reachable),
              ],
            );
          }
          await tx.query("UPDATE serve_meta SET value = $1 WHERE key = 'hooks_revision'", [upto]);
          return { changes: changes.length, queued, more: upto < current };
        }),
      );
    },

    async dueHookDeliveries(now, limit) {
      const rows = await driver.query<DueDelivery & Record<string, unknown>>(
        `SELECT d.n::float8 AS n, d.id, d.hook, h.url, h.secret, d.event, d.body, d.attempts
         FROM hook_deliveries d JOIN hooks h ON h.id = d.hook
         WHERE d.state = 'pending' AND d.next_at <= $1
         ORDER BY d.next_at, d.n LIMIT $2`,
        [now.toISOString(), limit],
      );
      return rows;
    },

    async recordHookAttempt(n, result) {
      const state: HookDeliveryState = result.ok ? 'delivered' : result.nextAt === null ? 'failed' : 'pending';
      await ctx.written(
        driver.transaction(async (tx) => {
          // A hook deleted meanwhile took its deliveries with it: then nothing is logged.
          await tx.query(
            `INSERT INTO hook_attempts (delivery, hook, attempt, at, status, error, ok)
             SELECT n, hook, $2, $3, $4, $5, $6 FROM hook_deliveries WHERE n = $1`,
            [n, result.attempt, result.at.toISOString(), result.status, result.error, result.ok],
          );
          await tx.query('UPDATE hook_deliveries SET state = $2, attempts = $3, next_at = $4 WHERE n = $1', [
            n,
            state,
            result.attempt,
            state === 'pending' ? result.nextAt!.toISOString() : null,
          ]);
        }),
      );
    },

    async nextHookDelivery() {
      const [row] = await driver.query<{ at: Date | string | null }>(
        "SELECT min(next_at) AS at FROM hook_deliveries WHERE state = 'pending'",
      );
      return row?.at == null ? null : new Date(row.at);
    },

    async pruneHookDeliveries(before) {
      const rows = await ctx.written(
        driver.query("DELETE FROM hook_deliveries WHERE state <> 'pending' AND created_at < $1 RETURNING n", [
          before.toISOString(),
        ]),
      );
      return rows.length;
    },
  };
}

/**
 * Subjects rescored in (from, upto], with what was seen of them last and their latest probe's `reachable` (looked up
 * through the subject-hash index, newest first: one row read per subject while it is probed).
 */
async function changedSubjects(tx: SqlExecutor, from: number, upto: number): Promise<SubjectChange[]> {
  const scored = await tx.query<{ tid: number; topic: string; subject: string; total: number | null; rev: number }>(
    `SELECT s.tid, t.topic, s.subject, s.total, s.rev::float8 AS rev
     FROM subject_scores s JOIN topics t USING (tid) WHERE s.rev > $1 AND s.rev <= $2`,
    [from, upto],
  );
  if (scored.length === 0) return [];
  const seen = await tx.query<{
    i: number;
    known: boolean;
    total: number | null;
    reachable: boolean | null;
    probe: boolean | null;
  }>(
    `SELECT k.i, h.subject IS NOT NULL AS known, h.total, h.reachable,
       (SELECT (g.message -> 'data' ->> 'reachable')::boolean FROM signals g
        WHERE g.sh = k.sh AND g.tid = k.tid AND g.message ->> 'subject' = k.subject AND g.message ->> 'signal' = $4
        ORDER BY g.sh DESC, g.tid DESC, g.seq DESC, g.idx DESC LIMIT 1) AS probe
     FROM unnest($1::int[], $2::text[], $3::int[]) WITH ORDINALITY AS k(tid, subject, sh, i)
     LEFT JOIN hook_subject_state h ON h.tid = k.tid AND h.subject = k.subject`,
    [scored.map((r) => r.tid), scored.map((r) => r.subject), scored.map((r) => hash32(r.subject)), PROBE_SIGNAL],
  );
  const out: SubjectChange[] = [];
  for (const s of seen) {
    const r = scored[Number(s.i) - 1]!;
    out.push({
      topic: r.topic,
      subject: r.subject,
      revision: r.rev,
      previousTotal: s.known ? s.total : null,
      total: r.total,
      previousReachable: s.known ? s.reachable : null,
      reachable: s.probe,
    });
  }
  return out;
}

function pageLimit(page: PageOptions): number {
  const limit = page.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1)
    throw new Hcs25Error('USAGE', `limit must be an integer from 1 to ${MAX_PAGE}`);
  return Math.min(limit, MAX_PAGE);
}

/** Keyset paging over a key of numbers and strings, as an opaque base64url cursor. */
function paged<R, T>(rows: R[], limit: number, map: (row: R) => T, key: (row: R) => Array<number | string>): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return {
    items: items.map(map),
    next: more ? Buffer.from(JSON.stringify(key(items[items.length - 1]!))).toString('base64url') : null,
  };
}

function decodeKey(cursor: string | undefined): Array<number | string> | undefined {
  if (cursor === undefined) return undefined;
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(key) && key.length > 0 && key.every((k) => typeof k === 'number' || typeof k === 'string'))
      return key as Array<number | string>;
  } catch {
    // Reported below.
  }
  throw new Hcs25Error('USAGE', 'the page cursor is not one this list gave out', {
    hint: 'pass the `next` value of the previous page unchanged',
  });
}
