#!/usr/bin/env node
/**
 * serve: `hcs25 serve` over a topic with SUBJECTS subjects (three signals each, published as `hcs25 run` publishes
 * them), with PostgreSQL (a throwaway server) and with the embedded PGlite. For each engine a server process runs
 * startServer as `hcs25 serve` does; this process times its indexing from the emulator's mirror node (signals/s,
 * goal ≥ 20,000), waits until the scores of a wide sample of subjects are computed, then keeps CONNECTIONS keep-alive
 * connections asking `GET /v1/subjects/{uaid}/score` for random subjects (closed loop) for SECONDS after a warm-up: p99
 * latency, goal ≤ 20 ms; then the same for a badge (`/badge/score.json`, goal ≤ 20 ms) and a subject's 30-day series
 * (`/history?window=30d`, goal ≤ 50 ms).
 * Last, webhooks: a hook on `availability-changed` posting to a receiver in this process, then a run in which HOOKED
 * subjects are unreachable; each delivery is timed from when the API counted the run's signals as indexed (goal
 * ≤ 5 s) and from when the run's publication finished.
 * The per-address rate limit is off: a marketplace's lookups come from many addresses, this bench's from one.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as bench from './lib/bench.mjs';

const HELP = `npm run bench -- serve [--subjects N] [--connections N] [--seconds N] [--engines LIST] [--quick]
  --subjects     agents on the topic, three signals each (default 250000; --quick 2000)
  --connections  concurrent keep-alive connections asking for scores (default 200)
  --seconds      timed lookup window per engine, after the warm-up (default 20; --quick 3)
  --warmup       seconds of lookups before each timed window (default 3)
  --engines      postgres,pglite (default both); PostgreSQL needs initdb (apt-get install postgresql)
  --score-cache-mb  the server's score cache, MiB (default: hcs25 serve's default; 0: every lookup asks the store)
  --series-subjects  subjects asked for their 30-day series, each with SERIES-DEPTH more probes (default 100;
                 --quick 10)
  --series-depth     the probes each of those has: a 30-day window of hourly probes (default 720; --quick 24)
  --lookups      which lookups to time: score,badge,series,search (default all four; search is one user's
                 searches for a name that matches one subject, one at a time: it has no goal)
  --hooked       subjects whose availability flips in the webhook run (default 1000; 0: no webhook run)`;
const opts = bench.options(
  {
    subjects: 250_000,
    connections: 200,
    seconds: 20,
    engines: 'postgres,pglite',
    'score-cache-mb': -1,
    lookups: 'score,badge,series,search',
    hooked: 1000,
    warmup: 3,
    'series-subjects': 100,
    'series-depth': 720,
  },
  { subjects: 2000, seconds: 3, 'series-subjects': 10, 'series-depth': 24 },
);
const MIN_RATE = 20_000;
const MAX_P99_MS = 20;
/** What is asked of random subjects, and each one's p99 goal (issue #33: badges as scores, a 30-day series ≤ 50 ms). */
const LOOKUPS = [
  { key: 'score', name: 'score lookup', path: (s) => `/v1/subjects/${s}/score`, maxP99Ms: MAX_P99_MS },
  { key: 'badge', name: 'badge lookup', path: (s) => `/v1/subjects/${s}/badge/score.json`, maxP99Ms: MAX_P99_MS },
  {
    key: 'series',
    name: '30-day series',
    path: (s) => `/v1/subjects/${s}/history?window=30d`,
    maxP99Ms: 50,
    // Only the subjects with a 30-day history are asked.
    among: () => opts['series-subjects'],
  },
].filter((l) => opts.lookups.split(',').includes(l.key));
const MAX_DELIVERY_MS = 5000;
/** The server's admin token for the webhook API (a throwaway server on loopback). */
const ADMIN_TOKEN = 'bench-admin-token-on-loopback';

if (opts.help) console.log(HELP);
else if (opts.child) await serverProcess();
else await main();

async function main() {
  bench.header(
    'serve',
    `${bench.fmt(opts.subjects)} subjects, ${opts.connections} connections, engines ${opts.engines}: ` +
      'indexing and score lookups',
  );
  const { createTopic } = await import('hcs25');
  const emu = await bench.startEmulator();
  const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-serve-'));
  try {
    const env = bench.emulatorEnv(emu);
    const client = await bench.hcs25Client(env, stateDir, { concurrency: 1000 });
    const topic = (await createTopic(client)).topicId;
    const fillStart = performance.now();
    // The indexing rate is timed over these, the first on the topic: three signals a subject.
    const base = await bench.fillSignalTopic(client, topic, opts.subjects, 3);
    let signals = base;
    if (LOOKUPS.some((l) => l.key === 'series')) signals += await fillHistories(client, topic);
    await client.close();
    console.log(
      `  topic ${topic}: ${bench.fmt(signals)} signals published ` +
        `in ${bench.secs(performance.now() - fillStart)} (not timed)`,
    );
    // Shared by the engines: the webhook run of each adds signals the next one indexes too.
    const job = { env, topic, base, signals, stateDir, publisher: emu.operator.accountId, hooksRun: 0 };
    for (const engine of opts.engines.split(',')) {
      try {
        await benchEngine(engine, job);
      } catch (err) {
        // One engine that cannot run (no PostgreSQL installed) does not keep the other from being measured.
        bench.verdict(`serve ${engine}`, `not measured: ${err?.message ?? err}`, 'a run', false);
      }
    }
  } finally {
    await emu.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  bench.finish();
}

async function benchEngine(engine, job) {
  let pg;
  let database;
  let onSignal;
  if (engine === 'postgres') {
    const { startPostgres } = await import('hcs25/devtools');
    pg = await startPostgres();
    database = pg.url;
    // The server runs apart from this process: stopped here on Ctrl-C too, or it would outlive the bench.
    onSignal = () => pg.stop().finally(() => process.exit(130));
    process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  } else if (engine === 'pglite') {
    database = join(job.stateDir, `serve-db-${Date.now()}`);
  } else throw new Error(`unknown engine ${engine}: postgres or pglite`);
  const server = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--child'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((_, reject) =>
    server.once('exit', (code) => reject(new Error(`the server process exited ${code}`))),
  );
  exited.catch(() => undefined);
  try {
    server.send({ ...job, database });
    const { url, readyAt } = await Promise.race([new Promise((resolve) => server.once('message', resolve)), exited]);
    const indexed = await Promise.race([untilIndexed(url, job.base), exited]);
    const indexMs = indexed.at - readyAt;
    const rate = (job.base / indexMs) * 1000;
    // Then the rest: the deep histories (whose subjects are rescored as their probes come in) and earlier webhook runs.
    const all = await Promise.race([untilIndexed(url, job.signals), exited]);
    const freshMs = await Promise.race([untilFresh(url), exited]);
    console.log(
      `  ${engine}: ${bench.fmt(job.base)} signals (three a subject) indexed in ${bench.secs(indexMs)}; ` +
        `all ${bench.fmt(all.signals)} ${bench.secs(all.at - indexed.at)} later; ` +
        `every sampled score computed ${bench.secs(freshMs)} after that`,
    );
    bench.verdict(
      `serve ${engine} indexing`,
      `${bench.fmt(rate)} signals/s`,
      `≥ ${bench.fmt(MIN_RATE)} signals/s`,
      rate >= MIN_RATE,
    );
    for (const kind of LOOKUPS) {
      const r = await Promise.race([lookups(url, kind.path, kind.among?.() ?? opts.subjects), exited]);
      console.log(
        `  ${engine} ${kind.name}: ${bench.fmt(r.requests / r.seconds)}/s over ${r.seconds.toFixed(1)} s, ` +
          `${bench.fmt(r.requests)} requests, ${r.errors} errors; ` +
          `p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms`,
      );
      bench.verdict(
        `serve ${engine} ${kind.name} p99`,
        `${r.p99.toFixed(2)} ms at ${opts.connections} connections`,
        `≤ ${kind.maxP99Ms} ms`,
        r.p99 <= kind.maxP99Ms && r.errors === 0,
      );
    }
    if (opts.lookups.split(',').includes('search')) {
      const s = await Promise.race([searches(url), exited]);
      console.log(
        `  ${engine} search for one subject's name among ${bench.fmt(opts.subjects)}: ` +
          `p50 ${s.p50.toFixed(1)} ms, max ${s.max.toFixed(1)} ms over ${s.n} searches, one at a time`,
      );
    }
    if (opts.hooked > 0) {
      const d = await Promise.race([hookDeliveries(url, job), exited]);
      console.log(
        `  ${engine} webhooks: ${bench.fmt(d.delivered)} deliveries for ${bench.fmt(d.hooked)} subjects; ` +
          `signals indexed ${bench.secs(d.indexedMs, 2)} after the run's publication ended; ` +
          `deliveries after indexing p50 ${bench.secs(d.p50, 2)}, max ${bench.secs(d.max, 2)}`,
      );
      bench.verdict(
        `serve ${engine} webhook delivery`,
        `max ${bench.secs(d.max, 2)} after indexing (${bench.fmt(d.delivered)} deliveries)`,
        `≤ ${bench.secs(MAX_DELIVERY_MS, 0)}`,
        d.max <= MAX_DELIVERY_MS && d.delivered === d.hooked,
      );
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) =>
      server.exitCode !== null || server.signalCode !== null ? resolve() : server.once('exit', resolve),
    );
    if (onSignal) process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await pg?.stop();
  }
}

/**
 * A hook on `availability-changed` with a receiver here, then a run in which the first HOOKED subjects do not answer
 * their probe: each of them flips from reachable to unreachable, one delivery each. Times from when the API counted
 * the run's signals as indexed to each delivery's arrival.
 */
async function hookDeliveries(url, job) {
  const { createServer } = await import('node:http');
  const { runSignals } = await import('hcs25');
  // Each engine's run flips subjects no earlier run has flipped, so that each of them changes.
  const engines = opts.engines.split(',').length;
  const hooked = Math.min(opts.hooked, Math.floor(opts.subjects / engines));
  const first = job.hooksRun * hooked;
  job.hooksRun++;
  const arrivals = new Map();
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const { subject } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (!arrivals.has(subject)) arrivals.set(subject, at);
      res.end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const created = await fetch(`${url}/v1/hooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `http://127.0.0.1:${receiver.address().port}/`,
        events: ['availability-changed'],
      }),
    });
    if (created.status !== 201) throw new Error(`creating the hook: HTTP ${created.status} ${await created.text()}`);
    const agents = Array.from({ length: hooked }, (_, i) => bench.syntheticAgent(first + i));
    const client = await bench.hcs25Client(job.env, job.stateDir, { concurrency: 1000 });
    let report;
    try {
      report = await runSignals(client, {
        source: { agents },
        topic: job.topic,
        evals: ['availability'],
        seed: `bench-hooks-${Date.now()}`,
        keepResponses: false,
        runner: {
          transportFactory: (agent) => ({
            ...bench.instantTransport(agent),
            probe: async () => ({ reachable: false, latencyMs: 1, reason: 'bench: unreachable' }),
          }),
        },
      });
    } finally {
      await client.close();
    }
    const publishedAt = Date.now();
    if (report.status !== 'complete') throw new Error(`the webhook run: ${report.status}`);
    // The next engine's server indexes these signals too.
    job.signals += report.signals.published;
    const indexed = await untilIndexed(url, job.signals);
    const limitAt = Date.now() + 60_000;
    while (arrivals.size < hooked && Date.now() < limitAt) await bench.sleep(50);
    const delays = [...arrivals.values()].map((at) => at - indexed.at).sort((a, b) => a - b);
    return {
      hooked,
      delivered: delays.length,
      indexedMs: indexed.at - publishedAt,
      p50: delays[Math.floor(delays.length / 2)] ?? Infinity,
      max: delays.length === hooked ? delays[delays.length - 1] : Infinity,
    };
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }
}

/**
 * The 30-day series at the goal's depth: the first SERIES-SUBJECTS subjects get SERIES-DEPTH availability probes
 * more, one run each, as an hourly prober publishes them. They reach consensus within the fill's minutes rather than
 * an hour apart, so every one of them falls in the window: the store reads and adds up as many as 30 days of hourly
 * probes would make it.
 */
async function fillHistories(client, topic) {
  const { runSignals } = await import('hcs25');
  const n = Math.min(opts['series-subjects'], opts.subjects);
  const agents = Array.from({ length: n }, (_, i) => bench.syntheticAgent(i));
  let published = 0;
  for (let run = 0; run < opts['series-depth']; run++) {
    const report = await runSignals(client, {
      source: { agents },
      topic,
      evals: ['availability'],
      seed: `bench-history-${run}`,
      keepResponses: false,
      runner: { transportFactory: bench.instantTransport },
    });
    if (report.status !== 'complete') throw new Error(`filling the histories: run ${report.status}`);
    published += report.signals.published;
  }
  console.log(`  ${bench.fmt(n)} subjects with ${bench.fmt(opts['series-depth'])} more probes each`);
  return published;
}

/** Polls the API's topic status until every signal is indexed; the time it saw them. */
async function untilIndexed(url, signals) {
  for (;;) {
    const { topics } = await (await fetch(`${url}/v1/topics`)).json();
    const n = topics[0]?.counts.signals ?? 0;
    if (n >= signals) return { at: Date.now(), signals: n };
    await bench.sleep(100);
  }
}

/** Waits until a sample of subjects' scores are computed (the API says `X-Score-Fresh: true`), ms. */
async function untilFresh(url) {
  const t0 = Date.now();
  // Generous: scoring a quarter of a million subjects on a busy machine takes minutes.
  const limitMs = Math.max(60_000, opts.subjects * 2);
  // A wide sample: lookups timed while the server still scores a backlog would measure the backlog, not the lookups.
  const sampled = Math.min(1000, opts.subjects);
  const sample = Array.from({ length: sampled }, (_, k) => Math.floor((k * opts.subjects) / sampled));
  for (;;) {
    const statuses = await Promise.all(
      sample.map(async (i) => {
        let res;
        let body;
        try {
          res = await fetch(`${url}/v1/subjects/${encodeURIComponent(bench.syntheticAgent(i).subject)}/score`);
          body = await res.text();
        } catch {
          // A busy server closing an idle keep-alive connection as it is reused: asked again in the next round.
          return 'connection closed';
        }
        if (res.status === 200) return res.headers.get('x-score-fresh') === 'true' ? 'fresh' : 'stale';
        try {
          return JSON.parse(body).error?.code ?? String(res.status);
        } catch {
          return String(res.status);
        }
      }),
    );
    if (statuses.every((s) => s === 'fresh')) return Date.now() - t0;
    if (Date.now() - t0 > limitMs) {
      const count = new Map();
      for (const s of statuses) count.set(s, (count.get(s) ?? 0) + 1);
      const counts = [...count].map(([s, n]) => `${n} ${s}`);
      throw new Error(
        `scores not all computed after ${bench.secs(limitMs, 0)}: of ${sampled} sampled subjects ${counts.join(', ')}`,
      );
    }
    await bench.sleep(250);
  }
}

/**
 * CONNECTIONS keep-alive HTTP/1.1 connections on plain sockets, each asking again as soon as its answer is complete.
 * A raw socket client costs far less CPU per request than a full HTTP client, and it shares the cores with the server.
 */
async function lookups(url, path, among) {
  const { hostname, port } = new URL(url);
  const requests = Array.from({ length: Math.min(among, opts.subjects) }, (_, i) =>
    Buffer.from(
      `GET ${path(encodeURIComponent(bench.syntheticAgent(i).subject))} HTTP/1.1\r\n` +
        `Host: ${hostname}:${port}\r\n\r\n`,
      'latin1',
    ),
  );
  const latencies = [];
  let errors = 0;
  let timing = false;
  let start = performance.now();
  let end = Infinity;
  setTimeout(() => {
    timing = true;
    start = performance.now();
    end = start + opts.seconds * 1000;
  }, opts.warmup * 1000);
  const connection = () =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.setNoDelay(true);
      let sent = 0;
      let buffered = null;
      const send = () => {
        if (performance.now() >= end) {
          socket.end();
          return resolve();
        }
        sent = performance.now();
        socket.write(requests[Math.floor(Math.random() * requests.length)]);
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
        buffered = null;
        if (timing && sent >= start) {
          latencies.push(performance.now() - sent);
          if (headers.charCodeAt(9) !== 50 /* 2xx */) errors++;
        }
        send();
      });
    });
  await Promise.all(Array.from({ length: opts.connections }, connection));
  const seconds = (performance.now() - start) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { requests: sorted.length, errors, seconds, p50: q(0.5), p99: q(0.99), max: sorted[sorted.length - 1] };
}

/**
 * A person searching by name on the page: `q` matches one subject (the dot after the number ends its endpoint's host),
 * so the store looks through every subject to fill the page. One search at a time.
 */
async function searches(url) {
  const times = [];
  for (let k = 0; k < 20; k++) {
    const i = Math.floor(Math.random() * opts.subjects);
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/subjects?q=${encodeURIComponent(`agent-${i}.`)}`);
    const { subjects } = await res.json();
    times.push(performance.now() - t0);
    if (res.status !== 200 || subjects?.length !== 1)
      throw new Error(`search for agent-${i}: HTTP ${res.status}, ${subjects?.length} subjects`);
  }
  times.sort((a, b) => a - b);
  return { n: times.length, p50: times[times.length / 2], max: times[times.length - 1] };
}

/** The server: startServer as `hcs25 serve` runs it, on a free port. */
async function serverProcess() {
  const { env, topic, database, stateDir, publisher } = await new Promise((resolve) =>
    process.once('message', resolve),
  );
  const { startServer, Secret } = await import('hcs25');
  const client = await bench.hcs25Client(env, stateDir);
  const stop = new AbortController();
  const server = await startServer(client, {
    topics: [topic],
    publishers: [publisher],
    database,
    host: '127.0.0.1',
    port: 0,
    limits: { requestsPerSecond: 0 },
    adminToken: new Secret(ADMIN_TOKEN),
    allowPrivateHooks: true,
    ...(opts['score-cache-mb'] >= 0 && { scoreCacheBytes: opts['score-cache-mb'] * 1024 * 1024 }),
    signal: stop.signal,
    onNote: (line) => console.log(`  server: ${line}`),
  });
  process.send({ url: server.url, readyAt: Date.now() });
  process.once('SIGTERM', async () => {
    stop.abort();
    await server.close();
    await client.close();
    process.exit(0);
  });
}
