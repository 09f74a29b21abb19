import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadSignal } from '../../src/read/types.js';
import { HISTORY_WINDOWS, WINDOW_SPANS, type HistoryWindow } from '../../src/score/history.js';
import { HISTORY_SIGNALS } from '../../src/serve/store/history.js';
import { openStore } from '../../src/serve/store/index.js';
import { pgliteExecutor } from '../../src/serve/store/pglite.js';
import { createSqlStore } from '../../src/serve/store/sql.js';
import { hash32 } from '../../src/serve/store/context.js';
import type { ServeStore } from '../../src/serve/store/types.js';
import { storeEngines } from './helpers.js';
import { HOUR, evalSignal, probe, uaid } from '../support/signals.js';

const TOPIC = '0.0.5151';
const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const DAY = 24 * HOUR;
const DAYS = 34;
const STEADY = uaid('steady.example.com');
const DOWN = uaid('down.example.com');

interface Probe {
  subject: string;
  at: number;
  reachable: boolean;
  missing: boolean;
  latencyMs: number;
}

/** Probes every 2 h from 34 days back to `now`, one exactly at `now`, one just after it (not counted); evals too. */
function inputs(): { probes: Probe[]; signals: ReadSignal[] } {
  const probes: Probe[] = [];
  const signals: ReadSignal[] = [];
  let seq = 1;
  const times: number[] = [];
  for (let at = NOW - DAYS * DAY + 7 * 60_000; at <= NOW; at += 2 * HOUR) times.push(at);
  const edges = [NOW - DAY, NOW, NOW + 500];
  times.push(...edges);
  times.sort((a, b) => a - b);
  for (const [i, at] of times.entries()) {
    const steady: Probe = {
      subject: STEADY,
      at,
      reachable: i % 5 !== 2,
      missing: i % 17 === 0 && !edges.includes(at),
      latencyMs: 40 + ((i * 37) % 500),
    };
    const down: Probe = { subject: DOWN, at: at + 1, reachable: false, missing: false, latencyMs: 10_000 };
    for (const p of [steady, down]) {
      probes.push(p);
      signals.push(
        probe(p.subject, {
          seq: seq++,
          at: p.at,
          run: i,
          reachable: p.reachable,
          latencyMs: p.latencyMs,
          ...(p.missing && { status: 'missing' as const }),
        }),
      );
    }
    // Evals carry a latency too; the default configuration's latency is the probe's.
    if (i % 3 === 0)
      signals.push(evalSignal(STEADY, 'math', 'correct', { seq: seq++, at: at + 2, run: i, latencyMs: 9000 }));
  }
  return { probes, signals };
}

function nearestRank(sorted: number[], p: number): number {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

/** What a window of (from, to] should say, from the inputs. */
function expected(probes: Probe[], subject: string, fromMs: number, toMs: number) {
  const inside = probes.filter((p) => p.subject === subject && p.at > fromMs && p.at <= toMs && !p.missing);
  const reachable = inside.filter((p) => p.reachable);
  // Only reachable probes count for latency; a probe with status missing counts nowhere.
  const latencies = reachable.map((p) => p.latencyMs).sort((a, b) => a - b);
  return {
    probes: inside.length,
    reachable: reachable.length,
    availability: inside.length === 0 ? null : reachable.length / inside.length,
    latency:
      latencies.length === 0
        ? null
        : { p50Ms: nearestRank(latencies, 50), p95Ms: nearestRank(latencies, 95), samples: latencies.length },
  };
}

type Sql = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

// These engines also hand the test a SQL connection of its own to the store's database.
const { stateDir, postgres } = storeEngines('history');

const engines: Array<{
  name: string;
  open: () => Promise<{ store: ServeStore; sql: Sql; close: () => Promise<void> }>;
}> = [
  {
    name: 'pglite',
    async open() {
      const { PGlite } = await import('@electric-sql/pglite');
      const db = await PGlite.create();
      const store = createSqlStore({
        engine: 'pglite',
        driver: {
          ...pgliteExecutor(db),
          transaction: (fn) => db.transaction((tx) => fn(pgliteExecutor(tx))),
          close: () => db.close(),
        },
        tryIndexerLock: async () => true,
        soleWriter: true,
      });
      await store.migrate();
      return { store, sql: (text, params) => pgliteExecutor(db).query(text, params), close: () => store.close() };
    },
  },
  {
    name: 'postgres',
    async open() {
      const url = await postgres().database(`db_${Math.random().toString(36).slice(2, 10)}`);
      const store = await openStore(url, { stateDir });
      const { default: pgm } = await import('pg');
      const client = new pgm.Client({ connectionString: url });
      await client.connect();
      return {
        store,
        sql: async (text, params) => (await client.query(text, params)).rows,
        close: async () => {
          await client.end();
          await store.close();
        },
      };
    },
  },
];

describe.each(engines)('subject history on $name', ({ open }) => {
  const { probes, signals } = inputs();
  let store: ServeStore;
  let sql: Sql;
  let close: () => Promise<void>;
  /** The stored score of STEADY after each day's rescoring: [time, total, confidence]. */
  const scored: Array<[number, number, number]> = [];

  beforeAll(async () => {
    ({ store, sql, close } = await open());
    // One batch per day, rescored at the day's end: the score changes are recorded at those times.
    for (let d = DAYS - 1; d >= 0; d--) {
      const end = NOW - d * DAY;
      const day = signals.filter((s) => {
        const at = Date.parse(s.consensusAt);
        return at > end - DAY && (at <= end || d === 0);
      });
      const last = day.at(-1)!;
      await store.applyBatch(TOPIC, {
        signals: day,
        records: [],
        unknown: [],
        rejected: [],
        cursor: { sequence: last.sequenceNumber, consensusTimestamp: last.consensusTimestamp },
        source: 'rest',
      });
      while ((await store.rescoreDirty({ now: new Date(end) })).more);
      const s = (await store.subjectScore(STEADY, { topic: TOPIC }))!.score!;
      scored.push([end, s.trustScores.total, s.trustConfidence]);
    }
  }, 120_000);

  afterAll(async () => {
    await close?.();
  });

  it('counts availability and latency over 24 h, 7 d and 30 d ending at now', async () => {
    for (const subject of [STEADY, DOWN]) {
      const h = (await store.subjectHistory(subject, { topic: TOPIC, window: '7d', now: new Date(NOW) }))!;
      expect(h).toMatchObject({ topic: TOPIC, subject, now: new Date(NOW).toISOString() });
      expect(h.latencySignal).toBe('availability.probe');
      expect(h.windows.map((w) => w.window)).toEqual([...HISTORY_WINDOWS]);
      for (const w of h.windows) {
        const fromMs = NOW - WINDOW_SPANS[w.window].spanMs;
        expect(w).toEqual({
          window: w.window,
          from: new Date(fromMs).toISOString(),
          to: new Date(NOW).toISOString(),
          ...expected(probes, subject, fromMs, NOW),
        });
      }
    }
    // Probes at now - 24 h (outside the 24-hour window), at now (inside) and after now (in none) are stored.
    const stored = (await store.subjectSignals(STEADY, { topic: TOPIC, limit: 1 })).items[0]!;
    expect(Date.parse(stored.consensusAt)).toBeGreaterThan(NOW);
    const steady = (await store.subjectHistory(STEADY, { topic: TOPIC, window: '24h', now: new Date(NOW) }))!;
    expect(steady.windows[2]!.availability).toBeGreaterThan(0.7);
    expect(steady.windows[2]!.availability).toBeLessThan(0.9);
    const down = (await store.subjectHistory(DOWN, { topic: TOPIC, window: '24h', now: new Date(NOW) }))!;
    expect(down.windows.map((w) => [w.availability, w.latency])).toEqual([
      [0, null],
      [0, null],
      [0, null],
    ]);
  });

  it.each(HISTORY_WINDOWS)(
    'the %s series: its buckets, their counts, and the score at each bucket end',
    async (window) => {
      const h = (await store.subjectHistory(STEADY, { topic: TOPIC, window, now: new Date(NOW) }))!;
      const { spanMs, bucketMs } = WINDOW_SPANS[window as HistoryWindow];
      const fromMs = NOW - spanMs;
      expect(h.series.window).toBe(window);
      expect(h.series.bucketSeconds).toBe(bucketMs / 1000);
      expect(h.series.buckets).toHaveLength(spanMs / bucketMs);
      expect(h.series.buckets.at(-1)!.end).toBe(new Date(NOW).toISOString());
      for (const [k, b] of h.series.buckets.entries()) {
        const start = fromMs + k * bucketMs;
        const end = start + bucketMs;
        const { availability, latency, ...counts } = expected(probes, STEADY, start, end);
        expect(b).toMatchObject({ start: new Date(start).toISOString(), end: new Date(end).toISOString(), ...counts });
        expect(b.availability).toBe(availability);
        expect(b.latency).toEqual(latency);
        // The stored score in force at the bucket's end: that of the newest rescoring at or before it.
        const before = scored.filter(([at]) => at <= end).at(-1);
        expect([b.total, b.confidence]).toEqual(before ? [before[1], before[2]] : [null, null]);
      }
      const totals = new Set(h.series.buckets.map((b) => b.total));
      if (window === '30d') expect(totals.size).toBeGreaterThan(1);
    },
  );

  it('stores a score change only when the total or confidence changed, and prunes beyond 30 days', async () => {
    const key = [TOPIC, STEADY];
    const rows = () =>
      sql(
        `SELECT (extract(epoch FROM h.at) * 1000)::float8 AS ms, h.total FROM score_history h JOIN topics t USING (tid)
         WHERE t.topic = $1 AND h.subject = $2 ORDER BY h.at`,
        key,
      );
    const stored = await rows();
    const changes = scored.filter((s, i) => i === 0 || s[1] !== scored[i - 1]![1] || s[2] !== scored[i - 1]![2]);
    const cut = NOW - 30 * DAY;
    // Of the changes 30 days old or older only the newest stays: the score in force when a 30-day window starts.
    const kept = [...changes.filter(([at]) => at <= cut).slice(-1), ...changes.filter(([at]) => at > cut)];
    expect(stored.map((r) => [r.ms, r.total])).toEqual(kept.map(([at, total]) => [at, total]));
    expect(changes.filter(([at]) => at <= cut).length).toBeGreaterThan(1);

    // A signal that changes neither total nor confidence (an eval not asked: status missing) adds no row.
    const last = signals.at(-1)!;
    const skipped = evalSignal(STEADY, 'science', 'skipped', { seq: last.sequenceNumber + 1, at: NOW + 1000, run: 1 });
    await store.applyBatch(TOPIC, {
      signals: [skipped],
      records: [],
      unknown: [],
      rejected: [],
      cursor: { sequence: skipped.sequenceNumber, consensusTimestamp: skipped.consensusTimestamp },
      source: 'rest',
    });
    while ((await store.rescoreDirty({ now: new Date(NOW + 2000) })).more);
    const s = (await store.subjectScore(STEADY, { topic: TOPIC }))!.score!;
    expect([s.trustScores.total, s.trustConfidence]).toEqual([scored.at(-1)![1], scored.at(-1)![2]]);
    expect(await rows()).toEqual(stored);
  });

  it('reads the window through the time index (EXPLAIN)', async () => {
    const params = [hash32(STEADY), TOPIC, Math.floor((NOW - 30 * DAY) / 1000), Math.floor(NOW / 1000)];
    await sql('SET enable_seqscan = off');
    try {
      const [plan] = await sql(`EXPLAIN (FORMAT JSON) ${HISTORY_SIGNALS}`, params);
      const text = JSON.stringify(plan);
      expect(text).toContain('"Index Name":"signals_subject_time"');
      expect(text).toMatch(/"Index Cond":"[^"]*split_part/);
    } finally {
      await sql('RESET enable_seqscan');
    }
  });

  it('is null for a subject the topic never heard of, or a topic not indexed', async () => {
    expect(await store.subjectHistory(uaid('nobody.example.com'), { topic: TOPIC, window: '7d' })).toBeNull();
    expect(await store.subjectHistory(STEADY, { topic: '0.0.1', window: '7d' })).toBeNull();
  });
});
