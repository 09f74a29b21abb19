/**
 * The HTTP API over a real store (embedded PGlite, in memory) filled through the indexer's write path: every answer
 * is checked against schemas/serve-openapi.json, the shapes equal `hcs25 scores --json` / `signals --json`, and the
 * rules hold (validation → 400, unknown → 404, read-only, ETag → 304, CORS, limits, pagination, events).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { computeScores, type SubjectScore } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { signalRow } from '../../src/read/reader.js';
import type { ReadSignal } from '../../src/read/types.js';
import { ScoreCache } from '../../src/serve/cache.js';
import { ServeEvents } from '../../src/serve/events.js';
import { startHttpServer, type ServeHttp } from '../../src/serve/http.js';
import { livePage } from '../../src/serve/live.js';
import type { Hcs25Client } from '../../src/client.js';
import type { Agent } from '../../src/core/agent.js';
import { identityResolver } from '../../src/serve/identities.js';
import type { SubjectIdentity } from '../../src/serve/store/types.js';
import { openStore, type ServeStore } from '../../src/serve/store/index.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';
import { OPENAPI, openapiValidator } from './openapi.js';
import { esc } from '../../src/report/svg.js';
import { indexAndScore } from './helpers.js';

const TOPIC = '0.0.4242';
const NOW = new Date(T0 + 30 * HOUR);
const HOSTILE = 'uaid:aid:x;uid=0;proto=a2a;nativeId=<img/src=x/onerror=alert(1)>"\'&';
const SUBJECTS = [uaid('calc.example.com'), uaid('files.mcp.dev', 'mcp'), uaid('slow.example.org', 'openai'), HOSTILE];
/** The registry the first three subjects' signals cite; it lists the first two (the HOSTILE one cites none). */
const REGISTRY = '0.0.777';
const NAME = 'Calc <b>"bot"</b> & co';
const LISTED: Agent[] = [
  {
    subject: SUBJECTS[0]!,
    name: NAME,
    protocol: 'a2a',
    endpoint: 'https://calc.example.com/a2a',
    source: `hcs://2/${REGISTRY}`,
    registrySeq: 3,
  },
  {
    subject: SUBJECTS[1]!,
    name: 'Files',
    protocol: 'mcp',
    endpoint: 'https://files.mcp.dev/mcp',
    source: `hcs://2/${REGISTRY}`,
    registrySeq: 5,
  },
];
const IDENTITIES: Record<string, SubjectIdentity> = {
  [SUBJECTS[0]!]: {
    name: NAME,
    protocol: 'a2a',
    endpoint: 'https://calc.example.com/a2a',
    accountId: null,
    registry: REGISTRY,
    entry: `hcs://2/${REGISTRY}#3`,
    sequence: 3,
    status: 'resolved',
    note: null,
  },
  [SUBJECTS[1]!]: {
    name: 'Files',
    protocol: 'mcp',
    endpoint: 'https://files.mcp.dev/mcp',
    accountId: null,
    registry: REGISTRY,
    entry: `hcs://2/${REGISTRY}#5`,
    sequence: 5,
    status: 'resolved',
    note: null,
  },
  [SUBJECTS[2]!]: {
    name: null,
    protocol: 'openai',
    endpoint: null,
    accountId: null,
    registry: REGISTRY,
    entry: null,
    sequence: null,
    status: 'not-listed',
    note: null,
  },
  [HOSTILE]: {
    name: null,
    protocol: 'a2a',
    endpoint: null,
    accountId: null,
    registry: null,
    entry: null,
    sequence: null,
    status: 'uncited',
    note: null,
  },
};

/** The indexer's naming round over REGISTRY, listing `agents`. */
async function nameSubjects(agents: Agent[]): Promise<void> {
  const resolver = identityResolver({} as Hcs25Client, {
    store,
    signal: new AbortController().signal,
    discover: async (registry) => (registry === REGISTRY ? agents : []),
  });
  while ((await resolver.round()).more);
}

function fleetSignals(firstSeq: number, runs: number, runOffset = 0): ReadSignal[] {
  const out: ReadSignal[] = [];
  let seq = firstSeq;
  for (let r = 0; r < runs; r++) {
    for (const [i, subject] of SUBJECTS.entries()) {
      const at = T0 + (r + runOffset) * HOUR + i * 1000;
      const run = r + runOffset;
      const sources = subject === HOSTILE ? undefined : [`hcs://2/${REGISTRY}`];
      out.push(probe(subject, { seq: seq++, at, run, reachable: (r + i) % 4 !== 0, ...(sources && { sources }) }));
      if (!subject.includes('proto=mcp'))
        out.push(evalSignal(subject, 'math', (r + i) % 3 ? 'correct' : 'wrong', { seq: seq++, at: at + 100, run }));
    }
  }
  return out;
}

const apply = (store: ServeStore, signals: ReadSignal[]) => indexAndScore(store, TOPIC, signals, NOW);

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

function get(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method: options.method ?? 'GET', headers: options.headers ?? {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let json: unknown;
          try {
            json =
              text && String(res.headers['content-type']).startsWith('application/json') ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const check = openapiValidator();
const enc = encodeURIComponent;

let dir: string;
let store: ServeStore;
let events: ServeEvents;
let server: ServeHttp;
let base: string;
const first = fleetSignals(1, 6);

async function startServer(limits = {}, cors: string[] = [], ownEvents = events, port = 0): Promise<ServeHttp> {
  return startHttpServer({
    store,
    events: ownEvents,
    topics: [TOPIC],
    publishers: ['0.0.1001'],
    scoring: DEFAULT_SCORING_CONFIG,
    live: livePage({
      store,
      scoring: DEFAULT_SCORING_CONFIG,
      publishers: ['0.0.1001'],
      revision: () => events.revision(),
    }),
    port,
    cors,
    limits: { requestsPerSecond: 0, ...limits },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hcs25-serve-api-'));
  store = await openStore('memory://', { stateDir: dir });
  await apply(store, first);
  await nameSubjects(LISTED);
  events = new ServeEvents({ store, scores: new ScoreCache(store), maxClients: 2, pollMs: 50 });
  events.start();
  server = await startServer({}, ['https://app.example']);
  base = server.url;
});

afterAll(async () => {
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /v1/subjects/{subject}/score', () => {
  it('answers one subject of `hcs25 scores --json`, for every subject, hostile ones included', async () => {
    const report = computeScores(first, DEFAULT_SCORING_CONFIG, { now: NOW, topic: TOPIC, publishers: ['0.0.1001'] });
    for (const expected of report.subjects) {
      const res = await get(base, `/v1/subjects/${enc(expected.subject)}/score`);
      check('/v1/subjects/{subject}/score', res.status, res.json);
      expect(res.status).toBe(200);
      // One subject of `hcs25 scores --json`, and who it is.
      expect(res.json).toEqual(JSON.parse(JSON.stringify({ ...expected, identity: IDENTITIES[expected.subject] })));
      expect(res.headers['x-score-fresh']).toBe('true');
    }
  });

  it('404s a subject it has never seen, as one JSON line', async () => {
    const res = await get(base, `/v1/subjects/${enc(uaid('nobody.example'))}/score`);
    check('/v1/subjects/{subject}/score', res.status, res.json);
    expect(res.status).toBe(404);
    expect(res.text.trim().split('\n')).toHaveLength(1);
    expect((res.json as { error: { code: string } }).error.code).toBe('SUBJECT_NOT_FOUND');
  });
});

describe('GET /v1/subjects/{subject}/signals', () => {
  it('pages through the history, newest first, rows as `hcs25 signals --json` prints them', async () => {
    const subject = SUBJECTS[0]!;
    const expected = first
      .filter((s) => s.message.subject === subject)
      .reverse()
      .map(signalRow);
    const rows: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(base, `/v1/subjects/${enc(subject)}/signals?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      check('/v1/subjects/{subject}/signals', res.status, res.json);
      const body = res.json as { signals: unknown[]; nextCursor: string | null; topic: string; subject: string };
      expect(body.signals.length).toBeLessThanOrEqual(5);
      expect(body.topic).toBe(TOPIC);
      expect(body.subject).toBe(subject);
      rows.push(...body.signals);
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(expected.length / 5));
    // This server was not told its network: each row's links are there, empty.
    const links = { hashscan: null, mirror: null };
    expect(rows).toEqual(JSON.parse(JSON.stringify(expected.map((row) => ({ ...row, links })))));
  });
});

describe('GET /v1/subjects', () => {
  it('ranks by score and filters by protocol, publisher, minimum score and confidence', async () => {
    const all = await get(base, '/v1/subjects');
    check('/v1/subjects', all.status, all.json);
    const subjects = (
      all.json as {
        subjects: Array<{ subject: string; protocol: string; trustScores: { total: number }; trustConfidence: number }>;
      }
    ).subjects;
    expect(subjects.map((s) => s.subject).sort()).toEqual([...SUBJECTS].sort());
    const totals = subjects.map((s) => s.trustScores.total);
    expect(totals).toEqual([...totals].sort((a, b) => b - a));

    const mcp = (await get(base, '/v1/subjects?protocol=mcp')).json as { subjects: typeof subjects };
    expect(mcp.subjects.map((s) => s.subject)).toEqual([SUBJECTS[1]]);
    const cut = totals[1]!;
    const high = (await get(base, `/v1/subjects?minScore=${cut}`)).json as { subjects: typeof subjects };
    expect(high.subjects.every((s) => s.trustScores.total >= cut)).toBe(true);
    expect(high.subjects.length).toBe(totals.filter((t) => t >= cut).length);
    const conf = (await get(base, '/v1/subjects?minConfidence=1')).json as { subjects: typeof subjects };
    expect(conf.subjects.every((s) => s.trustConfidence >= 1)).toBe(true);
    const other = (await get(base, '/v1/subjects?publisher=0.0.999')).json as { subjects: typeof subjects };
    expect(other.subjects).toEqual([]);

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(base, `/v1/subjects?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      check('/v1/subjects', res.status, res.json);
      const body = res.json as { subjects: typeof subjects; nextCursor: string | null };
      paged.push(...body.subjects.map((s) => s.subject));
      cursor = body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(subjects.map((s) => s.subject));
    // A cursor this list did not give out is the request's fault (400), on every paged list.
    for (const path of [
      '/v1/subjects',
      `/v1/subjects/${encodeURIComponent(subjects[0]!.subject)}/signals`,
      '/v1/runs',
    ]) {
      const bad = await get(base, `${path}?cursor=bm9wZQ`);
      expect(bad.status).toBe(400);
      expect(bad.json).toEqual({
        error: { code: 'BAD_QUERY', message: 'the page cursor is not one this list gave out' },
      });
    }
  });
});

describe('evidence strength in /v1/subjects', () => {
  type Listed = { subject: string; evidenceStrength: SubjectScore['evidenceStrength'] };
  const list = async (query: string) => {
    const res = await get(base, `/v1/subjects?${query}`);
    check('/v1/subjects', res.status, res.json);
    expect(res.status).toBe(200);
    return (res.json as { subjects: Listed[] }).subjects;
  };

  it('says what each score rests on, with observations and intervals per eval, and filters by it', async () => {
    const all = await list('');
    const mcp = all.find((s) => s.subject === SUBJECTS[1])!;
    expect(mcp.evidenceStrength).toMatchObject({ basis: 'availability-only', evalObservations: 0, evals: {} });
    const calc = all.find((s) => s.subject === SUBJECTS[0])!;
    // Six runs asked one math question each; science was never asked, so it enters the score as 0 with no observation.
    expect(calc.evidenceStrength).toMatchObject({ basis: 'evals', evalObservations: 6, lowEvidence: true });
    expect(calc.evidenceStrength.evals['simple-evals.a2a_math']).toMatchObject({ observations: 6, lowEvidence: false });
    expect(calc.evidenceStrength.evals['simple-evals.a2a_science']).toMatchObject({
      observations: 0,
      rate: null,
      interval: { low: 0, high: 1 },
      lowEvidence: true,
    });

    expect((await list('basis=availability-only')).map((s) => s.subject)).toEqual([SUBJECTS[1]]);
    const withEvals = await list('basis=evals');
    expect(withEvals.map((s) => s.subject).sort()).toEqual(SUBJECTS.filter((s) => s !== SUBJECTS[1]).sort());
    expect((await list('evidence=sufficient')).map((s) => s.subject)).toEqual([SUBJECTS[1]]);
    expect((await list('evidence=low')).every((s) => s.evidenceStrength.lowEvidence)).toBe(true);
    expect((await list('minEvalObservations=6&basis=evals')).length).toBe(withEvals.length);
    expect(await list('minEvalObservations=7')).toEqual([]);
  });

  it('rejects an unknown basis or evidence value with one-line 400s', async () => {
    for (const q of ['basis=probes', 'evidence=high', 'minEvalObservations=-1']) {
      const res = await get(base, `/v1/subjects?${q}`);
      check('/v1/subjects', res.status, res.json);
      expect(res.status).toBe(400);
      expect((res.json as { error: { code: string } }).error.code).toBe('BAD_QUERY');
    }
  });
});

describe('GET /v1/topics, /v1/runs, /v1/runs/{run}/verification', () => {
  it("reports each topic's indexing status", async () => {
    const res = await get(base, '/v1/topics');
    check('/v1/topics', res.status, res.json);
    const [t] = (res.json as { topics: Array<{ topic: string; lastSequence: number; counts: { signals: number } }> })
      .topics;
    expect(t).toMatchObject({
      topic: TOPIC,
      lastSequence: first[first.length - 1]!.sequenceNumber,
      counts: { signals: first.length },
    });
  });

  it('lists runs and answers a run verification (unrevealed: nothing to verify yet)', async () => {
    const res = await get(base, '/v1/runs');
    check('/v1/runs', res.status, res.json);
    const runs = (res.json as { runs: Array<{ run: string; signals: number; revealed: boolean }> }).runs;
    expect(runs.length).toBe(6);
    expect(runs.reduce((n, r) => n + r.signals, 0)).toBe(first.length);
    const v = await get(base, `/v1/runs/${runs[0]!.run}/verification?topic=${TOPIC}`);
    check('/v1/runs/{run}/verification', v.status, v.json);
    expect(v.status).toBe(200);
    expect(v.json).toMatchObject({ topic: TOPIC, run: runs[0]!.run, revealed: false });
    const none = await get(base, '/v1/runs/01JDX3V9W5Q8K6T2N4M7ZZZZZZ/verification');
    check('/v1/runs/{run}/verification', none.status, none.json);
    expect(none.status).toBe(404);
  });
});

describe('rules', () => {
  it.each([
    ['/v1/subjects?limit=0', 'limit'],
    ['/v1/subjects?limit=501', 'limit'],
    ['/v1/subjects?limit=abc', 'limit'],
    ['/v1/subjects?minScore=101', 'minScore'],
    ['/v1/subjects?minConfidence=-1', 'minConfidence'],
    ['/v1/subjects?topic=nope', 'topic'],
    ['/v1/subjects?cursor=a%20b', 'cursor'],
    ['/v1/subjects?limt=5', 'unknown query parameter "limt"'],
    ['/v1/subjects?limit=5&limit=6', 'more than once'],
    ['/v1/topics?x=1', 'unknown query parameter "x"'],
  ])('%s → 400 naming %s', async (path, word) => {
    const res = await get(base, path);
    check(new URL(path, base).pathname, res.status, res.json);
    expect(res.status).toBe(400);
    expect(res.text.trim().split('\n')).toHaveLength(1);
    expect((res.json as { error: { message: string } }).error.message).toContain(word);
  });

  it('404s unknown routes and topics it does not follow; only GET, HEAD and OPTIONS', async () => {
    for (const path of ['/v2/subjects', '/v1/subjects/x/scores', '/v1', '/admin']) {
      const res = await get(base, path);
      expect(res.status).toBe(404);
      expect((res.json as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
    const topic = await get(base, '/v1/subjects?topic=0.0.1');
    check('/v1/subjects', topic.status, topic.json);
    expect(topic.status).toBe(404);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await get(base, '/v1/subjects', { method });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    }
    const head = await get(base, '/v1/topics', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('rejects an overlong URL with 414', async () => {
    const res = await get(base, `/v1/subjects/${'a'.repeat(3000)}/score`);
    check('/v1/subjects/{subject}/score', res.status, res.json);
    expect(res.status).toBe(414);
  });

  it('gives strong ETags from the store revision: If-None-Match → 304 until the data changes', async () => {
    const path = `/v1/subjects/${enc(SUBJECTS[0]!)}/score`;
    const a = await get(base, path);
    const etag = a.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(a.headers['cache-control']).toBe('no-cache');
    const b = await get(base, path, { headers: { 'If-None-Match': etag } });
    expect(b.status).toBe(304);
    expect(b.text).toBe('');
    const other = await get(base, '/v1/topics');
    expect(other.headers.etag).not.toBe(etag);
    // New data: a new revision, so the old tag no longer matches (once the server has noticed, one poll at most).
    await apply(store, fleetSignals(first.length + 1, 1, 6));
    await until(async () => (await get(base, path, { headers: { 'If-None-Match': etag } })).status === 200);
  });

  it('answers CORS only for configured origins, including preflight', async () => {
    const ok = await get(base, '/v1/topics', { headers: { Origin: 'https://app.example' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example');
    const no = await get(base, '/v1/topics', { headers: { Origin: 'https://evil.example' } });
    expect(no.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await get(base, '/v1/subjects', {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
    const preNo = await get(base, '/v1/subjects', { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
    expect(preNo.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('limits requests per address and event streams per server', async () => {
    // Its own event hub: closing a server closes its hub.
    const limited = await startServer({ requestsPerSecond: 3 }, [], new ServeEvents({ store, maxClients: 1 }));
    try {
      const statuses = [];
      for (let i = 0; i < 12; i++) statuses.push((await get(limited.url, '/healthz')).status);
      expect(statuses.slice(0, 6)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(statuses).toContain(429);
    } finally {
      await limited.close();
    }
    const a = await openEvents(base);
    const b = await openEvents(base);
    try {
      const c = await get(base, '/v1/events');
      expect(c.status).toBe(503);
      expect((JSON.parse(c.text) as { error: { code: string } }).error.code).toBe('TOO_MANY_STREAMS');
    } finally {
      a.close();
      b.close();
    }
  });

  it('says so when its port is taken', async () => {
    const port = Number(new URL(base).port);
    await expect(startServer({}, [], new ServeEvents({ store, maxClients: 1 }), port)).rejects.toMatchObject({
      code: 'PORT_IN_USE',
      message: `port 127.0.0.1:${port} is already in use`,
    });
  });

  it('serves its OpenAPI document and a health check', async () => {
    const doc = await get(base, '/openapi.json');
    expect(doc.json).toEqual(OPENAPI);
    const health = await get(base, '/healthz');
    expect(health.json).toEqual({ status: 'ok' });
  });
});

describe('GET /v1/events', () => {
  it('announces each indexed batch with its topic and sequence', async () => {
    const stream = await openEvents(base, `?topic=${TOPIC}`);
    try {
      const before = (await store.cursor(TOPIC))!.sequence;
      await apply(store, fleetSignals(before + 1, 1, 7));
      const event = await stream.next('indexed');
      expect(event).toMatchObject({ topic: TOPIC, sequence: before + 1 + fleetSignals(0, 1).length - 1 });
    } finally {
      stream.close();
    }
  });
});

describe('identities', () => {
  type Item = { subject: string; identity: SubjectIdentity; protocol: string | null };
  const list = async (query: string) => {
    const res = await get(base, `/v1/subjects${query}`);
    check('/v1/subjects', res.status, res.json);
    return res;
  };
  const subjectsOf = async (query: string) =>
    ((await list(query)).json as { subjects: Item[] }).subjects.map((s) => s.subject).sort();

  it('every listed subject carries its name, protocol, endpoint and registry entry', async () => {
    const body = (await list('')).json as { subjects: Item[] };
    expect(body.subjects).toHaveLength(SUBJECTS.length);
    for (const s of body.subjects) expect(s.identity).toEqual(IDENTITIES[s.subject]);
  });

  it('filters by name, UAID or endpoint (q) and by registry; validates both', async () => {
    expect(await subjectsOf(`?q=${enc('<B>"BOT"')}`)).toEqual([SUBJECTS[0]]);
    expect(await subjectsOf('?q=files.mcp.dev%2Fmcp')).toEqual([SUBJECTS[1]]);
    expect(await subjectsOf('?q=slow.example')).toEqual([SUBJECTS[2]]);
    expect(await subjectsOf('?q=example&protocol=a2a')).toEqual([SUBJECTS[0]]);
    expect(await subjectsOf(`?registry=${REGISTRY}`)).toEqual(SUBJECTS.slice(0, 3).sort());
    expect(await subjectsOf(`?registry=${REGISTRY}&protocol=mcp`)).toEqual([SUBJECTS[1]]);
    expect(await subjectsOf('?registry=0.0.1')).toEqual([]);
    for (const bad of ['?q=', `?q=${'x'.repeat(201)}`, '?registry=calc', '?q=a&q=b']) {
      const res = await list(bad);
      expect(res.status).toBe(400);
      expect((res.json as { error: { code: string } }).error.code).toBe('BAD_QUERY');
    }
  });

  it('the live page shows names (escaped), protocols and endpoints, and filters with a plain GET form', async () => {
    const page = await get(base, '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain(esc(NAME));
    expect(page.text).not.toContain(NAME);
    expect(page.text).toContain('<code class="endpoint">https://files.mcp.dev/mcp</code>');
    expect(page.text).toContain(`hcs://2/${REGISTRY}#3`);
    expect(page.text).toMatch(/<form class="filter" method="get" action="\/"/);
    // The policy lets the form submit to the page itself, and still allows no inline script.
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)/);

    // What the form sends: every field, the empty ones meaning no filter.
    const filtered = await get(base, `/?topic=${TOPIC}&q=files&protocol=&registry=${REGISTRY}&minScore=`);
    expect(filtered.status).toBe(200);
    expect(filtered.text).toContain('Files');
    expect(filtered.text).not.toContain(esc(NAME));
    expect(filtered.text).toContain('value="files"');
    const none = await get(base, '/?q=nothing-matches');
    expect(none.text).toContain('No subject matches these filters.');
    expect((await get(base, '/?minScore=abc')).status).toBe(400);
    expect((await get(base, '/?name=x')).status).toBe(400);
  });

  it('a renamed registry entry changes the served answer, through the score cache', async () => {
    const path = `/v1/subjects/${enc(SUBJECTS[1]!)}/score`;
    const before = await get(base, path);
    expect((before.json as Item).identity.name).toBe('Files');
    const from = (await store.cursor(TOPIC))!.sequence;
    // A newer signal cites the registry again; the registry now names the agent differently.
    await apply(store, [
      probe(SUBJECTS[1]!, { seq: from + 1, at: T0 + 20 * HOUR, run: 40, sources: [`hcs://2/${REGISTRY}`] }),
    ]);
    await nameSubjects([LISTED[0]!, { ...LISTED[1]!, name: 'Files v2', registrySeq: 8 }]);
    await vi.waitFor(async () => {
      const after = await get(base, path);
      check('/v1/subjects/{subject}/score', after.status, after.json);
      expect((after.json as Item).identity).toMatchObject({
        name: 'Files v2',
        sequence: 8,
        entry: `hcs://2/${REGISTRY}#8`,
      });
      expect(after.headers.etag).not.toBe(before.headers.etag);
    });
  });
});

describe('the score cache', () => {
  it('a new signal changes the served score and its ETag on every instance, before /v1/events announces it', async () => {
    // A second instance with a cache of its own over the same store: like a worker that does not index, it learns of
    // changes only from the store's change revisions.
    const otherEvents = new ServeEvents({ store, scores: new ScoreCache(store), maxClients: 2, pollMs: 50 });
    otherEvents.start();
    const other = await startServer({}, [], otherEvents);
    try {
      const subject = SUBJECTS[1]!;
      const path = `/v1/subjects/${enc(subject)}/score`;
      const bases = [base, other.url];
      const before = await Promise.all(bases.map((b) => get(b, path)));
      // Cached on both now (a second ask is a hit).
      await Promise.all(bases.map((b) => get(b, path)));
      expect(before[1]!.headers.etag).toBe(before[0]!.headers.etag);
      const caches = [events.scores!, otherEvents.scores!];
      const sizes = caches.map((c) => c.size);
      const streams = await Promise.all(bases.map((b) => openEvents(b)));
      try {
        const from = (await store.cursor(TOPIC))!.sequence;
        await apply(store, fleetSignals(from + 1, 1, 8));
        const revision = await store.revision();
        const truth = (await store.subjectScore(subject, { topic: TOPIC }))!;
        expect(truth.score!.counts.signals).toBeGreaterThan((before[0]!.json as SubjectScore).counts.signals);
        for (const [i, b] of bases.entries()) {
          // Announced: from then on this instance answers the new score, with a new tag.
          for (let seen = 0; seen < revision; )
            seen = ((await streams[i]!.next('revision')) as { revision: number }).revision;
          // The changed answers are read back behind the announcement: the lookup then costs no query.
          await vi.waitFor(() => expect(caches[i]!.size).toBeGreaterThanOrEqual(sizes[i]!));
          const misses = caches[i]!.misses;
          const after = await get(b, path);
          expect(caches[i]!.misses).toBe(misses);
          check('/v1/subjects/{subject}/score', after.status, after.json);
          expect(after.status).toBe(200);
          expect(after.json).toEqual(JSON.parse(JSON.stringify({ ...truth.score, identity: truth.identity })));
          expect(after.headers['x-score-fresh']).toBe('true');
          expect(after.headers.etag).not.toBe(before[i]!.headers.etag);
          expect((await get(b, path, { headers: { 'If-None-Match': before[i]!.headers.etag as string } })).status).toBe(
            200,
          );
          expect((await get(b, path, { headers: { 'If-None-Match': after.headers.etag as string } })).status).toBe(304);
        }
      } finally {
        for (const stream of streams) stream.close();
      }
    } finally {
      await other.close();
    }
  });

  it('answers a lookup with a query string (the routed path) exactly as the plain one', async () => {
    const path = `/v1/subjects/${enc(SUBJECTS[0]!)}/score`;
    const plain = await get(base, path);
    const routed = await get(base, `${path}?topic=${TOPIC}`);
    expect(routed.status).toBe(200);
    expect(routed.text).toBe(plain.text);
    expect(routed.headers.etag).toBe(plain.headers.etag);
    expect(routed.headers['x-score-fresh']).toBe(plain.headers['x-score-fresh']);
    const head = await get(base, path, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(plain.text)));
  });
});

describe('the OpenAPI check itself', () => {
  it('fails when an answer drifts from the document (a field added, renamed or missing)', async () => {
    const res = await get(base, `/v1/subjects/${enc(SUBJECTS[0]!)}/score`);
    const body = res.json as Record<string, unknown>;
    expect(() => check('/v1/subjects/{subject}/score', 200, body)).not.toThrow();
    expect(() => check('/v1/subjects/{subject}/score', 200, { ...body, extra: 1 })).toThrow(/does not match/);
    const { trustConfidence, ...missing } = body;
    expect(trustConfidence).toBeDefined();
    expect(() => check('/v1/subjects/{subject}/score', 200, missing)).toThrow(/does not match/);
    expect(() => check('/v1/subjects/{subject}/score', 418, body)).toThrow(/does not list/);
  });
});

async function until(ok: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An open `/v1/events` stream; `next(type)` resolves with the data of the next event of that type. */
async function openEvents(base: string, query = ''): Promise<{ next(type: string): Promise<unknown>; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(`${base}/v1/events${query}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next(type) {
      for (;;) {
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(
            block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
          );
          if (fields.event === type) return JSON.parse(fields.data!) as unknown;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('event stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close() {
      controller.abort();
    },
  };
}

describe('topics the store holds but this server does not follow', () => {
  it('are not listed in /v1/topics nor announced on /v1/events', async () => {
    const OTHER = '0.0.7777';
    const own = await openStore('memory://', { stateDir: dir });
    await indexAndScore(own, TOPIC, [probe(uaid('a.example.com'), { seq: 1, at: T0 })], NOW);
    // Followed by an earlier run of the server, not by this one.
    await indexAndScore(own, OTHER, [probe(uaid('b.example.com'), { seq: 1, at: T0 })], NOW);
    const ownEvents = new ServeEvents({ store: own, topics: [TOPIC], maxClients: 2, pollMs: 50 });
    ownEvents.start();
    const http = await startHttpServer({
      store: own,
      events: ownEvents,
      topics: [TOPIC],
      publishers: [],
      scoring: DEFAULT_SCORING_CONFIG,
      live: livePage({
        store: own,
        scoring: DEFAULT_SCORING_CONFIG,
        publishers: [],
        revision: () => ownEvents.revision(),
      }),
      port: 0,
      limits: { requestsPerSecond: 0 },
    });
    try {
      expect((await own.topics()).map((t) => t.topic).sort()).toEqual([TOPIC, OTHER].sort());
      const res = await get(http.url, '/v1/topics');
      check('/v1/topics', res.status, res.json);
      expect((res.json as { topics: { topic: string }[] }).topics.map((t) => t.topic)).toEqual([TOPIC]);
      // A new event client is told each followed topic's lag at once.
      const stream = await fetch(`${http.url}/v1/events`);
      const reader = stream.body!.getReader();
      let text = '';
      while (!text.includes(`"topic":"${TOPIC}"`)) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      expect(text).toContain('event: lag');
      expect(text).not.toContain(OTHER);
    } finally {
      await http.close();
      await own.close();
    }
  });
});
