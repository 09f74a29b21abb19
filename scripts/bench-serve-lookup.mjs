#!/usr/bin/env node
/**
 * `hcs25 serve` lookup benchmark (run after the build; `npm run bench` does both). For each engine (embedded PGlite
 * in a directory, and a PostgreSQL server this script starts when the binaries are installed):
 *  - load: SUBJECTS subjects with a few signals each, written through the store's batch path and scored (not timed
 *    as a figure: bench-serve-index measures indexing);
 *  - serve: the HTTP API (startHttpServer, rate limit off) in this process, and a separate load process with an undici
 *    Pool of CONNECTIONS connections asking `GET /v1/subjects/{uaid}/score` for random subjects for DURATION seconds:
 *    requests/s, p50 / p99 / max latency, errors. Goal: p99 ≤ 20 ms at 200 connections over 100,000 subjects.
 * Env: BENCH_SERVE_SUBJECTS (default 100000), BENCH_SERVE_CONNECTIONS (200), BENCH_SERVE_SECONDS (20),
 * BENCH_SERVE_ENGINES (pglite,postgres,none; `none` answers every lookup with one fixed score from memory: the HTTP
 * layer's own cost, to tell it from the database's). `--quick`: 10,000 subjects, 5 s.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { DIST } from './lib/emulator.mjs';

const quick = process.argv.includes('--quick');
const SUBJECTS = Number(process.env.BENCH_SERVE_SUBJECTS ?? (quick ? 10_000 : 100_000));
const CONNECTIONS = Number(process.env.BENCH_SERVE_CONNECTIONS ?? 200);
const SECONDS = Number(process.env.BENCH_SERVE_SECONDS ?? (quick ? 5 : 20));
const ENGINES = (process.env.BENCH_SERVE_ENGINES ?? 'pglite,postgres,none').split(',');
const TOPIC = '0.0.5000';
const PUBLISHER = '0.0.1001';

const subjectOf = (i) => `uaid:aid:bench;uid=0;registry=hol;proto=${i % 7 === 0 ? 'mcp' : 'a2a'};nativeId=agent-${i}.example`;

if (process.argv[2] === '--load') await loadClient(JSON.parse(process.argv[3]));
else await main();

async function main() {
  console.log(`serve lookups: ${SUBJECTS} subjects, ${CONNECTIONS} connections, ${SECONDS} s per engine (goal p99 ≤ 20 ms)`);
  let failed = false;
  for (const engine of ENGINES) {
    try {
      await benchEngine(engine);
    } catch (err) {
      failed = true;
      console.log(`${engine}: failed: ${err?.stack ?? err}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

async function benchEngine(engine) {
  const { openStore } = await import(DIST('serve/store/index.js'));
  const dir = mkdtempSync(join(tmpdir(), 'hcs25-bench-serve-'));
  let pg;
  let url;
  if (engine === 'none') {
    const store = await noDatabase();
    try {
      await serveAndMeasure(engine, store);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  if (engine === 'postgres') {
    const { startPostgres } = await import(DIST('devtools/postgres.js'));
    pg = await startPostgres().catch((err) => console.log(`postgres: ${String(err).split('\n')[0]}`));
    if (!pg) {
      console.log('postgres: skipped (no PostgreSQL server could be started; apt-get install -y postgresql)');
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    url = pg.url;
  } else url = join(dir, 'serve-db');
  const store = await openStore(url, { stateDir: dir });
  try {
    const loadStart = performance.now();
    await fill(store);
    const loadS = (performance.now() - loadStart) / 1000;
    console.log(`${engine}: loaded ${SUBJECTS} subjects (${SUBJECTS * 2} signals, scored) in ${loadS.toFixed(1)} s`);

    await serveAndMeasure(engine, store);
  } finally {
    await store.close();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function serveAndMeasure(engine, store) {
  const { startHttpServer } = await import(DIST('serve/http.js'));
  const { ServeEvents } = await import(DIST('serve/events.js'));
  const { livePage } = await import(DIST('serve/live.js'));
  const { DEFAULT_SCORING_CONFIG } = await import(DIST('consumer/scoring-config.js'));
  const events = new ServeEvents({ store, maxClients: 10 });
  events.start();
  const http = await startHttpServer({
    store,
    events,
    topics: [TOPIC],
    publishers: [PUBLISHER],
    scoring: DEFAULT_SCORING_CONFIG,
    live: livePage({ store, scoring: DEFAULT_SCORING_CONFIG, publishers: [PUBLISHER], revision: () => events.revision() }),
    port: 0,
    limits: { requestsPerSecond: 0 },
  });
  try {
    const child = fork(fileURLToPath(import.meta.url), ['--load', JSON.stringify({ url: http.url, subjects: SUBJECTS, connections: CONNECTIONS, seconds: SECONDS })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const result = await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`load process exited ${code}`)));
    });
    const { requests, errors, seconds, p50, p99, max } = result;
    const verdict = p99 <= 20 ? 'meets' : 'misses';
    console.log(
      `${engine}: ${Math.round(requests / seconds)} lookups/s over ${seconds.toFixed(1)} s (${requests} requests, ${errors} errors); latency p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(1)} ms (${verdict} the p99 ≤ 20 ms goal)`,
    );
  } finally {
    await http.close();
  }
}

/** The store's read side from memory: every subject has the same score. Only what a score lookup touches. */
async function noDatabase() {
  const { computeScores } = await import(DIST('consumer/scores.js'));
  const { DEFAULT_SCORING_CONFIG } = await import(DIST('consumer/scoring-config.js'));
  const { signalMessageV2Schema } = await import(DIST('signals/schemas-v2.js'));
  const { consensusIso } = await import(DIST('consumer/time.js'));
  const ts = `${Math.floor(Date.now() / 1000) - 60}.000000000`;
  const message = signalMessageV2Schema.parse({
    p: 'hcs-25', op: 'signal', v: 2, subject: subjectOf(1), fetchedAt: consensusIso(ts), run: '01JDX3V9W5Q8K6T2N4M7000000',
    signal: 'availability.probe', status: 'ok', data: { reachable: true, score: 100, latencyMs: 50, transport: 'a2a' },
  });
  const [score] = computeScores([{ sequenceNumber: 1, consensusTimestamp: ts, consensusAt: consensusIso(ts), payerAccountId: PUBLISHER, index: 0, message }], DEFAULT_SCORING_CONFIG, { now: new Date() }).subjects;
  console.log(`none: ${SUBJECTS} subjects answered from memory (no database)`);
  return {
    engine: 'none',
    revision: async () => 1,
    watch: () => () => {},
    topics: async () => [],
    subjectScore: async (subject) => ({ topic: TOPIC, subject, fresh: true, score: { ...score, subject } }),
    close: async () => {},
  };
}

/** SUBJECTS subjects, each with a probe and a math eval (v2), in batches through the indexer's write path, then scored. */
async function fill(store) {
  const { signalMessageV2Schema } = await import(DIST('signals/schemas-v2.js'));
  const { consensusIso } = await import(DIST('consumer/time.js'));
  const t0 = Math.floor(Date.now() / 1000) - 3600;
  const run = '01JDX3V9W5Q8K6T2N4M7000000';
  const BATCH = 5_000;
  let seq = 0;
  for (let start = 0; start < SUBJECTS; start += BATCH / 2) {
    const signals = [];
    for (let i = start; i < Math.min(SUBJECTS, start + BATCH / 2); i++) {
      seq++;
      const ts = `${t0 + Math.floor(seq / 1000)}.${String((seq % 1000) * 1_000_000).padStart(9, '0')}`;
      const at = consensusIso(ts);
      const common = { p: 'hcs-25', op: 'signal', v: 2, subject: subjectOf(i), fetchedAt: at, run };
      const reachable = i % 10 !== 0;
      const probe = signalMessageV2Schema.parse({ ...common, signal: 'availability.probe', status: 'ok', data: { reachable, score: reachable ? 100 : 0, latencyMs: 50 + (i % 200), transport: 'a2a' } });
      const correct = i % 3 !== 0;
      const math = signalMessageV2Schema.parse({
        ...common,
        signal: 'simple-evals.a2a_math',
        status: 'ok',
        data: { outcome: correct ? 'correct' : 'wrong', score: correct ? 100 : 0, compliant: correct, latencyMs: 400, grader: 'first-token@1', transport: 'a2a' },
      });
      for (const [index, message] of [probe, math].entries()) signals.push({ sequenceNumber: seq, consensusTimestamp: ts, consensusAt: at, payerAccountId: PUBLISHER, index, message });
    }
    const last = signals[signals.length - 1];
    await store.applyBatch(TOPIC, { signals, records: [], unknown: [], rejected: [], cursor: { sequence: last.sequenceNumber, consensusTimestamp: last.consensusTimestamp }, source: 'rest' });
  }
  while ((await store.rescoreDirty({ limit: 5_000 })).more);
}

async function loadClient({ url, subjects, connections, seconds }) {
  const { Pool } = await import('undici');
  const pool = new Pool(url, { connections, pipelining: 1 });
  const latencies = [];
  let errors = 0;
  // Warm-up: open the connections and the server's code paths; not counted.
  await Promise.all(Array.from({ length: connections }, (_, w) => ask(w)));
  latencies.length = 0;
  errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  async function ask(w) {
    const i = Math.floor(Math.random() * subjects);
    const t = performance.now();
    const res = await pool.request({ path: `/v1/subjects/${encodeURIComponent(subjectOf(i))}/score`, method: 'GET' });
    await res.body.text();
    latencies.push(performance.now() - t);
    if (res.statusCode !== 200) errors++;
    return w;
  }
  await Promise.all(
    Array.from({ length: connections }, async (_, w) => {
      while (performance.now() < end) await ask(w);
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  process.send({ requests: latencies.length, errors, seconds: elapsed, p50: q(0.5), p99: q(0.99), max: latencies[latencies.length - 1] });
  process.disconnect();
}
