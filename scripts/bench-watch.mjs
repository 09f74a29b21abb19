#!/usr/bin/env node
/**
 * `hcs25 watch` under a stream of registrations (run after the build; `npm run bench` does both): the emulator (own
 * process, 2 s mirror lag) holds an HCS-2 registry that receives BENCH_WATCH_AGENTS registrations (default 10,000)
 * at a steady rate while `watchRegistry` follows it and publishes to a signal topic (fast simulated agents, 5-20 ms
 * per ask, each on its own host; runs of at most BENCH_WATCH_RUN_SIGNALS signals, default 6,000, so the registrations
 * span several runs). Prints RSS sampled every second — first/last/peak after warm-up and the spread (goal: flat
 * within ±10% after warm-up) — the live heap after a full GC every 10 s (what the watcher really holds), and, for
 * every 50th agent, the time from its registration to all three of its signals being readable on the topic from the
 * mirror node (goal ≤ 60 s with 2 s lag). `--quick`: 2,000 registrations. Env: BENCH_WATCH_AGENTS, BENCH_WATCH_RATE.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, emulatorEnv, fastSigningClient, startEmulator } from './lib/emulator.mjs';

// Re-run with a collectable heap: every 10 s the live heap is measured after a full GC (what the watcher really holds).
if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, new URL(import.meta.url).pathname, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const QUICK = process.argv.includes('--quick');
const AGENTS = Number(process.env.BENCH_WATCH_AGENTS ?? (QUICK ? 2_000 : 10_000));
const RATE = Number(process.env.BENCH_WATCH_RATE ?? 125); // registrations per second
const SAMPLE_EVERY = 50;
const WARMUP_S = Number(process.env.BENCH_WATCH_WARMUP_S ?? (QUICK ? 5 : 30));
const LAG_MS = 2_000;
const RUN_SIGNALS = Number(process.env.BENCH_WATCH_RUN_SIGNALS ?? 6_000);

const sdk = await import('@hashgraph/sdk');
const { loadConfig } = await import(DIST('config/load.js'));
const { createHcs25Client } = await import(DIST('client.js'));
const { watchRegistry } = await import(DIST('actions/watch-registry.js'));
const { createSignalTopic } = await import(DIST('publisher/topic.js'));
const { readMessage } = await import(DIST('signals/read.js'));

const emu = await startEmulator({ accounts: 1, mirrorLagMs: LAG_MS });
const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-watch-'));
const writer = fastSigningClient(sdk, emu);
const config = loadConfig({
  cwd: stateDir,
  env: emulatorEnv(emu),
  flags: { stateDir, concurrency: 64, budgetMs: 5_000 },
});
const client = createHcs25Client(config);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Simulated agents: every ask answers after 5-20 ms.
const transportFactory = (agent) => ({
  protocol: agent.protocol,
  canAsk: true,
  ask: async () => {
    const ms = 5 + Math.random() * 15;
    await sleep(ms);
    return { ok: true, text: '42', latencyMs: ms, meta: {} };
  },
  probe: async () => ({ reachable: true, latencyMs: 5 }),
});

let failed = false;
const stop = new AbortController();
let watching;
try {
  const registryTx = await new sdk.TopicCreateTransaction().setTopicMemo('hcs-2:0:86400').execute(writer);
  const registry = (await registryTx.getReceipt(writer)).topicId.toString();
  const topic = (await createSignalTopic(client.sdk)).topicId;
  let ready;
  const started = new Promise((r) => (ready = r));
  watching = watchRegistry(client, {
    registry,
    topic,
    everyMs: 24 * 3_600_000,
    perHost: 60,
    // Runs of 2,000 agents: the registrations span several runs, so memory shows what one run holds, not the registry.
    maxRunSignals: RUN_SIGNALS,
    maxFeePerDayHbar: 10_000,
    flushMs: 1_000,
    pollMs: 1_000,
    signal: stop.signal,
    runner: { transportFactory },
    onReady: (status) => ready(status),
  });
  const status = await Promise.race([started, watching.then(() => { throw new Error('the watcher stopped before it started'); })]);
  console.log(`watch: ${AGENTS} registrations at ~${RATE}/s into an HCS-2 registry, mirror lag ${LAG_MS} ms, simulated agents 5-20 ms per ask`);

  // RSS every second.
  const t0 = performance.now();
  const rss = [];
  const heap = [];
  let ticks = 0;
  const sampler = setInterval(() => {
    const t = (performance.now() - t0) / 1000;
    if (++ticks % 10 === 0) {
      globalThis.gc();
      heap.push({ t, mb: process.memoryUsage().heapUsed / 2 ** 20 });
    }
    rss.push({ t, mb: process.memoryUsage().rss / 2 ** 20 });
  }, 1_000);

  // The topic as a consumer sees it: when each sampled agent's three signals are readable.
  const registeredAt = new Map();
  const seen = new Map();
  const complete = new Map();
  let cursor = 0;
  let reading = true;
  const reader = (async () => {
    while (reading) {
      for await (const m of client.mirror.topicMessages(topic, { ...(cursor > 0 && { afterSequence: cursor }) })) {
        cursor = m.sequenceNumber;
        const read = readMessage(m.message);
        for (const item of read.ok ? read.items : []) {
          if (item.kind !== 'signal') continue;
          const i = Number(/nativeId=a(\d+)\./.exec(item.message.subject)?.[1] ?? -1);
          if (!registeredAt.has(i)) continue;
          const n = (seen.get(i) ?? 0) + 1;
          seen.set(i, n);
          if (n === 3) complete.set(i, performance.now() - registeredAt.get(i));
        }
      }
      await sleep(250);
    }
  })();

  // Registrations at a steady rate, 64 in flight.
  const body = (i) => JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify({ name: `agent-${i}`, protocol: 'openai', endpoint: `http://a${i}.bench.invalid/v1`, model: 'm' }) });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < AGENTS; i = next++) {
      const due = t0 + (i * 1000) / RATE;
      if (due > performance.now()) await sleep(due - performance.now());
      await new sdk.TopicMessageSubmitTransaction().setTopicId(registry).setMessage(body(i)).execute(writer);
      if (i % SAMPLE_EVERY === 0) registeredAt.set(i, performance.now());
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  const registeredS = (performance.now() - t0) / 1000;
  // Until every sampled agent is on the topic (or 90 s more).
  const deadline = performance.now() + 90_000;
  while (complete.size < registeredAt.size && performance.now() < deadline) await sleep(500);
  const s = status();
  if (process.env.BENCH_WATCH_SNAPSHOT) (await import('node:v8')).writeHeapSnapshot(process.env.BENCH_WATCH_SNAPSHOT);
  clearInterval(sampler);
  reading = false;
  await reader;

  const spreadOf = (samples) => {
    const mbs = samples.map((r) => r.mb);
    const mean = mbs.reduce((a, b) => a + b, 0) / mbs.length;
    return { mean, spread: Math.max(Math.max(...mbs) - mean, mean - Math.min(...mbs)) / mean };
  };
  const after = rss.filter((r) => r.t >= WARMUP_S);
  const { mean, spread } = spreadOf(after);
  const liveAfter = heap.filter((r) => r.t >= WARMUP_S);
  const live = spreadOf(liveAfter);
  const lat = [...complete.values()].sort((a, b) => a - b);
  const pct = (q) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] / 1000 : Number.NaN);
  console.log(
    `  registered ${AGENTS} in ${registeredS.toFixed(0)} s; watcher: ${s.agentsKnown} agents known, ${s.counters.evaluations} evaluations, ` +
      `${s.counters.signalsPublished} signals in ${s.counters.messagesPublished} messages, queue ${s.queue}, runs of ≤ ${RUN_SIGNALS} signals: ${s.run ? 'current ' + s.run : '—'}`,
  );
  console.log(
    `  RSS: first ${rss[0]?.mb.toFixed(0)} MB, after ${WARMUP_S} s warm-up ${after[0]?.mb.toFixed(0)} MB, last ${after.at(-1)?.mb.toFixed(0)} MB, ` +
      `peak ${Math.max(...rss.map((r) => r.mb)).toFixed(0)} MB, spread ±${(spread * 100).toFixed(1)}% around ${mean.toFixed(0)} MB after warm-up (goal ±10%)`,
  );
  console.log(`  RSS over time (MB, every 10 s): ${rss.filter((_, i) => i % 10 === 0).map((r) => r.mb.toFixed(0)).join(' ')}`);
  console.log(
    `  live heap after a full GC (MB, every 10 s): ${heap.map((r) => r.mb.toFixed(0)).join(' ')}; after warm-up ±${(live.spread * 100).toFixed(1)}% around ${live.mean.toFixed(0)} MB`,
  );
  console.log(
    `  new agent → its 3 signals on the topic (mirror lag ${LAG_MS / 1000} s): p50 ${pct(0.5).toFixed(1)} s, p95 ${pct(0.95).toFixed(1)} s, max ${pct(1).toFixed(1)} s ` +
      `over ${lat.length}/${registeredAt.size} sampled agents (goal ≤ 60 s)`,
  );
  if (lat.length < registeredAt.size || pct(1) > 60 || spread > 0.1) failed = true;
} finally {
  stop.abort();
  await watching?.catch((err) => console.error(`the watcher failed: ${err.message}`));
  await client.close().catch(() => undefined);
  writer.close();
  await emu.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
if (failed) {
  console.error('bench-watch: a goal was missed');
  process.exit(1);
}
process.exit(0);
