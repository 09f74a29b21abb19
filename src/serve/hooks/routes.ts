/**
 * The webhook admin API under /v1/hooks: register, list, show, delete, and read a hook's delivery log. Every request
 * carries the operator's admin token (`Authorization: Bearer …`, compared in constant time); a server started without
 * one answers 404 here, as for any endpoint it does not have (the feature is off, no credential would change that).
 * These answers never carry CORS headers (http.ts), so no web page can call them from a browser.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { z } from 'zod';
import { Hcs25Error } from '../../core/errors.js';
import type { Secret } from '../../config/secret.js';
import { entityIdSchema } from '../../core/id-schemas.js';
import { bareHost, isNonPublicAddress, systemResolver, type Resolver } from '../../net/guard.js';
import { TransportError, parseHttpUrl } from '../../net/http-client.js';
import { sendError } from '../headers.js';
import type { ServeLimits } from '../limits.js';
import { ApiError, pageLimit, query } from '../route-kit.js';
import { HOOK_EVENTS, type HookStore } from '../store/hook-types.js';

export interface HookApiOptions {
  store: HookStore;
  /** The operator's admin token; never printed. */
  token: Secret;
  /** Topics this server follows: a hook's topic must be one of them. */
  topics: readonly string[];
  /** Receivers on loopback and private addresses may be registered (`--allow-private-hooks`). */
  allowPrivate: boolean;
  limits: ServeLimits;
  /** Injected DNS (tests). */
  resolver?: Resolver;
  /** Hooks one server keeps at most. */
  maxHooks?: number;
  /** A hook was registered (the dispatcher may look for work). */
  onChange?: () => void;
}

/** Handles one request to /v1/hooks…; the caller has checked the path, the rate and the URL. */
export type HookApi = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

export const MAX_HOOK_BODY_BYTES = 16 * 1024;
const DEFAULT_MAX_HOOKS = 100;

const pageQuery = z.strictObject({
  cursor: z
    .string()
    .max(512)
    .regex(/^[A-Za-z0-9_-]+$/, 'an opaque cursor from a previous page (nextCursor)')
    .optional(),
  limit: z.coerce.number().int().min(1).optional(),
});

const hookBody = z
  .strictObject({
    url: z.string().min(1).max(2048),
    events: z
      .array(z.enum(HOOK_EVENTS))
      .min(1)
      .max(HOOK_EVENTS.length)
      .refine((e) => new Set(e).size === e.length, 'each event once'),
    thresholds: z.array(z.number().min(0).max(100)).min(1).max(10).optional(),
    subjects: z.array(z.string().min(1).max(1024)).min(1).max(100).optional(),
    topic: entityIdSchema.optional(),
  })
  .refine((b) => b.events.includes('score-crossed') === (b.thresholds !== undefined), {
    message: '"score-crossed" takes thresholds, and thresholds are only for "score-crossed"',
    path: ['thresholds'],
  });

export function isHookPath(target: string): boolean {
  return target === '/v1/hooks' || target.startsWith('/v1/hooks/') || target.startsWith('/v1/hooks?');
}

/** The API, or one that answers 404 when no admin token is configured. */
export function hookApi(options: HookApiOptions | undefined): HookApi {
  if (!options)
    return async (_req, res) =>
      sendError(res, 404, 'NOT_FOUND', 'webhooks are not enabled on this server (it has no admin token)');
  const expected = digest(options.token.reveal());
  return async (req, res, url) => {
    try {
      const { methods, run } = resolve(options, url);
      if (!methods.includes(req.method ?? '')) {
        res.setHeader('Allow', methods.join(', '));
        throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${req.method ?? '?'} is not allowed here`);
      }
      if (!authorized(req.headers.authorization, expected)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="hcs25 serve admin"');
        throw new ApiError(401, 'UNAUTHORIZED', 'this endpoint needs the admin token (Authorization: Bearer …)');
      }
      const reply = await run(req);
      res.setHeader('Cache-Control', 'no-store');
      for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
      if (reply.json === undefined) {
        res.writeHead(reply.status).end();
        return;
      }
      const body = Buffer.from(`${JSON.stringify(reply.json)}\n`);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', body.length);
      res.writeHead(reply.status).end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      if (err instanceof ApiError) {
        // The rest of an oversized body is not read: the connection cannot carry another request.
        if (err.status === 413) res.setHeader('Connection', 'close');
        return sendError(res, err.status, err.code, err.message);
      }
      // A page cursor the store could not read is the client's mistake.
      if (err instanceof Hcs25Error && err.code === 'USAGE') return sendError(res, 400, 'BAD_QUERY', err.message);
      throw err;
    }
  };
}

interface HookReply {
  status: number;
  json?: unknown;
  headers?: Record<string, string>;
}

function resolve(
  options: HookApiOptions,
  url: URL,
): { methods: string[]; run: (req: IncomingMessage) => Promise<HookReply> } {
  const { store } = options;
  if (url.pathname === '/v1/hooks')
    return {
      methods: ['GET', 'HEAD', 'POST'],
      async run(req) {
        if (req.method === 'POST') return create(options, url, req);
        const q = query(url, pageQuery);
        const page = await store.hooks({
          limit: pageLimit(options, q.limit),
          ...(q.cursor !== undefined && { cursor: q.cursor }),
        });
        return { status: 200, json: { hooks: page.items, nextCursor: page.next } };
      },
    };
  const m = /^\/v1\/hooks\/([A-Za-z0-9_-]{1,64})(\/deliveries)?$/.exec(url.pathname);
  if (!m) throw new ApiError(404, 'NOT_FOUND', 'no such endpoint (see /openapi.json)');
  const id = m[1]!;
  if (m[2])
    return {
      methods: ['GET', 'HEAD'],
      async run() {
        const q = query(url, pageQuery);
        if (!(await store.hook(id))) throw notFound(id);
        const page = await store.hookAttempts(id, {
          limit: pageLimit(options, q.limit),
          ...(q.cursor !== undefined && { cursor: q.cursor }),
        });
        return { status: 200, json: { hook: id, deliveries: page.items, nextCursor: page.next } };
      },
    };
  return {
    methods: ['GET', 'HEAD', 'DELETE'],
    async run(req) {
      query(url, z.strictObject({}));
      if (req.method === 'DELETE') {
        if (!(await store.deleteHook(id))) throw notFound(id);
        return { status: 204 };
      }
      const hook = await store.hook(id);
      if (!hook) throw notFound(id);
      return { status: 200, json: hook };
    },
  };
}

async function create(options: HookApiOptions, url: URL, req: IncomingMessage): Promise<HookReply> {
  query(url, z.strictObject({}));
  const parsed = hookBody.safeParse(await readJson(req));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? `field ${JSON.stringify(issue.path.join('.'))}: ` : '';
    throw new ApiError(400, 'BAD_BODY', `${field}${issue.message}`);
  }
  const body = parsed.data;
  if (body.topic !== undefined && !options.topics.includes(body.topic))
    throw new ApiError(400, 'BAD_BODY', `topic ${body.topic} is not followed by this server`);
  await checkReceiver(body.url, options);
  if ((await options.store.hookCount()) >= (options.maxHooks ?? DEFAULT_MAX_HOOKS))
    throw new ApiError(
      409,
      'TOO_MANY_HOOKS',
      `this server keeps at most ${options.maxHooks ?? DEFAULT_MAX_HOOKS} hooks`,
    );
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  const hook = await options.store.createHook({
    id: `hk_${randomBytes(12).toString('base64url')}`,
    url: body.url,
    secret,
    events: body.events,
    thresholds: body.thresholds ? [...new Set(body.thresholds)].sort((a, b) => a - b) : null,
    subjects: body.subjects ? [...new Set(body.subjects)] : null,
    topic: body.topic ?? null,
    createdAt: new Date(),
  });
  options.onChange?.();
  // The secret is shown this once: it signs every delivery, and no answer repeats it.
  return { status: 201, json: { hook, secret }, headers: { Location: `/v1/hooks/${hook.id}` } };
}

/**
 * The receiver's URL must be http(s) without credentials and, unless private receivers are allowed, resolve only to
 * public addresses. Deliveries check the address they dial again (DNS may have changed since).
 */
async function checkReceiver(raw: string, options: HookApiOptions): Promise<void> {
  let url: URL;
  try {
    url = parseHttpUrl(raw);
  } catch (err) {
    throw new ApiError(400, 'BAD_URL', err instanceof TransportError ? err.message : 'the url is not valid');
  }
  if (options.allowPrivate) return;
  const host = bareHost(url.hostname);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await (options.resolver ?? systemResolver)(host)).map((a) => a.address);
    } catch {
      throw new ApiError(400, 'BAD_URL', `the receiver's host name ${JSON.stringify(host)} does not resolve`);
    }
  }
  const bad = addresses.find((a) => isNonPublicAddress(a));
  if (bad !== undefined || addresses.length === 0)
    throw new ApiError(
      400,
      'PRIVATE_ADDRESS',
      `the receiver resolves to a non-public address${bad === undefined || bad === host ? '' : ` (${bad})`}; the operator may allow them with --allow-private-hooks`,
    );
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'the body must be JSON (Content-Type: application/json)');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_HOOK_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_HOOK_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ApiError(400, 'BAD_BODY', 'the body is not valid JSON');
  }
}

function tooLarge(): ApiError {
  return new ApiError(413, 'BODY_TOO_LARGE', `the body is larger than ${MAX_HOOK_BODY_BYTES} bytes`);
}

function notFound(id: string): ApiError {
  return new ApiError(404, 'HOOK_NOT_FOUND', `no hook ${id}`);
}

/** Hashes of equal length, so the comparison takes the same time whatever the token given. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const m = /^Bearer ([\x21-\x7e]+)$/i.exec(header ?? '');
  return m !== null && timingSafeEqual(digest(m[1]!), expected);
}
