#!/usr/bin/env node
/**
 * watch: `hcs25 watch` following an HCS-2 registry on the emulator (2 s mirror lag) while AGENTS agents register at
 * RATE a second, then a soak of SOAK minutes in which it asks every agent again each cycle (EVERY minutes). Simulated
 * agents answer each ask after 5–20 ms. Registrations and a topic reader run in a child process, so this process
 * holds only the watcher. Goals:
 *  - a new agent's three signals are on the topic ≤ 10 s after its registration (every 50th agent is timed; the
 *    worst of them is the figure);
 *  - memory bounded by the registry: growth of the live memory (V8 heap and buffers after a full collection) from the
 *    first tenth of the agents to all of them ≤ 1 KB per agent;
 *  - flat over the soak: the live memory at its end at most 5% above that at its start.
 * RSS is printed beside each: it also holds the heap room V8 keeps after a busy stretch and the allocator's arenas,
 * which follow the allocation rate rather than the registry. The published figure is the 30-minute soak
 * (`--soak-minutes 30`); the default is shorter.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as bench from './lib/bench.mjs';

const HELP = `npm run bench -- watch [--agents N] [--rate N] [--soak-minutes N] [--every-minutes N] [--quick]
  --agents         agents registered while the watcher runs (default 50000; --quick 500)
  --rate           registrations per second (default 500; --quick 100)
  --soak-minutes   how long the watcher runs after the last registration (default 5; the published figure: 30;
                   --quick 0.5)
  --every-minutes  cycle length during the soak: every agent is asked again this often (default 5; --quick 0.25)`;
const opts = bench.options(
  { agents: 50_000, rate: 500, 'soak-minutes': 5, 'every-minutes': 5 },
  { agents: 500, rate: 100, 'soak-minutes': 0.5, 'every-minutes': 0.25 },
);
const LAG_MS = 2_000;
const SAMPLE_EVERY = 50;
const MAX_LATENCY_S = 10;
const MAX_BYTES_PER_AGENT = 1024;
const MAX_SOAK_GROWTH = 0.05;

/** A full garbage collection (the benchmark asks V8 for it; hcs25 itself never does). */
function collect() {
  setFlagsFromString('--expose-gc');
  runInNewContext('gc')();
}

if (opts.help) console.log(HELP);
else if (opts.child) await loadProcess();
else await watcher();

async function watcher() {
  bench.header(
    'watch',
    `${bench.fmt(opts.agents)} registrations at ${opts.rate}/s, mirror lag ${LAG_MS / 1000} s, then a ` +
      `${opts['soak-minutes']}-minute soak with a cycle every ${opts['every-minutes']} minutes`,
  );
  const { createTopic, watchRegistry } = await import('hcs25');
  const emu = await bench.startEmulator({ mirrorLagMs: LAG_MS });
  const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-watch-'));
  const env = bench.emulatorEnv(emu);
  const client = await bench.hcs25Client(env, stateDir, { concurrency: 64, budgetMs: 5_000 });
  const stop = new AbortController();
  let watching;
  let load;
  try {
    const registry = (await createTopic(client, { memo: 'hcs-2:0:86400' })).topicId;
    const topic = (await createTopic(client)).topicId;
    const transportFactory = (agent) => ({
      protocol: agent.protocol,
      canAsk: true,
      ask: async (prompt) => {
        const ms = 5 + Math.random() * 15;
        await bench.sleep(ms);
        return { ok: true, text: bench.answer(prompt), latencyMs: ms, meta: {} };
      },
      probe: async () => ({ reachable: true, latencyMs: 5, httpStatus: 200 }),
    });
    let ready;
    const started = new Promise((r) => (ready = r));
    watching = watchRegistry(client, {
      registry,
      topic,
      everyMs: opts['every-minutes'] * 60_000,
      maxFeePerDayHbar: 10_000,
      signal: stop.signal,
      runner: { transportFactory },
      onReady: (status) => ready(status),
    });
    const status = await Promise.race([
      started,
      watching.then(() => {
        throw new Error('the watcher stopped before it started');
      }),
    ]);

    load = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--child'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const inbox = [];
    const waiting = [];
    load.on('message', (m) => (waiting.length ? waiting.shift()(m) : inbox.push(m)));
    const exited = new Promise((_, reject) =>
      load.once('exit', (code) => reject(new Error(`the registration process exited ${code}`))),
    );
    exited.catch(() => undefined);
    const next = () =>
      Promise.race([inbox.length ? Promise.resolve(inbox.shift()) : new Promise((r) => waiting.push(r)), exited]);
    load.send({
      node: { network: emu.network, ports: emu.ports, operator: emu.operator, mirrorRestUrl: emu.mirrorRestUrl },
      registry,
      topic,
    });

    // Live memory: what a full collection leaves of the heap, plus buffers. RSS at a point: the median of five samples
    // a second apart (one sample lands anywhere in V8's swing).
    const live = () => {
      collect();
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const measure = async () => {
      const samples = [];
      for (let k = 0; k < 5; k++) {
        samples.push(process.memoryUsage().rss);
        await bench.sleep(1_000);
      }
      return { rss: samples.sort((a, b) => a - b)[2], live: live(), known: status().agentsKnown };
    };
    const warm = await next();
    const first = await measure();
    load.send({ type: 'go' });
    const done = await next();
    const last = await measure();
    const added = Math.max(1, last.known - first.known);
    const perAgent = (last.live - first.live) / added;
    const rssPerAgent = (last.rss - first.rss) / added;

    // The soak: RSS every second, live memory every 15 s; its start and end are the medians of its first and last
    // quarters.
    const soakMs = opts['soak-minutes'] * 60_000;
    const soak = { rss: [], live: [] };
    const t0 = performance.now();
    for (let k = 0; performance.now() - t0 < soakMs; k++) {
      soak.rss.push(process.memoryUsage().rss);
      if (k % 15 === 0) soak.live.push(live());
      await bench.sleep(1_000);
    }
    const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
    const ends = (list) => {
      const quarter = Math.max(1, Math.floor(list.length / 4));
      const start = median(list.slice(0, quarter));
      const end = median(list.slice(-quarter));
      return { start, end, growth: (end - start) / start };
    };
    const soakLive = ends(soak.live);
    const soakRss = ends(soak.rss);
    const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

    const s = status();
    const lat = done.latencies.sort((a, b) => a - b);
    const worst = (lat.at(-1) ?? Number.POSITIVE_INFINITY) / 1000;
    console.log(
      `  watcher: ${bench.fmt(s.agentsKnown)} agents known, ${bench.fmt(s.counters.evaluations)} evaluations, ` +
        `${bench.fmt(s.counters.signalsPublished)} signals in ${bench.fmt(s.counters.messagesPublished)} messages; ` +
        `the first ${bench.fmt(warm.agents)} agents published before the measured part`,
    );
    console.log(
      `  new agent → its 3 signals on the topic: p50 ${bench.secs(lat[Math.floor(lat.length / 2)] ?? 0)}, ` +
        `max ${worst.toFixed(1)} s over ${lat.length} of ${done.sampled} timed agents`,
    );
    console.log(
      `  live memory ${bench.mb(first.live)} at ${bench.fmt(first.known)} agents known, ${bench.mb(last.live)} at ` +
        `${bench.fmt(last.known)} (RSS ${bench.mb(first.rss)} → ${bench.mb(last.rss)}); soak ${opts['soak-minutes']} ` +
        `min: live ${bench.mb(soakLive.start)} → ${bench.mb(soakLive.end)}, RSS ${bench.mb(soakRss.start)} → ` +
        `${bench.mb(soakRss.end)}, max RSS ${bench.mb(Math.max(...soak.rss))}`,
    );
    bench.verdict(
      'watch new agent to its signals on the topic',
      `${worst.toFixed(1)} s (worst of ${lat.length})`,
      `≤ ${MAX_LATENCY_S} s`,
      worst <= MAX_LATENCY_S && lat.length === done.sampled,
    );
    bench.verdict(
      'watch memory per known agent',
      `${Math.round(perAgent)} B live (RSS ${Math.round(rssPerAgent)} B)`,
      `≤ ${MAX_BYTES_PER_AGENT} B`,
      perAgent <= MAX_BYTES_PER_AGENT,
    );
    bench.verdict(
      `watch memory over a ${opts['soak-minutes']}-minute soak`,
      `${pct(soakLive.growth)} live (RSS ${pct(soakRss.growth)})`,
      `≤ +${MAX_SOAK_GROWTH * 100}%`,
      soakLive.growth <= MAX_SOAK_GROWTH,
    );
  } finally {
    load?.kill();
    stop.abort();
    await watching?.catch((err) => console.error(`the watcher failed: ${err.message}`));
    await client.close().catch(() => undefined);
    await emu.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  bench.finish();
}

/**
 * The registrations (64 in flight, at RATE a second) and a reader of the signal topic that times every SAMPLE_EVERY-th
 * agent from its registration to its three signals on the topic. The first tenth of the agents is the warm-up: 'warm'
 * once each of them is on the topic, then the rest on 'go', then 'done'.
 */
async function loadProcess() {
  const job = await new Promise((resolve) => process.once('message', resolve));
  const sdk = await import('@hashgraph/sdk');
  const { readMessage } = await import('hcs25');
  const writer = bench.fastSigningClient(sdk, job.node);
  const registeredAt = new Map();
  const seen = new Map();
  const complete = new Map();
  let cursor = 0;
  let reading = true;
  const reader = (async () => {
    while (reading) {
      let path = `/api/v1/topics/${job.topic}/messages?limit=100&order=asc&sequencenumber=gt:${cursor}`;
      while (path) {
        const page = await (await fetch(new URL(path, job.node.mirrorRestUrl))).json();
        for (const m of page.messages) {
          cursor = m.sequence_number;
          const read = readMessage(Buffer.from(m.message, 'base64'));
          for (const item of read.ok ? read.items : []) {
            if (item.kind !== 'signal') continue;
            const i = Number(/nativeId=agent-(\d+)\./.exec(item.message.subject)?.[1] ?? -1);
            if (!registeredAt.has(i) || complete.has(i)) continue;
            const n = (seen.get(i) ?? 0) + 1;
            seen.set(i, n);
            if (n === 3) complete.set(i, performance.now() - registeredAt.get(i));
          }
        }
        path = page.messages.length > 0 ? page.links?.next : null;
      }
      await bench.sleep(250);
    }
  })();
  const register = async (from, to, timed) => {
    const t0 = performance.now();
    let next = from;
    const worker = async () => {
      for (let i = next++; i < to; i = next++) {
        const due = t0 + ((i - from) * 1000) / opts.rate;
        if (due > performance.now()) await bench.sleep(due - performance.now());
        const at = performance.now();
        await new sdk.TopicMessageSubmitTransaction()
          .setTopicId(job.registry)
          .setMessage(bench.registration(i))
          .execute(writer);
        if (timed(i)) registeredAt.set(i, at);
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const deadline = performance.now() + 120_000;
    while (complete.size < registeredAt.size && performance.now() < deadline) await bench.sleep(250);
  };
  const warmup = Math.max(1, Math.floor(opts.agents / 10));
  await register(0, warmup, () => true);
  process.send({ type: 'warm', agents: warmup, published: complete.size });
  registeredAt.clear();
  complete.clear();
  seen.clear();
  await new Promise((r) => process.once('message', r));
  await register(warmup, opts.agents, (i) => (i - warmup) % SAMPLE_EVERY === 0);
  reading = false;
  await reader;
  process.send({ type: 'done', sampled: registeredAt.size, latencies: [...complete.values()] });
  writer.close();
  process.disconnect();
}
