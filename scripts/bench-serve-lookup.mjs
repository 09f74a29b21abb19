#!/usr/bin/env node
/**
 * `hcs25 serve` lookup benchmark (run after the build; `npm run bench` does both). For each engine (embedded PGlite
 * in a directory, and a PostgreSQL server this script starts when the binaries are installed):
 *  - load: SUBJECTS subjects with a few signals each, written through the store's batch path and scored (not timed
 *    as a figure: bench-serve-index measures indexing);
 *  - serve: a server process (`--serve`) with the HTTP API as `hcs25 serve` runs it (startHttpServer, ServeEvents
 *    with the score cache, rate limit off) and the indexer beside it, as startServer runs it: it polls a mirror node
 *    (a stub in this script's process whose topic has nothing new: REST polling every second, the gRPC doorbell off)
 *    and does its rescoring and stale-score rounds on the same event loop as the lookups; with PostgreSQL, one and
 *    then two such processes on one port (node:cluster, as `hcs25 serve --workers N`; one indexes); PGlite is one
 *    process;
 *  - ask: a separate load process keeps CONNECTIONS keep-alive connections busy (closed loop) with
 *    `GET /v1/subjects/{uaid}/score` for random subjects for DURATION seconds: lookups/s, p50 / p99 / max latency,
 *    errors, and the CPU time per lookup of the server processes and of the load process itself (the two share the
 *    machine's cores), the servers' RSS, the cache hit ratio and the load average.
 * Goal: p99 ≤ 20 ms at 200 connections over 100,000 subjects.
 * Env: BENCH_SERVE_SUBJECTS (default 100000), BENCH_SERVE_CONNECTIONS (200), BENCH_SERVE_SECONDS (20),
 * BENCH_SERVE_WORKERS (1,2: the server process counts measured with PostgreSQL), BENCH_SERVE_CACHE_MB (256, per server process),
 * BENCH_SERVE_BLOCKS=1 (each server process samples a CPU profile over the timed run, every 250 µs, to name what ran
 * in each event-loop block; it costs server CPU: compare figures without it),
 * BENCH_SERVE_PROFILE (a directory for the processes' V8 CPU profiles), BENCH_SERVE_ENGINES (pglite,postgres,none; `none` answers every lookup with one fixed score from memory: the HTTP
 * layer's own cost, to tell it from the database's). `--quick`: 10,000 subjects, 5 s.
 * Each server process fills its score cache from the store at start (ScoreCache.warm, as `hcs25 serve` does; the
 * time is printed). The load process opens its connections, asks for WARMUP_SECONDS (untimed: the code paths warm up,
 * and a keep-alive client's connections are all open, as in steady state), then times SECONDS on the same
 * connections. The warm-up's own figures are printed on their own line: a connection's first answer waits until the
 * server's event loop accepts it (hundreds of ms when 200 connect at once on a loaded machine), a cost of opening
 * connections, not of lookups. The server's longest event-loop block and GC pause in the timed run are printed too,
 * and every block > 10 ms (lib/loop-blocks.mjs): how long the main thread ran on a core in it, how long it waited for
 * one (Linux schedstat: the load process, the database server and anything else on the machine take the cores), the
 * GC pauses in it, and with BENCH_SERVE_BLOCKS=1 the code that ran. With PostgreSQL, the server's CPU in the timed run
 * per kind of process (backends, autovacuum, checkpointer) is printed.
 */
import { fork } from 'node:child_process';
import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { DIST } from './lib/emulator.mjs';
import { describeBlocks, traceBlocks } from './lib/loop-blocks.mjs';
import { postgresCpu, postgresCpuDelta } from './lib/postgres-cpu.mjs';

const quick = process.argv.includes('--quick');
const SUBJECTS = Number(process.env.BENCH_SERVE_SUBJECTS ?? (quick ? 10_000 : 100_000));
const CONNECTIONS = Number(process.env.BENCH_SERVE_CONNECTIONS ?? 200);
const SECONDS = Number(process.env.BENCH_SERVE_SECONDS ?? (quick ? 5 : 20));
// Each count is measured in turn on the same database: `hcs25 serve` runs one process unless --workers says otherwise.
const WORKERS = (process.env.BENCH_SERVE_WORKERS ?? '1,2').split(',').map(Number);
const CACHE_MB = Number(process.env.BENCH_SERVE_CACHE_MB ?? 256);
const WARMUP_SECONDS = 3;
const ENGINES = (process.env.BENCH_SERVE_ENGINES ?? 'pglite,postgres,none').split(',');
// A directory: the server and load processes write V8 CPU profiles there (node --cpu-prof).
const PROFILE = process.env.BENCH_SERVE_PROFILE;
const execArgv = PROFILE ? ['--cpu-prof', '--cpu-prof-dir', PROFILE] : [];
// 1: each server process samples its CPU profile over the timed run (every 250 µs) to name what ran in each block.
const BLOCK_PROFILE = process.env.BENCH_SERVE_BLOCKS === '1';
const TOPIC = '0.0.5000';
const PUBLISHER = '0.0.1001';

/** The indexer's mirror node (emptyMirror), started by main. */
let mirror;

const subjectOf = (i) => `uaid:aid:bench;uid=0;registry=hol;proto=${i % 7 === 0 ? 'mcp' : 'a2a'};nativeId=agent-${i}.example`;

if (process.argv[2] === '--load') await loadClient(JSON.parse(process.argv[3]));
else if (process.argv[2] === '--serve' || cluster.isWorker) await serveProcess(JSON.parse(process.argv[3]));
else await main();

async function main() {
  mirror = await emptyMirror();
  console.log(
    `serve lookups: ${SUBJECTS} subjects, ${CONNECTIONS} connections, ${SECONDS} s per engine, score cache ${CACHE_MB} MiB per server process (goal p99 ≤ 20 ms)`,
  );
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
  const dir = mkdtempSync(join(tmpdir(), 'hcs25-bench-serve-'));
  let pg;
  try {
    let url = 'none';
    if (engine === 'postgres') {
      const { startPostgres } = await import(DIST('devtools/postgres.js'));
      pg = await startPostgres().catch((err) => console.log(`postgres: ${String(err).split('\n')[0]}`));
      if (!pg) {
        console.log('postgres: skipped (no PostgreSQL server could be started; apt-get install -y postgresql)');
        return;
      }
      url = pg.url;
    } else if (engine === 'pglite') url = join(dir, 'serve-db');
    if (engine !== 'none') {
      const { openStore } = await import(DIST('serve/store/index.js'));
      // Filled here, then closed: the embedded database belongs to one process at a time (the server's, next).
      const store = await openStore(url, { stateDir: dir });
      try {
        const loadStart = performance.now();
        await fill(store);
        console.log(`${engine}: loaded ${SUBJECTS} subjects (${SUBJECTS * 2} signals, scored) in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);
      } finally {
        await store.close();
      }
    }
    for (const workers of engine === 'postgres' ? WORKERS : [1]) {
      await serveAndMeasure(workers > 1 ? `${engine} ×${workers}` : engine, url, workers, pg ? new URL(url).port : undefined);
    }
  } finally {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts the server process(es), runs the load process against them, prints one line of figures. */
async function serveAndMeasure(label, url, workers, pgPort) {
  const engine = label.split(' ')[0];
  const polls0 = mirror.polls;
  const server = fork(fileURLToPath(import.meta.url), ['--serve', JSON.stringify({ engine, url, workers, mirrorUrl: mirror.url })], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (message) =>
    new Promise((resolve, reject) => {
      const onExit = (code) => reject(new Error(`server process exited ${code}`));
      server.once('exit', onExit);
      server.once('message', (m) => {
        server.off('exit', onExit);
        resolve(m);
      });
      if (message) server.send(message);
    });
  try {
    const { url: base, warmed, warmMs } = await ask();
    console.log(`${label}: score cache filled from the store at start: ${warmed.join(' + ')} answers in ${(warmMs / 1000).toFixed(1)} s`);
    // One load process: it opens its connections and asks for WARMUP_SECONDS, says 'timing', then asks for SECONDS
    // on the same connections; the server's figures are taken when it says so and when it is done.
    let before;
    let pgBefore;
    let load1 = 0;
    const result = await new Promise((resolve, reject) => {
      const child = fork(fileURLToPath(import.meta.url), ['--load', JSON.stringify({ url: base, subjects: SUBJECTS, connections: CONNECTIONS, warmup: WARMUP_SECONDS, seconds: SECONDS })], {
        execArgv,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child.on('message', (m) => {
        if (m?.type !== 'timing') return resolve(m);
        load1 = loadavg()[0];
        if (pgPort) pgBefore = postgresCpu(pgPort);
        before = ask({ type: 'usage' });
      });
      child.once('exit', (code) => reject(new Error(`load process exited ${code}`)));
    });
    before = await before;
    const polls1 = mirror.polls;
    const after = await ask({ type: 'usage' });
    const pgAfter = pgPort ? postgresCpu(pgPort) : undefined;
    const load2 = loadavg()[0];
    const { requests, errors, seconds, p50, p99, max, maxAtMs, cpuUs, setup } = result;
    const serverUs = after.cpuUs - before.cpuUs;
    const hits = after.hits - before.hits;
    const misses = after.misses - before.misses;
    const verdict = p99 <= 20 ? 'meets' : 'misses';
    console.log(
      `${label}: ${Math.round(requests / seconds)} lookups/s over ${seconds.toFixed(1)} s (${requests} requests, ${errors} errors); latency p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(1)} ms (asked ${(maxAtMs / 1000).toFixed(2)} s into the run) (${verdict} the p99 ≤ 20 ms goal)`,
    );
    console.log(
      `${label}:   not in the figures above: the warm-up, ${WARMUP_SECONDS} s on the same connections (opened ${CONNECTIONS} connections, first answer on each at most ${setup.firstMax.toFixed(0)} ms after its connect; ${setup.requests} lookups, max ${setup.max.toFixed(0)} ms; ` +
        `server event loop blocked at most ${before.loopMaxMs.map((v) => `${v.toFixed(0)} ms`).join(' + ')}, GC pauses at most ${before.gcMaxMs.map((v) => `${v.toFixed(0)} ms`).join(' + ')} (${before.gcMaxKind.join(' + ')}))`,
    );
    console.log(
      `${label}:   CPU per lookup: server ${(serverUs / requests).toFixed(1)} µs (${workers} process${workers > 1 ? 'es' : ''}), load client ${(cpuUs / requests).toFixed(1)} µs; ` +
        `cache hits ${((100 * hits) / Math.max(1, hits + misses)).toFixed(1)}%, ${after.entries} entries, ${(after.cacheBytes / 2 ** 20).toFixed(0)} MiB; ` +
        `server RSS ${after.rss.map((b) => `${(b / 2 ** 20).toFixed(0)} MiB`).join(' + ')}; load average ${load1.toFixed(2)} → ${load2.toFixed(2)} (${availableParallelism()} cores)`,
    );
    const ms = (list) => list.map((v) => `${v.toFixed(0)} ms`).join(' + ');
    console.log(
      `${label}:   server stalls in the timed run: event loop blocked at most ${ms(after.loopMaxMs)}; GC pauses at most ${ms(after.gcMaxMs)} (${after.gcMaxKind.join(' + ')}), ${ms(after.gcMs)} in all`,
    );
    if (engine !== 'none') {
      console.log(
        `${label}:   the indexer ran as in \`hcs25 serve\` (REST polling, no gRPC doorbell; nothing new on the topic): ${polls1 - polls0} mirror polls in all, ${after.indexing.filter(Boolean).length} of ${workers} process${workers > 1 ? 'es' : ''} indexing`,
      );
    }
    if (pgAfter) {
      console.log(
        `${label}:   PostgreSQL server CPU in the timed run: ${(((pgAfter.total - pgBefore.total) * 1e6) / requests).toFixed(1)} µs per lookup, ${(pgAfter.total - pgBefore.total).toFixed(2)} s in all (${postgresCpuDelta(pgBefore, pgAfter) || 'none'})`,
      );
    }
    for (const [i, b] of after.blocks.entries()) {
      for (const line of describeBlocks(b)) console.log(`${label}:   ${workers > 1 ? `process ${i + 1}: ` : ''}${line}`);
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once('exit', resolve)));
  }
}

/**
 * A server process: the HTTP API over the store, with the score cache kept current by ServeEvents, and the indexer,
 * as startServer builds them (no indexer without a database). With workers > 1 this is the cluster's
 * primary: it forks the workers, which serve, and sums their figures.
 */
async function serveProcess({ engine, url, workers, mirrorUrl }) {
  if (cluster.isPrimary && workers > 1) {
    const list = Array.from({ length: workers }, () => cluster.fork());
    const ready = await Promise.all(list.map((w) => new Promise((resolve) => w.once('message', resolve))));
    process.send({ url: ready[0].url, warmed: ready.flatMap((r) => r.warmed), warmMs: Math.max(...ready.map((r) => r.warmMs)) });
    process.on('message', async (m) => {
      if (m?.type !== 'usage') return;
      const parts = await Promise.all(list.map((w) => new Promise((resolve) => (w.once('message', resolve), w.send(m)))));
      process.send({
        cpuUs: parts.reduce((a, p) => a + p.cpuUs, 0),
        hits: parts.reduce((a, p) => a + p.hits, 0),
        misses: parts.reduce((a, p) => a + p.misses, 0),
        entries: parts.reduce((a, p) => a + p.entries, 0),
        cacheBytes: parts.reduce((a, p) => a + p.cacheBytes, 0),
        rss: parts.flatMap((p) => p.rss),
        loopMaxMs: parts.flatMap((p) => p.loopMaxMs),
        gcMaxMs: parts.flatMap((p) => p.gcMaxMs),
        gcMaxKind: parts.flatMap((p) => p.gcMaxKind),
        gcMs: parts.flatMap((p) => p.gcMs),
        blocks: parts.flatMap((p) => p.blocks),
        indexing: parts.flatMap((p) => p.indexing),
      });
    });
    process.on('SIGTERM', () => {
      for (const w of list) w.kill('SIGTERM');
      process.exit(0);
    });
    return;
  }
  const { openStore } = await import(DIST('serve/store/index.js'));
  const { startHttpServer } = await import(DIST('serve/http.js'));
  const { ServeEvents } = await import(DIST('serve/events.js'));
  const { ScoreCache } = await import(DIST('serve/cache.js'));
  const { livePage } = await import(DIST('serve/live.js'));
  const { DEFAULT_SCORING_CONFIG } = await import(DIST('consumer/scoring-config.js'));
  const store = engine === 'none' ? await noDatabase() : await openStore(url, { stateDir: tmpdir() });
  const scores = new ScoreCache(store, CACHE_MB * 2 ** 20);
  const events = new ServeEvents({ store, scores, maxClients: 10 });
  const warmStart = performance.now();
  events.start();
  // Awaited so that the timed run is not also the cache's first fill.
  const warmed = await events.warmed;
  const warmMs = performance.now() - warmStart;
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
  // The indexer, as startServer runs it next to the HTTP API: its periodic work (topic polls, rescoring rounds, stale
  // scores) shares the event loop with the lookups. Its mirror node has nothing new: the steady state of a served topic.
  const stop = new AbortController();
  let indexer;
  if (engine !== 'none') {
    const { loadConfig } = await import(DIST('config/load.js'));
    const { createHcs25Client } = await import(DIST('client.js'));
    const { startIndexer } = await import(DIST('serve/indexer.js'));
    const env = { HCS25_NETWORK: 'local', HCS25_NODES: '127.0.0.1:9=0.0.3', HCS25_MIRROR_REST_URL: mirrorUrl, HCS25_MIRROR_GRPC: '' };
    const hcs25 = createHcs25Client(loadConfig({ cwd: tmpdir(), env, flags: { stateDir: tmpdir() } }));
    indexer = startIndexer(hcs25, {
      store,
      topics: [TOPIC],
      publishers: [PUBLISHER],
      signal: stop.signal,
      grpc: false,
      onLag: (lag) => {
        if (lag.subjects) events.indexed({ topic: lag.topic, fromSequence: null, sequence: lag.lastSequence, subjects: [...lag.subjects] });
      },
      onNote: (line) => console.log(`${engine}: indexer: ${line}`),
    });
  }
  process.send({ url: http.url, warmed: [warmed], warmMs });
  // Where a slow answer comes from: the longest the event loop was blocked, and the longest GC pause, since the last
  // 'usage' question (so the timed run's own, after the warm-up's).
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  let gcMax = 0;
  let gcMs = 0;
  let gcKind = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.duration > gcMax) {
        gcMax = e.duration;
        gcKind = e.detail?.kind ?? 0;
      }
      gcMs += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const GC_KINDS = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental marking', 8: 'weak callbacks' };
  // The timed run's event-loop blocks, each with what filled it (started at the first 'usage' question, reported at
  // the second).
  let tracer;
  process.on('message', async (m) => {
    if (m?.type !== 'usage') return;
    const blocks = tracer ? await tracer.stop() : null;
    tracer = blocks ? undefined : await traceBlocks({ profile: BLOCK_PROFILE });
    const cpu = process.cpuUsage();
    process.send({
      blocks: [blocks],
      indexing: [indexer?.indexing ?? false],
      cpuUs: cpu.user + cpu.system,
      hits: scores.hits,
      misses: scores.misses,
      entries: scores.size,
      cacheBytes: scores.byteSize,
      rss: [process.memoryUsage().rss],
      loopMaxMs: [loopDelay.max / 1e6],
      gcMaxMs: [gcMax],
      gcMaxKind: [GC_KINDS[gcKind] ?? 'none'],
      gcMs: [gcMs],
    });
    loopDelay.reset();
    gcMax = 0;
    gcMs = 0;
  });
  process.on('SIGTERM', async () => {
    await http.close();
    stop.abort();
    await indexer?.done;
    await store.close();
    // exit() after a signal still writes a --cpu-prof profile.
    process.exit(0);
  });
}

/** A mirror node REST API whose topics have no message after the indexer's cursor (in the bench's own process). */
async function emptyMirror() {
  const { createServer } = await import('node:http');
  const body = JSON.stringify({ messages: [], links: { next: null } });
  const state = { url: '', polls: 0 };
  const server = createServer((req, res) => {
    if (/^\/api\/v1\/topics\/[^/]+\/messages/.test(req.url ?? '')) state.polls++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  state.url = `http://127.0.0.1:${server.address().port}`;
  return state;
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
  return {
    engine: 'none',
    revision: async () => 1,
    watch: () => () => {},
    changesSince: async () => [],
    topics: async () => [],
    subjectScore: async (subject) => ({ topic: TOPIC, subject, fresh: true, score: { ...score, subject } }),
    storedScores: async ({ cursor, limit }) => {
      const from = Number(cursor ?? 0);
      const to = Math.min(SUBJECTS, from + limit);
      const items = Array.from({ length: to - from }, (_, k) => ({ topic: TOPIC, subject: subjectOf(from + k), fresh: true, score: { ...score, subject: subjectOf(from + k) } }));
      return { items, next: to < SUBJECTS ? String(to) : null };
    },
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

/**
 * The load process: CONNECTIONS keep-alive HTTP/1.1 connections on plain sockets, each asking again as soon as its
 * answer is complete (closed loop, one request in flight per connection). Each request is a prebuilt Buffer; an
 * answer is read only as far as its status line and Content-Length, then its body is counted. The undici Pool this
 * bench used before cost more CPU per lookup than the server it measured (its request objects, header parsing and
 * body streams: see the profile with BENCH_SERVE_PROFILE), and on two shared cores the client's CPU is taken from the
 * server.
 */
async function loadClient({ url, subjects, connections, warmup, seconds }) {
  const { connect } = await import('node:net');
  const { hostname, port } = new URL(url);
  const requests = Array.from({ length: subjects }, (_, i) =>
    Buffer.from(`GET /v1/subjects/${encodeURIComponent(subjectOf(i))}/score HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`, 'latin1'),
  );
  let latencies = new Float64Array(1 << 20);
  let n = 0;
  let errors = 0;
  let maxTook = 0;
  let maxAt = 0;
  const setup = { requests: 0, max: 0, firstMax: 0 };
  let cpu0;
  let timing = false;
  let start = performance.now();
  let end = Infinity;
  // The warm-up ends (and the timed window starts) for all connections at once.
  setTimeout(() => {
    timing = true;
    cpu0 = process.cpuUsage();
    start = performance.now();
    end = start + seconds * 1000;
    process.send({ type: 'timing' });
  }, warmup * 1000);
  const pick = () => (performance.now() < end ? Math.floor(Math.random() * subjects) : -1);

  const connection = () =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.setNoDelay(true);
      let sent = 0;
      let first = true;
      let buffered = null;
      const send = () => {
        const i = pick();
        if (i < 0) {
          socket.end();
          return resolve();
        }
        sent = performance.now();
        socket.write(requests[i]);
      };
      socket.on('connect', send);
      socket.on('error', reject);
      socket.on('data', (chunk) => {
        buffered = buffered === null ? chunk : Buffer.concat([buffered, chunk]);
        const head = buffered.indexOf('\r\n\r\n');
        if (head < 0) return;
        const headers = buffered.latin1Slice(0, head);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
        if (buffered.length < head + 4 + length) return;
        if (buffered.length > head + 4 + length) return reject(new Error('more bytes than one answer: the server answered twice'));
        buffered = null;
        if (n === latencies.length) {
          const grown = new Float64Array(n * 2);
          grown.set(latencies);
          latencies = grown;
        }
        const took = performance.now() - sent;
        if (!timing || sent < start) {
          setup.requests++;
          setup.max = Math.max(setup.max, took);
          if (first) setup.firstMax = Math.max(setup.firstMax, took);
          first = false;
          if (headers.charCodeAt(9) !== 50 /* 2xx */) errors++;
          return send();
        }
        if (took > maxTook) {
          maxTook = took;
          maxAt = sent - start;
        }
        latencies[n++] = took;
        if (headers.charCodeAt(9) !== 50 /* 2xx */) errors++;
        send();
      });
    });
  await Promise.all(Array.from({ length: connections }, connection));
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const sorted = latencies.subarray(0, n).sort();
  const q = (p) => sorted[Math.min(n - 1, Math.floor(p * n))];
  process.send({ requests: n, errors, seconds: elapsed, p50: q(0.5), p99: q(0.99), max: sorted[n - 1], maxAtMs: maxAt, cpuUs: cpu.user + cpu.system, setup });
  process.disconnect();
}
