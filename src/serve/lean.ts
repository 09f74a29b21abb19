/**
 * The lean front of `hcs25 serve`: score lookups (`GET|HEAD /v1/subjects/{s}/score`, no query string, HTTP/1.1)
 * answered straight on the socket, before node:http sees the connection.
 *
 * Why: node:http costs about 55 µs of CPU per request of its own (IncomingMessage and ServerResponse streams, header
 * objects and their validation, a writev per answer), three times what writing a finished answer costs. A lookup is
 * the call a marketplace makes per agent shown, so it is the one that has to scale.
 *
 * How: the front takes the server's `connection` event. It reads each request head itself and answers a lookup with
 * one write (status line, the headers node:http would send, the cached body). At the first request that is not a plain
 * lookup (another route, a query string, a body or framing header, `Upgrade`/`Expect`, HTTP/1.0, anything malformed)
 * it hands the connection, with the bytes not yet answered, to node:http's own connection handler for good; so every
 * other request, and every malformed one, is answered by node:http exactly as before. Requests on one connection are
 * answered in order (a cache miss waits for the store before the next request is read).
 */
import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { CachedScore, PENDING, ScoreCache } from './cache.js';
import { errorBody, matches, type CorsPolicy } from './headers.js';
import type { RateLimiter, ServeLimits } from './limits.js';
import { ApiError, scoreAnswer, subjectParam } from './routes.js';

export interface LeanFrontOptions {
  /** The node:http server: the front takes its `connection` event and hands it what it does not answer. */
  server: Server;
  scores: ScoreCache;
  /** Lookups without `?topic=` are about this topic. */
  topic: string;
  limits: ServeLimits;
  rate: RateLimiter;
  cors: CorsPolicy;
  /** Store failures (the client sees a 503). */
  onError?: (err: unknown) => void;
}

export interface LeanFront {
  /** Lookups answered here (not handed to node:http). */
  readonly answered: number;
  /** Ends the connections the front still holds once their answer in progress is written. */
  close(): void;
}

interface Lookup {
  head: boolean;
  raw: string;
  ifNoneMatch: string | undefined;
  origin: string | undefined;
  close: boolean;
}

type Listener = Parameters<Socket['removeListener']>[1];

interface Connection {
  socket: Socket;
  address: string;
  buffered: Buffer | null;
  /** An answer waits for the store: later requests wait too. */
  busy: boolean;
  /** End the connection after the answer in progress (`Connection: close`, an idle timeout, the server closing). */
  closing: boolean;
  listeners: Array<[string, Listener]>;
}

/** node:http's default limit on a request head (16 KiB): a longer one is node:http's to refuse. */
const MAX_HEAD = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
/** The path with one segment of RFC 3986 pchars for the subject (no `/`, no `?`): anything else goes to node:http. */
const LOOKUP = /^\/v1\/subjects\/([-A-Za-z0-9._~%!$&'()*+,;=:@]+)\/score$/;
const TOKEN = /^[-!#$%&'*+.^_`|~0-9A-Za-z]+$/;
const CLOSE = /(?:^|[\s,])close(?:$|[\s,])/;
const JSON_TYPE = 'Content-Type: application/json; charset=utf-8\r\n';

export function installLeanFront(options: LeanFrontOptions): LeanFront {
  const { server, scores, topic, limits, rate, cors } = options;
  // node:http's own handler, called with the sockets the front hands over (emitting `connection` is node:http's
  // documented way to give it a socket; the listener is taken off so the front sees each new connection first).
  const [httpConnection] = server.listeners('connection') as Array<(socket: Socket) => void>;
  if (!httpConnection) throw new Error('node:http server without its connection listener');
  server.removeListener('connection', httpConnection);
  const open = new Set<Connection>();
  let closed = false;
  let answered = 0;

  // node:http sends the date on every answer; so does the front, formatted once a second.
  let date = '';
  let dateUntil = 0;
  const dateLine = (): string => {
    const now = Date.now();
    if (now >= dateUntil) {
      date = `Date: ${new Date(now).toUTCString()}\r\n`;
      dateUntil = now - (now % 1000) + 1000;
    }
    return date;
  };
  const keepAlive = (): string => `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(server.keepAliveTimeout / 1000)}\r\n\r\n`;
  let keepAliveTail = keepAlive();
  let keepAliveMs = server.keepAliveTimeout;

  server.on('connection', (socket: Socket) => {
    if (closed) return void socket.destroy();
    const c: Connection = { socket, address: socket.remoteAddress ?? '?', buffered: null, busy: false, closing: false, listeners: [] };
    open.add(c);
    const on = (event: string, fn: Listener) => {
      socket.on(event, fn);
      c.listeners.push([event, fn]);
    };
    on('data', (chunk: Buffer) => {
      c.buffered = c.buffered === null ? chunk : Buffer.concat([c.buffered, chunk]);
      if (!c.busy) next(c);
    });
    // The server allows half-open sockets (node:http's choice); a client that stopped sending gets its answers, then
    // the end.
    on('end', () => {
      c.closing = true;
      if (!c.busy) socket.end();
    });
    on('timeout', () => {
      if (c.busy) c.closing = true;
      else socket.destroy();
    });
    on('error', () => socket.destroy());
    on('close', () => open.delete(c));
    socket.setNoDelay(true);
    socket.setTimeout(server.keepAliveTimeout);
  });

  /** Answers the complete requests buffered on `c`, in order, until one has to wait or is not a lookup. */
  function next(c: Connection): void {
    for (;;) {
      const buffered = c.buffered;
      if (buffered === null || c.socket.destroyed) return;
      const end = buffered.indexOf(HEAD_END);
      if (end < 0) {
        if (buffered.length > MAX_HEAD) handOff(c);
        return;
      }
      const lookup = parse(buffered.toString('latin1', 0, end), limits.maxUrlLength);
      if (lookup === null) return handOff(c);
      c.buffered = end + 4 === buffered.length ? null : buffered.subarray(end + 4);
      if (lookup.close) c.closing = true;
      const waiting = answer(c, lookup);
      if (waiting) {
        c.busy = true;
        void waiting.then(() => {
          c.busy = false;
          if (c.closing) c.socket.end();
          else next(c);
        });
        return;
      }
      if (c.closing) return void c.socket.end();
    }
  }

  function handOff(c: Connection): void {
    open.delete(c);
    for (const [event, fn] of c.listeners) c.socket.removeListener(event, fn);
    c.socket.setTimeout(0);
    httpConnection!.call(server, c.socket);
    // The unanswered bytes go to node:http's parser as if just read (its `data` listener feeds the parser).
    if (c.buffered !== null) c.socket.emit('data', c.buffered);
    c.buffered = null;
  }

  /** Writes the answer to `lookup`, or returns a promise that resolves once it is written (a cache miss). */
  function answer(c: Connection, lookup: Lookup): Promise<void> | undefined {
    if (!rate.take(c.address)) {
      return void fail(c, lookup, 429, 'RATE_LIMITED', `more than ${limits.requestsPerSecond} requests per second from this address`, 'Retry-After: 1\r\n');
    }
    let found;
    try {
      found = scores.get(topic, subjectParam(lookup.raw));
    } catch (err) {
      return void failWith(c, lookup, err);
    }
    if (!(found instanceof Promise)) return void reply(c, lookup, found);
    return found.then(
      (value) => reply(c, lookup, value),
      (err: unknown) => failWith(c, lookup, err),
    );
  }

  function reply(c: Connection, lookup: Lookup, found: CachedScore | null | typeof PENDING): void {
    let score: CachedScore;
    try {
      score = scoreAnswer(found, topic);
    } catch (err) {
      return failWith(c, lookup, err);
    }
    if (matches(lookup.ifNoneMatch, score.etag)) {
      return write(c, lookup, '304 Not Modified', `${common(lookup)}ETag: ${score.etag}\r\nCache-Control: no-cache\r\n`, undefined);
    }
    const headers =
      `${common(lookup)}ETag: ${score.etag}\r\nCache-Control: no-cache\r\nX-Score-Fresh: ${score.fresh ? 'true' : 'false'}\r\n` +
      `${JSON_TYPE}Content-Length: ${score.body.length}\r\n`;
    write(c, lookup, '200 OK', headers, score.body);
  }

  function failWith(c: Connection, lookup: Lookup, err: unknown): void {
    if (err instanceof ApiError) return fail(c, lookup, err.status, err.code, err.message);
    // The store failed (database gone, a bug): a 503 with no detail, as on node:http's path.
    options.onError?.(err);
    fail(c, lookup, 503, 'UNAVAILABLE', 'the score store is unavailable, try again');
  }

  function fail(c: Connection, lookup: Lookup, status: number, code: string, message: string, extra = ''): void {
    const body = errorBody(code, message);
    write(c, lookup, `${status} ${STATUS_CODES[status]}`, `${common(lookup)}${extra}${JSON_TYPE}Content-Length: ${body.length}\r\nCache-Control: no-store\r\n`, body);
  }

  /** The headers every answer starts with, as node:http's path sets them. */
  function common(lookup: Lookup): string {
    const allowed = cors(lookup.origin);
    let lines = '';
    if (allowed) for (const [name, value] of allowed) lines += `${name}: ${value}\r\n`;
    return `${lines}X-Content-Type-Options: nosniff\r\n`;
  }

  function write(c: Connection, lookup: Lookup, status: string, headers: string, body: Buffer | undefined): void {
    answered++;
    if (server.keepAliveTimeout !== keepAliveMs) {
      keepAliveMs = server.keepAliveTimeout;
      keepAliveTail = keepAlive();
    }
    const text = `HTTP/1.1 ${status}\r\n${headers}${dateLine()}${c.closing || closed ? 'Connection: close\r\n\r\n' : keepAliveTail}`;
    if (body === undefined || lookup.head) {
      c.socket.write(text, 'latin1');
      return;
    }
    // One buffer, one write: head and body leave in one segment.
    const out = Buffer.allocUnsafe(text.length + body.length);
    out.write(text, 0, 'latin1');
    body.copy(out, text.length);
    c.socket.write(out);
  }

  return {
    get answered() {
      return answered;
    },
    close() {
      closed = true;
      for (const c of open) {
        c.closing = true;
        if (!c.busy) c.socket.end();
      }
    },
  };
}

/**
 * A request head that is a plain score lookup, or null (node:http answers it). Strict on what the answer depends on
 * or what frames the connection (the request line, header names and line ends, one Host, no body); the values of
 * headers the front does not read are not checked.
 */
export function parse(head: string, maxUrlLength: number): Lookup | null {
  const lines = head.split('\r\n');
  const line = lines[0]!;
  const space = line.indexOf(' ');
  const method = line.slice(0, space);
  if ((method !== 'GET' && method !== 'HEAD') || !line.endsWith(' HTTP/1.1')) return null;
  const target = line.slice(space + 1, -9);
  if (target.length > maxUrlLength) return null;
  const m = LOOKUP.exec(target);
  if (!m) return null;
  let hosts = 0;
  let ifNoneMatch: string | undefined;
  let origin: string | undefined;
  let close = false;
  for (let i = 1; i < lines.length; i++) {
    const header = lines[i]!;
    const colon = header.indexOf(':');
    if (colon <= 0 || header.includes('\n') || header.includes('\r')) return null;
    const name = header.slice(0, colon);
    if (!TOKEN.test(name)) return null;
    switch (name.toLowerCase()) {
      case 'host':
        hosts++;
        break;
      case 'if-none-match': {
        const value = header.slice(colon + 1).trim();
        ifNoneMatch = ifNoneMatch === undefined ? value : `${ifNoneMatch}, ${value}`;
        break;
      }
      case 'origin':
        if (origin !== undefined) return null;
        origin = header.slice(colon + 1).trim();
        break;
      case 'connection': {
        const value = header.slice(colon + 1).toLowerCase();
        if (value.includes('upgrade')) return null;
        if (CLOSE.test(value)) close = true;
        break;
      }
      case 'content-length':
      case 'transfer-encoding':
      case 'upgrade':
      case 'expect':
        return null;
    }
  }
  if (hosts !== 1) return null;
  return { head: method === 'HEAD', raw: m[1]!, ifNoneMatch, origin, close };
}
