/**
 * Sync, export and publishers over HTTP (routes-export.ts), on a real store (PGlite in memory) holding signals of two
 * publishers: answers are checked against schemas/serve-openapi.json, exports are parsed back, per-publisher scores
 * equal computeScores over the filtered signals.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signalRow } from '../../src/read/reader.js';
import type { ReadSignal } from '../../src/read/types.js';
import { computeScores, type SubjectScore } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { ScoreCache } from '../../src/serve/cache.js';
import { ServeEvents } from '../../src/serve/events.js';
import { startHttpServer, type ServeHttp } from '../../src/serve/http.js';
import { livePage } from '../../src/serve/live.js';
import { openStore, type ServeStore } from '../../src/serve/store/index.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';
import { openapiValidator } from './openapi.js';
import { indexAndScore } from './helpers.js';

const TOPIC = '0.0.4243';
const NOW = new Date(T0 + 30 * HOUR);
const A = '0.0.1001';
const B = '0.0.2002';
const CALC = uaid('calc.example.com');
const FILES = uaid('files.mcp.dev', 'mcp');
/** Its native id and registry look like spreadsheet formulas. */
const FORMULA = uaid('=HYPERLINK("http://evil.example","x")', 'a2a', '@reg');
const BULK = uaid('bulk.example.net');

/** Six hourly runs by A about three subjects; B about CALC only, with other outcomes; then many probes of BULK. */
function signals(): ReadSignal[] {
  const out: ReadSignal[] = [];
  let seq = 1;
  for (let r = 0; r < 6; r++) {
    for (const [i, subject] of [CALC, FILES, FORMULA].entries()) {
      const at = T0 + r * HOUR + i * 1000;
      out.push(probe(subject, { seq: seq++, at, run: r, payer: A }));
      out.push(evalSignal(subject, 'math', (r + i) % 3 ? 'correct' : 'wrong', { seq: seq++, at: at + 100, run: r }));
    }
    const at = T0 + r * HOUR + 10_000;
    out.push(probe(CALC, { seq: seq++, at, run: 100 + r, payer: B, reachable: r % 2 === 0 }));
    out.push(evalSignal(CALC, 'math', 'wrong', { seq: seq++, at: at + 100, run: 100 + r, payer: B }));
  }
  // More than one store page (1000 rows) for the export of a window.
  for (let k = 0; k < 1100; k++)
    out.push(probe(BULK, { seq: seq++, at: T0 + 7 * HOUR + k * 1000, run: 200 + k, payer: A }));
  return out;
}

const ALL = signals();

const apply = (store: ServeStore, list: ReadSignal[], now = NOW) => indexAndScore(store, TOPIC, list, now);

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

function get(base: string, path: string): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const json = String(res.headers['content-type']).startsWith('application/json') ? JSON.parse(text) : undefined;
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** RFC 4180: quoted cells may hold commas, quotes ("") and line breaks; lines end with CRLF. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  expect(cell).toBe('');
  expect(row).toEqual([]);
  return rows;
}

/** CSV rows as objects by the header line. */
function records(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  for (const r of rows) expect(r.length).toBe(header!.length);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}

const check = openapiValidator();
const enc = encodeURIComponent;
/** The server computes on-request scores at its clock: pinned to NOW (only Date is faked). */
async function atNow<T>(fn: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: NOW });
  try {
    return await fn();
  } finally {
    vi.useRealTimers();
  }
}

let dir: string;
let store: ServeStore;
let server: ServeHttp;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hcs25-serve-export-'));
  store = await openStore('memory://', { stateDir: dir });
  await apply(store, ALL);
  const events = new ServeEvents({ store, scores: new ScoreCache(store), maxClients: 2, pollMs: 50 });
  events.start();
  server = await startHttpServer({
    store,
    events,
    topics: [TOPIC],
    publishers: [],
    scoring: DEFAULT_SCORING_CONFIG,
    live: livePage({ store, scoring: DEFAULT_SCORING_CONFIG, publishers: [], revision: () => events.revision() }),
    limits: { requestsPerSecond: 0 },
  });
  base = server.url;
});

afterAll(async () => {
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /v1/export/scores', () => {
  it('CSV: one row per scored subject, rank order, formula-looking cells neutralised', async () => {
    const res = await get(base, '/v1/export/scores?format=csv');
    check('/v1/export/scores', res.status, res.text, 'text/csv');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="hcs25-scores-${TOPIC}.csv"`);
    const rows = records(res.text);
    const ranked = ((await get(base, '/v1/subjects')).json as { subjects: SubjectScore[] }).subjects;
    expect(rows.map((r) => r.subject)).toEqual(ranked.map((s) => s.subject));
    expect(rows.map((r) => Number(r.rank))).toEqual(ranked.map((_, i) => i + 1));
    expect(rows.map((r) => Number(r.trust_score))).toEqual(ranked.map((s) => s.trustScores.total));
    expect(rows.map((r) => Number(r.signals))).toEqual(ranked.map((s) => s.counts.signals));
    const formula = rows.find((r) => r.subject === FORMULA)!;
    expect(formula.native_id).toBe(`'=HYPERLINK("http://evil.example","x")`);
    expect(formula.registry).toBe("'@reg");
    expect(rows.flatMap((r) => Object.values(r)).filter((cell) => /^[=+\-@]/.test(cell))).toEqual([]);
  });

  it('JSON lines: one subject of `hcs25 scores --json` per line, as the score route answers it', async () => {
    const res = await get(base, `/v1/export/scores?format=jsonl&topic=${TOPIC}`);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = res.text.trimEnd().split('\n');
    expect(lines.length).toBe(4);
    for (const line of lines) {
      const score = JSON.parse(line) as SubjectScore;
      check('/v1/export/scores', res.status, score, 'application/x-ndjson');
      expect(score).toEqual((await get(base, `/v1/subjects/${enc(score.subject)}/score`)).json);
    }
  });
});

describe('GET /v1/export/signals', () => {
  const inWindow = (from: number, to: number) =>
    ALL.filter((s) => Date.parse(s.consensusAt) >= from && Date.parse(s.consensusAt) < to).sort(
      (a, b) => a.sequenceNumber - b.sequenceNumber || a.index - b.index,
    );

  it('JSON lines: the window [from, to) in consensus order, across store pages', async () => {
    const from = T0 + HOUR;
    const to = T0 + 8 * HOUR;
    const res = await get(
      base,
      `/v1/export/signals?format=jsonl&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`,
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="hcs25-signals-${TOPIC}-20261121T110000Z-20261121T180000Z.jsonl"`,
    );
    const rows = res.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    const expected = inWindow(from, to);
    expect(expected.length).toBeGreaterThan(1000);
    for (const row of rows.slice(0, 50)) check('/v1/export/signals', 200, row, 'application/x-ndjson');
    // Each row is the signals route's: a `hcs25 signals --json` row with its `links` (null here: no network given).
    const typed = rows as Array<{ links: unknown }>;
    expect(typed.every((r) => Object.hasOwn(r, 'links'))).toBe(true);
    expect(typed.map(({ links: _, ...row }) => row)).toEqual(JSON.parse(JSON.stringify(expected.map(signalRow))));
  });

  it('CSV: the documented columns, parsed back to the signals', async () => {
    const from = T0;
    const to = T0 + 2 * HOUR;
    const res = await get(
      base,
      `/v1/export/signals?format=csv&from=${new Date(from).toISOString()}&to=2026-11-21T13:00:00%2B01:00`,
    );
    check('/v1/export/signals', res.status, res.text, 'text/csv');
    const [header] = parseCsv(res.text);
    expect(header).toEqual([
      'sequence_number',
      'index',
      'consensus_timestamp',
      'consensus_at',
      'payer',
      'subject',
      'run',
      'signal',
      'version',
      'status',
      'outcome',
      'reason',
      'latency_ms',
      'fetched_at',
      'data',
    ]);
    const rows = records(res.text);
    const expected = inWindow(from, to);
    expect(rows.length).toBe(expected.length);
    for (const [i, s] of expected.entries()) {
      expect(rows[i]).toMatchObject({
        sequence_number: String(s.sequenceNumber),
        consensus_timestamp: s.consensusTimestamp,
        payer: s.payerAccountId,
        subject: s.message.subject,
        run: s.message.run,
        signal: s.message.signal,
        status: s.message.status,
      });
      expect(JSON.parse(rows[i]!.data!)).toEqual(s.message.data);
    }
    expect(new Set(rows.map((r) => r.payer))).toEqual(new Set([A, B]));
  });

  it.each([
    ['format=csv&from=2026-11-01T00:00:00Z&to=2026-12-02T00:00:01Z', '31 days'],
    ['format=csv&from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'after'],
    ['format=csv&from=2026-11-01T00:00:00Z&to=2026-11-01T00:00:00Z', 'after'],
    ['format=xml&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z', 'format'],
    ['from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z', '"format" is required'],
    ['format=csv&from=yesterday&to=2026-11-02T00:00:00Z', 'from'],
    ['format=csv&to=2026-11-02T00:00:00Z', '"from" is required'],
  ])('?%s → 400 naming %s', async (q, word) => {
    const res = await get(base, `/v1/export/signals?${q}`);
    check('/v1/export/signals', res.status, res.json);
    expect(res.status).toBe(400);
    expect((res.json as { error: { message: string } }).error.message).toContain(word);
  });

  it('a window of exactly 31 days is allowed', async () => {
    const res = await get(base, '/v1/export/signals?format=csv&from=2026-11-01T00:00:00Z&to=2026-12-02T00:00:00Z');
    expect(res.status).toBe(200);
    expect(records(res.text).length).toBe(ALL.length);
  });
});

describe('GET /v1/subjects?updated_since=', () => {
  it('lists the subjects rescored since a time, then continues from its sync token', async () => {
    const all = await get(base, `/v1/subjects?updated_since=${new Date(T0).toISOString()}&limit=3`);
    check('/v1/subjects', all.status, all.json);
    const first = all.json as { subjects: SubjectScore[]; nextCursor: string | null; syncToken: string };
    expect(first.subjects.length).toBe(3);
    expect(first.nextCursor).toBe(first.syncToken);
    const rest = (await get(base, `/v1/subjects?updated_since=${first.syncToken}&limit=3`)).json as typeof first;
    expect(rest.nextCursor).toBeNull();
    expect([...first.subjects, ...rest.subjects].map((s) => s.subject).sort()).toEqual(
      [CALC, FILES, FORMULA, BULK].sort(),
    );
    const after = new Date(NOW.getTime() + 1).toISOString();
    const none = (await get(base, `/v1/subjects?updated_since=${after}`)).json as typeof first;
    expect(none.subjects).toEqual([]);

    // New signals about FILES: it (alone) is listed after either token.
    const later = new Date(NOW.getTime() + HOUR);
    const last = ALL.at(-1)!.sequenceNumber;
    await apply(store, [probe(FILES, { seq: last + 1, at: T0 + 29 * HOUR, run: 5000, payer: A })], later);
    for (const token of [rest.syncToken, none.syncToken]) {
      const res = await get(base, `/v1/subjects?updated_since=${token}`);
      check('/v1/subjects', res.status, res.json);
      expect((res.json as typeof first).subjects.map((s) => s.subject)).toEqual([FILES]);
    }
  });

  it.each([
    ['updated_since=2026-11-21T10:00:00Z&minScore=10', 'cannot be combined'],
    ['updated_since=2026-11-21T10:00:00Z&cursor=abc', 'cannot be combined'],
    ['updated_since=2026-11-21', 'updated_since'],
    ['updated_since=bm90LWEtdG9rZW4', 'syncToken'],
    ['updated_since=2026-11-21T10:00:00Z&updated_since=2026-11-21T11:00:00Z', 'more than once'],
  ])('?%s → 400 naming %s', async (q, word) => {
    const res = await get(base, `/v1/subjects?${q}`);
    check('/v1/subjects', res.status, res.json);
    expect(res.status).toBe(400);
    expect((res.json as { error: { message: string } }).error.message).toContain(word);
  });
});

describe('whose reports count', () => {
  const byPayer = (payers: string[]) => ALL.filter((s) => payers.includes(s.payerAccountId));
  const expectedScore = (payers: string[], subject: string) =>
    computeScores(byPayer(payers), DEFAULT_SCORING_CONFIG, {
      now: NOW,
      topic: TOPIC,
      publishers: payers,
    }).subjects.find((s) => s.subject === subject);

  it('?publishers= scores from only those publishers’ signals, and says which', async () => {
    await atNow(async () => {
      // The subject is named as in the score answer without the filter.
      const { identity } = (await get(base, `/v1/subjects/${enc(CALC)}/score`)).json as { identity: unknown };
      for (const payers of [[B], [A], [A, B]]) {
        const res = await get(base, `/v1/subjects/${enc(CALC)}/score?publishers=${payers.join(',')}`);
        check('/v1/subjects/{subject}/score', res.status, res.json);
        expect(res.status).toBe(200);
        expect(res.json).toEqual({ ...JSON.parse(JSON.stringify(expectedScore(payers, CALC))), identity });
        expect(res.headers['x-score-publishers']).toBe(payers.join(','));
      }
      // The two publishers disagree, so the filter matters.
      expect(expectedScore([B], CALC)!.trustScores.total).not.toBe(expectedScore([A], CALC)!.trustScores.total);
      // Repeated and unordered ids are one list.
      const same = await get(base, `/v1/subjects/${enc(CALC)}/score?publishers=${B},${A},${B}`);
      expect(same.headers['x-score-publishers']).toBe(`${A},${B}`);
    });
    const none = await get(base, `/v1/subjects/${enc(FILES)}/score?publishers=${B}`);
    check('/v1/subjects/{subject}/score', none.status, none.json);
    expect(none.status).toBe(404);
  });

  it.each([
    ['publishers=abc', 'publishers'],
    ['publishers=', 'publishers'],
    ['publishers=0.0.1,,0.0.2', 'publishers'],
    [`publishers=${Array.from({ length: 21 }, (_, i) => `0.0.${i + 1}`).join(',')}`, 'at most 20'],
  ])('?%s → 400 naming %s', async (q, word) => {
    const res = await get(base, `/v1/subjects/${enc(CALC)}/score?${q}`);
    check('/v1/subjects/{subject}/score', res.status, res.json);
    expect(res.status).toBe(400);
    expect((res.json as { error: { message: string } }).error.message).toContain(word);
  });

  it('/publishers lists each publisher with its count, first and last signal, and its own score', async () => {
    const res = await atNow(() => get(base, `/v1/subjects/${enc(CALC)}/publishers`));
    check('/v1/subjects/{subject}/publishers', res.status, res.json);
    const body = res.json as {
      subject: string;
      identity: unknown;
      publishers: Array<{ publisher: string; signals: number; firstAt: string; lastAt: string; score: unknown }>;
    };
    expect(body.subject).toBe(CALC);
    expect(body.identity).toEqual(
      ((await get(base, `/v1/subjects/${enc(CALC)}/score`)).json as { identity: unknown }).identity,
    );
    expect(body.publishers.map((p) => p.publisher)).toEqual([A, B]);
    for (const p of body.publishers) {
      const own = byPayer([p.publisher]).filter((s) => s.message.subject === CALC);
      expect(p.signals).toBe(own.length);
      expect(p.firstAt).toBe(own[0]!.consensusAt);
      expect(p.lastAt).toBe(own.at(-1)!.consensusAt);
      expect(p.score).toEqual(JSON.parse(JSON.stringify(expectedScore([p.publisher], CALC))));
    }
    const one = (await get(base, `/v1/subjects/${enc(FILES)}/publishers?topic=${TOPIC}`)).json as typeof body;
    expect(one.publishers.map((p) => p.publisher)).toEqual([A]);
    const missing = await get(base, `/v1/subjects/${enc(uaid('nobody.example'))}/publishers`);
    check('/v1/subjects/{subject}/publishers', missing.status, missing.json);
    expect(missing.status).toBe(404);
  });

  it('the live page shows the per-publisher table in the drill-down of a subject with several publishers', async () => {
    const html = (await get(base, '/')).text;
    const tables = html.match(/<table class="publishers stack">.*?<\/table>/g) ?? [];
    expect(tables.length).toBe(1);
    expect(tables[0]).toContain(`<code>${A}</code>`);
    expect(tables[0]).toContain(`<code>${B}</code>`);
    // In CALC's card, before its signal list.
    const card = html.slice(html.lastIndexOf('<article', html.indexOf(tables[0]!)), html.indexOf(tables[0]!));
    expect(card).toContain('calc.example.com');
  });
});
