import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/core/errors.js';
import {
  Deadline,
  HostLimiter,
  type HttpClient,
  parseRetryAfter,
  type HttpResponse,
} from '../../../src/net/http-client.js';
import { resolveAgentHeaders } from '../../../src/evaluate/transports/headers.js';
import { decodeJsonMessages } from '../../../src/evaluate/transports/body.js';
import { agentFor, localClient, scripted } from './helpers.js';

describe('HttpClient', () => {
  let server: Awaited<ReturnType<typeof scripted>>;
  let other: Awaited<ReturnType<typeof scripted>>;
  let client: HttpClient;

  beforeAll(async () => {
    other = await scripted((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`auth=${req.headers.authorization ?? 'none'}`);
    });
    server = await scripted((req, res, body) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const n = Number(url.searchParams.get('n') ?? 0);
      switch (url.pathname) {
        case '/size':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(n));
          return;
        case '/big-error':
          res.writeHead(503, { 'content-type': 'text/html' }).end('x'.repeat(200 * 1024));
          return;
        case '/declared':
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10 * 1024 * 1024) });
          res.write('x');
          return; // never finishes: the client must not wait for it
        case '/hops':
          res
            .writeHead(n > 0 ? 302 : 200, n > 0 ? { location: `/hops?n=${n - 1}` } : { 'content-type': 'text/plain' })
            .end(n > 0 ? '' : 'arrived');
          return;
        case '/echo':
          res
            .writeHead(200, { 'content-type': 'text/plain' })
            .end(`${req.method} ${body} auth=${req.headers.authorization ?? 'none'}`);
          return;
        case '/keep':
          res.writeHead(307, { location: '/echo' }).end();
          return;
        case '/see-other':
          res.writeHead(303, { location: '/echo' }).end();
          return;
        case '/away':
          res.writeHead(307, { location: `${other.origin}/` }).end();
          return;
      }
      res.writeHead(404).end();
    });
    client = localClient();
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    await other.close();
  });

  const get = (
    path: string,
    init: { method?: 'GET' | 'POST'; body?: string; secret?: Record<string, string>; truncate?: boolean } = {},
  ) => {
    const deadline = new Deadline(5_000);
    return client
      .request(`${server.origin}${path}`, {
        method: init.method ?? 'GET',
        ...(init.body === undefined ? {} : { body: init.body }),
        ...(init.secret ? { secretHeaders: init.secret } : {}),
        ...(init.truncate ? { truncateBody: true } : {}),
        deadline,
      })
      .finally(() => deadline.dispose());
  };

  it('reads a body of exactly 64 KiB and refuses one byte more', async () => {
    expect((await get(`/size?n=${64 * 1024}`)).body.length).toBe(64 * 1024);
    await expect(get(`/size?n=${64 * 1024 + 1}`)).rejects.toMatchObject({ kind: 'too-large' });
  });

  it('refuses a declared Content-Length over the cap without reading the body', async () => {
    await expect(get('/declared')).rejects.toMatchObject({ kind: 'too-large' });
  });

  it('cuts an over-cap error page at the cap so its status still decides', async () => {
    const res = await get('/big-error');
    expect(res.status).toBe(503);
    expect(res.body.length).toBe(64 * 1024);
  });

  it('cuts an over-cap body at the cap when the caller needs only its start', async () => {
    expect((await get(`/size?n=${200 * 1024}`, { truncate: true })).body.length).toBe(64 * 1024);
  });

  it('follows 3 redirects and refuses a 4th', async () => {
    expect((await get('/hops?n=3')).body).toBe('arrived');
    await expect(get('/hops?n=4')).rejects.toMatchObject({ kind: 'protocol-error', message: 'more than 3 redirects' });
  });

  it('keeps method and body on 307, switches to GET on 303', async () => {
    expect((await get('/keep', { method: 'POST', body: 'hello' })).body).toBe('POST hello auth=none');
    expect((await get('/see-other', { method: 'POST', body: 'hello' })).body).toBe('GET  auth=none');
  });

  it('keeps per-agent headers on the same origin and drops them across origins', async () => {
    expect((await get('/keep', { method: 'POST', body: 'x', secret: { authorization: 'Bearer k' } })).body).toBe(
      'POST x auth=Bearer k',
    );
    expect((await get('/away', { secret: { authorization: 'Bearer k' } })).body).toBe('auth=none');
  });

  it('refuses non-http schemes and embedded credentials', async () => {
    const deadline = new Deadline(1_000);
    await expect(client.request('file:///etc/passwd', { method: 'GET', deadline })).rejects.toMatchObject({
      kind: 'protocol-error',
    });
    await expect(client.request('http://u:p@127.0.0.1:1/', { method: 'GET', deadline })).rejects.toMatchObject({
      kind: 'protocol-error',
    });
    deadline.dispose();
  });
});

describe('HostLimiter', () => {
  it('lets at most `limit` holders per host and hands slots over in order', async () => {
    const limiter = new HostLimiter(2);
    const a = await limiter.acquire('h');
    const b = await limiter.acquire('h');
    const other = await limiter.acquire('other');
    const order: string[] = [];
    const c = limiter.acquire('h').then((release) => {
      order.push('c');
      return release;
    });
    const d = limiter.acquire('h').then((release) => {
      order.push('d');
      return release;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    a();
    (await c)();
    b();
    (await d)();
    other();
    expect(order).toEqual(['c', 'd']);
  });

  it('drops an aborted waiter', async () => {
    const limiter = new HostLimiter(1);
    const held = await limiter.acquire('h');
    const ctl = new AbortController();
    const waiting = limiter.acquire('h', ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    held();
    const again = await limiter.acquire('h');
    again();
  });
});

describe('Retry-After and bodies', () => {
  it('parses seconds, milliseconds and HTTP dates', () => {
    expect(parseRetryAfter({ 'retry-after': '2' })).toBe(2000);
    expect(parseRetryAfter({ 'retry-after-ms': '150', 'retry-after': '2' })).toBe(150);
    expect(
      parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }, Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')),
    ).toBe(10_000);
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
  });

  it('decodes JSON, SSE and NDJSON bodies', () => {
    const r = (body: string, contentType = 'application/json'): HttpResponse => ({
      status: 200,
      headers: {},
      contentType,
      body,
      url: '',
    });
    expect(decodeJsonMessages(r('{"a":1}'), 't')).toEqual([{ a: 1 }]);
    expect(decodeJsonMessages(r('data: {"a":1}\n\ndata: {"a":2}\n\n', 'text/event-stream'), 't')).toEqual([
      { a: 1 },
      { a: 2 },
    ]);
    expect(decodeJsonMessages(r('{"a":1}\n{"a":2}\n', 'application/x-ndjson'), 't')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(() => decodeJsonMessages(r(''), 't')).toThrow(/empty/);
  });
});

describe('per-agent headers from environment variables', () => {
  const agent = agentFor('openai', 'https://api.example.com/v1', { name: 'calc-bot' });
  const config = {
    'api.example.com': { Authorization: 'EXAMPLE_AUTH' },
    'https://other.example': { 'X-Key': 'OTHER_KEY' },
    'calc-bot': { 'X-Name-Key': 'NAME_KEY' },
  };

  it('resolves entries matching the host, origin or subject from the environment', () => {
    expect(resolveAgentHeaders(config, agent, { EXAMPLE_AUTH: 'Bearer s3cret', NAME_KEY: 'n' })).toEqual({
      authorization: 'Bearer s3cret',
    });
    expect(resolveAgentHeaders(config, agentFor('openai', 'https://other.example/x'), { OTHER_KEY: 'k' })).toEqual({
      'x-key': 'k',
    });
    expect(resolveAgentHeaders({ [agent.subject]: { 'X-Sub': 'SUB' } }, agent, { SUB: 's' })).toEqual({ 'x-sub': 's' });
    expect(resolveAgentHeaders(config, agentFor('openai', 'https://nothing.example'), {})).toEqual({});
  });

  it('never matches on the display name, which any registry entry can choose', () => {
    const impostor = agentFor('openai', 'https://evil.example', { name: 'calc-bot' });
    expect(resolveAgentHeaders(config, impostor, { NAME_KEY: 'n' })).toEqual({});
  });

  it('fails with a config error naming the variable, never a value', () => {
    expect(() => resolveAgentHeaders(config, agent, {})).toThrow(ConfigError);
    expect(() => resolveAgentHeaders(config, agent, {})).toThrow(/EXAMPLE_AUTH/);
  });
});
