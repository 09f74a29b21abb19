#!/usr/bin/env node
/**
 * Packed publishing end to end (run after the build; `npm run bench` does both): the signals of 1,000 agents
 * (3 each, realistic ~120-140-character UAIDs; eval results simulated) go through `publishSignals` — journal, packer,
 * Submitter — to the emulator with `--pack dense`, and for comparison `--pack none` (one message per signal, as
 * before packing). Prints messages per agent, the largest message, the cost per 1,000 agents at $0.0008 a message
 * (Hedera from January 2026) and what the emulator charged, then reads each topic back through mirror REST as a
 * consumer (`collectTopicSignals`) and prints the time per signal. Targets: ≤ 0.375 messages per agent, every
 * message ≤ 1024 bytes, every signal read back exactly once, read-back per signal no slower than unpacked.
 * Env: BENCH_PACKED_AGENTS (default 1000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, emulatorEnv, startEmulator } from './lib/emulator.mjs';
import { syntheticResults } from './lib/fleet.mjs';

const AGENTS = Number(process.env.BENCH_PACKED_AGENTS ?? 1000);
const HEDERA_USD = 0.0008;

const { loadConfig } = await import(DIST('config/load.js'));
const { createHcs25Client } = await import(DIST('client.js'));
const { buildSignal } = await import(DIST('actions/build-signals.js'));
const { publishSignals } = await import(DIST('actions/publish-signals.js'));
const { estimateSubmitFee, formatHbar } = await import(DIST('publisher/fees.js'));
const { Journal, readJournal } = await import(DIST('publisher/journal.js'));
const { createSignalTopic } = await import(DIST('publisher/topic.js'));
const { collectTopicSignals } = await import(DIST('consumer/reader.js'));
const { encodeRunKey, newRunKey } = await import(DIST('signals/hashing.js'));
const { ulid } = await import('ulid');

const emu = await startEmulator({ accounts: 1 });
const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-packed-'));
const config = loadConfig({
  cwd: stateDir,
  env: emulatorEnv(emu),
  flags: { stateDir, maxFeeHbar: 1000 },
});
const client = createHcs25Client(config);
let failed = false;
try {
  const results = await syntheticResults(AGENTS, Date.now() - 3_600_000);
  const agents = results.filter((r) => r.kind === 'availability').map((r) => r.agent);
  const uaid = agents.reduce((n, a) => n + a.subject.length, 0) / agents.length;
  const estimate = await estimateSubmitFee('local', client.mirror);
  console.log(`packed run: ${AGENTS} agents × 3 signals, UAIDs ${uaid.toFixed(0)} characters on average, published through publishSignals to the emulator`);

  const rows = {};
  for (const pack of ['dense', 'none']) {
    const topic = (await createSignalTopic(client.sdk)).topicId;
    const run = ulid();
    const runKey = newRunKey();
    const journalConfig = { network: 'local', operator: emu.operator.accountId, evals: ['availability', 'math', 'science'], concurrency: 16, budgetMs: 30_000, maxFeeHbar: 1000, keepResponses: false, pack };
    const journal = await Journal.create(stateDir, { run, seed: 'bench', runKey: encodeRunKey(runKey), topic, config: journalConfig, agents });
    const { state } = await readJournal(journal.path);
    const built = results.map((r) => buildSignal(r, { run, runKey }));
    const t0 = performance.now();
    const published = await publishSignals(client, {
      journal,
      state,
      signals: (async function* () { yield* built; })(),
      estimateTinybar: estimate.tinybar,
      stop: new AbortController(),
    });
    const publishMs = performance.now() - t0;
    if (published.status !== 'complete') throw new Error(`--pack ${pack}: the run ended ${published.status}: ${published.error?.message}`);
    const sizes = [...state.packs.values()].map((p) => p.bytes);
    rows[pack] = {
      topic,
      messages: sizes.length,
      perAgent: sizes.length / AGENTS,
      maxBytes: Math.max(...sizes),
      avgBytes: sizes.reduce((a, b) => a + b, 0) / sizes.length,
      usdPer1000: (sizes.length / AGENTS) * 1000 * HEDERA_USD,
      spent: published.fees.spentTinybar,
      publishMs,
      readMs: Number.POSITIVE_INFINITY,
    };
  }
  // Read back as a consumer would: every message from mirror REST, packs expanded, deduped. The topics are read in
  // turn, best of four passes each, so JIT warm-up favours neither.
  const signals = results.length;
  for (let pass = 0; pass < 4; pass++) {
    for (const [pack, row] of Object.entries(rows)) {
      const r0 = performance.now();
      const read = await collectTopicSignals({ topic: row.topic, mirror: client.mirror });
      row.readMs = Math.min(row.readMs, performance.now() - r0);
      const distinct = new Set(read.signals.map((s) => `${s.message.signal}|${s.message.subject}`)).size;
      if (read.signals.length !== signals || distinct !== signals || read.rejected.length > 0) {
        failed = true;
        console.error(`--pack ${pack}: read back ${read.signals.length} signals (${distinct} distinct, ${read.rejected.length} rejected), expected ${signals}`);
      }
    }
  }
  for (const [pack, row] of Object.entries(rows)) {
    row.readUsPerSignal = (row.readMs * 1000) / signals;
    console.log(
      `  --pack ${pack.padEnd(5)} ${String(row.messages).padStart(5)} messages  ${row.perAgent.toFixed(3)} per agent  ${(signals / row.messages).toFixed(2).padStart(5)} signals/message  ` +
        `${row.avgBytes.toFixed(0)} B avg, ${row.maxBytes} B max  $${row.usdPer1000.toFixed(3)} per 1,000 agents at $${HEDERA_USD}/message  ` +
        `emulator charged ${formatHbar(row.spent)} (forecast ${formatHbar(BigInt(row.messages) * estimate.tinybar)})  ` +
        `published in ${(row.publishMs / 1000).toFixed(1)} s  read back ${row.readUsPerSignal.toFixed(0)} µs/signal`,
    );
    if (row.maxBytes > 1024) failed = true;
  }
  const { dense, none } = rows;
  console.log(
    `  dense vs one message per signal: ${(none.messages / dense.messages).toFixed(1)}× fewer messages, read-back ${(none.readUsPerSignal / dense.readUsPerSignal).toFixed(1)}× as fast per signal` +
      `   (targets: ≤ 0.375 messages/agent, ≤ 1024 B, read-back per signal at least as fast)`,
  );
  if (dense.perAgent > 0.375 || dense.readUsPerSignal > none.readUsPerSignal) failed = true;
} finally {
  await client.close();
  await emu.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
if (failed) {
  console.error('bench-packed-run: a target was missed');
  process.exit(1);
}
// The SDK's uncleared gRPC deadline timers would keep the process alive for seconds.
process.exit(0);
