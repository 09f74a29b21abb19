#!/usr/bin/env node
// Eval runner scheduling benchmark: 1,000 simulated agents × 3 evals (availability, math, science), each eval
// answering after a latency drawn uniformly from 50–500 ms, at concurrency 100, through an injected transport
// (no sockets). Reports wall time against the ideal schedule (sum of latencies / concurrency; target ≤ 1.25×) and
// the runner's own CPU per eval (target < 2 ms), the latter also from a zero-latency run where nothing but the
// runner (question generation, grading, scheduling, result objects) is working.
import { performance } from 'node:perf_hooks';
import { runEvals } from '../dist/evals/runner.js';
import { loadScienceBank } from '../dist/evals/science.js';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 1000);
const CONCURRENCY = 100;
const EVALS = ['availability', 'math', 'science'];

// Deterministic latencies (mulberry32), so runs are comparable.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function answer(prompt) {
  const m = /(\d+) ([+\-×]) (\d+)\?/.exec(prompt);
  if (!m) return 'B';
  const a = Number(m[1]);
  const b = Number(m[3]);
  return String(m[2] === '+' ? a + b : m[2] === '-' ? a - b : a * b);
}

async function run(latencyOf) {
  const agents = Array.from({ length: AGENTS }, (_, i) => ({
    subject: `uaid:aid:bench-${i};uid=0;proto=openai;nativeId=agent${i}.example`,
    name: `bench-${i}`,
    protocol: 'openai',
    endpoint: `https://agent${i}.example`,
  }));
  const index = new Map(agents.map((a, i) => [a.subject, i]));
  const wait = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());
  const transportFactory = (agent) => {
    const i = index.get(agent.subject);
    return {
      protocol: 'openai',
      canAsk: true,
      async ask(prompt) {
        const ms = latencyOf(i, prompt.includes('A)') ? 2 : 1);
        await wait(ms);
        return { ok: true, text: answer(prompt), latencyMs: ms, meta: {} };
      },
      async probe() {
        const ms = latencyOf(i, 0);
        await wait(ms);
        return { reachable: true, latencyMs: ms, httpStatus: 200 };
      },
    };
  };
  const scienceBank = loadScienceBank();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let count = 0;
  let correct = 0;
  let firstAt = 0;
  for await (const r of runEvals(agents, {
    evals: EVALS,
    budgetMs: 30_000,
    concurrency: CONCURRENCY,
    seed: 'bench',
    scienceBank,
    allowPrivateEndpoints: false,
    transportFactory,
  })) {
    if (count === 0) firstAt = performance.now() - t0;
    count++;
    if (r.kind === 'availability' ? r.reachable : r.outcome === 'correct') correct++;
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, count, correct, firstAt };
}

const rand = mulberry32(25);
const latencies = Array.from({ length: AGENTS }, () => EVALS.map(() => 50 + rand() * 450));
const sum = latencies.flat().reduce((a, b) => a + b, 0);
const ideal = sum / CONCURRENCY;

// Warm-up (JIT, bank parse) on a small zero-latency run, then the measured runs.
await run(() => 0);
const timed = await run((i, k) => latencies[i][k]);
const bare = await run(() => 0);

const evals = timed.count;
const ratio = timed.wallMs / ideal;
const cpuPerEval = timed.cpuMs / evals;
const barePerEval = bare.cpuMs / bare.count;
console.log(`agents ${AGENTS}, evals ${evals} (${EVALS.join(', ')}), concurrency ${CONCURRENCY}, latency uniform 50–500 ms`);
console.log(`ideal schedule (sum of latencies / concurrency): ${(ideal / 1000).toFixed(2)} s`);
console.log(`wall time: ${(timed.wallMs / 1000).toFixed(2)} s = ${ratio.toFixed(3)}× ideal (target ≤ 1.25×)  ${ratio <= 1.25 ? 'OK' : 'OVER'}`);
console.log(`first result after ${timed.firstAt.toFixed(0)} ms (streamed); ${timed.correct}/${evals} correct`);
console.log(`process CPU per eval, timed run: ${cpuPerEval.toFixed(3)} ms (includes the simulated transport's timers) (target < 2 ms)  ${cpuPerEval < 2 ? 'OK' : 'OVER'}`);
console.log(`runner CPU per eval, zero-latency run: ${barePerEval.toFixed(3)} ms (${bare.count} evals in ${bare.wallMs.toFixed(0)} ms wall)`);
if (ratio > 1.25 || cpuPerEval >= 2) process.exitCode = 1;
