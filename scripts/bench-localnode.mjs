#!/usr/bin/env node
/**
 * Local-node emulator benchmark (run after the build; `npm run bench` does both).
 * The emulator runs in a child process so its own CPU per transaction is measured apart from the SDK's:
 *  - submit+receipt pairs with 64 in flight through the unmodified @hashgraph/sdk: throughput, latency p50/p95;
 *  - emulator CPU per pair (child process.cpuUsage) vs SDK CPU per pair (this process) and SDK signing alone;
 *  - the same with a node:crypto signer (setOperatorWith), to show the SDK's JS signing share;
 *  - mirror REST: paging every message of the topic, 100 per page.
 * Env: BENCH_LOCALNODE_PAIRS (default 1500), BENCH_LOCALNODE_INFLIGHT (default 64).
 */
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { performance } from 'node:perf_hooks';

const { startLocalNodeProcess } = await import(new URL('../dist/localnode/index.js', import.meta.url).href);
await main();

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  const pairs = Number(process.env.BENCH_LOCALNODE_PAIRS ?? 1500);
  const inFlight = Number(process.env.BENCH_LOCALNODE_INFLIGHT ?? 64);
  const sdk = await import('@hashgraph/sdk');
  const node = await startLocalNodeProcess({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, accounts: 1 });
  const { ports, mirrorRestUrl, operator } = node;
  // A plain SDK client (no helper tuning) so the figures are what any SDK user gets.
  const client = sdk.Client.forNetwork({ [`127.0.0.1:${ports.consensus}`]: '0.0.3' }, { scheduleNetworkUpdate: false })
    .setMirrorNetwork([`127.0.0.1:${ports.mirrorGrpc}`])
    .setOperator(operator.accountId, sdk.PrivateKey.fromStringDer(operator.privateKey))
    .setGrpcDeadline(5_000);
  const { topicId } = await (await new sdk.TopicCreateTransaction().execute(client)).getReceipt(client);

  const pair = async (i) => {
    const t0 = performance.now();
    const resp = await new sdk.TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(`bench message ${i}`).execute(client);
    await resp.getReceipt(client);
    return performance.now() - t0;
  };
  const run = async (n) => {
    const latencies = [];
    let next = 0;
    const worker = async () => {
      while (next < n) latencies.push(await pair(next++));
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: Math.min(inFlight, n) }, worker));
    return { ms: performance.now() - t0, latencies: latencies.sort((a, b) => a - b) };
  };

  const measure = async (label) => {
    await run(200); // warm-up: JIT, connections
    const childBefore = await node.usage();
    const selfBefore = process.cpuUsage();
    const { ms, latencies } = await run(pairs);
    const self = process.cpuUsage(selfBefore);
    const childAfter = await node.usage();
    const childUs = childAfter.cpu.user + childAfter.cpu.system - (childBefore.cpu.user + childBefore.cpu.system);
    const handlerMs = childAfter.stats.handlerMs - childBefore.stats.handlerMs;
    console.log(`  [${label}]`);
    console.log(`    throughput        ${(pairs / (ms / 1000)).toFixed(0)} pairs/s (${(ms / 1000).toFixed(2)} s)`);
    console.log(`    latency per pair  p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms`);
    console.log(`    emulator CPU      ${(childUs / 1000 / pairs).toFixed(3)} ms per pair (whole process), ${(handlerMs / pairs).toFixed(3)} ms in its handlers`);
    console.log(`    SDK CPU           ${((self.user + self.system) / 1000 / pairs).toFixed(3)} ms per pair`);
  };

  console.log(`localnode: ${pairs} submit+receipt pairs, ${inFlight} in flight (SDK in this process, emulator in a child process)`);
  await measure('SDK default operator key (JS ED25519 signing)');

  // SDK signing alone (ED25519, what every submit pays client-side).
  const key = sdk.PrivateKey.fromStringDer(operator.privateKey);
  const body = new Uint8Array(120).fill(7);
  const s0 = performance.now();
  for (let i = 0; i < 300; i++) key.sign(body);
  const signMs = (performance.now() - s0) / 300;
  console.log(`    SDK ED25519 sign  ${signMs.toFixed(3)} ms per signature`);

  // The same SDK with a node:crypto signer: shows how much of the SDK cost is its JS signing.
  const keyObject = createPrivateKey({ key: Buffer.from(operator.privateKey, 'hex'), format: 'der', type: 'pkcs8' });
  client.setOperatorWith(operator.accountId, key.publicKey, async (message) => new Uint8Array(cryptoSign(null, message, keyObject)));
  await measure('operator via setOperatorWith + node:crypto ED25519 signer');

  // Mirror REST: page through everything on the topic, 100 per page.
  await fetch(`${mirrorRestUrl}/api/v1/topics/${topicId}`); // loads fetch/undici before timing
  let url = `${mirrorRestUrl}/api/v1/topics/${topicId}/messages?limit=100`;
  let pages = 0;
  let rows = 0;
  const r0 = performance.now();
  while (url) {
    const page = await (await fetch(url)).json();
    pages++;
    rows += page.messages.length;
    url = page.links.next ? `${mirrorRestUrl}${page.links.next}` : null;
  }
  const restMs = performance.now() - r0;
  console.log(`  mirror REST         ${rows} messages in ${pages} pages of <=100: ${restMs.toFixed(0)} ms (${(restMs / pages).toFixed(2)} ms/page)`);

  client.close();
  await node.stop();
  // The SDK's per-attempt grpcDeadline timers would keep this process alive for a few seconds.
  process.exit(0);
}
