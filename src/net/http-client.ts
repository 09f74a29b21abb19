import { Agent as UndiciAgent, buildConnector, request } from 'undici';
import { Hcs25Error } from '../core/errors.js';
import { oneLine } from '../core/terminal.js';
import type { FailureKind } from './failure.js';
import { Deadline, abortableSleep } from './deadline.js';
import { PrivateAddressError, guardedConnector, type Resolver } from './guard.js';

export const BODY_LIMIT_BYTES = 64 * 1024;
export const MAX_REDIRECTS = 3;
export const DEFAULT_PER_HOST_CONCURRENCY = 8;
const CONNECT_TIMEOUT_MS = 10_000;
const USER_AGENT = 'hcs25-eval/0.1 (+https://github.com/hashgraph-online/hcs-25)';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/** A classified failure inside a transport; `toAskFailure` turns it into the public `AskFailure`. */
export class TransportError extends Hcs25Error {
  readonly kind: FailureKind;
  readonly httpStatus: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly transient: boolean;

  constructor(
    kind: FailureKind,
    message: string,
    extra: { httpStatus?: number; retryAfterMs?: number; transient?: boolean } = {},
  ) {
    super('TRANSPORT', message);
    this.name = 'TransportError';
    this.kind = kind;
    this.httpStatus = extra.httpStatus;
    this.retryAfterMs = extra.retryAfterMs;
    this.transient = extra.transient ?? false;
  }
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** Lower-cased media type without parameters, '' when absent. */
  contentType: string;
  body: string;
  /** The URL that finally answered (after redirects). */
  url: string;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  /** Headers that must not follow a redirect to another origin (per-agent credentials). */
  secretHeaders?: Record<string, string>;
  body?: string;
  deadline: Deadline;
  /**
   * Cut an over-cap body at the cap instead of failing `too-large`: for requests that only need the status and the
   * start of the body (probes). Non-2xx bodies are always cut, so the status, not the size of an error page, decides.
   */
  truncateBody?: boolean;
}

export interface HttpClientOptions {
  allowPrivateEndpoints: boolean;
  bodyLimitBytes?: number;
  maxRedirects?: number;
  perHostConcurrency?: number;
  /** Injected DNS (tests). */
  resolver?: Resolver;
  /** Injected dialler (tests): receives the already-checked address. */
  baseConnector?: buildConnector.connector;
}

/** Counts concurrent asks per host so a registry listing many agents on one host cannot make us flood it. */
export class HostLimiter {
  private readonly hosts = new Map<string, { active: number; waiting: Array<() => void> }>();
  constructor(private readonly limit: number) {}

  async acquire(host: string, signal?: AbortSignal): Promise<() => void> {
    let slot = this.hosts.get(host);
    if (!slot) {
      slot = { active: 0, waiting: [] };
      this.hosts.set(host, slot);
    }
    const entry = slot;
    if (entry.active >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = entry.waiting.indexOf(wake);
          if (i >= 0) entry.waiting.splice(i, 1);
          reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
        };
        entry.waiting.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    } else {
      entry.active += 1;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = entry.waiting.shift();
      // Hand the slot straight to the next waiter; `active` only drops when nobody is waiting.
      if (next) next();
      else {
        entry.active -= 1;
        if (entry.active === 0) this.hosts.delete(host);
      }
    };
  }
}

/**
 * The one HTTP client every transport uses: undici with the private-address guard in the connector, manual
 * redirects (at most 3, each target checked by the same connector), a hard cap on body bytes, and a per-host
 * concurrency cap. One instance is shared by all transports of a run.
 */
export class HttpClient {
  readonly bodyLimitBytes: number;
  readonly maxRedirects: number;
  readonly allowPrivateEndpoints: boolean;
  private readonly dispatcher: UndiciAgent;
  private readonly limiter: HostLimiter;

  constructor(options: HttpClientOptions) {
    this.bodyLimitBytes = options.bodyLimitBytes ?? BODY_LIMIT_BYTES;
    this.maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
    this.allowPrivateEndpoints = options.allowPrivateEndpoints;
    this.limiter = new HostLimiter(options.perHostConcurrency ?? DEFAULT_PER_HOST_CONCURRENCY);
    const base = options.baseConnector ?? buildConnector({ timeout: CONNECT_TIMEOUT_MS });
    this.dispatcher = new UndiciAgent({
      connect: guardedConnector({
        allowPrivateEndpoints: options.allowPrivateEndpoints,
        ...(options.resolver ? { resolver: options.resolver } : {}),
        baseConnector: base,
      }),
      keepAliveTimeout: 4_000,
    });
  }

  /**
   * Runs `fn` holding one of the host's slots. The slot wait is not charged to the agent: callers start their
   * Deadline inside `fn`.
   */
  async withHostSlot<T>(url: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    const release = await this.limiter.acquire(hostKey(url), signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  async request(url: string, init: HttpRequest): Promise<HttpResponse> {
    let current = parseHttpUrl(url);
    let method = init.method;
    let body = init.body;
    let secrets = init.secretHeaders ?? {};
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { 'user-agent': USER_AGENT, ...init.headers, ...secrets };
      if (body === undefined) delete headers['content-type'];
      const res = await request(current, {
        dispatcher: this.dispatcher,
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: init.deadline.signal,
      });
      const location = headerValue(res.headers, 'location');
      if (REDIRECT_STATUSES.has(res.statusCode) && location) {
        await res.body.dump({ limit: 4096 }).catch(() => undefined);
        if (hop >= this.maxRedirects) {
          throw new TransportError('protocol-error', `more than ${this.maxRedirects} redirects`, {
            httpStatus: res.statusCode,
          });
        }
        const next = parseHttpUrl(new URL(location, current).toString());
        if (next.origin !== current.origin) secrets = {};
        if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        current = next;
        continue;
      }
      const flatHeaders = flattenHeaders(res.headers);
      const cut = init.truncateBody === true || res.statusCode < 200 || res.statusCode >= 300;
      const text = await this.readCapped(res.body, flatHeaders['content-length'], cut);
      return {
        status: res.statusCode,
        headers: flatHeaders,
        contentType: (flatHeaders['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(),
        body: text,
        url: current.toString(),
      };
    }
  }

  private async readCapped(
    body: AsyncIterable<Buffer> & { destroy(err?: Error): void },
    declared: string | undefined,
    truncate: boolean,
  ): Promise<string> {
    const limit = this.bodyLimitBytes;
    if (!truncate && declared !== undefined && Number(declared) > limit) {
      body.destroy();
      throw new TransportError('too-large', `response body is ${declared} bytes; the cap is ${limit} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      if (size + chunk.length > limit) {
        body.destroy();
        if (!truncate) throw new TransportError('too-large', `response body exceeds the ${limit}-byte cap`);
        chunks.push(chunk.subarray(0, limit - size));
        size = limit;
        break;
      }
      size += chunk.length;
      chunks.push(chunk);
    }
    return new TextDecoder('utf-8').decode(Buffer.concat(chunks, size));
  }

  async close(): Promise<void> {
    await this.dispatcher.close().catch(() => this.dispatcher.destroy());
  }
}

export function parseHttpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TransportError('protocol-error', 'endpoint is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TransportError('protocol-error', `unsupported URL scheme ${parsed.protocol.replace(':', '')}`);
  }
  if (parsed.username || parsed.password) {
    throw new TransportError('protocol-error', 'endpoint URLs with embedded credentials are not used');
  }
  return parsed;
}

function hostKey(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return url;
  }
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Retry-After as ms: `retry-after-ms`, else seconds or an HTTP date. */
export function parseRetryAfter(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = headers['retry-after']?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The failure for a non-2xx status (redirects were already followed), or undefined for success. */
export function statusFailure(res: HttpResponse): TransportError | undefined {
  const status = res.status;
  if (status >= 200 && status < 300) return undefined;
  if (status === 401 || status === 403 || status === 407) {
    return new TransportError('auth-required', `HTTP ${status}: the agent requires authentication`, {
      httpStatus: status,
    });
  }
  if (status === 402) {
    return new TransportError('auth-required', 'HTTP 402: the agent requires payment', { httpStatus: status });
  }
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(res.headers);
    return new TransportError('rate-limited', 'HTTP 429: rate limited', {
      httpStatus: status,
      transient: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  return new TransportError('http-error', `HTTP ${status}`, {
    httpStatus: status,
    transient: TRANSIENT_STATUSES.has(status),
  });
}

const ERROR_CODES: Record<string, { kind: FailureKind; message: string; transient?: boolean }> = {
  ECONNREFUSED: { kind: 'refused', message: 'connection refused' },
  ECONNRESET: { kind: 'refused', message: 'connection reset', transient: true },
  EPIPE: { kind: 'refused', message: 'connection reset', transient: true },
  UND_ERR_SOCKET: { kind: 'refused', message: 'connection closed by the server', transient: true },
  ENOTFOUND: { kind: 'refused', message: 'host name not found' },
  EAI_AGAIN: { kind: 'refused', message: 'DNS lookup failed', transient: true },
  EHOSTUNREACH: { kind: 'refused', message: 'host unreachable' },
  ENETUNREACH: { kind: 'refused', message: 'network unreachable' },
  UND_ERR_CONNECT_TIMEOUT: { kind: 'timeout', message: 'connect timed out' },
  UND_ERR_HEADERS_TIMEOUT: { kind: 'timeout', message: 'no response headers in time' },
  UND_ERR_BODY_TIMEOUT: { kind: 'timeout', message: 'response body stalled' },
  UND_ERR_HEADERS_OVERFLOW: { kind: 'protocol-error', message: 'response headers too large' },
  HPE_INVALID_CONSTANT: { kind: 'protocol-error', message: 'not an HTTP response' },
};

/** Classifies anything thrown while talking to an agent. Never copies response bodies into the message. */
export function classifyError(err: unknown, deadline: Deadline): TransportError {
  if (err instanceof TransportError) return err;
  if (deadline.timedOut) return new TransportError('timeout', `no answer within ${deadline.budgetMs} ms`);
  if (deadline.callerAborted) return new TransportError('timeout', 'aborted by the caller');
  const chain = errorChain(err);
  const guard = chain.find((e) => e instanceof PrivateAddressError);
  if (guard) {
    return new TransportError(
      'refused',
      `${guard.message} (private endpoints are not allowed; see --allow-private-endpoints)`,
    );
  }
  const known = connectionFailure(err);
  if (known) return new TransportError(known.kind, known.message, { transient: known.transient });
  const first = chain[0];
  return new TransportError('protocol-error', first instanceof Error ? oneLine(first.message) : 'unexpected failure');
}

/**
 * A failure below HTTP in words, from the error codes along the cause chain (never OpenSSL's own text, which carries
 * source paths and newlines); undefined when no code is known.
 */
export function connectionFailure(
  err: unknown,
): { kind: FailureKind; message: string; transient: boolean; tls: boolean } | undefined {
  for (const e of errorChain(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    const known = ERROR_CODES[code];
    if (known) return { kind: known.kind, message: known.message, transient: known.transient ?? false, tls: false };
    if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT') || code === 'EPROTO')
      return { kind: 'refused', message: `TLS handshake failed (${code})`, transient: false, tls: true };
    if (code.startsWith('HPE_'))
      return { kind: 'protocol-error', message: `malformed HTTP response (${code})`, transient: false, tls: false };
  }
  return undefined;
}

function errorChain(err: unknown): Error[] {
  const out: Error[] = [];
  let cur: unknown = err;
  while (cur instanceof Error && out.length < 5) {
    out.push(cur);
    cur = (cur as { cause?: unknown }).cause;
  }
  return out;
}

export { Deadline, abortableSleep };
