#!/usr/bin/env node
/**
 * HCS-10 transport benchmark on the embedded emulator (run after the build; `npm run bench` does both).
 * For each mirror lag (0 ms, and 300 ms like the tests): runner identity creation, sample agent start-up,
 * the first ask (connection request → connection_created → message → reply), then asks reusing the connection
 * (p50/p95), an `hcs://1` (HCS-1 file) reply, and the HCS-10 transactions paid per ask.
 * On a public network add consensus (~3–5 s per hop) and mirror lag (~5–15 s): these figures are the protocol's
 * own overhead plus polling, not the network's.
 * Env: BENCH_HCS10_ASKS (default 30), BENCH_HCS10_LAGS (default "0,300").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const { startLocalNode } = await import('../dist/localnode/index.js');
// Work-around (reported to the lead): in plain Node the emulator's HAPI method list comes out empty once
// @hashgraph/sdk has been imported, and every call answers UNIMPLEMENTED; listing it first caches the full list.
(await import('../dist/localnode/services.js')).hapiMethods();
const { startHcs10Fleet } = await import('../dist/devtools/hcs10-agents.js');
const { ensureRunnerIdentity } = await import('../dist/hcs10/identity.js');
const { MirrorRestClient } = await import('../dist/hedera/mirror-rest.js');
const { createHcs10Transport } = await import('../dist/transports/hcs10.js');

const ASKS = Number(process.env.BENCH_HCS10_ASKS ?? 30);
const LAGS = (process.env.BENCH_HCS10_LAGS ?? '0,300').split(',').map(Number);
const POLL = { minMs: 50, maxMs: 200, factor: 1.5 };

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x) => `${Math.round(x)} ms`.padStart(8);

async function timed(fn) {
  const t = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t };
}

async function benchLag(lagMs) {
  const node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, mirrorLagMs: lagMs, quiet: true });
  const client = node.client();
  const mirror = new MirrorRestClient({ baseUrl: node.mirrorRestUrl });
  const stateDir = mkdtempSync(join(tmpdir(), 'bench-hcs10-'));
  try {
    const created = await timed(() => ensureRunnerIdentity({ client, stateDir, network: 'local' }));
    const reused = await timed(() => ensureRunnerIdentity({ client, stateDir, network: 'local' }));
    const fleet = await timed(() => startHcs10Fleet({ node, include: ['correct', 'large'], pollMs: 50 }));
    const identity = created.value.identity;
    const agentOf = (name) => {
      const r = fleet.value.agents.find((a) => a.name === name);
      return { subject: `bench:${name}`, name, protocol: 'hcs-10', accountId: r.accountId, inboundTopicId: r.inboundTopicId };
    };
    // The mirror must show the new agents' topics before a request can be checked against them.
    await new Promise((r) => setTimeout(r, lagMs + 100));

    let txs = 0;
    const transport = createHcs10Transport(agentOf('hcs10-correct'), { client, identity, mirror, poll: POLL, onSubmitted: () => txs++ });
    const first = await timed(() => transport.ask('What is 37 + 58?', { budgetMs: 30_000 }));
    if (!first.value.ok || first.value.text !== '95') throw new Error(`first ask failed: ${JSON.stringify(first.value)}`);
    await new Promise((r) => setTimeout(r, 50)); // let the outbound record land before counting
    const firstTxs = txs;
    const lat = [];
    txs = 0;
    for (let i = 0; i < ASKS; i++) {
      const a = 10 + (i % 80);
      const r = await transport.ask(`What is ${a} + 7?`, { budgetMs: 30_000 });
      if (!r.ok || r.text !== String(a + 7)) throw new Error(`ask ${i} failed: ${JSON.stringify(r)}`);
      lat.push(r.latencyMs);
    }
    const perAskTxs = txs / ASKS;
    txs = 0;
    await transport.close();
    const closeTxs = txs;

    const large = createHcs10Transport(agentOf('hcs10-large'), { client, identity, mirror, poll: POLL });
    const big = await timed(() => large.ask('What is 6 * 7?', { budgetMs: 30_000 }));
    if (!big.value.ok || !big.value.meta.replyHrl) throw new Error(`large ask failed: ${JSON.stringify(big.value)}`);
    const bigAgain = await large.ask('What is 6 * 8?', { budgetMs: 30_000 });
    await large.close();

    console.log(`mirror lag ${lagMs} ms`);
    console.log(`  runner identity: create ${ms(created.ms)}, reuse check ${ms(reused.ms)}`);
    console.log(`  2 sample agents (account, topics, profile, registry): ${ms(fleet.ms)}`);
    console.log(`  first ask (connect + ask):  ${ms(first.ms)}   HCS-10 transactions: ${firstTxs} (request, outbound record, message)`);
    console.log(`  reused connection, ${ASKS} asks: p50 ${ms(pct(lat, 50))}  p95 ${ms(pct(lat, 95))}  max ${ms(Math.max(...lat))}   transactions/ask: ${perAskTxs}`);
    console.log(`  close: ${closeTxs} transactions (close_connection, outbound connection_closed)`);
    console.log(`  hcs://1 reply (${Buffer.byteLength(big.value.text)} B): first ${ms(big.ms)}, reused ${ms(bigAgain.latencyMs)}`);
    await fleet.value.stop();
  } finally {
    client.close();
    await mirror.close();
    await node.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

console.log(`bench-hcs10: HCS-10 asks over the emulator (agent poll 50 ms, requester poll ${POLL.minMs}–${POLL.maxMs} ms)`);
for (const lag of LAGS) await benchLag(lag);
// The SDK keeps gRPC deadline timers alive for a few seconds after the last request.
process.exit(0);
