// Shared by the benchmarks: the emulator in its own process (so its CPU is not the benchmark's), and an SDK client
// for it that signs with node:crypto — the SDK's JavaScript ED25519 (~3.5 ms a signature) would otherwise dominate
// the time it takes to fill topics with test data.
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';

export const DIST = (path) => new URL(`../../dist/${path}`, import.meta.url).href;

/** startLocalNodeProcess from the build, on free ports. */
export async function startEmulator(options = {}) {
  const { startLocalNodeProcess } = await import(DIST('localnode/index.js'));
  return startLocalNodeProcess({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true, ...options });
}

/** The `HCS25_*` environment of an hcs25 config for the emulator (network, nodes, mirror, operator). */
export function emulatorEnv(node) {
  return {
    HCS25_NETWORK: 'local',
    HCS25_NODES: `127.0.0.1:${node.ports.consensus}=0.0.3`,
    HCS25_MIRROR_GRPC: `127.0.0.1:${node.ports.mirrorGrpc}`,
    HCS25_MIRROR_REST_URL: node.mirrorRestUrl,
    HCS25_OPERATOR_ID: node.operator.accountId,
    HCS25_OPERATOR_KEY: node.operator.privateKey,
  };
}

/** The emulator process's own CPU time so far, in ms. */
export async function emulatorCpuMs(node) {
  const { cpu } = await node.usage();
  return (cpu.user + cpu.system) / 1000;
}

export function fastSigningClient(sdk, node) {
  // Every consensus node of the emulator (`nodes: n` runs several on one ledger).
  const client = sdk.Client.forNetwork(node.network, { scheduleNetworkUpdate: false });
  client.setMirrorNetwork([`127.0.0.1:${node.ports.mirrorGrpc}`]);
  const key = createPrivateKey({ key: Buffer.from(node.operator.privateKey, 'hex'), format: 'der', type: 'pkcs8' });
  const publicKey = sdk.PrivateKey.fromStringDer(node.operator.privateKey).publicKey;
  client.setOperatorWith(node.operator.accountId, publicKey, async (message) => new Uint8Array(cryptoSign(null, message, key)));
  return client;
}

/** Submits every body with 64 in flight, then waits until the mirror node shows sequence number `upTo`. */
export async function submitAll(sdk, client, node, topicId, bodies, upTo) {
  const it = bodies[Symbol.iterator]();
  const worker = async () => {
    for (let n = it.next(); !n.done; n = it.next()) {
      await new sdk.TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(n.value).execute(client);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  for (let tries = 0; tries < 600; tries++) {
    const res = await fetch(`${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages/${upTo}`);
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sequence number ${upTo} never reached the mirror node`);
}
