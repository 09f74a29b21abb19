#!/usr/bin/env node
/**
 * Publisher benchmark (run after the build; `npm run bench` does both): 1,000 signals to the emulator,
 *  - one at a time, the plain SDK way: submit, await the receipt, next;
 *  - one at a time through the Submitter (window 1: journal fsync, pre-set id, node:crypto signing);
 *  - pipelined through the Submitter (window 256), as `hcs25 run` does.
 * Every mode checks that the topic got exactly its messages. The emulator runs in a child process (its CPU is not
 * this process's), once with no consensus delay and once with a small one (real networks take seconds).
 * Env: BENCH_PUBLISHER_SIGNALS (default 1000), BENCH_PUBLISHER_WINDOW (default 256), BENCH_PUBLISHER_DELAYS (ms, default "0,50").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, emulatorCpuMs, startEmulator } from './lib/emulator.mjs';

await main();

/** A realistic signal body (~520 bytes, like a math signal). */
function body(i) {
  return JSON.stringify({
    p: 'hcs-25', op: 'signal', v: 1, subject: `uaid:aid:bench${String(i).padStart(6, '0')}${'x'.repeat(60)};uid=0;registry=self;proto=openai;nativeId=127.0.0.1:4000`,
    status: 'ok', fetchedAt: new Date().toISOString(), run: '01JDX3V9W5Q8K6T2N4M7P1R0ZA', signal: 'simple-evals.math',
    data: { outcome: 'correct', score: 100, questionHash: 'hs256:AAAAAAAAAAAAAAAAAAAAAA', answer: String(i), responseHash: `sha256:${'A'.repeat(43)}`, compliant: true, latencyMs: 842, grader: 'first-token@1', transport: 'openai' },
  });
}

async function main() {
  const n = Number(process.env.BENCH_PUBLISHER_SIGNALS ?? 1000);
  const window = Number(process.env.BENCH_PUBLISHER_WINDOW ?? 256);
  const delays = (process.env.BENCH_PUBLISHER_DELAYS ?? '0,50').split(',').map(Number);
  const sdk = await import('@hashgraph/sdk');
  const { localNetwork } = await import(DIST('config/networks.js'));
  const { Secret } = await import(DIST('config/secret.js'));
  const { createClient, parsePrivateKey } = await import(DIST('hedera/client.js'));
  const { MirrorRestClient } = await import(DIST('hedera/mirror-rest.js'));
  const { Journal } = await import(DIST('publisher/journal.js'));
  const { Submitter } = await import(DIST('publisher/submitter.js'));
  const { operatorSigner } = await import(DIST('publisher/signer.js'));
  const { createSignalTopic } = await import(DIST('publisher/topic.js'));
  const { ulid } = await import('ulid');

  console.log(`publisher: ${n} signals of ~${Buffer.byteLength(body(0))} B; pipelined window ${window}; emulator in a child process`);
  for (const delay of delays) {
    const emu = await startEmulator({ accounts: 1, consensusDelayMs: delay });
    const config = {
      network: localNetwork('127.0.0.1', emu.ports),
      operator: { accountId: emu.operator.accountId, privateKey: new Secret(emu.operator.privateKey), keyType: 'der' },
    };
    const client = createClient(config, { grpcDeadlineMs: 5_000, requestTimeoutMs: 60_000 });
    const mirror = new MirrorRestClient({ baseUrl: emu.mirrorRestUrl });
    const signer = operatorSigner(parsePrivateKey(config.operator));
    const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-pub-'));

    const countOnTopic = async (topicId) => {
      const seen = new Set();
      let total = 0;
      for await (const m of mirror.topicMessages(topicId)) {
        total++;
        seen.add(m.message.toString('utf8'));
      }
      return { total, unique: seen.size };
    };

    const naive = async (n) => {
      const { topicId } = await createSignalTopic(client);
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        const response = await new sdk.TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(body(i)).execute(client);
        await response.getReceipt(client);
      }
      return { ms: performance.now() - t0, topicId, n };
    };

    const viaSubmitter = async (w, n) => {
      const { topicId } = await createSignalTopic(client);
      const journal = await Journal.create(stateDir, {
        run: ulid(), seed: 'bench', runKey: Buffer.alloc(32).toString('base64url'), topic: topicId,
        config: { network: 'local', evals: ['math'], concurrency: 1, budgetMs: 1000, maxFeeHbar: 100, keepResponses: false }, agents: [],
      });
      const agent = { subject: 'uaid:aid:bench;uid=0', name: 'bench', protocol: 'openai' };
      const submitter = new Submitter({ client, signer, operatorId: config.operator.accountId, topicId, journal, memo: 'hcs-25:op:0', mirror, window: w });
      const emuCpu0 = await emulatorCpuMs(emu);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const pending = [];
      for (let i = 0; i < n; i++) {
        const key = `math|bench-${i}`;
        const json = body(i);
        journal.append({ t: 'result', key, result: { kind: 'math', agent }, message: { json, bytes: Buffer.byteLength(json) } });
        pending.push(submitter.submit({ key, message: json }));
      }
      const outcomes = await Promise.all(pending);
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const emuCpuMsPerSignal = ((await emulatorCpuMs(emu)) - emuCpu0) / n;
      await journal.close();
      const failed = outcomes.filter((o) => o.status !== 'confirmed').length;
      if (failed) throw new Error(`${failed} signals were not confirmed: ${submitter.fatal?.message}`);
      return { ms, topicId, n, cpuMsPerSignal: (cpu.user + cpu.system) / 1000 / n, emuCpuMsPerSignal, retries: submitter.stats.retries };
    };

    // Warm-up: JIT, connections.
    const warm = Number(process.env.BENCH_PUBLISHER_WARMUP ?? 100);
    await (async () => {
      const { topicId } = await createSignalTopic(client);
      for (let i = 0; i < (delay > 0 ? 5 : warm); i++) await (await new sdk.TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(body(i)).execute(client)).getReceipt(client);
    })();

    // One at a time takes ~0.5 s a signal once consensus is not instant (the SDK's receipt backoff), so with a
    // consensus delay those modes are timed on a sample; the rate is what is compared.
    const sample = delay > 0 ? Math.min(n, Number(process.env.BENCH_PUBLISHER_SAMPLE ?? 60)) : n;
    const modes = (process.env.BENCH_PUBLISHER_MODES ?? 'naive,single,pipelined').split(',');
    const results = {};
    if (modes.includes('naive')) results.naive = await naive(sample);
    if (modes.includes('single')) results.single = await viaSubmitter(1, sample);
    if (modes.includes('pipelined')) results.pipelined = await viaSubmitter(window, n);
    for (const [label, r] of Object.entries(results)) {
      const { total, unique } = await countOnTopic(r.topicId);
      if (total !== r.n || unique !== r.n) throw new Error(`${label}: topic holds ${total} messages (${unique} distinct), expected ${r.n}`);
    }
    const rate = (r) => (r.n / r.ms) * 1000;
    const { naive: a, single: b, pipelined: c } = results;
    console.log(`\nconsensus delay ${delay} ms:`);
    if (a) console.log(`  one at a time, plain SDK (submit, await receipt, next): ${rate(a).toFixed(0).padStart(5)} signals/s  (${(a.ms / a.n).toFixed(1)} ms each, ${a.n} signals)`);
    if (b) console.log(`  one at a time, Submitter window 1 (journaled):          ${rate(b).toFixed(0).padStart(5)} signals/s  (${(b.ms / b.n).toFixed(1)} ms each, ${b.n} signals, ${b.cpuMsPerSignal.toFixed(2)} ms CPU each)`);
    if (c) console.log(`  pipelined, Submitter window ${String(window).padEnd(4)} (journaled):      ${rate(c).toFixed(0).padStart(5)} signals/s  (${c.n} signals in ${(c.ms / 1000).toFixed(2)} s; CPU per signal ${c.cpuMsPerSignal.toFixed(2)} ms here + ${c.emuCpuMsPerSignal.toFixed(2)} ms in the emulator)`);
    if (a && c) console.log(`  speed-up: ${(rate(c) / rate(a)).toFixed(1)}× the plain SDK loop${b ? `, ${(rate(c) / rate(b)).toFixed(1)}× window 1` : ''}   (targets: ≥ 5×, ≥ 150 signals/s)`);
    console.log(`  every mode: all its messages on its topic, each exactly once (checked via mirror REST)`);

    client.close();
    await mirror.close();
    await emu.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  // The SDK's uncleared gRPC deadline timers would keep the process alive for seconds.
  process.exit(0);
}
