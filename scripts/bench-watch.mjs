#!/usr/bin/env node
/**
 * `hcs25 watch` under a stream of registrations (run after the build; `npm run bench` does both): the emulator (own
 * process, 2 s mirror lag) holds an HCS-2 registry that receives registrations at a steady rate while `watchRegistry`
 * follows it and publishes to a signal topic (fast simulated agents, 5-20 ms per ask, each on its own host; runs of at
 * most BENCH_WATCH_RUN_SIGNALS signals, default 6,000, so the registrations span several runs).
 *
 * The process measured is the watcher's alone: the registrations and the topic reader (a consumer timing each sampled
 * agent) run in a child process, so their SDK client, gRPC buffers and bookkeeping are not counted as the watcher's.
 *
 * Memory: a warm-up of BENCH_WATCH_WARMUP registrations (default 2,500: past the first run's rotation and reveal, see
 * WARMUP) first, until each of them is published; the
 * watcher's RSS then is the reference. Then BENCH_WATCH_AGENTS registrations (default 10,000) are measured: RSS every
 * second across all of them, printed as the band [min, max] relative to the reference, and again relative to the median
 * RSS over the first 1,000 measured registrations (goal: within ±10% of that median; both figures are printed: the one
 * sample right after the warm-up lands anywhere in the old space's swing between major GCs). At the
 * reference and then every 1,000 registrations the watcher has seen, the bench splits RSS after a full GC of both heaps
 * (global.gc, `--expose-gc`, which the submission worker inherits): the main heap (live, committed, new and old
 * space), external memory and array buffers, the submission worker's heap (live, committed, new space) and external
 * memory, and the native rest; then the growth of each part from the first sample to the last. The RSS samples are
 * taken as the process runs, so these GCs are the only ones the bench adds. BENCH_WATCH_IN_PROCESS=1 submits on the
 * watcher's thread instead of the worker, to compare.
 * Latency: for every 50th measured agent, the time from its registration to all three of its signals being readable on
 * the topic from the mirror node (goal ≤ 60 s with 2 s lag). `--quick`: 2,000 measured registrations.
 * Where RSS goes is printed too: V8's heap (live after GC, committed, per space), external memory and the rest.
 * Env: BENCH_WATCH_AGENTS, BENCH_WATCH_WARMUP, BENCH_WATCH_RATE, BENCH_WATCH_RUN_SIGNALS; BENCH_WATCH_PACK_WORKER=1 packs in a
 * worker thread per run (the watcher packs on its own thread); BENCH_WATCH_NODE_EXTRA='--flag …' adds node flags after
 * bin/hcs25's; BENCH_WATCH_SERIES=1 prints every RSS sample (`*`: during or just after the bench's own full GCs); BENCH_WATCH_SNAPSHOT=PATH
 * writes heap snapshots after the warm-up (PATH.warm, taken before the reference RSS, which it then inflates) and at
 * the end (PATH) to diff what grew.
 */
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { performance } from 'node:perf_hooks';
import { DIST, emulatorEnv, fastSigningClient, startEmulator } from './lib/emulator.mjs';

const QUICK = process.argv.includes('--quick');
const AGENTS = Number(process.env.BENCH_WATCH_AGENTS ?? (QUICK ? 2_000 : 10_000));
const RATE = Number(process.env.BENCH_WATCH_RATE ?? 125); // registrations per second
const SAMPLE_EVERY = 50;
const LAG_MS = 2_000;
const RUN_SIGNALS = Number(process.env.BENCH_WATCH_RUN_SIGNALS ?? 6_000);
/**
 * The warm-up ends in the watcher's steady state: past its first run rotation (a run of RUN_SIGNALS signals holds
 * RUN_SIGNALS / 3 agents; the full run drains and is revealed while the next one asks), plus 500 registrations for the
 * reveal. A watcher rotates runs all day, so every later sample carries one rotation's memory; before session 10 the
 * warm-up was 1,000 registrations, the reference fell inside the very first run, and that one-time step (~10 MB, both
 * heaps growing to hold two runs and a reveal) was counted as growth. BENCH_WATCH_WARMUP=1000 measures it that way.
 */
const WARMUP = Number(process.env.BENCH_WATCH_WARMUP ?? Math.ceil(RUN_SIGNALS / 3) + 500);
/**
 * As bin/hcs25 starts `hcs25 watch`; BENCH_WATCH_NODE_EXTRA adds flags after them, to compare (`--heap-growing-percent=0`
 * gives V8 back its own old-space growth).
 */
const WATCH_NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=20', ...(process.env.BENCH_WATCH_NODE_EXTRA ? process.env.BENCH_WATCH_NODE_EXTRA.split(' ') : [])];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (process.argv.includes('--load')) await loadGenerator();
// The live-heap figure needs a collectable heap: re-run with --expose-gc, and as bin/hcs25 starts `hcs25 watch` (its
// young generation held at two 4 MB semi-spaces, its old space grown 20% per full GC, two malloc arenas), so the
// watcher measured runs as installed.
else if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', ...WATCH_NODE_FLAGS, ...process.execArgv, new URL(import.meta.url).pathname, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' },
  });
  process.exit(r.status ?? 1);
} else await watcher();

async function watcher() {
  const sdk = await import('@hashgraph/sdk');
  const { loadConfig } = await import(DIST('config/load.js'));
  const { createHcs25Client, PIPELINE_TUNING } = await import(DIST('client.js'));
  const { watchRegistry } = await import(DIST('actions/watch-registry.js'));
  const { createSignalTopic } = await import(DIST('publisher/topic.js'));

  const emu = await startEmulator({ accounts: 1, mirrorLagMs: LAG_MS });
  const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-watch-'));
  const config = loadConfig({ cwd: stateDir, env: emulatorEnv(emu), flags: { stateDir, concurrency: 64, budgetMs: 5_000 } });
  const { createClient } = await import(DIST('hedera/client.js'));
  // BENCH_WATCH_IN_PROCESS=1: submission on the watcher's thread (a client given an SDK client submits with it), to
  // compare RSS with and without the submission worker.
  const inProcess = process.env.BENCH_WATCH_IN_PROCESS === '1';
  // BENCH_WATCH_PACK_WORKER=1: packing in a worker thread per run (as before), to compare with packing on the watcher's thread.
  const packInWorker = process.env.BENCH_WATCH_PACK_WORKER === '1';
  const client = inProcess ? createHcs25Client(config, { sdk: createClient(config, PIPELINE_TUNING) }) : createHcs25Client(config);

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
  /** Notes are timed from the measured part's start (the series' second 0); warm-up notes are negative. */
  let noteT0 = performance.now();
  const stop = new AbortController();
  let watching;
  let load;
  try {
    const writer = fastSigningClient(sdk, emu);
    const registryTx = await new sdk.TopicCreateTransaction().setTopicMemo('hcs-2:0:86400').execute(writer);
    const registry = (await registryTx.getReceipt(writer)).topicId.toString();
    writer.close();
    const topic = (await createSignalTopic(client.sdk)).topicId;
    let ready;
    const started = new Promise((r) => (ready = r));
    watching = watchRegistry(client, {
      registry,
      topic,
      everyMs: 24 * 3_600_000,
      perHost: 60,
      maxRunSignals: RUN_SIGNALS,
      maxFeePerDayHbar: 10_000,
      flushMs: 1_000,
      pollMs: 1_000,
      signal: stop.signal,
      runner: { transportFactory },
      ...(packInWorker && { packInWorker: true }),
      // BENCH_WATCH_NOTES=1: the watcher's notes (cycles, rotations, reveals), each with its time and RSS, to line up with the series.
      ...(process.env.BENCH_WATCH_NOTES === '1' && {
        onNote: (line) => console.log(`  note ${((performance.now() - noteT0) / 1000).toFixed(1)} s, RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB: ${line}`),
      }),
      onReady: (status) => ready(status),
    });
    const status = await Promise.race([started, watching.then(() => { throw new Error('the watcher stopped before it started'); })]);
    console.log(
      `watch: ${WARMUP} warm-up${process.env.BENCH_WATCH_WARMUP ? '' : ` (past the first run's rotation and reveal: runs of ≤ ${RUN_SIGNALS} signals hold ${Math.ceil(RUN_SIGNALS / 3)} agents)`} + ${AGENTS} measured registrations at ~${RATE}/s into an HCS-2 registry, mirror lag ${LAG_MS} ms, ` +
        `simulated agents 5-20 ms per ask; registrations and the topic reader in a child process (only the watcher is measured); ` +
        `submission ${inProcess ? 'on the watcher thread (BENCH_WATCH_IN_PROCESS=1)' : 'in its worker thread'}; ` +
        `packing ${packInWorker ? 'in a worker thread per run (BENCH_WATCH_PACK_WORKER=1)' : 'on the watcher thread'}; ` +
        `node ${process.execArgv.filter((a) => a !== '--expose-gc').join(' ')} and MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX} as bin/hcs25 runs \`hcs25 watch\``,
    );

    // The load generator reports 'warm' (every warm-up agent on the topic), then 'done' with its latencies.
    load = fork(new URL(import.meta.url).pathname, ['--load'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
    const messages = [];
    const waiters = [];
    load.on('message', (m) => (waiters.length ? waiters.shift()(m) : messages.push(m)));
    const exited = new Promise((_, reject) => load.on('exit', (code) => reject(new Error(`the load generator exited (${code})`))));
    const next = () => Promise.race([messages.length ? Promise.resolve(messages.shift()) : new Promise((r) => waiters.push(r)), exited]);
    load.send({
      node: { network: emu.network, ports: emu.ports, operator: emu.operator, mirrorRestUrl: emu.mirrorRestUrl },
      env: emulatorEnv(emu),
      registry,
      topic,
      warmup: WARMUP,
      agents: AGENTS,
      rate: RATE,
      sampleEvery: SAMPLE_EVERY,
    });

    const cpu0 = process.cpuUsage();
    const warm = await next();
    if (warm.type !== 'warm') throw new Error(`unexpected ${JSON.stringify(warm)}`);
    // BENCH_WATCH_SNAPSHOT=PATH: heap snapshots after the warm-up (PATH.warm) and at the end (PATH), to diff.
    if (process.env.BENCH_WATCH_SNAPSHOT) writeHeapSnapshot(`${process.env.BENCH_WATCH_SNAPSHOT}.warm`);
    const ref = process.memoryUsage().rss / 2 ** 20;
    const t0 = performance.now();
    noteT0 = t0;
    const cpu1 = process.cpuUsage();
    const threads1 = threadCpu();
    const evals0 = status().counters.evaluations;
    const rss = [];
    // The split, every 1,000 registrations the watcher has seen (after a full GC of its heap): its V8 heap, external
    // memory, the submission worker's own heap, and the rest of RSS (native: malloc, thread stacks, code).
    const transport = client.submitTransport();
    const mem = [];
    const split = async (known) => {
      globalThis.gc();
      const m = process.memoryUsage();
      const spaces = Object.fromEntries(getHeapSpaceStatistics().map((x) => [x.space_name, x.space_size / 2 ** 20]));
      const w = (await transport.memory?.({ collect: true })) ?? { heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0, newSpace: 0 };
      const mb = (x) => x / 2 ** 20;
      const row = {
        t: (performance.now() - t0) / 1000,
        known,
        rss: mb(m.rss),
        heap: mb(m.heapUsed),
        total: mb(m.heapTotal),
        newSpace: spaces.new_space ?? 0,
        oldSpace: spaces.old_space ?? 0,
        external: mb(m.external),
        buffers: mb(m.arrayBuffers),
        wHeap: mb(w.heapUsed),
        wTotal: mb(w.heapTotal),
        wNew: mb(w.newSpace),
        wExternal: mb(w.external),
      };
      row.native = row.rss - row.total - row.external - row.wTotal - row.wExternal;
      mem.push(row);
    };
    // BENCH_WATCH_SPLITS=0: no split (no forced GC) until the end, so the RSS samples are the watcher's own, untouched.
    const splits = process.env.BENCH_WATCH_SPLITS !== '0';
    if (splits) await split(status().agentsKnown);
    let sampling = false;
    let splitEnded = -Infinity;
    const sampler = setInterval(() => {
      const known = status().agentsKnown;
      rss.push({ t: (performance.now() - t0) / 1000, mb: process.memoryUsage().rss / 2 ** 20, known, split: sampling || performance.now() - splitEnded < 1_500 });
      if (!splits || sampling || known < mem.at(-1).known + 1_000) return;
      sampling = true;
      void split(known).finally(() => ((sampling = false), (splitEnded = performance.now())));
    }, 1_000);
    load.send({ type: 'go' });
    const done = await next();
    clearInterval(sampler);
    const cpu = process.cpuUsage(cpu1);
    const threads = threadCpu(threads1);
    while (sampling) await sleep(10);
    await split(status().agentsKnown);
    const s = status();
    if (process.env.BENCH_WATCH_SNAPSHOT) writeHeapSnapshot(process.env.BENCH_WATCH_SNAPSHOT);

    const mbs = rss.map((r) => r.mb);
    const lo = Math.min(...mbs);
    const hi = Math.max(...mbs);
    const bandOf = (base) => Math.max(Math.abs(lo - base), Math.abs(hi - base)) / base;
    const pctAgainst = (base) => (mb) => `${mb >= base ? '+' : ''}${(((mb - base) / base) * 100).toFixed(1)}%`;
    const pctOf = pctAgainst(ref);
    const sampleBand = bandOf(ref);
    // The second reference: the median RSS over the first 1,000 measured registrations. The single sample right
    // after the warm-up falls wherever V8's old space and the freed-but-kept buffers happen to be in their cycle
    // between major GCs (±10-20 MB), so a band around it can be off by that much either way; the median of those
    // samples is what the process settles at. Both are printed; the goal is checked against the median.
    const early = rss.filter((r) => r.known < WARMUP + 1_000).map((r) => r.mb).sort((a, b) => a - b);
    const median = early.length > 0 ? early[Math.floor(early.length / 2)] : ref;
    const band = bandOf(median);
    const pctOfMedian = pctAgainst(median);
    const lat = done.latencies.sort((a, b) => a - b);
    const pct = (q) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] / 1000 : Number.NaN);
    const evaluations = s.counters.evaluations - evals0;
    const f1 = (x) => x.toFixed(1);
    console.log(
      `  registered ${AGENTS} in ${done.registeredS.toFixed(0)} s after the warm-up; watcher: ${s.agentsKnown} agents known, ${s.counters.evaluations} evaluations, ` +
        `${s.counters.signalsPublished} signals in ${s.counters.messagesPublished} messages, queue ${s.queue}, runs of ≤ ${RUN_SIGNALS} signals: ${s.run ? 'current ' + s.run : '—'}`,
    );
    console.log(
      `  RSS after the warm-up (${WARMUP} agents published, ${f1((cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1e6)} s CPU): ${ref.toFixed(0)} MB = the reference; ` +
        `over the ${AGENTS} measured registrations (${rss.length} samples, 1/s): min ${lo.toFixed(0)} MB (${pctOf(lo)}), max ${hi.toFixed(0)} MB (${pctOf(hi)}), ` +
        `last ${mbs.at(-1)?.toFixed(0)} MB (${pctOf(mbs.at(-1) ?? ref)}): band ±${f1(sampleBand * 100)}% around that one sample`,
    );
    console.log(
      `  against the median RSS over the first 1,000 measured registrations (${early.length} samples: ${f1(median)} MB, the reference sample ${pctOfMedian(ref)} of it): ` +
        `min ${pctOfMedian(lo)}, max ${pctOfMedian(hi)}, last ${pctOfMedian(mbs.at(-1) ?? median)}: band ±${f1(band * 100)}% (goal ±10%; ` +
        `the median, because one sample right after the warm-up lands anywhere in the old space's swing between major GCs)`,
    );
    console.log(`  RSS over time (MB, every 10 s): ${rss.filter((_, i) => i % 10 === 0).map((r) => r.mb.toFixed(0)).join(' ')}`);
    // BENCH_WATCH_SERIES=1: every sample; `*` marks one taken during or within 1.5 s after the bench's own split (its full GCs).
    if (process.env.BENCH_WATCH_SERIES === '1') console.log(`  RSS every second (MB): ${rss.map((r) => r.mb.toFixed(0) + (r.split ? '*' : '')).join(' ')}`);
    // Where RSS goes, per 1,000 registrations; the growth from the first to the last sample, part by part.
    console.log('  the split, after a full GC per 1,000 registrations (MB): agents known | RSS | main heap used / committed (new space, old space) | external (array buffers) | worker heap used / committed (new space) + external | native rest');
    for (const m of mem) {
      console.log(
        `    ${String(m.known).padStart(6)} | ${m.rss.toFixed(0).padStart(4)} | ${f1(m.heap)} / ${f1(m.total)} (${f1(m.newSpace)}, ${f1(m.oldSpace)}) | ${f1(m.external)} (${f1(m.buffers)}) | ` +
          `${f1(m.wHeap)} / ${f1(m.wTotal)} (${f1(m.wNew)}) + ${f1(m.wExternal)} | ${f1(m.native)}`,
      );
    }
    if (mem.length > 1) {
      const [a, b] = [mem[0], mem.at(-1)];
      const d = (k) => `${b[k] >= a[k] ? '+' : ''}${f1(b[k] - a[k])}`;
      console.log(
        `  growth over the measured part (MB): RSS ${d('rss')} = main heap committed ${d('total')} (live ${d('heap')}) + external ${d('external')} + worker heap ${d('wTotal')} (live ${d('wHeap')}) + worker external ${d('wExternal')} + native ${d('native')}`,
      );
      // How far each part moves over the run (max - min across the splits), so the band's make-up is visible.
      const swing = (k) => f1(Math.max(...mem.map((m) => m[k])) - Math.min(...mem.map((m) => m[k])));
      console.log(
        `  swing of each part across the splits (max − min, MB): RSS ${swing('rss')}, main heap committed ${swing('total')} (old space ${swing('oldSpace')}, live ${swing('heap')}), ` +
          `external ${swing('external')} (array buffers ${swing('buffers')}), worker heap committed ${swing('wTotal')}, worker external ${swing('wExternal')}, native ${swing('native')}`,
      );
      console.log(`  live heap per measured agent: ${(((b.heap - a.heap) * 2 ** 20) / (b.known - a.known)).toFixed(0)} B (main thread, first to last sample)`);
    }
    console.log(
      `  watcher CPU over the measured part: ${f1((cpu.user + cpu.system) / 1e6)} s, ${evaluations > 0 ? ((cpu.user + cpu.system) / evaluations).toFixed(0) : '—'} µs per evaluation; ` +
        `load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`,
    );
    if (threads) {
      // Per thread, from /proc (Linux): the main thread is the process id; the busiest other thread is the submission
      // worker's (it runs the SDK, gRPC and signing); the rest are V8's GC/compiler helpers and libuv's pool.
      const per = (us) => (evaluations > 0 ? `${(us / evaluations).toFixed(0)} µs` : '—');
      const [main, ...others] = threads;
      const [busiest, ...rest] = others.sort((a, b) => b.us - a.us);
      const restUs = rest.reduce((sum, t) => sum + t.us, 0);
      console.log(
        `  per evaluation by thread: main ${per(main.us)}, busiest other thread (the submission worker) ${per(busiest?.us ?? 0)}, ` +
          `the other ${rest.length} threads (GC, compiler, libuv pool) ${per(restUs)}; system time (kernel: writes, fsync, sockets) in these: ` +
          `${per(main.sys)}, ${per(busiest?.sys ?? 0)}, ${per(rest.reduce((sum, t) => sum + t.sys, 0))}`,
      );
      // BENCH_WATCH_THREADS=1: every thread (user + system ms), to tell V8's helpers from libuv's pool.
      if (process.env.BENCH_WATCH_THREADS === '1') console.log(`  threads (tid: ms CPU / of which system): ${threads.map((t) => `${t.tid}: ${(t.us / 1000).toFixed(0)}/${(t.sys / 1000).toFixed(0)}`).join(', ')}`);
    }
    console.log(
      `  new agent → its 3 signals on the topic (mirror lag ${LAG_MS / 1000} s): p50 ${f1(pct(0.5))} s, p95 ${f1(pct(0.95))} s, max ${f1(pct(1))} s ` +
        `over ${lat.length}/${done.sampled} sampled agents (goal ≤ 60 s)`,
    );
    if (lat.length < done.sampled || pct(1) > 60 || band > 0.1) failed = true;
  } finally {
    load?.kill();
    stop.abort();
    await watching?.catch((err) => console.error(`the watcher failed: ${err.message}`));
    await client.close().catch(() => undefined);
    if (inProcess) client.sdk.close();
    await emu.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  if (failed) {
    console.error('bench-watch: a goal was missed');
    process.exit(1);
  }
  process.exit(0);
}

/**
 * CPU time of each of this process's threads (µs, the main thread first), from /proc; with `since`, the time spent
 * after it (threads started since count from zero). Undefined where /proc is not there.
 */
function threadCpu(since) {
  let tids;
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  const tick = 1e6 / 100; // USER_HZ
  const out = [];
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const before = since?.find((t) => t.tid === tid);
      const sys = Number(f[12]) * tick - (before?.sys ?? 0);
      out.push({ tid, us: (Number(f[11]) + Number(f[12])) * tick - (before?.us ?? 0), sys });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out.sort((a, b) => (a.tid === String(process.pid) ? -1 : b.tid === String(process.pid) ? 1 : 0));
}

/** The child: registrations at a steady rate (64 in flight) and a consumer reading the signal topic. */
async function loadGenerator() {
  const job = await new Promise((r) => process.once('message', r));
  const sdk = await import('@hashgraph/sdk');
  const { loadConfig } = await import(DIST('config/load.js'));
  const { createHcs25Client } = await import(DIST('client.js'));
  const { readMessage } = await import(DIST('signals/read.js'));
  const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-watch-load-'));
  const client = createHcs25Client(loadConfig({ cwd: stateDir, env: job.env, flags: { stateDir } }));
  const writer = fastSigningClient(sdk, job.node);
  const registeredAt = new Map();
  const seen = new Map();
  const complete = new Map();
  let cursor = 0;
  let reading = true;
  const reader = (async () => {
    while (reading) {
      for await (const m of client.mirror.topicMessages(job.topic, { ...(cursor > 0 && { afterSequence: cursor }) })) {
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
  const body = (i) => JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify({ name: `agent-${i}`, protocol: 'openai', endpoint: `http://a${i}.bench.invalid/v1`, model: 'm' }) });
  // Agents [from, to) at `rate` per second; the sampled ones are timed. Resolves once every sampled one is on the topic (or 90 s more).
  const register = async (from, to, sampled) => {
    const t0 = performance.now();
    let next = from;
    const worker = async () => {
      for (let i = next++; i < to; i = next++) {
        const due = t0 + ((i - from) * 1000) / job.rate;
        if (due > performance.now()) await sleep(due - performance.now());
        await new sdk.TopicMessageSubmitTransaction().setTopicId(job.registry).setMessage(body(i)).execute(writer);
        if (sampled(i)) registeredAt.set(i, performance.now());
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const registeredS = (performance.now() - t0) / 1000;
    const deadline = performance.now() + 90_000;
    while (complete.size < registeredAt.size && performance.now() < deadline) await sleep(500);
    return registeredS;
  };
  // Warm-up: every warm-up agent is timed, so 'warm' means all of them are published.
  await register(0, job.warmup, () => true);
  const warmed = complete.size;
  registeredAt.clear();
  complete.clear();
  process.send({ type: 'warm', published: warmed });
  await new Promise((r) => process.once('message', r));
  const registeredS = await register(job.warmup, job.warmup + job.agents, (i) => (i - job.warmup) % job.sampleEvery === 0);
  reading = false;
  await reader;
  process.send({ type: 'done', registeredS, sampled: registeredAt.size, latencies: [...complete.values()] });
  writer.close();
  await client.close().catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  process.disconnect();
}
