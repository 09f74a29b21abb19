#!/usr/bin/env node
/**
 * Registry discovery benchmark (run after the build; `npm run bench` does both).
 * The emulator runs in a child process; this process fills an indexed HCS-2 registry with N agent-record entries
 * (plus updates and deletes), then measures through the emulator's mirror REST API:
 *  - raw paging: every registry message through MirrorRestClient.topicMessages (100 per page);
 *  - discoverRegistry: fold + resolution + UAIDs, cold (first call, includes the standards-sdk import) and warm.
 * Env: BENCH_DISCOVERY_ENTRIES (default 5000).
 */
import { performance } from 'node:perf_hooks';
import { DIST, fastSigningClient, startEmulator, submitAll } from './lib/emulator.mjs';

await main();
process.exit(process.exitCode ?? 0);

async function main() {
  const entries = Number(process.env.BENCH_DISCOVERY_ENTRIES ?? 5000);
  const node = await startEmulator();
  const sdk = await import('@hashgraph/sdk');
  const client = fastSigningClient(sdk, node);
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
    await submitAll(sdk, client, node, registry, bodies.slice(0, entries), entries);
    await submitAll(sdk, client, node, registry, bodies.slice(entries), bodies.length);
    const fillMs = performance.now() - fillStart;
    const total = bodies.length;
    const deletes = Math.ceil((entries - 1) / 100);

    const { MirrorRestClient } = await import(DIST('hedera/mirror-rest.js'));
    const { discoverRegistry } = await import(DIST('registry/discover.js'));
    const mirror = new MirrorRestClient({ baseUrl: node.mirrorRestUrl });

    const pageStart = performance.now();
    let seen = 0;
    for await (const _ of mirror.topicMessages(registry)) seen++;
    const pageMs = performance.now() - pageStart;

    const runs = [];
    for (const label of ['cold', 'warm', 'warm']) {
      const heap = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const result = await discoverRegistry({ registry, mirror, network: 'local', allowPrivateEndpoints: true });
      const ms = performance.now() - t0;
      runs.push({ label, ms, agents: result.agents.length, skipped: result.skipped.length, heapMb: (process.memoryUsage().heapUsed - heap) / 2 ** 20 });
    }
    await mirror.close();

    console.log(`registry: ${entries} registers + ${total - entries} updates/deletes = ${total} messages (filled in ${(fillMs / 1000).toFixed(1)} s, ${Math.round(total / (fillMs / 1000))} tx/s)`);
    console.log(`mirror REST paging: ${seen} messages in ${pageMs.toFixed(0)} ms = ${Math.round(seen / (pageMs / 1000))} messages/s (${Math.ceil(seen / 100)} pages, ${(pageMs / Math.ceil(seen / 100)).toFixed(2)} ms/page)`);
    for (const r of runs) {
      console.log(
        `discoverRegistry (${r.label}): ${r.agents} agents, ${r.skipped} skipped in ${r.ms.toFixed(0)} ms = ${Math.round(entries / (r.ms / 1000))} entries/s (heap +${r.heapMb.toFixed(1)} MB)`,
      );
    }
    if (runs.some((r) => r.agents !== entries - deletes)) {
      console.log(`UNEXPECTED: expected ${entries - deletes} agents`);
      process.exitCode = 1;
    }
  } finally {
    client.close();
    await node.stop();
  }
}

