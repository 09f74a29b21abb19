/**
 * The HTTP face of `hcs25 serve`, on node:http (no framework: every request is a few map lookups and one store
 * query). Read-only: GET, HEAD and OPTIONS (CORS preflight), but for the webhook admin API under /v1/hooks
 * (hooks/routes.ts: admin token, never CORS). Every answer is JSON except the live page and its
 * script; every error is one line `{"error":{"code","message"}}`. Data answers carry a strong ETag made of the store
 * revision and the request target, so an unchanged `If-None-Match` costs no query at all; a score lookup is answered
 * from the score cache (cache.ts) with the ETag of its body.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hcs25Error } from '../core/errors.js';
import { ScoreCache } from './cache.js';
import { corsPolicy, matches, sendError } from './headers.js';
import { ApiError, type ApiContext, type Reply } from './route-kit.js';
import { route } from './routes.js';
import { RateLimiter } from '../core/rate-limit.js';
import { DEFAULT_LIMITS, type ServeLimits } from './limits.js';
import type { ServeEvents } from './events.js';
import { type HookApi, hookApi, isHookPath } from './hooks/routes.js';

export interface ServeHttpOptions extends Omit<ApiContext, 'limits' | 'scores'> {
  events: ServeEvents;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Origins allowed to read the API from a browser (`*` for any); none by default. */
  cors?: readonly string[];
  limits?: Partial<ServeLimits>;
  /** The webhook admin API; without it (no admin token) /v1/hooks answers 404. */
  hooks?: HookApi;
}

export interface ServeHttp {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const METHODS = 'GET, HEAD, OPTIONS';

export async function startHttpServer(options: ServeHttpOptions): Promise<ServeHttp> {
  const limits: ServeLimits = { ...DEFAULT_LIMITS, ...options.limits };
  // Without the events' cache nothing would drop changed answers, so then every lookup asks the store.
  const scores = options.events.scores ?? new ScoreCache(options.store, 0);
  const ctx: ApiContext = { ...options, limits, scores };
  // A burst of two seconds' worth per address (0 requests per second: no limit).
  const rate = new RateLimiter({ capacity: limits.requestsPerSecond * 2, refillMs: 2000, maxKeys: 10_000 });
  const cors = corsPolicy(options.cors ?? []);
  const hooks = options.hooks ?? hookApi(undefined);

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // The store failed (database gone, a bug): a 503 with no detail; the details stay on the server.
      if (!res.headersSent) sendError(res, 503, 'UNAVAILABLE', 'the score store is unavailable, try again');
      else res.destroy();
      options.onError?.(err);
    });
  });
  // Slow clients cannot hold sockets forever; event streams opt out below.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  server.keepAliveTimeout = 5_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    // The admin API is never opened to browsers: its answers (and preflights) carry no CORS headers.
    const admin = isHookPath(target);
    const allowed = admin ? undefined : cors(req.headers.origin);
    if (allowed) for (const [name, value] of allowed) res.setHeader(name, value);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (target.length > limits.maxUrlLength)
      return sendError(res, 414, 'URL_TOO_LONG', `the request target is longer than ${limits.maxUrlLength} characters`);
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', admin ? 'GET, HEAD, POST, DELETE, OPTIONS' : METHODS);
      if (allowed) {
        res.setHeader('Access-Control-Allow-Methods', METHODS);
        res.setHeader('Access-Control-Allow-Headers', 'If-None-Match, Last-Event-ID');
        res.setHeader('Access-Control-Max-Age', '600');
      }
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD' && !admin) {
      res.setHeader('Allow', METHODS);
      return sendError(res, 405, 'METHOD_NOT_ALLOWED', `${req.method ?? '?'} is not allowed; this API is read-only`);
    }
    if (!rate.allow(req.socket.remoteAddress ?? '?')) {
      res.setHeader('Retry-After', '1');
      return sendError(
        res,
        429,
        'RATE_LIMITED',
        `more than ${limits.requestsPerSecond} requests per second from this address`,
      );
    }

    let url: URL;
    try {
      url = new URL(target, 'http://serve.invalid');
    } catch {
      return sendError(res, 400, 'BAD_REQUEST', 'the request target is not a valid URL');
    }
    if (url.pathname === '/v1/events') return options.events.attach(req, res, url);
    if (admin) return hooks(req, res, url);

    let reply: Reply;
    try {
      const found = route(url);
      if (!found) return sendError(res, 404, 'NOT_FOUND', 'no such endpoint (see /openapi.json)');
      // The revision is read before the data, so an ETag never claims data newer than the body holds.
      const etag = found.cache === 'revision' ? strongEtag(await options.events.revision(), url) : undefined;
      if (etag !== undefined) {
        res.setHeader('ETag', etag);
        res.setHeader('Cache-Control', 'no-cache');
        if (matches(req.headers['if-none-match'], etag)) {
          res.writeHead(304).end();
          return;
        }
      }
      reply = await found.handler(ctx, url);
    } catch (err) {
      if (err instanceof ApiError) return sendError(res, err.status, err.code, err.message);
      // What the store refuses of a request (a cursor it did not give out) is the request's fault, as in the hooks API.
      if (err instanceof Hcs25Error && err.code === 'USAGE') return sendError(res, 400, 'BAD_QUERY', err.message);
      throw err;
    }
    if (reply.etag !== undefined) {
      res.setHeader('ETag', reply.etag);
      // A 304 carries the Cache-Control its 200 would (RFC 9111 4.3.4: it refreshes the stored answer).
      res.setHeader('Cache-Control', reply.cacheControl ?? 'no-cache');
      if (matches(req.headers['if-none-match'], reply.etag)) {
        res.writeHead(304).end();
        return;
      }
    }
    if (reply.cacheControl) res.setHeader('Cache-Control', reply.cacheControl);
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
    if (reply.stream) return sendStream(req, res, reply);
    const body =
      reply.body === undefined
        ? Buffer.from(`${JSON.stringify(reply.json)}\n`)
        : typeof reply.body === 'string'
          ? Buffer.from(reply.body)
          : reply.body;
    res.setHeader('Content-Type', reply.contentType ?? 'application/json; charset=utf-8');
    res.setHeader('Content-Length', body.length);
    res.writeHead(reply.status ?? 200);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${options.host ?? '127.0.0.1'}:${options.port ?? 0}`;
      reject(
        err.code === 'EADDRINUSE'
          ? new Hcs25Error('PORT_IN_USE', `port ${where} is already in use`, {
              hint: 'pass another --port (0 picks a free one), or stop what listens there',
              cause: err,
            })
          : new Hcs25Error('BIND_FAILED', `cannot listen on ${where}: ${err.code ?? err.message}`, {
              hint: 'check --host and --port',
              cause: err,
            }),
      );
    });
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    server,
    async close() {
      options.events.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}

/** Writes the chunks as they come, waiting while the client reads slower; stops when the client goes. */
async function sendStream(req: IncomingMessage, res: ServerResponse, reply: Reply): Promise<void> {
  res.setHeader('Content-Type', reply.contentType ?? 'application/json; charset=utf-8');
  res.writeHead(reply.status ?? 200);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  for await (const chunk of reply.stream!) {
    if (res.destroyed) return;
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const go = () => {
          res.off('drain', go).off('close', go);
          resolve();
        };
        res.on('drain', go).on('close', go);
      });
    }
  }
  res.end();
}

/** The body depends only on the target and the store's data (no content negotiation), so they name it. */
function strongEtag(revision: string | number | bigint, url: URL): string {
  const h = createHash('sha256').update(`${revision}\n${url.pathname}?${url.searchParams.toString()}`);
  return `"${h.digest('base64url').slice(0, 27)}"`;
}
