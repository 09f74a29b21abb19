/**
 * What every route module shares: the context a handler gets, the reply it gives, the API's error, and the checks of
 * a request's query, subject and topic (unknown or repeated parameters are errors, so a typo is not silently a
 * different question).
 */
import type { z } from 'zod';
import type { ScoringConfig } from '../score/scoring-config.js';
import type { ScoreCache } from './cache.js';
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
  /** The network the topics are on, for the links of signals and runs (HashScan, mirror node); null links without. */
  network?: { ledger: string; mirrorRestUrl?: string };
  /** The clock time windows end at (default: the system clock; tests fix it). */
  now?: () => Date;
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
  /** A body written as it is produced (exports): no Content-Length, never held whole. */
  stream?: AsyncIterable<string>;
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

export interface Route {
  /**
   * `revision`: a strong ETag from the store revision; `content`: the reply names its own ETag (an unchanged answer
   * keeps it across revisions); `static`: the answer never changes while the server runs.
   */
  cache: 'revision' | 'content' | 'static';
  handler: (ctx: ApiContext, url: URL) => Promise<Reply>;
}

const MAX_SUBJECT_LENGTH = 1024;

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
  const name = String(issue.path[0] ?? '');
  if (name !== '' && !Object.hasOwn(seen, name))
    throw new ApiError(400, 'BAD_QUERY', `query parameter ${printableName(name)} is required`);
  throw new ApiError(400, 'BAD_QUERY', `query parameter ${printableName(name)}: ${issue.message}`);
}

/** A name from the request, shown in an error: short, and JSON-quoted so no control character passes. */
function printableName(name: string): string {
  return JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
}

export function subjectParam(raw: string): string {
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
export function followedTopic(ctx: ApiContext, topic: string | undefined): string {
  if (topic === undefined) return ctx.topics[0]!;
  if (!ctx.topics.includes(topic))
    throw new ApiError(404, 'TOPIC_NOT_FOLLOWED', `topic ${topic} is not followed by this server`);
  return topic;
}

export interface ParamRoute {
  pattern: RegExp;
  cache: Route['cache'];
  handler: (ctx: ApiContext, url: URL, param: string) => Promise<Reply>;
}
