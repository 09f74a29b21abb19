/**
 * Sync, export and publisher routes (docs/serve.md "Sync and export", "Whose reports count"):
 * - `/v1/subjects?updated_since=`: the subjects whose score changed since a time or a sync token, in change order;
 * - `/v1/export/scores` and `/v1/export/signals`: CSV or JSON lines, streamed page by page from the store;
 * - `/v1/subjects/{subject}/score?publishers=` and `/v1/subjects/{subject}/publishers`: scores from chosen
 *   publishers' signals, computed on request (one subject's signals, the one scorer).
 */
import { z } from 'zod';
import { entityIdSchema } from '../core/id-schemas.js';
import { Hcs25Error } from '../core/errors.js';
import { signalRow } from '../read/reader.js';
import { messageLinks, type MessageLinks } from '../config/networks.js';
import type { ReadSignal } from '../read/types.js';
import { csvLine, scoresCsvHeader, scoresCsvRow } from '../report/csv.js';
import { signalOutcome } from '../report/display.js';
import { publisherBreakdown, subjectScoreOf } from './publisher-scores.js';
import {
  ApiError,
  followedTopic,
  pageLimit,
  query,
  subjectParam,
  type ApiContext,
  type ParamRoute,
  type Reply,
  type Route,
} from './route-kit.js';
import { MAX_PAGE, type Page, type SubjectIdentity, type SubjectRow, type SyncPage } from './store/types.js';

/** The longest time window one signal export covers. */
export const MAX_EXPORT_DAYS = 31;
/** Publishers one request may name. */
export const MAX_PUBLISHERS = 20;

const DAY_MS = 86_400_000;
const FORMAT = z.enum(['csv', 'jsonl']);
type Format = z.infer<typeof FORMAT>;
const topicParam = entityIdSchema.optional();
const isoTime = z.iso.datetime({ offset: true });

/** `0.0.2,0.0.9`: distinct entity ids, sorted, at most MAX_PUBLISHERS. */
export const publishersParam = z
  .string()
  .max(MAX_PUBLISHERS * 32)
  .transform((v) => v.split(','))
  .pipe(z.array(entityIdSchema).min(1).max(MAX_PUBLISHERS, `at most ${MAX_PUBLISHERS} publishers`))
  .transform((list) => [...new Set(list)].sort());

const SYNC_QUERY = z.strictObject({
  topic: topicParam,
  updated_since: z.union(
    [
      isoTime,
      z
        .string()
        .max(512)
        .regex(/^[A-Za-z0-9_-]+$/),
    ],
    'an ISO 8601 time (with Z or an offset) or the syncToken of an earlier answer',
  ),
  limit: z.coerce.number().int().min(1).optional(),
});
/** The list filters: a sync client must see every change, so they do not combine with updated_since. */
const NOT_WITH_SYNC = ['publisher', 'protocol', 'minScore', 'minConfidence', 'cursor'];

const SCORES_EXPORT_QUERY = z.strictObject({ format: FORMAT, topic: topicParam });
const SIGNALS_EXPORT_QUERY = z.strictObject({ format: FORMAT, from: isoTime, to: isoTime, topic: topicParam });
const PUBLISHERS_QUERY = z.strictObject({ topic: topicParam });

const CONTENT_TYPES: Record<Format, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/** `/v1/subjects?updated_since=…` (routes.ts sends it here when that parameter is given). */
export async function subjectChanges(ctx: ApiContext, url: URL): Promise<Reply> {
  for (const name of NOT_WITH_SYNC) {
    if (url.searchParams.has(name))
      throw new ApiError(400, 'BAD_QUERY', `query parameter "${name}" cannot be combined with updated_since`);
  }
  const q = query(url, SYNC_QUERY);
  const topic = followedTopic(ctx, q.topic);
  const time = isoTime.safeParse(q.updated_since);
  let page: SyncPage;
  try {
    page = await ctx.store.updatedSubjects(
      topic,
      time.success ? new Date(time.data) : q.updated_since,
      pageLimit(ctx, q.limit),
    );
  } catch (err) {
    if (err instanceof Hcs25Error && err.code === 'USAGE')
      throw new ApiError(400, 'BAD_QUERY', 'query parameter "updated_since": not a syncToken this server gave out');
    throw err;
  }
  return {
    json: {
      topic,
      subjects: page.items.map((c) => ({ ...c.score, identity: c.identity })),
      nextCursor: page.more ? page.token : null,
      syncToken: page.token,
    },
  };
}

/** Who a subject with signals on the topic is (the store has a row for every such subject). */
async function identityOf(ctx: ApiContext, topic: string, subject: string): Promise<SubjectIdentity | undefined> {
  return (await ctx.store.subjectScore(subject, { topic }))?.identity;
}

/** `/v1/subjects/{subject}/score?publishers=…` (routes.ts sends it here when that parameter is given): not cached. */
export async function publisherScore(
  ctx: ApiContext,
  topic: string,
  subject: string,
  publishers: readonly string[],
): Promise<Reply> {
  const signals = await ctx.store.subjectSignalsOf(topic, subject, publishers);
  const score =
    signals.length === 0 ? null : subjectScoreOf(signals, { scoring: ctx.scoring, now: new Date(), topic }, publishers);
  if (!score)
    throw new ApiError(
      404,
      'SUBJECT_NOT_FOUND',
      `no signals from these publishers about this subject on topic ${topic}`,
    );
  return {
    json: { ...score, identity: await identityOf(ctx, topic, subject) },
    cacheControl: 'no-cache',
    // Computed now from every stored signal of those publishers: nothing awaits rescoring.
    headers: { 'X-Score-Fresh': 'true', 'X-Score-Publishers': publishers.join(',') },
  };
}

export const EXPORT_ROUTES: Readonly<Record<string, Route>> = {
  '/v1/export/scores': {
    cache: 'revision',
    async handler(ctx, url) {
      const q = query(url, SCORES_EXPORT_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const pages = paging((cursor) =>
        ctx.store.listSubjects({ topic }, { limit: MAX_PAGE, ...(cursor !== null && { cursor }) }),
      );
      const first = await pages.next();
      return download(q.format, `hcs25-scores-${topic}.${q.format}`, scoreLines(q.format, first.value ?? [], pages));
    },
  },
  '/v1/export/signals': {
    cache: 'revision',
    async handler(ctx, url) {
      const q = query(url, SIGNALS_EXPORT_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const from = new Date(q.from);
      const to = new Date(q.to);
      if (to.getTime() <= from.getTime()) throw new ApiError(400, 'BAD_QUERY', '"to" must be after "from"');
      if (to.getTime() - from.getTime() > MAX_EXPORT_DAYS * DAY_MS)
        throw new ApiError(400, 'BAD_QUERY', `the window from "from" to "to" is at most ${MAX_EXPORT_DAYS} days`);
      const pages = paging((cursor) =>
        ctx.store.topicSignals(topic, { from, to }, { limit: MAX_PAGE, ...(cursor !== null && { cursor }) }),
      );
      const first = await pages.next();
      const name = `hcs25-signals-${topic}-${compactTime(from)}-${compactTime(to)}.${q.format}`;
      const links = (s: ReadSignal) => messageLinks(ctx.network, topic, s.sequenceNumber, s.consensusTimestamp);
      return download(q.format, name, signalLines(q.format, first.value ?? [], pages, links));
    },
  },
};

export const EXPORT_PARAM_ROUTES: readonly ParamRoute[] = [
  {
    pattern: /^\/v1\/subjects\/([^/]+)\/publishers$/,
    cache: 'revision',
    async handler(ctx, url, raw) {
      const subject = subjectParam(raw);
      const topic = followedTopic(ctx, query(url, PUBLISHERS_QUERY).topic);
      const signals = await ctx.store.subjectSignalsOf(topic, subject);
      if (signals.length === 0)
        throw new ApiError(404, 'SUBJECT_NOT_FOUND', `no signals about this subject on topic ${topic}`);
      const publishers = publisherBreakdown(signals, { scoring: ctx.scoring, now: new Date(), topic });
      return { json: { topic, subject, identity: await identityOf(ctx, topic, subject), publishers } };
    },
  },
];

/** The store's pages one after another: the first is read before the answer starts (a failing store is a 503). */
async function* paging<T>(read: (cursor: string | null) => Promise<Page<T>>): AsyncGenerator<T[], void> {
  let cursor: string | null = null;
  do {
    const page: Page<T> = await read(cursor);
    yield page.items;
    cursor = page.next;
  } while (cursor !== null);
}

function download(format: Format, filename: string, stream: AsyncIterable<string>): Reply {
  return {
    stream,
    contentType: CONTENT_TYPES[format],
    headers: { 'Content-Disposition': `attachment; filename="${filename}"` },
  };
}

/**
 * Scores: CSV with the columns of `hcs25 scores --csv` (rank is the place in this file: score, then subject), or one
 * subject of `hcs25 scores --json` per line.
 */
type ListedScore = Pick<SubjectRow, 'score' | 'identity'>;

async function* scoreLines(
  format: Format,
  first: ReadonlyArray<ListedScore>,
  rest: AsyncIterable<ReadonlyArray<ListedScore>>,
): AsyncGenerator<string> {
  const adapterIds = first[0]?.score.adapters.map((a) => a.adapterId) ?? [];
  if (format === 'csv') yield scoresCsvHeader(adapterIds);
  let rank = 0;
  for await (const rows of prepend(first, rest)) {
    yield rows
      .map(({ score, identity }) =>
        format === 'csv'
          ? // The name column: the registry entry's name, as the page shows it.
            scoresCsvRow({ ...score, ...(identity.name !== null && { label: identity.name }) }, ++rank, adapterIds)
          : // As the score route answers it: the subject of `hcs25 scores --json` with its identity.
            `${JSON.stringify({ ...score, identity })}\n`,
      )
      .join('');
  }
}

/** The signals CSV columns (docs/serve.md); `data` is the signal's data object as JSON. */
export const SIGNAL_CSV_COLUMNS = [
  'sequence_number',
  'index',
  'consensus_timestamp',
  'consensus_at',
  'payer',
  'subject',
  'run',
  'signal',
  'version',
  'status',
  'outcome',
  'reason',
  'latency_ms',
  'fetched_at',
  'data',
] as const;

/**
 * Signals: CSV (SIGNAL_CSV_COLUMNS) or, per line, a `hcs25 signals --json` row with its `links` as the signals route
 * answers it; in consensus order.
 */
async function* signalLines(
  format: Format,
  first: readonly ReadSignal[],
  rest: AsyncIterable<readonly ReadSignal[]>,
  links: (s: ReadSignal) => MessageLinks,
): AsyncGenerator<string> {
  if (format === 'csv') yield csvLine(SIGNAL_CSV_COLUMNS);
  for await (const rows of prepend(first, rest)) {
    yield rows
      .map((s) => (format === 'csv' ? signalCsvRow(s) : `${JSON.stringify({ ...signalRow(s), links: links(s) })}\n`))
      .join('');
  }
}

function signalCsvRow(s: ReadSignal): string {
  const m = s.message;
  const outcome = signalOutcome(m);
  return csvLine([
    s.sequenceNumber,
    s.index,
    s.consensusTimestamp,
    s.consensusAt,
    s.payerAccountId,
    m.subject,
    m.run,
    m.signal,
    m.v,
    m.status,
    outcome.word,
    outcome.reason ?? null,
    m.data.latencyMs,
    m.fetchedAt,
    JSON.stringify(m.data),
  ]);
}

async function* prepend<T>(first: T, rest: AsyncIterable<T>): AsyncGenerator<T> {
  yield first;
  yield* rest;
}

/** 2026-11-21T10:00:00.000Z → 20261121T100000Z (a file name). */
function compactTime(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;
}
