/**
 * The API's routes: each validates its query with zod (unknown parameters are errors, so a typo is not silently a
 * different question), asks the store one bounded question, and answers in the shapes `hcs25 scores --json` and
 * `hcs25 signals --json` print. The document in schemas/serve-openapi.json describes exactly these.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { entityIdSchema } from '../core/id-schemas.js';
import { messageLinks } from '../config/networks.js';
import { PENDING, type CachedScore } from './cache.js';
import { ApiError, followedTopic, pageLimit, query, subjectParam, type ParamRoute, type Route } from './route-kit.js';
import {
  EXPORT_PARAM_ROUTES,
  EXPORT_ROUTES,
  publisherScore,
  publishersParam,
  subjectChanges,
} from './routes-export.js';
import { BADGE_ROUTES } from './routes-badges.js';
import { HISTORY_ROUTES } from './routes-history.js';

const topicParam = entityIdSchema.optional();
const cursorParam = z
  .string()
  .max(512)
  .regex(/^[A-Za-z0-9_-]+$/, 'an opaque cursor from a previous page (nextCursor)')
  .optional();
// The largest page is the server's (limits); it is checked in pageLimit, so these schemas are built once.
const pageParams = { cursor: cursorParam, limit: z.coerce.number().int().min(1).optional() };

const NO_QUERY = z.strictObject({});
const TOPIC_QUERY = z.strictObject({ topic: topicParam });
const SCORE_QUERY = z.strictObject({ topic: topicParam, publishers: publishersParam.optional() });
const PAGE_QUERY = z.strictObject({ topic: topicParam, ...pageParams });
const protocolParam = z.string().min(1).max(64).optional();
const minScoreParam = z.coerce.number().min(0).max(100).optional();
/** A search: a fragment of a name, UAID, endpoint or HCS-10 account (store/identity.ts). */
const qParam = z.string().min(1).max(200).optional();
const SUBJECTS_QUERY = z.strictObject({
  topic: topicParam,
  publisher: entityIdSchema.optional(),
  protocol: protocolParam,
  minScore: minScoreParam,
  minConfidence: z.coerce.number().min(0).max(1).optional(),
  q: qParam,
  registry: entityIdSchema.optional(),
  basis: z.enum(['evals', 'availability-only', 'none']).optional(),
  evidence: z.enum(['low', 'sufficient']).optional(),
  minEvalObservations: z.coerce.number().int().min(0).max(1_000_000).optional(),
  ...pageParams,
});
/** The live page's filter form: a field left empty is sent empty, and means no filter. */
const blank = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);
const PAGE_QUERY_FILTERS = z.strictObject({
  topic: topicParam,
  q: blank(qParam),
  protocol: blank(protocolParam),
  registry: blank(entityIdSchema.optional()),
  minScore: blank(minScoreParam),
});

let openapi: Buffer | undefined;
/** schemas/serve-openapi.json, read once (it ships in the package beside dist/). */
export function openapiDocument(): Buffer {
  openapi ??= readFileSync(new URL('../../schemas/serve-openapi.json', import.meta.url));
  return openapi;
}

const ROUTES: Readonly<Record<string, Route>> = {
  '/healthz': {
    cache: 'static',
    async handler(ctx) {
      await ctx.store.revision();
      return { json: { status: 'ok' }, cacheControl: 'no-store' };
    },
  },
  '/openapi.json': {
    cache: 'static',
    async handler() {
      return { body: openapiDocument(), cacheControl: 'public, max-age=300' };
    },
  },
  '/': {
    cache: 'revision',
    async handler(ctx, url) {
      const { topic, ...filter } = query(url, PAGE_QUERY_FILTERS);
      return {
        body: await ctx.live.page(followedTopic(ctx, topic), definedOnly(filter)),
        contentType: 'text/html; charset=utf-8',
        headers: LIVE_HEADERS,
      };
    },
  },
  '/live.js': {
    cache: 'static',
    async handler(ctx) {
      return {
        body: ctx.live.script,
        contentType: 'text/javascript; charset=utf-8',
        cacheControl: 'public, max-age=300',
      };
    },
  },
  '/v1/topics': {
    cache: 'revision',
    async handler(ctx, url) {
      query(url, NO_QUERY);
      // The store may still hold a topic an earlier run followed: only the ones this server follows are its.
      const topics = (await ctx.store.topics()).filter((t) => ctx.topics.includes(t.topic));
      return { json: { topics } };
    },
  },
  '/v1/subjects': {
    cache: 'revision',
    async handler(ctx, url) {
      if (url.searchParams.has('updated_since')) return subjectChanges(ctx, url);
      const q = query(url, SUBJECTS_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const page = await ctx.store.listSubjects(
        {
          topic,
          ...(q.publisher !== undefined && { publisher: q.publisher }),
          ...(q.protocol !== undefined && { protocol: q.protocol }),
          ...(q.minScore !== undefined && { minScore: q.minScore }),
          ...(q.minConfidence !== undefined && { minConfidence: q.minConfidence }),
          ...(q.q !== undefined && { q: q.q }),
          ...(q.registry !== undefined && { registry: q.registry }),
          ...(q.basis !== undefined && { basis: q.basis }),
          ...(q.evidence !== undefined && { evidence: q.evidence }),
          ...(q.minEvalObservations !== undefined && { minEvalObservations: q.minEvalObservations }),
        },
        { limit: pageLimit(ctx, q.limit), ...(q.cursor !== undefined && { cursor: q.cursor }) },
      );
      const subjects = page.items.map((row) => ({ ...row.score, identity: row.identity }));
      return { json: { topic, subjects, nextCursor: page.next } };
    },
  },
  '/v1/runs': {
    cache: 'revision',
    async handler(ctx, url) {
      const q = query(url, PAGE_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const page = await ctx.store.runs({
        topic,
        limit: pageLimit(ctx, q.limit),
        ...(q.cursor !== undefined && { cursor: q.cursor }),
      });
      // A run links to its reveal, where the key that verifies it was published.
      const runs = page.items.map(({ reveal, ...run }) => ({
        ...run,
        links: reveal && messageLinks(ctx.network, topic, reveal.sequenceNumber, reveal.consensusTimestamp),
      }));
      return { json: { topic, runs, nextCursor: page.next } };
    },
  },
  ...EXPORT_ROUTES,
};

/** `/v1/subjects/{subject}/score`, `/v1/subjects/{subject}/signals`, `/v1/runs/{run}/verification`. */
const PARAM_ROUTES: readonly ParamRoute[] = [
  {
    pattern: /^\/v1\/subjects\/([^/]+)\/score$/,
    cache: 'content',
    async handler(ctx, url, raw) {
      const subject = subjectParam(raw);
      const q = query(url, SCORE_QUERY);
      const topic = followedTopic(ctx, q.topic);
      if (q.publishers) return publisherScore(ctx, topic, subject, q.publishers);
      const score = scoreAnswer(await ctx.scores.get(topic, subject), topic);
      // The body is one subject of `hcs25 scores --json`; whether newer signals await rescoring is a header.
      return { body: score.body, etag: score.etag, headers: { 'X-Score-Fresh': score.fresh ? 'true' : 'false' } };
    },
  },
  {
    pattern: /^\/v1\/subjects\/([^/]+)\/signals$/,
    cache: 'revision',
    async handler(ctx, url, raw) {
      const subject = subjectParam(raw);
      const q = query(url, PAGE_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const page = await ctx.store.subjectSignals(subject, {
        topic,
        limit: pageLimit(ctx, q.limit),
        ...(q.cursor !== undefined && { cursor: q.cursor }),
      });
      // Rows as `hcs25 signals --json` prints them, with where to see each on the ledger: the topic is said once.
      const signals = page.items.map(({ topic: _topic, ...signal }) => ({
        ...signal,
        links: messageLinks(ctx.network, topic, signal.sequenceNumber, signal.consensusTimestamp),
      }));
      return { json: { topic, subject, signals, nextCursor: page.next } };
    },
  },
  {
    pattern: /^\/v1\/runs\/([0-9A-Za-z]{1,64})\/verification$/,
    cache: 'revision',
    async handler(ctx, url, run) {
      const topic = followedTopic(ctx, query(url, TOPIC_QUERY).topic);
      const verification = await ctx.store.runVerification(topic, run);
      if (!verification) throw new ApiError(404, 'RUN_NOT_FOUND', `no run ${run} on topic ${topic}`);
      return { json: verification };
    },
  },
  ...EXPORT_PARAM_ROUTES,
  ...BADGE_ROUTES,
  ...HISTORY_ROUTES,
];

/** A score lookup's answer, or the API error for a subject with none. */
function scoreAnswer(answer: CachedScore | null | typeof PENDING, topic: string): CachedScore {
  if (answer === null) throw new ApiError(404, 'SUBJECT_NOT_FOUND', `no signals about this subject on topic ${topic}`);
  // Indexed but not scored yet: the indexer scores new subjects within moments.
  if (answer === PENDING)
    throw new ApiError(
      503,
      'SCORE_PENDING',
      'signals about this subject are indexed; its score is being computed, try again',
    );
  return answer;
}

/** The live page may run its one script and talk to this server; nothing else. */
const LIVE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
};

/** The parameters given (exactOptionalPropertyTypes: an absent one is not an `undefined` one). */
function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

export function route(url: URL): Route | undefined {
  const fixed = Object.hasOwn(ROUTES, url.pathname) ? ROUTES[url.pathname] : undefined;
  if (fixed) return fixed;
  for (const r of PARAM_ROUTES) {
    const m = r.pattern.exec(url.pathname);
    if (m) return { cache: r.cache, handler: (ctx, u) => r.handler(ctx, u, m[1]!) };
  }
  return undefined;
}
