#!/usr/bin/env node
/**
 * Registry discovery benchmark (run after the build; `npm run bench` does both).
 * The emulator runs in a child process; this process fills an indexed HCS-2 registry with N agent-record entries
 * (plus updates and deletes), then measures through the emulator's mirror REST API:
 *  - raw paging: every registry message through MirrorRestClient.topicMessages (100 per page);
 *  - discoverAgents: fold + resolution + UAIDs, cold (first call, includes the standards-sdk import) and warm.
 * Env: BENCH_DISCOVERY_ENTRIES (default 5000).
 */
import { fork } from 'node:child_process';
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const DIST = (p) => new URL(`../dist/${p}`, import.meta.url).href;

if (process.argv[2] === '--child') {
  const { startLocalNode } = await import(DIST('localnode/index.js'));
  const node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
  process.on('message', async (msg) => {
    if (msg === 'stop') {
      await node.stop();
      process.exit(0);
    }
  });
  process.send({ ports: node.ports, mirrorRestUrl: node.mirrorRestUrl, operator: node.operator });
} else {
  await main();
}

async function main() {
  const entries = Number(process.env.BENCH_DISCOVERY_ENTRIES ?? 5000);
  const child = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: 'inherit' });
  const info = await new Promise((resolve) => child.once('message', resolve));
  const sdk = await import('@hashgraph/sdk');
  const client = sdk.Client.forNetwork({ [`127.0.0.1:${info.ports.consensus}`]: '0.0.3' }, { scheduleNetworkUpdate: false });
  client.setMirrorNetwork([`127.0.0.1:${info.ports.mirrorGrpc}`]);
  // node:crypto signing: the SDK's JavaScript ED25519 would make filling the registry take five times longer.
  const key = createPrivateKey({ key: Buffer.from(info.operator.privateKey, 'hex'), format: 'der', type: 'pkcs8' });
  const publicKey = sdk.PrivateKey.fromStringDer(info.operator.privateKey).publicKey;
  client.setOperatorWith(info.operator.accountId, publicKey, async (m) => new Uint8Array(cryptoSign(null, m, key)));
  try {
    const create = await new sdk.TopicCreateTransaction().setTopicMemo('hcs-2:0:86400').execute(client);
    const registry = (await create.getReceipt(client)).topicId.toString();

    const bodies = [];
    for (let i = 0; i < entries; i++) {
      const record = { name: `agent-${i}`, protocol: i % 2 ? 'a2a' : 'openai', endpoint: `http://127.0.0.1:${10_000 + (i % 50_000)}/${i % 2 ? 'a2a' : 'v1'}` };
      bodies.push(JSON.stringify({ p: 'hcs-2', op: 'register', t_id: registry, metadata: JSON.stringify(record) }));
    }
    // One update per 50 entries and one delete per 100, so the fold has work to do.
    for (let uid = 1; uid <= entries; uid += 50) bodies.push(JSON.stringify({ p: 'hcs-2', op: 'update', uid: String(uid), metadata: JSON.stringify({ name: `agent-${uid - 1}-v2`, protocol: 'http', endpoint: `http://127.0.0.1:${60_000 + (uid % 5000)}/ask` }) }));
    for (let uid = 2; uid <= entries; uid += 100) bodies.push(JSON.stringify({ p: 'hcs-2', op: 'delete', uid: String(uid) }));
    const fillStart = performance.now();
    // Registers first, in order (their uids are their sequence numbers); then the updates and deletes.
    await submitAll(sdk, client, registry, bodies.slice(0, entries), info.mirrorRestUrl, entries);
    await submitAll(sdk, client, registry, bodies.slice(entries), info.mirrorRestUrl, bodies.length);
    const fillMs = performance.now() - fillStart;
    const total = bodies.length;
    const deletes = Math.ceil((entries - 1) / 100);

    const { MirrorRestClient } = await import(DIST('hedera/mirror-rest.js'));
    const { discoverAgents } = await import(DIST('registry/discover.js'));
    const mirror = new MirrorRestClient({ baseUrl: info.mirrorRestUrl });

    const pageStart = performance.now();
    let seen = 0;
    for await (const _ of mirror.topicMessages(registry)) seen++;
    const pageMs = performance.now() - pageStart;

    const runs = [];
    for (const label of ['cold', 'warm', 'warm']) {
      const heap = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const result = await discoverAgents({ registry, mirror, network: 'local', allowPrivateEndpoints: true });
      const ms = performance.now() - t0;
      runs.push({ label, ms, agents: result.agents.length, skipped: result.skipped.length, heapMb: (process.memoryUsage().heapUsed - heap) / 2 ** 20 });
    }
    await mirror.close();

    console.log(`registry: ${entries} registers + ${total - entries} updates/deletes = ${total} messages (filled in ${(fillMs / 1000).toFixed(1)} s, ${Math.round(total / (fillMs / 1000))} tx/s)`);
    console.log(`mirror REST paging: ${seen} messages in ${pageMs.toFixed(0)} ms = ${Math.round(seen / (pageMs / 1000))} messages/s (${Math.ceil(seen / 100)} pages, ${(pageMs / Math.ceil(seen / 100)).toFixed(2)} ms/page)`);
    for (const r of runs) {
      console.log(
        `discoverAgents (${r.label}): ${r.agents} agents, ${r.skipped} skipped in ${r.ms.toFixed(0)} ms = ${Math.round(entries / (r.ms / 1000))} entries/s (heap +${r.heapMb.toFixed(1)} MB)`,
      );
    }
    if (runs.some((r) => r.agents !== entries - deletes)) {
      console.log(`UNEXPECTED: expected ${entries - deletes} agents`);
      process.exitCode = 1;
    }
  } finally {
    client.close();
    child.send('stop');
  }
}

/** Up to 64 submissions in flight, then waits until the mirror node shows sequence number `upTo`. */
async function submitAll(sdk, client, topicId, bodies, mirrorRestUrl, upTo) {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const i = next++;
      await new sdk.TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(bodies[i]).execute(client);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  for (let tries = 0; tries < 600; tries++) {
    const res = await fetch(`${mirrorRestUrl}/api/v1/topics/${topicId}/messages/${upTo}`);
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sequence number ${upTo} never reached the mirror node`);
}
