/**
 * Webhooks end to end: registered through the admin API, fired when indexed signals move a subject's score across a
 * threshold or flip its availability, delivered signed to a receiver on 127.0.0.1 (private receivers allowed
 * explicitly), retried with backoff when the receiver fails (the backoff on vitest's fake clock), each attempt in the
 * hook's log. The store part, on both engines: hooks-store.test.ts. Longer than 500 lines because the scenarios share
 * one store, server and pair of subjects, each continuing from the state the one before left (B's availability flips).
 */
import { createHmac } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/config/secret.js';
import type { ReadSignal } from '../../src/read/types.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { ServeEvents } from '../../src/serve/events.js';
import { HookDispatcher } from '../../src/serve/hooks/dispatcher.js';
import { hookApi } from '../../src/serve/hooks/routes.js';
import { startHttpServer, type ServeHttp } from '../../src/serve/http.js';
import { DEFAULT_LIMITS } from '../../src/serve/limits.js';
import { livePage } from '../../src/serve/live.js';
import { openStore, type ServeStore, type StoredHook } from '../../src/serve/store/index.js';
import type { Resolver } from '../../src/net/guard.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';
import { componentValidator, openapiValidator } from './openapi.js';
import { indexAndScore } from './helpers.js';

const TOPIC = '0.0.4242';
const NOW = new Date(T0 + 200 * HOUR);
const TOKEN = 'test-admin-token-0123456789';
const check = openapiValidator();
const checkComponent = componentValidator();

/** Signals for `subject` over `runs` runs from run `from`: probes reachable or not, evals correct or wrong. */
function runs(subject: string, from: number, count: number, good: boolean, seq: { next: number }): ReadSignal[] {
  const out: ReadSignal[] = [];
  for (let r = from; r < from + count; r++) {
    const at = T0 + r * HOUR;
    out.push(probe(subject, { seq: seq.next++, at, run: r, reachable: good }));
    out.push(evalSignal(subject, 'math', good ? 'correct' : 'wrong', { seq: seq.next++, at: at + 100, run: r }));
  }
  return out;
}

const index = (store: ServeStore, signals: ReadSignal[]) => indexAndScore(store, TOPIC, signals, NOW);

async function total(store: ServeStore, subject: string): Promise<number> {
  return (await store.subjectScore(subject, { topic: TOPIC }))!.score!.trustScores.total;
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1: answers each request with the next status queued (200 when none is). */
async function receiver(): Promise<{
  url: string;
  received: Received[];
  statuses: number[];
  /** Resolves once `n` requests have arrived. */
  count(n: number): Promise<Received[]>;
  /** Requests are held unanswered (a slow receiver). */
  hang: boolean;
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const waiting: Array<{ n: number; resolve: (r: Received[]) => void }> = [];
  const state = { hang: false };
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      for (const w of waiting.splice(0)) {
        if (received.length >= w.n) w.resolve(received.slice());
        else waiting.push(w);
      }
      if (state.hang) return;
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    statuses,
    count: (n) =>
      received.length >= n ? Promise.resolve(received.slice()) : new Promise((resolve) => waiting.push({ n, resolve })),
    get hang() {
      return state.hang;
    },
    set hang(v: boolean) {
      state.hang = v;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  json: unknown;
}

function call(
  base: string,
  path: string,
  options: {
    method?: string;
    body?: unknown;
    raw?: string;
    token?: string | null;
    headers?: Record<string, string>;
  } = {},
): Promise<Res> {
  const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = {
    ...(payload !== undefined && { 'content-type': 'application/json' }),
    ...(options.token !== null && { authorization: `Bearer ${options.token ?? TOKEN}` }),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: options.method ?? 'GET', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, json: text ? JSON.parse(text) : undefined }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** What a receiver does: HMAC-SHA256 over "<timestamp>.<body>" with the hook's secret (written here, not imported). */
function signatureOk(secret: string, r: Received): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(`${r.headers['x-hcs25-timestamp']}.${r.body}`).digest('hex')}`;
  return r.headers['x-hcs25-signature'] === expected;
}

describe('webhooks end to end (embedded store, a receiver on 127.0.0.1)', () => {
  const A = uaid('alpha.example.com');
  const B = uaid('beta.example.com');
  const seq = { next: 1 };
  let store: ServeStore;
  let events: ServeEvents;
  let wired: HookDispatcher;
  /** The dispatcher the revision changes wake; tests that drive one themselves switch it off. */
  let wiredActive = true;
  let server: ServeHttp;
  let base: string;

  /** A server over the store; one besides the main one gets events of its own (closing a server closes its events). */
  async function startServer(
    hooks: Parameters<typeof hookApi>[0] | undefined,
    cors: string[] = [],
    own = new ServeEvents({ store, maxClients: 1 }),
  ) {
    return startHttpServer({
      store,
      events: own,
      topics: [TOPIC],
      publishers: [],
      scoring: DEFAULT_SCORING_CONFIG,
      live: livePage({ store, scoring: DEFAULT_SCORING_CONFIG, publishers: [], revision: () => events.revision() }),
      port: 0,
      cors,
      limits: { requestsPerSecond: 0 },
      ...(hooks && { hooks: hookApi(hooks) }),
    });
  }

  const apiOptions = (extra: Partial<Parameters<typeof hookApi>[0]> = {}) => ({
    store,
    token: new Secret(TOKEN),
    topics: [TOPIC],
    allowPrivate: true,
    limits: DEFAULT_LIMITS,
    ...extra,
  });

  beforeAll(async () => {
    store = await openStore('memory://', { stateDir: tmpdir() });
    wired = new HookDispatcher({ store, active: () => wiredActive, allowPrivate: true, timeoutMs: 5_000 });
    events = new ServeEvents({ store, maxClients: 5, pollMs: 10, onRevision: () => wired.wake() });
    events.start();
    await index(store, [...runs(A, 0, 10, true, seq), ...runs(B, 0, 10, true, seq)]);
    // What the alerting sees of A and B before any hook exists: their state to compare with.
    await wired.tick();
    server = await startServer(apiOptions({ onChange: () => wired.wake() }), ['*'], events);
    base = server.url;
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await wired?.close();
    await store?.close();
  });

  afterEach(() => {
    vi.useRealTimers();
    wiredActive = true;
  });

  it('registers a hook, and a score falling through its threshold and a failing probe reach the receiver signed', async () => {
    const r = await receiver();
    try {
      const created = await call(base, '/v1/hooks', {
        method: 'POST',
        body: { url: r.url, events: ['score-crossed', 'availability-changed'], thresholds: [50], subjects: [A] },
      });
      check('/v1/hooks', created.status, created.json, 'application/json', 'post');
      expect(created.status).toBe(201);
      const { hook, secret } = created.json as { hook: StoredHook; secret: string };
      expect(created.headers.location).toBe(`/v1/hooks/${hook.id}`);
      expect(hook).toMatchObject({ url: r.url, thresholds: [50], subjects: [A], topic: null });

      const before = await total(store, A);
      expect(before).toBeGreaterThanOrEqual(50);
      // A fails for a while (B too, but the hook names only A): indexed, rescored, seen by the revision watch.
      await index(store, [...runs(A, 10, 30, false, seq), ...runs(B, 10, 30, false, seq)]);
      const after = await total(store, A);
      expect(after).toBeLessThan(50);

      const got = await r.count(2);
      const bodies = got.map((g) => JSON.parse(g.body) as Record<string, unknown>);
      const byEvent = Object.fromEntries(bodies.map((b) => [b.event, b]));
      expect(Object.keys(byEvent).sort()).toEqual(['availability-changed', 'score-crossed']);
      expect(byEvent['score-crossed']).toMatchObject({
        hook: hook.id,
        topic: TOPIC,
        subject: A,
        threshold: 50,
        direction: 'down',
        previous: before,
        current: after,
      });
      expect(byEvent['availability-changed']).toMatchObject({ subject: A, reachable: false, previous: true });
      for (const [i, g] of got.entries()) {
        checkComponent('HookPayload', bodies[i]);
        expect(signatureOk(secret, g)).toBe(true);
        expect(signatureOk(`${secret}x`, g)).toBe(false);
        expect(g.headers['content-type']).toBe('application/json');
        expect(g.headers['x-hcs25-event']).toBe(bodies[i]!.event);
        expect(g.headers['x-hcs25-delivery']).toBe(bodies[i]!.id);
      }

      // Both are in the log, delivered at the first attempt.
      const log = await call(base, `/v1/hooks/${hook.id}/deliveries`);
      check('/v1/hooks/{id}/deliveries', log.status, log.json);
      const rows = (log.json as { deliveries: Array<Record<string, unknown>> }).deliveries;
      expect(rows.map((d) => [d.event, d.attempt, d.status, d.ok, d.state]).sort()).toEqual([
        ['availability-changed', 1, 200, true, 'delivered'],
        ['score-crossed', 1, 200, true, 'delivered'],
      ]);
      const shown = await call(base, `/v1/hooks/${hook.id}`);
      check('/v1/hooks/{id}', shown.status, shown.json);
      expect(shown.json).toMatchObject({ id: hook.id, deliveries: { pending: 0, delivered: 2, failed: 0 } });
      expect(JSON.stringify(shown.json)).not.toContain(secret);
      expect((await call(base, `/v1/hooks/${hook.id}`, { method: 'DELETE' })).status).toBe(204);
    } finally {
      await r.close();
    }
  });

  it('retries a receiver that fails twice with backoff; the third attempt delivers, and the log shows all three', async () => {
    wiredActive = false;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const backoff = { minMs: 60_000, maxMs: 3_600_000, factor: 2 };
    const own = new HookDispatcher({ store, active: () => true, allowPrivate: true, backoff, maxAttempts: 5 });
    const r = await receiver();
    r.statuses.push(500, 503);
    try {
      const created = await call(base, '/v1/hooks', {
        method: 'POST',
        body: { url: r.url, events: ['availability-changed'], subjects: [B], topic: TOPIC },
      });
      const { hook, secret } = created.json as { hook: StoredHook; secret: string };
      await index(store, runs(B, 40, 3, true, seq));
      expect((await own.queue()).queued).toBe(1);

      expect(await own.deliverDue()).toBe(1);
      expect(r.received.map((g) => g.headers['x-hcs25-event'])).toEqual(['availability-changed']);
      // Not due again until the first backoff step has passed.
      vi.setSystemTime(Date.now() + backoff.minMs - 1000);
      expect(await own.deliverDue()).toBe(0);
      vi.setSystemTime(Date.now() + 1000);
      expect(await own.deliverDue()).toBe(1);
      // The second step is twice as long.
      vi.setSystemTime(Date.now() + backoff.minMs);
      expect(await own.deliverDue()).toBe(0);
      vi.setSystemTime(Date.now() + backoff.minMs);
      expect(await own.deliverDue()).toBe(1);
      expect(await own.deliverDue()).toBe(0);

      const got = await r.count(3);
      expect(new Set(got.map((g) => g.body)).size).toBe(1);
      expect(new Set(got.map((g) => g.headers['x-hcs25-delivery'])).size).toBe(1);
      for (const g of got) expect(signatureOk(secret, g)).toBe(true);
      expect(JSON.parse(got[0]!.body)).toMatchObject({ subject: B, reachable: true, previous: false });

      const log = await call(base, `/v1/hooks/${hook.id}/deliveries?limit=2`);
      check('/v1/hooks/{id}/deliveries', log.status, log.json);
      const first = log.json as { deliveries: Array<Record<string, unknown>>; nextCursor: string };
      const rest = await call(base, `/v1/hooks/${hook.id}/deliveries?limit=2&cursor=${first.nextCursor}`);
      const rows = [...first.deliveries, ...(rest.json as typeof first).deliveries];
      expect(rows.map((d) => [d.attempt, d.status, d.ok, d.error])).toEqual([
        [3, 200, true, null],
        [2, 503, false, 'HTTP 503'],
        [1, 500, false, 'HTTP 500'],
      ]);
      expect(new Set(rows.map((d) => d.state))).toEqual(new Set(['delivered']));
      expect(Date.parse(rows[0]!.at as string) - Date.parse(rows[2]!.at as string)).toBe(3 * backoff.minMs);
      await call(base, `/v1/hooks/${hook.id}`, { method: 'DELETE' });
    } finally {
      await own.close();
      await r.close();
    }
  });

  it('cuts off a receiver that does not answer in time, and gives up after the last attempt', async () => {
    wiredActive = false;
    const own = new HookDispatcher({
      store,
      active: () => true,
      allowPrivate: true,
      timeoutMs: 200,
      maxAttempts: 1,
    });
    const r = await receiver();
    r.hang = true;
    try {
      const created = await call(base, '/v1/hooks', {
        method: 'POST',
        body: { url: r.url, events: ['availability-changed'], subjects: [B] },
      });
      const { hook } = created.json as { hook: StoredHook };
      await index(store, runs(B, 43, 3, false, seq));
      await own.queue();
      expect(await own.deliverDue()).toBe(1);
      const log = (await call(base, `/v1/hooks/${hook.id}/deliveries`)).json as {
        deliveries: Array<Record<string, unknown>>;
      };
      expect(log.deliveries).toEqual([
        expect.objectContaining({
          attempt: 1,
          status: null,
          ok: false,
          state: 'failed',
          error: 'no answer within 200 ms',
        }),
      ]);
      expect((await call(base, `/v1/hooks/${hook.id}`)).json).toMatchObject({
        deliveries: { pending: 0, delivered: 0, failed: 1 },
      });
      await call(base, `/v1/hooks/${hook.id}`, { method: 'DELETE' });
    } finally {
      await own.close();
      await r.close();
    }
  });

  it('answers 401 without the admin token or with a wrong one, and never with CORS headers', async () => {
    for (const [token, path, method] of [
      [null, '/v1/hooks', 'GET'],
      ['wrong-token-0123456789', '/v1/hooks', 'GET'],
      [`${TOKEN}x`, '/v1/hooks', 'POST'],
      [TOKEN.slice(0, -1), '/v1/hooks/hk_x', 'DELETE'],
      [null, '/v1/hooks/hk_x/deliveries', 'GET'],
    ] as const) {
      const res = await call(base, path, {
        method,
        token,
        headers: { origin: 'https://example.com' },
        ...(method === 'POST' && { body: { url: 'http://127.0.0.1/', events: ['availability-changed'] } }),
      });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
      expect((res.json as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
    const preflight = await call(base, '/v1/hooks', {
      method: 'OPTIONS',
      token: null,
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
    // The read API of the same server is open to that origin (--cors *).
    const open = await call(base, '/v1/topics', { token: null, headers: { origin: 'https://example.com' } });
    expect(open.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers 404 on a server without an admin token', async () => {
    const plain = await startServer(undefined);
    try {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await call(plain.url, '/v1/hooks', { method, ...(method === 'POST' && { body: {} }) });
        expect(res.status).toBe(404);
        expect((res.json as { error: { code: string } }).error.code).toBe('NOT_FOUND');
      }
    } finally {
      await plain.close();
    }
  });

  it('refuses receivers on private addresses unless allowed, at registration and at each delivery', async () => {
    const dns = new Map([
      ['hooks.example.com', '93.184.216.34'],
      ['intranet.example.com', '10.1.2.3'],
    ]);
    const resolver: Resolver = async (host) => {
      const address = dns.get(host);
      if (!address) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return [{ address, family: 4 }];
    };
    const guarded = await startServer(apiOptions({ allowPrivate: false, resolver }));
    const own = new HookDispatcher({ store, active: () => true, allowPrivate: false, resolver });
    wiredActive = false;
    try {
      for (const url of ['http://127.0.0.1:8080/hook', 'http://[::1]/hook', 'https://intranet.example.com/hook']) {
        const res = await call(guarded.url, '/v1/hooks', {
          method: 'POST',
          body: { url, events: ['availability-changed'] },
        });
        check('/v1/hooks', res.status, res.json, 'application/json', 'post');
        expect(res.status).toBe(400);
        expect((res.json as { error: { code: string } }).error.code).toBe('PRIVATE_ADDRESS');
      }
      const unknown = await call(guarded.url, '/v1/hooks', {
        method: 'POST',
        body: { url: 'https://nowhere.example.com/', events: ['availability-changed'] },
      });
      expect((unknown.json as { error: { code: string } }).error.code).toBe('BAD_URL');

      const ok = await call(guarded.url, '/v1/hooks', {
        method: 'POST',
        body: { url: 'https://hooks.example.com/hook', events: ['availability-changed'], subjects: [B] },
      });
      expect(ok.status).toBe(201);
      const { hook } = ok.json as { hook: StoredHook };
      // The name now resolves to a loopback address: the delivery is refused before any connection.
      dns.set('hooks.example.com', '127.0.0.1');
      await index(store, runs(B, 46, 3, true, seq));
      await own.queue();
      expect(await own.deliverDue()).toBe(1);
      const log = (await call(guarded.url, `/v1/hooks/${hook.id}/deliveries`)).json as {
        deliveries: Array<Record<string, unknown>>;
      };
      expect(log.deliveries).toEqual([
        expect.objectContaining({ attempt: 1, status: null, ok: false, state: 'pending' }),
      ]);
      expect(log.deliveries[0]!.error).toMatch(/non-public address.*--allow-private-hooks/);
      await call(guarded.url, `/v1/hooks/${hook.id}`, { method: 'DELETE' });
    } finally {
      await own.close();
      await guarded.close();
    }
  });

  it('validates bodies and queries; lists, shows and deletes hooks', async () => {
    const bad: Array<[unknown, number, string]> = [
      [{ url: 'http://127.0.0.1/', events: ['score-crossed'] }, 400, 'BAD_BODY'],
      [{ url: 'http://127.0.0.1/', events: ['availability-changed'], thresholds: [10] }, 400, 'BAD_BODY'],
      [{ url: 'http://127.0.0.1/', events: ['score-crossed'], thresholds: [101] }, 400, 'BAD_BODY'],
      [{ url: 'http://127.0.0.1/', events: ['uptime'] }, 400, 'BAD_BODY'],
      [{ url: 'http://127.0.0.1/', events: ['availability-changed'], extra: 1 }, 400, 'BAD_BODY'],
      [{ url: 'http://127.0.0.1/', events: ['availability-changed'], topic: '0.0.1' }, 400, 'BAD_BODY'],
      [{ url: 'ftp://127.0.0.1/', events: ['availability-changed'] }, 400, 'BAD_URL'],
      [{ url: 'http://user:pw@127.0.0.1/', events: ['availability-changed'] }, 400, 'BAD_URL'],
      [
        { url: 'http://127.0.0.1/', events: ['availability-changed'], subjects: ['x'.repeat(20_000)] },
        413,
        'BODY_TOO_LARGE',
      ],
    ];
    for (const [body, status, code] of bad) {
      const res = await call(base, '/v1/hooks', { method: 'POST', body });
      check('/v1/hooks', res.status, res.json, 'application/json', 'post');
      expect([res.status, (res.json as { error: { code: string } }).error.code]).toEqual([status, code]);
    }
    const notJson = await call(base, '/v1/hooks', {
      method: 'POST',
      raw: '{',
      headers: { 'content-type': 'text/plain' },
    });
    expect(notJson.status).toBe(415);
    const broken = await call(base, '/v1/hooks', { method: 'POST', raw: '{"url":' });
    expect((broken.json as { error: { code: string } }).error.code).toBe('BAD_BODY');

    const ids: string[] = [];
    for (const t of [[80, 20, 80], [55]]) {
      const res = await call(base, '/v1/hooks', {
        method: 'POST',
        body: { url: 'http://127.0.0.1:9/', events: ['score-crossed'], thresholds: t },
      });
      ids.push((res.json as { hook: StoredHook }).hook.id);
    }
    const firstPage = await call(base, '/v1/hooks?limit=1');
    check('/v1/hooks', firstPage.status, firstPage.json);
    const page = firstPage.json as { hooks: StoredHook[]; nextCursor: string };
    expect(page.hooks.map((h) => [h.id, h.thresholds])).toEqual([[ids[0], [20, 80]]]);
    const second = (await call(base, `/v1/hooks?limit=1&cursor=${page.nextCursor}`)).json as typeof page;
    expect(second.hooks.map((h) => h.id)).toEqual([ids[1]]);
    expect((await call(base, '/v1/hooks?cursor=bm9wZQ')).status).toBe(400);
    expect((await call(base, '/v1/hooks?limit=1&limit=2')).status).toBe(400);
    expect((await call(base, '/v1/hooks?verbose=1')).status).toBe(400);

    for (const id of ids) {
      const del = await call(base, `/v1/hooks/${id}`, { method: 'DELETE' });
      check('/v1/hooks/{id}', del.status, del.json, 'application/json', 'delete');
      expect(del.status).toBe(204);
    }
    for (const [path, method] of [
      [`/v1/hooks/${ids[0]}`, 'GET'],
      [`/v1/hooks/${ids[0]}`, 'DELETE'],
      [`/v1/hooks/${ids[0]}/deliveries`, 'GET'],
    ] as const) {
      const res = await call(base, path, { method });
      expect([res.status, (res.json as { error: { code: string } }).error.code]).toEqual([404, 'HOOK_NOT_FOUND']);
    }
    const put = await call(base, '/v1/hooks', { method: 'PUT' });
    check('/v1/hooks', put.status, put.json);
    expect([put.status, put.headers.allow]).toEqual([405, 'GET, HEAD, POST']);
  });
});
