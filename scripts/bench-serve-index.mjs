#!/usr/bin/env node
// hcs25 serve indexing: 1,000,000 signals, dense packs as the publisher writes them, through the indexer's batch
// path (reader classification → BatchBuilder → store.applyBatch, 1,000 signals a batch) into the embedded engine
// (PGlite) and a real PostgreSQL server started here: signals/s and database bytes per signal (pg_database_size).
// Packing and classifying a million signals would take minutes, so 3,000 agents' signals are packed and classified
// once, and the batches replay them as 1,000,000 distinct signals: each replay is another publisher account (the
// dedupe key differs) with its own sequence numbers. Classification speed is printed on its own, and a smaller
// end-to-end figure runs the indexer against the emulator's mirror node (REST + gRPC).
// Every engine line also gives CPU time per signal of this process (process.cpuUsage) and of the PostgreSQL server
// with its backends (/proc), RSS and the load average: on a shared machine the wall-clock rate is only as good as the
// load lets it be, the CPU figures are the cost.
// `--quick` (or BENCH_SERVE_SIGNALS=n, BENCH_SERVE_PGLITE_SIGNALS=n, BENCH_SERVE_E2E=0): fewer signals. Goal: ≥ 20,000 signals/s into PostgreSQL. Run after build.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, emulatorEnv, fastSigningClient, startEmulator, submitAll } from './lib/emulator.mjs';
import { syntheticResults } from './lib/fleet.mjs';
import { postgresCpu } from './lib/postgres-cpu.mjs';

const QUICK = process.argv.includes('--quick');
const TOTAL = Number(process.env.BENCH_SERVE_SIGNALS ?? (QUICK ? 100_000 : 1_000_000));
// PGlite runs PostgreSQL on one JavaScript thread: 250,000 keeps the bench within minutes (BENCH_SERVE_PGLITE_SIGNALS=1000000).
const PGLITE_TOTAL = Number(process.env.BENCH_SERVE_PGLITE_SIGNALS ?? (QUICK ? 50_000 : 250_000));
const AGENTS = 3000;
const BATCH = 1000;
const GOAL = 20_000;

const { buildSignalV2, newRunKey, SignalPacker } = await import(DIST('signals/index.js'));
const { classify } = await import(DIST('consumer/reader.js'));
const { BatchBuilder } = await import(DIST('serve/batch.js'));
const { openStore } = await import(DIST('serve/store/index.js'));
const { startIndexer } = await import(DIST('serve/indexer.js'));
const { startPostgres } = await import(DIST('devtools/postgres.js'));
const { ulid } = await import('ulid');

const tmp = mkdtempSync(join(tmpdir(), 'hcs25-bench-serve-'));
const fmt = (n) => Math.round(n).toLocaleString('en-US');

// The publisher's dense packs of 3,000 agents × 3 signals.
const results = await syntheticResults(AGENTS, Date.now() - 3_600_000);
const run = ulid();
const runKey = newRunKey();
const packer = new SignalPacker({ mode: 'dense' });
const signals = results.map((r) => buildSignalV2(r, { run, runKey }).message);
const bodies = [...signals.flatMap((s) => packer.add(s)), ...packer.flush()].map((m) => m.bytes);
const t0 = Math.floor(Date.now() / 1000) - 86_400;

// Classified once (the reader, as the indexer runs it), timed: this is the indexer's CPU cost per signal.
let start = performance.now();
const base = [];
for (let i = 0; i < bodies.length; i++) {
  const m = { sequenceNumber: i + 1, consensusTimestamp: `${t0}.${String(i).padStart(9, '0')}`, payerAccountId: '0.0.2000', message: bodies[i] };
  base.push(classify(m, new Set(), new Map()));
}
const classifyMs = performance.now() - start;
console.log(
  `bench-serve-index: ${fmt(signals.length)} signals of ${AGENTS} agents in ${bodies.length} dense packs (${(signals.length / bodies.length).toFixed(1)} signals/message); ` +
    `reader classification ${fmt((signals.length / classifyMs) * 1000)} signals/s on one core`,
);

/** Batches of ~BATCH signals: replay k of the classified packs is publisher 0.0.(2000+k), sequence numbers after replay k-1. */
function* batches(total) {
  const builder = new BatchBuilder();
  let count = 0;
  for (let k = 0; count < total; k++) {
    const payer = `0.0.${2000 + k}`;
    for (let i = 0; i < base.length && count < total; i++) {
      const seq = k * base.length + i + 1;
      const consensusTimestamp = `${t0 + k}.${String(i).padStart(9, '0')}`;
      for (const e of base[i]) {
        if (e.type !== 'signal' || count >= total) continue;
        builder.add({ type: 'signal', signal: { ...e.signal, sequenceNumber: seq, consensusTimestamp, payerAccountId: payer } });
        count++;
      }
      if (builder.length >= BATCH) yield builder.take('rest');
    }
  }
  const last = builder.take('rest');
  if (last) yield last;
}

async function indexInto(label, store, total, port) {
  const before = await store.databaseBytes();
  const cpu0 = process.cpuUsage();
  const server0 = port ? postgresCpu(port).total : 0;
  const begin = performance.now();
  let stored = 0;
  // As the indexer does: the next batch is encoded while the previous one is written.
  let inFlight = Promise.resolve(0);
  for (const batch of batches(total)) {
    const previous = inFlight;
    inFlight = store.applyBatch('0.0.5000', batch).then((r) => r.signals);
    stored += await previous;
  }
  stored += await inFlight;
  const ms = performance.now() - begin;
  const cpu = process.cpuUsage(cpu0);
  const server = port ? postgresCpu(port).total - server0 : 0;
  const bytes = (await store.databaseBytes()) - before;
  const rate = (stored / ms) * 1000;
  const perSignal = (s) => ((s * 1e6) / stored).toFixed(1);
  console.log(
    `${label.padEnd(10)} ${fmt(stored).padStart(9)} signals  ${fmt(rate).padStart(7)} signals/s  ${(bytes / stored).toFixed(0).padStart(4)} B/signal on disk  (${(ms / 1000).toFixed(1)} s; ` +
      `CPU µs/signal: node ${perSignal((cpu.user + cpu.system) / 1e6)}${port ? `, postgres ${perSignal(server)}` : ''}; RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB; load ${loadavg().map((x) => x.toFixed(1)).join(' ')})`,
  );
  if (stored !== total) throw new Error(`${label}: stored ${stored} of ${total}`);
  return rate;
}

let failed = false;
const pg = await startPostgres();
try {
  const postgres = await openStore(pg.url, { stateDir: tmp });
  const rate = await indexInto('postgres', postgres, TOTAL, new URL(pg.url).port);
  await postgres.close();
  if (rate < GOAL) {
    failed = true;
    console.log(`postgres: below the goal of ${fmt(GOAL)} signals/s`);
  }
  if (PGLITE_TOTAL > 0) {
    const pglite = await openStore(join(tmp, 'serve-db'), { stateDir: tmp });
    await indexInto('pglite', pglite, PGLITE_TOTAL);
    await pglite.close();
  }

  // End to end: the emulator's mirror node → the indexer (REST reads, gRPC doorbell) → PostgreSQL.
  const emu = process.env.BENCH_SERVE_E2E === '0' ? undefined : await startEmulator({ accounts: 1 });
  if (emu) try {
    const sdk = await import('@hashgraph/sdk');
    const client = fastSigningClient(sdk, emu);
    const receipt = await (await new sdk.TopicCreateTransaction().setTopicMemo('hcs-25:0:86400').execute(client)).getReceipt(client);
    const topic = receipt.topicId.toString();
    await submitAll(sdk, client, emu, topic, bodies, bodies.length);
    client.close();
    const { loadConfig } = await import(DIST('config/load.js'));
    const { createHcs25Client } = await import(DIST('client.js'));
    const config = loadConfig({
      cwd: tmp,
      env: emulatorEnv(emu),
      flags: { stateDir: tmp },
    });
    const hcs25 = createHcs25Client(config);
    const store = await openStore(await pg.database('e2e'), { stateDir: tmp });
    const abort = new AbortController();
    const begin = performance.now();
    const indexer = startIndexer(hcs25, { store, topics: [topic], signal: abort.signal });
    for (;;) {
      const [status] = await store.topics();
      if (status && status.counts.signals >= signals.length) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - begin;
    abort.abort();
    await indexer.done;
    await store.close();
    await hcs25.close();
    console.log(`end to end: ${fmt(signals.length)} signals (${bodies.length} messages) from the emulator's mirror node into PostgreSQL: ${fmt((signals.length / ms) * 1000)} signals/s (${(ms / 1000).toFixed(1)} s)`);
  } finally {
    await emu.stop();
  }
} finally {
  await pg.stop();
  rmSync(tmp, { recursive: true, force: true });
}
if (failed) process.exit(1);
