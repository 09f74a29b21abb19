/**
 * `GET /v1/subjects/{subject}/history` over a real store (PGlite, in memory) with the server's clock fixed: answers
 * validated against schemas/serve-openapi.json, figures computed here from the inputs, bad queries are 400s, the ETag
 * follows the answer (and so the clock); the live page's detail cards show the windows and the three charts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadSignal } from '../../src/read/types.js';
import type { SubjectHistory } from '../../src/score/history.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { ScoreCache } from '../../src/serve/cache.js';
import { ServeEvents } from '../../src/serve/events.js';
import { startHttpServer, type ServeHttp } from '../../src/serve/http.js';
import { livePage } from '../../src/serve/live.js';
import { openStore, type ServeStore } from '../../src/serve/store/index.js';
import { HOUR, probe, uaid } from '../support/signals.js';
import { openapiValidator } from './openapi.js';

const TOPIC = '0.0.4343';
const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const DAY = 24 * HOUR;
const CALM = uaid('calm.example.com');
const HOSTILE = 'uaid:aid:x;uid=0;proto=a2a;nativeId=<img/src=x/onerror=alert(1)>"\'&';
const PATH = '/v1/subjects/{subject}/history';
const enc = encodeURIComponent;
const check = openapiValidator();

/** Hourly probes over 10 days; CALM misses every 4th, HOSTILE every 2nd; latency grows with the hour. */
function inputs(): ReadSignal[] {
  const out: ReadSignal[] = [];
  let seq = 1;
  for (let i = 10 * 24 - 1; i >= 0; i--) {
    const at = NOW - i * HOUR - 60_000;
    out.push(probe(CALM, { seq: seq++, at, run: i, reachable: i % 4 !== 0, latencyMs: 100 + (i % 24) * 10 }));
    out.push(probe(HOSTILE, { seq: seq++, at: at + 1, run: i, reachable: i % 2 === 0, latencyMs: 50 }));
  }
  return out;
}

let dir: string;
let store: ServeStore;
let server: ServeHttp;
let clock = NOW;
const signals = inputs();

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, { headers });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json') && text ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, text, json };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hcs25-serve-history-'));
  store = await openStore('memory://', { stateDir: dir });
  // Two batches, scored at their ends: two points of the score's history.
  for (const end of [NOW - 3 * DAY, NOW]) {
    const batch = signals.filter((s) => {
      const at = Date.parse(s.consensusAt);
      return at <= end && at > end - (end === NOW ? 3 * DAY : 30 * DAY);
    });
    const last = batch.at(-1)!;
    await store.applyBatch(TOPIC, {
      signals: batch,
      records: [],
      unknown: [],
      rejected: [],
      cursor: { sequence: last.sequenceNumber, consensusTimestamp: last.consensusTimestamp },
      source: 'rest',
    });
    while ((await store.rescoreDirty({ now: new Date(end) })).more);
  }
  const events = new ServeEvents({ store, scores: new ScoreCache(store), maxClients: 2, pollMs: 50 });
  events.start();
  const now = () => new Date(clock);
  server = await startHttpServer({
    store,
    events,
    topics: [TOPIC],
    publishers: ['0.0.1001'],
    scoring: DEFAULT_SCORING_CONFIG,
    live: livePage({
      store,
      scoring: DEFAULT_SCORING_CONFIG,
      publishers: ['0.0.1001'],
      revision: () => events.revision(),
      now,
    }),
    now,
    port: 0,
    limits: { requestsPerSecond: 0 },
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Availability and p50/p95 of CALM's reachable probes in (from, to], from the inputs. */
function expectedWindow(fromMs: number, toMs: number) {
  const inside = signals.filter((s) => {
    const at = Date.parse(s.consensusAt);
    return s.message.subject === CALM && at > fromMs && at <= toMs;
  });
  const reachable = inside.filter((s) => 'reachable' in s.message.data && s.message.data.reachable);
  const ms = reachable.map((s) => s.message.data.latencyMs).sort((a, b) => a - b);
  const rank = (p: number) => ms[Math.ceil((p / 100) * ms.length) - 1]!;
  return {
    probes: inside.length,
    reachable: reachable.length,
    availability: reachable.length / inside.length,
    latency: { p50Ms: rank(50), p95Ms: rank(95), samples: ms.length },
  };
}

describe('GET /v1/subjects/{subject}/history', () => {
  it('answers the 24 h, 7 d and 30 d windows and the default 7 d series, as the OpenAPI document says', async () => {
    const res = await get(`/v1/subjects/${enc(CALM)}/history`);
    check(PATH, res.status, res.json);
    expect(res.status).toBe(200);
    const body = res.json as SubjectHistory;
    expect(body).toMatchObject({ topic: TOPIC, subject: CALM, now: new Date(NOW).toISOString() });
    expect(body.windows.map((w) => w.window)).toEqual(['24h', '7d', '30d']);
    for (const [w, days] of [
      [body.windows[0]!, 1],
      [body.windows[1]!, 7],
      [body.windows[2]!, 30],
    ] as const) {
      expect(w).toMatchObject(expectedWindow(NOW - days * DAY, NOW));
    }
    expect(body.windows[2]!.probes).toBe(10 * 24);
    expect(body.series).toMatchObject({ window: '7d', bucketSeconds: 3600 });
    expect(body.series.buckets).toHaveLength(7 * 24);
    expect(body.series.buckets.map((b) => b.probes)).toEqual(new Array(7 * 24).fill(1));
    // None before the first scoring (3 days ago, the end of bucket 95), that one until the second (now).
    const totals = body.series.buckets.map((b) => b.total);
    expect(new Set(totals.slice(0, 95))).toEqual(new Set([null]));
    expect(new Set(totals.slice(95, 167)).size).toBe(1);
    expect(totals[95]).toEqual(expect.any(Number));
    const current = (await store.subjectScore(CALM, { topic: TOPIC }))!.score!;
    expect(totals.at(-1)).toBe(current.trustScores.total);
    expect(res.json).toEqual(
      JSON.parse(JSON.stringify(await store.subjectHistory(CALM, { topic: TOPIC, window: '7d', now: new Date(NOW) }))),
    );
  });

  it.each([
    ['24h', 24, 3600],
    ['7d', 168, 3600],
    ['30d', 30, 86400],
  ])('window=%s: %i buckets of %i s, the last ending now', async (window, count, seconds) => {
    const res = await get(`/v1/subjects/${enc(HOSTILE)}/history?window=${window}&topic=${TOPIC}`);
    check(PATH, res.status, res.json);
    const body = res.json as SubjectHistory;
    expect(body.series).toMatchObject({ window, bucketSeconds: seconds });
    expect(body.series.buckets).toHaveLength(count);
    expect(body.series.buckets.at(-1)!.end).toBe(new Date(NOW).toISOString());
    expect(body.windows.map((w) => w.availability)).toEqual([0.5, 0.5, 0.5]);
  });

  it.each([
    ['?window=1y', 'window'],
    ['?window=', 'window'],
    ['?window=24h&window=7d', 'window'],
    ['?windows=7d', 'windows'],
    ['?topic=nope', 'topic'],
  ])('%s → 400 naming %s', async (q, word) => {
    const res = await get(`/v1/subjects/${enc(CALM)}/history${q}`);
    check(PATH, res.status, res.json);
    expect(res.status).toBe(400);
    expect(res.text.trim().split('\n')).toHaveLength(1);
    expect(res.json).toMatchObject({ error: { code: 'BAD_QUERY' } });
    expect((res.json as { error: { message: string } }).error.message).toContain(`"${word}"`);
  });

  it('404s a subject the topic never heard of, and a topic this server does not follow', async () => {
    const none = await get(`/v1/subjects/${enc(uaid('nobody.example'))}/history`);
    check(PATH, none.status, none.json);
    expect(none.json).toMatchObject({ error: { code: 'SUBJECT_NOT_FOUND' } });
    const other = await get(`/v1/subjects/${enc(CALM)}/history?topic=0.0.9`);
    check(PATH, other.status, other.json);
    expect(other.json).toMatchObject({ error: { code: 'TOPIC_NOT_FOLLOWED' } });
  });

  it('its ETag names the answer: 304 while it holds, a new one when the clock moves the windows', async () => {
    const path = `/v1/subjects/${enc(CALM)}/history?window=24h`;
    const first = await get(path);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect((await get(path, { 'If-None-Match': etag })).status).toBe(304);
    clock = NOW + HOUR;
    try {
      const later = await get(path, { 'If-None-Match': etag });
      expect(later.status).toBe(200);
      expect(later.headers.get('etag')).not.toBe(etag);
      const body = later.json as SubjectHistory;
      // An hour later the first hour of the window is gone and no new probe came.
      expect(body.windows[0]!.probes).toBe(23);
    } finally {
      clock = NOW;
    }
  });
});

describe('the live page', () => {
  it("shows each detailed subject's windows and its availability, latency and score charts", async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    const calm = articleOf(res.text, CALM);
    const day = expectedWindow(NOW - DAY, NOW);
    expect(calm).toContain('<table class="comps stack history">');
    const row = /<tr data-window="24h">(.*?)<\/tr>/.exec(calm)![1]!;
    expect(row).toContain(`${(day.availability * 100).toFixed(2)}%`);
    expect(row).toContain(`${day.reachable} / ${day.probes} reachable`);
    expect(row).toContain(`${day.latency.p50Ms} ms`);
    expect(row).toContain(`${day.latency.p95Ms} ms`);
    for (const chart of ['chart availability', 'chart latency-history', 'chart score-history'])
      expect(calm).toContain(`<svg class="${chart}"`);
    // 30 daily bars, each with what it counts.
    expect(calm.match(/probes reachable \(/g)).toHaveLength(10);
    // A hostile subject stays text.
    expect(res.text).not.toContain('<img/src=x');
  });
});

/** The detail card of `subject` in the page. */
function articleOf(html: string, subject: string): string {
  const articles = html.split('<article ').slice(1);
  const found = articles.find((a) => a.includes(`<div class="uaid">${subject}</div>`));
  if (!found) throw new Error(`no detail card for ${subject}`);
  return found.split('</article>')[0]!;
}
