/**
 * The API's routes: each validates its query with zod (unknown parameters are errors, so a typo is not silently a
 * different question), asks the store one bounded question, and answers in the shapes `hcs25 scores --json` and
 * `hcs25 signals --json` print. The document in schemas/serve-openapi.json describes exactly these.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ScoringConfig } from '../score/scoring-config.js';
import { entityIdSchema } from '../core/id-schemas.js';
import { PENDING, type CachedScore, type ScoreCache } from './cache.js';
import type { ServeLimits } from './limits.js';
import type { ServeStore } from './store/types.js';
import type { LivePage } from './live.js';

export interface ApiContext {
  store: ServeStore;
  /** The topics this server follows, in the order given; the first is the default of the live page. */
  topics: readonly string[];
  publishers: readonly string[];
  scoring: ScoringConfig;
  limits: ServeLimits;
  live: LivePage;
  /** Score answers (kept current by ServeEvents). */
  scores: ScoreCache;
  /** Store failures (the client only sees a 503). */
  onError?: (err: unknown) => void;
}

export interface Reply {
  status?: number;
  json?: unknown;
  body?: string | Buffer;
  contentType?: string;
  /** A strong ETag that names the body itself (routes whose cache is `content`). */
  etag?: string;
  cacheControl?: string;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Route {
  /**
   * `revision`: a strong ETag from the store revision; `content`: the reply names its own ETag (an unchanged answer
   * keeps it across revisions); `static`: the answer never changes while the server runs.
   */
  cache: 'revision' | 'content' | 'static';
  handler: (ctx: ApiContext, url: URL) => Promise<Reply>;
}

const MAX_SUBJECT_LENGTH = 1024;

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
const PAGE_QUERY = z.strictObject({ topic: topicParam, ...pageParams });
const SUBJECTS_QUERY = z.strictObject({
  topic: topicParam,
  publisher: entityIdSchema.optional(),
  protocol: z.string().min(1).max(64).optional(),
  minScore: z.coerce.number().min(0).max(100).optional(),
  minConfidence: z.coerce.number().min(0).max(1).optional(),
  ...pageParams,
});

export function pageLimit(ctx: Pick<ApiContext, 'limits'>, limit: number | undefined): number {
  if (limit === undefined) return ctx.limits.defaultPageSize;
  if (limit > ctx.limits.maxPageSize)
    throw new ApiError(400, 'BAD_QUERY', `query parameter "limit": at most ${ctx.limits.maxPageSize}`);
  return limit;
}

/** The query as an object, each parameter once: repeating one is ambiguous, so it is an error. */
export function query<T extends z.ZodObject>(url: URL, schema: T): z.output<T> {
  const seen: Record<string, string> = {};
  for (const [k, v] of url.searchParams) {
    if (Object.hasOwn(seen, k))
      throw new ApiError(400, 'BAD_QUERY', `query parameter ${printableName(k)} is given more than once`);
    seen[k] = v;
  }
  const parsed = schema.safeParse(seen);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    throw new ApiError(
      400,
      'BAD_QUERY',
      `unknown query parameter ${printableName(issue.keys[0] ?? '')}; known: ${Object.keys(schema.shape).join(', ') || 'none'}`,
    );
  }
  throw new ApiError(
    400,
    'BAD_QUERY',
    `query parameter ${printableName(String(issue.path[0] ?? ''))}: ${issue.message}`,
  );
}

/** A name from the request, shown in an error: short, and JSON-quoted so no control character passes. */
function printableName(name: string): string {
  return JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
}

function subjectParam(raw: string): string {
  let subject: string;
  try {
    subject = decodeURIComponent(raw);
  } catch {
    throw new ApiError(400, 'BAD_SUBJECT', 'the subject is not valid percent-encoding');
  }
  if (subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH)
    throw new ApiError(400, 'BAD_SUBJECT', `a subject is 1 to ${MAX_SUBJECT_LENGTH} characters`);
  return subject;
}

/** The topic a question is about: the one asked for (it must be followed), else the first followed topic. */
function followedTopic(ctx: ApiContext, topic: string | undefined): string {
  if (topic === undefined) return ctx.topics[0]!;
  if (!ctx.topics.includes(topic))
    throw new ApiError(404, 'TOPIC_NOT_FOLLOWED', `topic ${topic} is not followed by this server`);
  return topic;
}

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
      const { topic } = query(url, TOPIC_QUERY);
      return {
        body: await ctx.live.page(followedTopic(ctx, topic)),
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
      return { json: { topics: await ctx.store.topics() } };
    },
  },
  '/v1/subjects': {
    cache: 'revision',
    async handler(ctx, url) {
      const q = query(url, SUBJECTS_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const page = await ctx.store.listSubjects(
        {
          topic,
          ...(q.publisher !== undefined && { publisher: q.publisher }),
          ...(q.protocol !== undefined && { protocol: q.protocol }),
          ...(q.minScore !== undefined && { minScore: q.minScore }),
          ...(q.minConfidence !== undefined && { minConfidence: q.minConfidence }),
        },
        { limit: pageLimit(ctx, q.limit), ...(q.cursor !== undefined && { cursor: q.cursor }) },
      );
      return { json: { topic, subjects: page.items.map((row) => row.score), nextCursor: page.next } };
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
      return { json: { topic, runs: page.items, nextCursor: page.next } };
    },
  },
};

interface ParamRoute {
  pattern: RegExp;
  cache: Route['cache'];
  handler: (ctx: ApiContext, url: URL, param: string) => Promise<Reply>;
}

/** `/v1/subjects/{subject}/score`, `/v1/subjects/{subject}/signals`, `/v1/runs/{run}/verification`. */
const PARAM_ROUTES: readonly ParamRoute[] = [
  {
    pattern: /^\/v1\/subjects\/([^/]+)\/score$/,
    cache: 'content',
    async handler(ctx, url, raw) {
      const subject = subjectParam(raw);
      const topic = followedTopic(ctx, query(url, TOPIC_QUERY).topic);
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
      // Rows exactly as `hcs25 signals --json` prints them: the topic is said once, beside them.
      const signals = page.items.map(({ topic: _topic, ...signal }) => signal);
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
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
};

export function route(url: URL): Route | undefined {
  const fixed = Object.hasOwn(ROUTES, url.pathname) ? ROUTES[url.pathname] : undefined;
  if (fixed) return fixed;
  for (const r of PARAM_ROUTES) {
    const m = r.pattern.exec(url.pathname);
    if (m) return { cache: r.cache, handler: (ctx, u) => r.handler(ctx, u, m[1]!) };
  }
  return undefined;
}
