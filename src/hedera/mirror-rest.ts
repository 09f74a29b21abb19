/**
 * The project's one mirror-node REST client (undici). Reads topics, accounts, transactions and whole topic messages
 * (chunks reassembled) from a hiero mirror node, the emulator or hiero-local-node. Every page is validated with zod;
 * 429/5xx and network faults are retried with bounded backoff; every request has its own timeout.
 */
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { quoteInput } from '../config/secret.js';
import { Hcs25Error } from '../core/errors.js';
import { isEntityId, TRANSACTION_ID_PATTERN } from '../core/ids.js';
import { type BackoffOptions, backoffDelay, retry } from '../core/retry.js';
import { oneLine } from '../core/terminal.js';
import { connectionFailure } from '../net/http-client.js';
import { ChunkAssembler } from './chunks.js';
import {
  accountSchema,
  decodeRaw,
  pageSchema,
  rawMessageSchema,
  topicSchema,
  transactionsSchema,
  type AccountInfo,
  type DroppedChunk,
  type RawTopicMessage,
  type TopicInfo,
  type TopicMessage,
  type TransactionInfo,
} from './mirror-schemas.js';

export class MirrorError extends Hcs25Error {
  readonly status: number | undefined;
  constructor(
    code: 'MIRROR_UNAVAILABLE' | 'MIRROR_BAD_RESPONSE' | 'MIRROR_NOT_FOUND' | 'MIRROR_REQUEST',
    message: string,
    options: { hint?: string; cause?: unknown; status?: number } = {},
  ) {
    super(code, message, options);
    this.name = 'MirrorError';
    this.status = options.status;
  }
}

export type {
  AccountInfo,
  DroppedChunk,
  RawTopicMessage,
  TopicInfo,
  TopicMessage,
  TransactionInfo,
} from './mirror-schemas.js';

export interface TopicMessagesOptions {
  /** Only messages with a sequence number greater than this (resume point). */
  afterSequence?: number;
  /** Only messages with a sequence number lower than this. */
  beforeSequence?: number;
  /** Only messages at or after this consensus time (`seconds.nanos`), filtered by the mirror node. */
  fromTimestamp?: string;
  /** At most this many whole messages are yielded. */
  limit?: number;
  order?: 'asc' | 'desc';
  /** Page size asked of the mirror node; the mirror node caps it at 100. */
  pageSize?: number;
  /** Called for each chunk that cannot be assembled (bad chunk info, group never completed, too many open groups). */
  onDropped?: (dropped: DroppedChunk) => void;
  signal?: AbortSignal;
}

export interface MirrorRestOptions {
  /** Mirror REST base, e.g. `http://127.0.0.1:5551` or `https://testnet.mirrornode.hedera.com` (a trailing `/api/v1` is accepted). */
  baseUrl: string;
  /** Per-request timeout covering headers and body, ms. Default 10 000. */
  timeoutMs?: number;
  /** Retries after the first attempt for 429, 5xx and network faults. Default 5. */
  retries?: number;
  /** First backoff, doubled per retry with jitter, ms. Default 250. */
  minBackoffMs?: number;
  /** Backoff ceiling, also the most a Retry-After is honoured for, ms. Default 8 000. */
  maxBackoffMs?: number;
  /** Largest response body accepted, bytes. Default 8 MiB (a full page is about 200 KB). */
  maxResponseBytes?: number;
  /** Extra request headers (e.g. an API key for a commercial mirror). */
  headers?: Record<string, string>;
  /** Use this dispatcher instead of a private keep-alive agent (tests, proxies). */
  dispatcher?: Dispatcher;
  /** Told of each retry, one line (what failed, the wait, the attempt): a slow mirror node is never silent. */
  onRetry?: (line: string) => void;
}

export class MirrorRestClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxResponseBytes: number;
  private readonly headers: Record<string, string>;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly onRetry: ((line: string) => void) | undefined;

  constructor(options: MirrorRestOptions) {
    this.baseUrl = normaliseBaseUrl(options.baseUrl);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retries = options.retries ?? 5;
    this.minBackoffMs = options.minBackoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 8_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 8 * 1024 * 1024;
    this.headers = { accept: 'application/json', ...options.headers };
    this.onRetry = options.onRetry;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, connections: 16 });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** `GET /api/v1/topics/{id}`; null when the mirror node does not know the topic. */
  async getTopic(topicId: string, signal?: AbortSignal): Promise<TopicInfo | null> {
    const body = await this.getJson(`/api/v1/topics/${entityPath(topicId, 'topic')}`, signal);
    return body === null ? null : this.parse(topicSchema, body, `topic ${topicId}`);
  }

  /** `GET /api/v1/accounts/{id}` (without its transaction list); null when unknown. */
  async getAccount(accountId: string, signal?: AbortSignal): Promise<AccountInfo | null> {
    const body = await this.getJson(`/api/v1/accounts/${entityPath(accountId, 'account')}?transactions=false`, signal);
    return body === null ? null : this.parse(accountSchema, body, `account ${accountId}`);
  }

  /** `GET /api/v1/transactions/{id}`: every transaction with that id (a scheduled pair has two); null when unknown. */
  async getTransaction(transactionId: string, signal?: AbortSignal): Promise<TransactionInfo[] | null> {
    const id = mirrorTransactionId(transactionId);
    const body = await this.getJson(`/api/v1/transactions/${encodeURIComponent(id)}`, signal);
    return body === null ? null : this.parse(transactionsSchema, body, `transaction ${id}`).transactions;
  }

  /** `GET /api/v1/topics/{id}/messages/{seq}`: one raw message (a single chunk); null when absent. */
  async getTopicMessage(
    topicId: string,
    sequenceNumber: number,
    signal?: AbortSignal,
  ): Promise<RawTopicMessage | null> {
    if (!Number.isSafeInteger(sequenceNumber) || sequenceNumber < 1) {
      throw new MirrorError('MIRROR_REQUEST', `sequence number must be a positive integer, got ${sequenceNumber}`);
    }
    const body = await this.getJson(
      `/api/v1/topics/${entityPath(topicId, 'topic')}/messages/${sequenceNumber}`,
      signal,
    );
    return body === null ? null : decodeRaw(this.parse(rawMessageSchema, body, `message ${topicId}/${sequenceNumber}`));
  }

  /**
   * The topic's newest raw message (one request, `order=desc&limit=1`): its sequence number is the topic's message
   * count. Null when the topic has none or the mirror node does not know it.
   */
  async lastTopicMessage(topicId: string, signal?: AbortSignal): Promise<RawTopicMessage | null> {
    const page = await this.fetchPage(
      `/api/v1/topics/${entityPath(topicId, 'topic')}/messages?limit=1&order=desc`,
      topicId,
      signal,
    );
    const last = page?.messages[0];
    return last === undefined ? null : decodeRaw(last);
  }

  /**
   * Raw messages (chunks) of a topic, page by page, following `links.next`. The next page is requested while the
   * caller works through the current one. A topic the mirror node does not know yields nothing; call `getTopic`
   * first when that difference matters.
   */
  async *rawTopicMessages(topicId: string, options: TopicMessagesOptions = {}): AsyncGenerator<RawTopicMessage[]> {
    const pageSize = Math.min(Math.max(options.pageSize ?? 100, 1), 100);
    const params = new URLSearchParams({ limit: String(pageSize), order: options.order ?? 'asc' });
    if (options.afterSequence !== undefined) params.append('sequencenumber', `gt:${options.afterSequence}`);
    if (options.beforeSequence !== undefined) params.append('sequencenumber', `lt:${options.beforeSequence}`);
    if (options.fromTimestamp !== undefined)
      params.append('timestamp', `gte:${consensusTimestamp(options.fromTimestamp)}`);
    let path: string | null = `/api/v1/topics/${entityPath(topicId, 'topic')}/messages?${params.toString()}`;
    const seen = new Set<string>();
    const inner = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, inner.signal]) : inner.signal;
    let pending: Promise<z.infer<typeof pageSchema> | null> | null = this.fetchPage(path, topicId, signal);
    try {
      while (pending) {
        const page = await pending;
        pending = null;
        if (page === null) return;
        seen.add(path!);
        const next = page.links?.next ?? null;
        path = next === null || page.messages.length === 0 ? null : nextPath(next);
        if (path !== null) {
          if (seen.has(path)) {
            throw new MirrorError('MIRROR_BAD_RESPONSE', `mirror node returned a next link that repeats ${path}`, {
              hint: 'the mirror node is paging in a loop; try another mirror node',
            });
          }
          pending = this.fetchPage(path, topicId, signal);
          // The caller may stop early; the prefetch must not surface as an unhandled rejection.
          pending.catch(() => undefined);
        }
        yield page.messages.map(decodeRaw);
      }
    } finally {
      inner.abort();
    }
  }

  /**
   * Whole messages of a topic in `order`, chunks reassembled by `chunk_info.initial_transaction_id`. Chunks that
   * cannot be assembled are reported through `onDropped`, never thrown. Memory is bounded by the open chunk groups.
   */
  async *topicMessages(topicId: string, options: TopicMessagesOptions = {}): AsyncGenerator<TopicMessage> {
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return;
    const assembler = new ChunkAssembler(options.onDropped);
    let yielded = 0;
    for await (const page of this.rawTopicMessages(topicId, options)) {
      for (const raw of page) {
        const whole = assembler.add(raw);
        if (whole === null) continue;
        yield whole;
        if (++yielded >= limit) return;
      }
    }
    assembler.flush('the rest of its chunks were not on the topic when it was read');
  }

  // ---------- plumbing ----------

  private async fetchPage(
    path: string,
    topicId: string,
    signal: AbortSignal | undefined,
  ): Promise<z.infer<typeof pageSchema> | null> {
    const body = await this.getJson(path, signal);
    return body === null ? null : this.parse(pageSchema, body, `messages page of topic ${topicId}`);
  }

  private parse<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
    const result = schema.safeParse(body);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new MirrorError(
        'MIRROR_BAD_RESPONSE',
        `mirror node returned an unexpected ${what}: ${issue ? `${issue.path.join('.') || '(root)'} ${issue.message}` : 'invalid'}`,
        { hint: 'check that --network / the mirror REST URL points at a Hedera mirror node (REST API v1)' },
      );
    }
    return result.data;
  }

  /** GET a JSON document; null on 404. Retries 429/5xx/network faults with bounded exponential backoff. */
  async getJson(path: string, signal?: AbortSignal): Promise<unknown> {
    const url = this.baseUrl + path;
    const schedule: BackoffOptions = { minMs: this.minBackoffMs, maxMs: this.maxBackoffMs, jitter: true };
    let retryAfterMs: number | undefined;
    return retry(
      async () => {
        retryAfterMs = undefined;
        let res: Awaited<ReturnType<MirrorRestClient['once']>>;
        try {
          res = await this.once(url, signal);
        } catch (err) {
          if (err instanceof MirrorError) throw err;
          if (signal?.aborted) throw signal.reason;
          throw this.networkError(path, err);
        }
        if (res.status === 200) return res.json;
        if (res.status === 404) return null;
        if (res.status === 429 || res.status >= 500) {
          retryAfterMs = res.retryAfterMs;
          throw new MirrorError('MIRROR_UNAVAILABLE', `mirror node answered HTTP ${res.status} for ${path}`, {
            status: res.status,
            hint: 'the mirror node is busy or failing; try again later or use another mirror node',
          });
        }
        throw new MirrorError('MIRROR_REQUEST', `mirror node answered HTTP ${res.status} for ${path}: ${res.message}`, {
          status: res.status,
          hint: 'check the id you passed',
        });
      },
      {
        ...schedule,
        attempts: this.retries + 1,
        ...(signal && { signal }),
        retryable: (err) => err instanceof MirrorError && err.code === 'MIRROR_UNAVAILABLE',
        // A Retry-After is honoured up to the backoff ceiling.
        delayMs: (attempt) => Math.min(Math.max(backoffDelay(attempt, schedule), retryAfterMs ?? 0), this.maxBackoffMs),
        onRetry: (attempt, err, delayMs) =>
          this.onRetry?.(
            `${err instanceof Error ? err.message : String(err)}; retrying in ` +
              `${(delayMs / 1000).toFixed(1)} s (try ${attempt + 2} of ${this.retries + 1})`,
          ),
      },
    );
  }

  /** A failure below HTTP, in one line, with the likely fix: a scheme that does not match the server's. */
  private networkError(path: string, err: unknown): MirrorError {
    const known = connectionFailure(err);
    const what = known?.message ?? oneLine(err instanceof Error ? err.message : String(err));
    const https = this.baseUrl.startsWith('https:');
    const other = this.baseUrl.replace(/^https?:/, https ? 'http:' : 'https:');
    const message = `mirror node request failed for ${path}: ${what}`;
    // A scheme that does not match the server's is the URL's fault: retrying cannot help.
    if (known?.tls && https)
      return new MirrorError('MIRROR_REQUEST', message, {
        cause: err,
        hint: `the server at ${this.baseUrl} does not speak TLS; if it serves plain HTTP (a local node does), use ${other}`,
      });
    if (known?.kind === 'protocol-error' && !https)
      return new MirrorError('MIRROR_REQUEST', message, {
        cause: err,
        hint: `the server at ${this.baseUrl} did not answer in HTTP; if it serves HTTPS, use ${other}`,
      });
    return new MirrorError('MIRROR_UNAVAILABLE', message, {
      cause: err,
      hint: `check that the mirror node at ${this.baseUrl} is reachable${https ? '' : ` (if it serves HTTPS, use ${other})`}`,
    });
  }

  private async once(
    url: string,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; json?: unknown; message?: string; retryAfterMs?: number }> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const res = await request(url, {
        method: 'GET',
        headers: this.headers,
        signal: combined,
        dispatcher: this.dispatcher,
      });
      const status = res.statusCode;
      const text = await readCapped(res.body, this.maxResponseBytes, url);
      if (status === 200) {
        try {
          return { status, json: JSON.parse(text) as unknown };
        } catch {
          throw new MirrorError('MIRROR_BAD_RESPONSE', `mirror node returned a body that is not JSON for ${url}`, {
            hint: 'check that the URL points at a Hedera mirror node REST API',
          });
        }
      }
      return { status, message: statusMessage(text), retryAfterMs: parseRetryAfter(res.headers['retry-after']) };
    } catch (err) {
      if (timeout.aborted && !signal?.aborted) {
        throw new MirrorError('MIRROR_UNAVAILABLE', `mirror node did not answer within ${this.timeoutMs} ms (${url})`, {
          hint:
            'the mirror node is slow or unreachable: try another mirror node, or allow more time with ' +
            `--mirror-timeout MS or HCS25_MIRROR_TIMEOUT_MS (now ${this.timeoutMs})`,
        });
      }
      throw err;
    }
  }
}

/** The mirror node itself is failing (after retries), as opposed to one entity being missing or odd. */
export function isMirrorOutage(err: unknown): boolean {
  return err instanceof MirrorError && err.code === 'MIRROR_UNAVAILABLE';
}

// ---------- small helpers ----------

function entityPath(id: string, what: string): string {
  if (!isEntityId(id)) {
    throw new MirrorError('MIRROR_REQUEST', `${what} id must look like 0.0.1234, got ${quoteInput(id)}`, {
      hint: `pass a ${what} id in shard.realm.num form`,
    });
  }
  return id;
}

/** Accepts `0.0.8@1234567890.000000006` (SDK form) or `0.0.8-1234567890-000000006` (mirror form). */
function mirrorTransactionId(id: string): string {
  if (TRANSACTION_ID_PATTERN.test(id)) {
    const [account, validStart] = id.split('@') as [string, string];
    const [seconds, nanos] = validStart.split('.') as [string, string];
    return `${account}-${seconds}-${nanos.padStart(9, '0')}`;
  }
  const [account = '', ...validStart] = id.split('-');
  if (isEntityId(account) && validStart.length === 2 && validStart.every((part) => /^\d+$/.test(part))) return id;
  throw new MirrorError(
    'MIRROR_REQUEST',
    `transaction id must look like 0.0.8@1234567890.000000006, got ${quoteInput(id)}`,
  );
}

function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MirrorError('MIRROR_REQUEST', `mirror REST URL is not a URL: ${quoteInput(raw, 100)}`, {
      hint: 'set it like http://127.0.0.1:5551 or https://testnet.mirrornode.hedera.com',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new MirrorError('MIRROR_REQUEST', `mirror REST URL must be http or https, got ${quoteInput(url.protocol)}`);
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${url.origin}${path}`;
}

/** The mirror node's next links are paths (`/api/v1/...`); only the path and query are taken, so a page can never send the client elsewhere. */
function nextPath(next: string): string {
  const url = new URL(next, 'http://mirror.invalid');
  if (!url.pathname.startsWith('/api/v1/')) {
    throw new MirrorError('MIRROR_BAD_RESPONSE', `mirror node returned an unexpected next link: ${next.slice(0, 200)}`);
  }
  return url.pathname + url.search;
}

async function readCapped(body: Dispatcher.ResponseData['body'], max: number, url: string): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > max) {
      body.destroy();
      throw new MirrorError('MIRROR_BAD_RESPONSE', `mirror node response is larger than ${max} bytes (${url})`);
    }
    parts.push(buf);
  }
  return parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, size).toString('utf8');
}

function statusMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { _status?: { messages?: { message?: string }[] } };
    const msg = body._status?.messages?.[0]?.message;
    if (typeof msg === 'string') return msg.slice(0, 200);
  } catch {
    // not JSON; fall through
  }
  return text.slice(0, 120).replace(/\s+/g, ' ');
}

function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const seconds = Number(v);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function consensusTimestamp(value: string): string {
  if (!/^\d{1,12}(\.\d{1,9})?$/.test(value))
    throw new MirrorError('MIRROR_REQUEST', `"${value.slice(0, 40)}" is not a consensus timestamp (seconds.nanos)`);
  return value;
}
