#!/usr/bin/env node
/**
 * Registry scale (run after the build; `npm run bench` does both): a whole registry through `runSignals` — evaluate →
 * build → pack (dense) → journal → submit → read back a sample — against the emulator (its own process), with
 * simulated agents: an injected transport answering each probe and question after a latency drawn uniformly from
 * 50–500 ms (deterministic), concurrency 1,000, and BENCH_DEAD (default 2%) of the agents unreachable (their probe
 * fails after its latency, so their math and science are not asked).
 *
 * Reports the evaluation's wall time against the ideal schedule (sum of the latencies of what was asked / concurrency;
 * target ≤ 1.05×) and the peak RSS of the run's process (target ≤ 512 MB), measured in a child process by
 * `process.resourceUsage().maxRSS` (the emulator, standing in for the network, is another process and not counted).
 * The child runs with a V8 heap limit (BENCH_HEAP_MB, default 256 MB, --max-old-space-size): V8 otherwise lets
 * garbage pile up to several times the live heap before collecting, and a run that kept every result would die.
 * Also: messages per agent against the fee forecast, heap after the run, transport calls saved by dead agents.
 * CPU is reported for the whole process (every thread: submission runs in a worker thread since it has its own SDK
 * client, and so does packing) and for the main thread alone (Linux /proc, 10 ms ticks): the evaluation's schedule depends on the latter.
 * Also the emulator's own CPU (it shares the cores), the simulated agents' share of the main thread, and how long the
 * main thread waited for a core (Linux schedstat).
 * First the simulated agents alone (BENCH_TRANSPORT_SAMPLE agents, default 5,000, measured on a second, warm pass: CPU
 * per transport call, all threads and main thread), then the
 * runner alone (a consumer that only counts) over the same agents: its schedule against the ideal.
 * Env: BENCH_AGENTS (default 190000; BENCH_AGENTS=20000 for a quick look), BENCH_CONCURRENCY (1000), BENCH_DEAD
 * (0.02), BENCH_RUNNER=0 skips the runner-alone phase, BENCH_PIPELINE=0 runs only that phase, BENCH_HEAP_MB (256),
 * BENCH_NODE_ARGS: extra node flags for the run's process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 190_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1000);
const DEAD = Number(process.env.BENCH_DEAD ?? 0.02);
const EVALS = ['availability', 'math', 'science'];
/** Agents whose simulated transport alone is timed first (phase 0). */
const TRANSPORT_SAMPLE = Number(process.env.BENCH_TRANSPORT_SAMPLE ?? 5000);
const MAX_RATIO = 1.05;
const MAX_RSS_MB = 512;
/** The run's V8 heap limit: a run that held the registry in memory would not finish inside it. */
const HEAP_MB = Number(process.env.BENCH_HEAP_MB ?? 256);

/** CPU time of this process's main thread, ms (Linux: /proc/self/task/<pid>/stat, clock ticks of 10 ms); undefined elsewhere. */
function mainThreadCpuMs() {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** CPU ms of each live thread of this process by thread name (Linux /proc; ticks of 10 ms); undefined elsewhere. */
function threadCpuMs() {
  try {
    const out = new Map();
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
        const name = Number(tid) === process.pid ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
        out.set(tid, { name, ms: (Number(fields[11]) + Number(fields[12])) * 10 });
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return out;
  } catch {
    return undefined;
  }
}

/** CPU of each thread between two {@link threadCpuMs} readings, largest first (threads that ended in between are not listed). */
function threadDelta(before, after) {
  if (!before || !after) return undefined;
  return [...after].map(([tid, t]) => [t.name === 'main' ? 'main' : `${t.name}#${tid}`, t.ms - (before.get(tid)?.ms ?? 0)]).sort((a, b) => b[1] - a[1]);
}

if (process.argv[2] === '--child') await child();
else await parent();

async function parent() {
  const self = fileURLToPath(import.meta.url);
  const proc = spawn(process.execPath, ['--expose-gc', `--max-old-space-size=${HEAP_MB}`, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), self, '--child'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
    process.stdout.write(d.toString().split('\n').filter((l) => l && !l.startsWith('{')).map((l) => `${l}\n`).join(''));
  });
  const code = await new Promise((resolve) => proc.on('close', resolve));
  const line = out.split('\n').find((l) => l.startsWith('{'));
  if (code !== 0 || !line) {
    console.error(`bench-registry-scale: the run's process exited ${code}`);
    process.exit(1);
  }
  const r = JSON.parse(line);
  const t = r.transportOnly;
  const agentMainUs = t.mainCpuMs === undefined ? undefined : (t.mainCpuMs * 1000) / t.calls;
  console.log(`simulated agents alone (the bench's stand-in for the network, not the product; measured warm, after an unmeasured pass): ${t.calls} calls, ${((t.cpuMs * 1000) / t.calls).toFixed(1)} µs CPU per call over all threads${agentMainUs === undefined ? '' : `, ${agentMainUs.toFixed(1)} µs on the main thread`} (a timer, a promise, a regex answer)`);
  if (!r.status) {
    const q = r.runnerOnly.wallMs / r.runnerOnly.idealMs;
    console.log(`runner alone, ${r.agents} agents: ${r.runnerOnly.results} results in ${(r.runnerOnly.wallMs / 1000).toFixed(1)} s, ideal ${(r.runnerOnly.idealMs / 1000).toFixed(1)} s = ${q.toFixed(3)}× (target ≤ ${MAX_RATIO}×); CPU ${(r.runnerOnly.cpuMs / 1000).toFixed(1)} s`);
    process.exit(q <= MAX_RATIO ? 0 : 1);
  }
  const ratio = r.evalWallMs / r.idealMs;
  const rssMb = r.maxRssKb / 1024;
  console.log(`agents ${r.agents} × ${EVALS.length} evals, concurrency ${CONCURRENCY}, latency uniform 50–500 ms, ${r.dead} agents unreachable`);
  if (r.runnerOnly) {
    const q = r.runnerOnly.wallMs / r.runnerOnly.idealMs;
    console.log(`runner alone (consumer only counts): ${r.runnerOnly.results} results in ${(r.runnerOnly.wallMs / 1000).toFixed(1)} s, ideal ${(r.runnerOnly.idealMs / 1000).toFixed(1)} s = ${q.toFixed(3)}× (target ≤ ${MAX_RATIO}×)  ${q <= MAX_RATIO ? 'OK' : 'OVER'}; CPU ${(r.runnerOnly.cpuMs / 1000).toFixed(1)} s`);
  }
  console.log(`whole pipeline — ideal schedule (sum of latencies asked / concurrency): ${(r.idealMs / 1000).toFixed(1)} s`);
  console.log(`evaluation wall time: ${(r.evalWallMs / 1000).toFixed(1)} s = ${ratio.toFixed(3)}× ideal (target ≤ ${MAX_RATIO}×)  ${ratio <= MAX_RATIO ? 'OK' : 'OVER'}`);
  console.log(`whole run: ${(r.runWallMs / 1000).toFixed(1)} s (status ${r.status}); ${r.published}/${r.expected} signals published in ${r.messages} messages (${r.perAgent} per agent; forecast ${r.forecastMessages} = ${(r.forecastMessages / r.agents).toFixed(3)} per agent)`);
  const perSignal = (ms) => ((ms * 1000) / (r.agents * EVALS.length)).toFixed(0);
  console.log(`CPU of the run's process (every thread): ${(r.cpuMs / 1000).toFixed(1)} s = ${perSignal(r.cpuMs)} µs per signal`);
  if (r.mainCpuMs !== undefined) {
    console.log(`CPU of its main thread (evaluation, building, journal; the submission and packing workers excluded): ${(r.mainCpuMs / 1000).toFixed(1)} s = ${perSignal(r.mainCpuMs)} µs per signal (the evaluation keeps to the ideal schedule only when this fits well inside ${perSignal(r.idealMs)} µs per signal)`);
    // The simulated agents answer on that same thread: their share, at their warm cost per call.
    if (agentMainUs !== undefined) console.log(`  of which the simulated agents (${r.calls} calls × ${agentMainUs.toFixed(1)} µs): about ${perSignal((r.calls * agentMainUs) / 1000)} µs per signal; the product's own: about ${perSignal(r.mainCpuMs - (r.calls * agentMainUs) / 1000)} µs per signal`);
    if (r.mainWaitMs !== undefined) console.log(`  it waited for a core (runnable, not running; Linux schedstat) ${(r.mainWaitMs / 1000).toFixed(1)} s = ${perSignal(r.mainWaitMs)} µs per signal: the schedule's slip when the cores are all busy (the run's workers, V8's helpers, the emulator, any other process)`);
  }
  if (r.threadsCpuMs) {
    const listed = r.threadsCpuMs.reduce((a, [, ms]) => a + ms, 0);
    const top = r.threadsCpuMs.slice(0, 6).map(([name, ms]) => `${name} ${perSignal(ms)}`);
    const rest = r.threadsCpuMs.slice(6).reduce((a, [, ms]) => a + ms, 0);
    console.log(`  by thread, µs per signal (the two workers are the largest after main; the rest are V8's GC and compiler helpers and libuv's file pool): ${top.join(', ')}, ${r.threadsCpuMs.length - 6} more ${perSignal(rest)}; threads that ended before the end ${perSignal(Math.max(0, r.cpuMs - listed))}`);
  }
  if (r.emulatorCpuMs !== undefined) {
    const cores = r.cores;
    const load = (r.cpuMs + r.emulatorCpuMs) / (r.runWallMs * cores);
    console.log(`CPU of the emulator (the stand-in network, its own process): ${(r.emulatorCpuMs / 1000).toFixed(1)} s = ${perSignal(r.emulatorCpuMs)} µs per signal; run's process + emulator = ${((r.cpuMs + r.emulatorCpuMs) / 1000).toFixed(1)} s of CPU = ${(100 * load).toFixed(0)}% of ${cores} cores over the run's wall time (the schedule slips when the two processes need about all the cores)`);
    if (r.emulatorCalls) console.log(`  gRPC calls the emulator served: ${Object.entries(r.emulatorCalls).map(([k, v]) => `${k} ${v}`).join(', ')} (for ${r.messages} messages)`);
  }
  console.log(`dead agents: ${r.notAsked} evals not asked (probe unreachable); transport calls ${r.calls} for ${r.agents * EVALS.length} signals`);
  console.log(`peak RSS of the run's process: ${rssMb.toFixed(0)} MB (target ≤ ${MAX_RSS_MB} MB)  ${rssMb <= MAX_RSS_MB ? 'OK' : 'OVER'}; heap after the run ${(r.heapAfterMb).toFixed(0)} MB; largest heap sampled ${r.maxHeapMb.toFixed(0)} MB (peaks sampled, MB: ${JSON.stringify(r.peakMb)})`);
  if (ratio > MAX_RATIO || rssMb > MAX_RSS_MB || r.status !== 'complete' || r.published !== r.expected) process.exit(1);
}

async function child() {
  const { DIST, emulatorCpuMs, emulatorEnv, startEmulator } = await import('./lib/emulator.mjs');
  const { loadConfig } = await import(DIST('config/load.js'));
  const { createHcs25Client } = await import(DIST('client.js'));
  const { runSignals } = await import(DIST('actions/run-signals.js'));
  const { createSignalTopic } = await import(DIST('publisher/topic.js'));
  const { expectedMessages } = await import(DIST('publisher/fees.js'));

  // Deterministic latencies (mulberry32 over agent and eval), so runs are comparable.
  const latency = (i, k) => {
    let a = (i * 3 + k + 0x9e3779b9) >>> 0;
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    // Whole milliseconds: Node keeps one timer list per distinct duration, so 451 lists instead of one per timer.
    return Math.round(50 + (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 450);
  };
  const dead = (i) => (i * 2654435761) % 10_000 < DEAD * 10_000;
  const agents = Array.from({ length: AGENTS }, (_, i) => ({
    subject: `uaid:aid:${(i * 2654435761).toString(36).padStart(8, '0')}Qm${String(i).padStart(7, '0')}bench;uid=0;registry=hol;proto=a2a;nativeId=agent-${i}.agents.example.com`,
    name: `agent-${i}`,
    protocol: 'a2a',
    endpoint: `https://agent-${i}.agents.example.com`,
  }));
  const index = new Map(agents.map((a, i) => [a.subject, i]));
  let idealSum = 0;
  let calls = 0;
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));
  const answer = (prompt) => {
    const m = /(\d+) ([+\-×]) (\d+)\?/.exec(prompt);
    if (!m) return 'B';
    const a = Number(m[1]);
    const b = Number(m[3]);
    return String(m[2] === '+' ? a + b : m[2] === '-' ? a - b : a * b);
  };
  const transportFactory = (agent) => {
    const i = index.get(agent.subject);
    return {
      protocol: 'a2a',
      canAsk: true,
      async ask(prompt) {
        calls++;
        const ms = latency(i, prompt.includes('A)') ? 2 : 1);
        idealSum += ms;
        await wait(ms);
        return { ok: true, text: answer(prompt), latencyMs: ms, meta: {} };
      },
      async probe() {
        calls++;
        const ms = latency(i, 0);
        idealSum += ms;
        await wait(ms);
        return dead(i) ? { reachable: false, latencyMs: ms, reason: 'connection refused' } : { reachable: true, latencyMs: ms, httpStatus: 200 };
      },
    };
  };

  // Phase 0, the simulated agents alone (part of the bench, not of the product): CPU per transport call — a timer,
  // a promise and a regex answer — over a sample of TRANSPORT_SAMPLE agents at the bench's concurrency, so what the
  // run's figures owe to the stand-in for the network is stated, not guessed.
  let transportOnly;
  {
    const sample = agents.slice(0, Math.min(TRANSPORT_SAMPLE, AGENTS));
    const prompts = ['What is 12 + 30?', 'Which is a noble gas? A) Neon B) Iron C) Salt D) Water'];
    const pass = async () => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < sample.length; i = next++) {
            const t = transportFactory(sample[i]);
            const probe = await t.probe();
            if (probe.reachable) for (const prompt of prompts) await t.ask(prompt);
          }
        }),
      );
    };
    // A first pass unmeasured: cold, the same calls cost about twice as much (JIT compiler threads, first timer lists),
    // which is not what they cost during the run.
    await pass();
    calls = 0;
    const c0 = process.cpuUsage();
    const main0 = mainThreadCpuMs();
    await pass();
    const c = process.cpuUsage(c0);
    transportOnly = { calls, cpuMs: (c.user + c.system) / 1000, mainCpuMs: mainThreadCpuMs() - main0 };
    idealSum = 0;
    calls = 0;
  }

  // Phase 1, the runner alone (its consumer only counts): the scheduling — probe first, dead agents not asked,
  // back-pressure — against the ideal schedule, without the publisher's CPU on the same thread.
  const { runEvals } = await import(DIST('evals/runner.js'));
  let runnerOnly;
  if (process.env.BENCH_RUNNER !== '0') {
    let first = 0;
    let n = 0;
    const c0 = process.cpuUsage();
    const t = performance.now();
    for await (const r of runEvals(agents, { evals: EVALS, budgetMs: 30_000, concurrency: CONCURRENCY, seed: 'bench-scale', allowPrivateEndpoints: false, transportFactory })) {
      if (!first) first = performance.now();
      if (r) n++;
    }
    const c = process.cpuUsage(c0);
    runnerOnly = { wallMs: performance.now() - t, idealMs: idealSum / CONCURRENCY, results: n, cpuMs: (c.user + c.system) / 1000 };
    idealSum = 0;
    calls = 0;
  }

  if (process.env.BENCH_PIPELINE === '0') {
    console.log(JSON.stringify({ agents: AGENTS, runnerOnly, transportOnly }));
    process.exit(0);
  }
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  // How long the evaluation's thread was runnable but waited for a core (Linux schedstat): the schedule's slip when
  // the cores are all busy, whoever kept them (the run's workers, V8's helpers, the emulator, another process).
  const { schedstatReader } = await import('./lib/loop-blocks.mjs');
  const sched = schedstatReader();
  const sched0 = sched.read();
  const threads0 = threadCpuMs();
  const emu = await startEmulator({ accounts: 1 });
  const emuCpu0 = await emulatorCpuMs(emu).catch(() => undefined);
  const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-scale-'));
  const config = loadConfig({
    cwd: stateDir,
    env: emulatorEnv(emu),
    flags: { stateDir, maxFeeHbar: 10_000, concurrency: CONCURRENCY, budgetMs: 30_000 },
  });
  const client = createHcs25Client(config);
  let maxHeap = 0;
  const peak = { rss: 0, heapTotal: 0, external: 0, arrayBuffers: 0 };
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    maxHeap = Math.max(maxHeap, m.heapUsed);
    for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
  }, 500);
  try {
    const topic = (await createSignalTopic(client.sdk)).topicId;
    let evalStart = 0;
    let evalEnd = 0;
    const t0 = performance.now();
    const report = await runSignals(client, {
      source: { agents },
      topic,
      evals: EVALS,
      seed: 'bench-scale',
      pack: 'dense',
      keepResponses: false,
      runner: { transportFactory },
      onNote: (line) => {
        if (line.startsWith('fee forecast')) console.log(line);
      },
      onProgress: (p) => {
        if (!evalStart && p.evals.running > 0) evalStart = performance.now();
        if (p.evals.total > 0 && p.evals.done === p.evals.total && !evalEnd) evalEnd = performance.now();
      },
    });
    const runWallMs = performance.now() - t0;
    const emuUsage = await emu.usage().catch(() => undefined);
    const emuCpu1 = emuCpu0 === undefined || !emuUsage ? undefined : (emuUsage.cpu.user + emuUsage.cpu.system) / 1000;
    clearInterval(sampler);
    globalThis.gc?.();
    const result = {
      agents: AGENTS,
      runnerOnly,
      transportOnly,
      dead: agents.filter((_, i) => dead(i)).length,
      idealMs: idealSum / CONCURRENCY,
      evalWallMs: evalEnd - evalStart,
      runWallMs,
      status: report.status,
      published: report.signals.published,
      expected: report.signals.expected,
      messages: report.messages.count,
      perAgent: report.messages.perAgent,
      forecastMessages: expectedMessages(AGENTS, EVALS.length, 'dense'),
      notAsked: report.evals.notAsked,
      calls,
      maxRssKb: process.resourceUsage().maxRSS,
      cpuMs: ((c) => (c.user + c.system) / 1000)(process.cpuUsage(cpu0)),
      mainCpuMs: mainThreadCpuMs() - main0,
      ...(sched0 && { mainWaitMs: (sched.read()[1] - sched0[1]) / 1e6 }),
      threadsCpuMs: threadDelta(threads0, threadCpuMs()),
      ...(emuCpu1 !== undefined && { emulatorCpuMs: emuCpu1 - emuCpu0, emulatorCalls: emuUsage.stats.calls }),
      cores: availableParallelism(),
      heapAfterMb: process.memoryUsage().heapUsed / 2 ** 20,
      maxHeapMb: maxHeap / 2 ** 20,
      peakMb: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v / 2 ** 20)])),
      error: report.error,
    };
    if (report.error) console.log(`run error: ${report.error.code}: ${report.error.message}`);
    console.log(JSON.stringify(result));
  } finally {
    clearInterval(sampler);
    await client.close();
    await emu.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  // The SDK's uncleared gRPC deadline timers would keep the process alive for seconds.
  process.exit(0);
}
