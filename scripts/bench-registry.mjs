#!/usr/bin/env node
/**
 * registry: a whole registry run as `hcs25 run --registry` does it — discovery (an HCS-2 registry on the emulator),
 * evaluation, packing and submission to the emulator — with simulated agents that answer each probe and question after
 * a latency drawn from 50–500 ms (deterministic), concurrency 1,000, 2% of them unreachable.
 * Figures: the evaluation's wall time against the ideal schedule (the sum of the latencies of what was asked /
 * concurrency; goal ≤ 1.10×), the peak RSS of the run's process (goal ≤ 512 MB), and messages per agent of the
 * default, readable packing (`json`, goal ≤ 0.5 with the ~135-character UAIDs discovery builds) beside the compressed
 * one's (`dense`, a second run of the same registry to another topic, figure only). Each run has its own process;
 * the emulator, standing in for the network, is another, and the registry is written from this one.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as bench from './lib/bench.mjs';

const HELP = `npm run bench -- registry [--agents N] [--concurrency N] [--dead FRACTION] [--modes LIST] [--quick]
  --agents       agents in the registry (default 250000; --quick 2000)
  --concurrency  agents asked at once (default 1000)
  --dead         share of agents that do not answer their probe (default 0.02)
  --modes        pack modes to run, the first one timed (default json,dense)`;
const opts = bench.options(
  { agents: 250_000, concurrency: 1000, dead: 0.02, modes: 'json,dense', pack: '' },
  { agents: 2000 },
);
const MAX_PER_AGENT = 0.5;
const EVALS = ['availability', 'math', 'science'];
const MAX_RATIO = 1.1;
const MAX_RSS_MB = 512;

if (opts.help) console.log(HELP);
else if (opts.child) await child();
else await parent();

async function parent() {
  bench.header(
    'registry',
    `${bench.fmt(opts.agents)} agents × ${EVALS.length} evals: ` +
      'discovery → evaluation → packing → submission to the emulator',
  );
  const sdk = await import('@hashgraph/sdk');
  const { createTopic } = await import('hcs25');
  const emu = await bench.startEmulator();
  const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-registry-'));
  try {
    const env = bench.emulatorEnv(emu);
    const client = await bench.hcs25Client(env, stateDir);
    const registry = (await createTopic(client, { memo: 'hcs-2:0:86400' })).topicId;
    const topic = (await createTopic(client)).topicId;
    await client.close();
    const writer = bench.fastSigningClient(sdk, emu);
    const fillStart = performance.now();
    const bodies = (function* () {
      for (let i = 0; i < opts.agents; i++) yield bench.registration(i);
    })();
    await bench.submitAll(sdk, writer, emu, registry, bodies, opts.agents);
    writer.close();
    console.log(
      `  registry ${registry}: ${bench.fmt(opts.agents)} registrations written in ` +
        `${bench.secs(performance.now() - fillStart)} (not timed)`,
    );

    const modes = opts.modes.split(',').filter(Boolean);
    const perAgent = {};
    for (const [k, mode] of modes.entries()) {
      const signalTopic = k === 0 ? topic : await newTopic(env, stateDir);
      const r = await childRun(env, registry, signalTopic, stateDir, mode);
      perAgent[mode] = r.messages / r.agents;
      console.log(
        `  run (--pack ${mode}) ${r.status}: ${bench.fmt(r.agents)} agents discovered, ` +
          `${bench.fmt(r.published)}/${bench.fmt(r.expected)} signals in ${bench.fmt(r.messages)} messages ` +
          `(${perAgent[mode].toFixed(3)} per agent); ` +
          `whole run ${bench.secs(r.runWallMs)}, evaluation ${bench.secs(r.evalWallMs)}, ` +
          `ideal ${bench.secs(r.idealMs)}; ` +
          `${bench.fmt(r.dead)} agents unreachable, CPU of the run's process ${bench.secs(r.cpuMs)}`,
      );
      bench.verdict(
        `registry signals published (${mode})`,
        `${bench.fmt(r.published)} of ${bench.fmt(r.expected)}`,
        'all',
        r.status === 'complete' && r.published === r.expected,
      );
      if (k > 0) continue;
      verdict(r.evalWallMs / r.idealMs, r, MAX_RATIO);
      bench.verdict(
        'registry peak RSS',
        `${Math.round(r.maxRssKb / 1024)} MB`,
        `≤ ${MAX_RSS_MB} MB`,
        r.maxRssKb / 1024 <= MAX_RSS_MB,
      );
    }
    if ('json' in perAgent) {
      const others = Object.entries(perAgent)
        .filter(([m]) => m !== 'json')
        .map(([m, v]) => `; ${m} ${v.toFixed(3)}`)
        .join('');
      bench.verdict(
        'registry messages per agent (json, readable)',
        `${perAgent.json.toFixed(3)}${others}`,
        `≤ ${MAX_PER_AGENT}`,
        perAgent.json <= MAX_PER_AGENT,
      );
    }
  } finally {
    await emu.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  bench.finish();
}

/** A new signal topic on the emulator (another run's signals must not share the first one's). */
async function newTopic(env, stateDir) {
  const { createTopic } = await import('hcs25');
  const client = await bench.hcs25Client(env, stateDir);
  try {
    return (await createTopic(client)).topicId;
  } finally {
    await client.close();
  }
}

/** One run in its own process, packed in `mode`; resolves with what the child measured. */
function childRun(env, registry, topic, stateDir, mode) {
  const run = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--child', '--pack', mode], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    run.once('message', resolve);
    run.once('exit', (code) => reject(new Error(`the run's process exited ${code}`)));
    run.send({ env, registry, topic, stateDir });
  });
}

function verdict(ratio, r, max) {
  bench.verdict(
    'registry evaluation vs ideal schedule',
    `${ratio.toFixed(3)}× (${(r.evalWallMs / 1000).toFixed(1)} s / ${(r.idealMs / 1000).toFixed(1)} s)`,
    `≤ ${max}×`,
    ratio <= max,
  );
}

/** Deterministic latency of agent i's k-th call (mulberry32), whole ms in 50–500. */
function latency(i, k) {
  let t = (i * 3 + k + 0x9e3779b9 + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return Math.round(50 + (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 450);
}

async function child() {
  const { env, registry, topic, stateDir } = await new Promise((resolve) => process.once('message', resolve));
  const { runSignals } = await import('hcs25');
  const dead = (i) => (i * 2654435761) % 10_000 < opts.dead * 10_000;
  let idealSum = 0;
  const transportFactory = (agent) => {
    const i = Number(agent.name.slice('agent-'.length));
    const call = async (k) => {
      const ms = latency(i, k);
      idealSum += ms;
      await bench.sleep(ms);
      return ms;
    };
    return {
      protocol: agent.protocol,
      canAsk: true,
      async ask(prompt) {
        const ms = await call(prompt.includes('A)') ? 2 : 1);
        return { ok: true, text: bench.answer(prompt), latencyMs: ms, meta: {} };
      },
      async probe() {
        const ms = await call(0);
        return dead(i)
          ? { reachable: false, latencyMs: ms, reason: 'connection refused' }
          : { reachable: true, latencyMs: ms, httpStatus: 200 };
      },
    };
  };
  const client = await bench.hcs25Client(env, stateDir, {
    maxFeeHbar: 10_000,
    concurrency: opts.concurrency,
    budgetMs: 30_000,
  });
  let evalStart = 0;
  let evalEnd = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const report = await runSignals(client, {
    source: { registry },
    topic,
    evals: EVALS,
    seed: 'bench-registry',
    pack: opts.pack || 'json',
    keepResponses: false,
    runner: { transportFactory },
    onProgress: (p) => {
      if (!evalStart && p.evals.running > 0) evalStart = performance.now();
      if (p.evals.total > 0 && p.evals.done === p.evals.total && !evalEnd) evalEnd = performance.now();
    },
  });
  const runWallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  process.send({
    agents: report.agents,
    dead: Array.from({ length: opts.agents }, (_, i) => i).filter(dead).length,
    idealMs: idealSum / opts.concurrency,
    evalWallMs: (evalEnd || performance.now()) - evalStart,
    runWallMs,
    status: report.status,
    published: report.signals.published,
    expected: report.signals.expected,
    messages: report.messages.count,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssKb: process.resourceUsage().maxRSS,
  });
  await client.close();
  // The SDK's gRPC deadline timers would keep the process alive for seconds.
  process.exit(0);
}
