import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@hashgraph/sdk';
import { ulid } from 'ulid';
import { localNetwork } from '../../src/config/networks.js';
import { Secret } from '../../src/config/secret.js';
import { loadConfig, type ResolvedConfig } from '../../src/config/load.js';
import { createClient, parsePrivateKey } from '../../src/hedera/client.js';
import { MirrorRestClient, type TopicMessage } from '../../src/hedera/mirror-rest.js';
import { startLocalNode, type LocalNode, type LocalNodeOptions } from '../../src/localnode/index.js';
import { Journal } from '../../src/publish/journal.js';
import { operatorSigner } from '../../src/publish/signer.js';
import { Submitter, type SubmitterOptions } from '../../src/publish/submitter.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { TRANSACTION_MEMOS } from '../../src/format/protocol.js';
import type { Agent } from '../../src/core/agent.js';
import { runSignals, type RunSignalsParameters } from '../../src/publish/run-signals.js';
import { createHcs25Client } from '../../src/client.js';
import type { RunReport } from '../../src/publish/report.js';
import { collectTopicSignals, type CollectedSignals } from '../../src/read/reader.js';

export interface Harness {
  node: LocalNode;
  config: Pick<ResolvedConfig, 'network' | 'operator'>;
  client: Client;
  mirror: MirrorRestClient;
  signer: ReturnType<typeof operatorSigner>;
  close(): Promise<void>;
}

/** An emulator on ephemeral ports (`nodes` consensus nodes, default 1) and a client made by the project's own client factory. */
export async function startHarness(
  options: Pick<LocalNodeOptions, 'mirrorLagMs' | 'consensusDelayMs' | 'nodes' | 'ports'> = {},
): Promise<Harness> {
  const node = await startLocalNode({
    ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 },
    quiet: true,
    accounts: 2,
    ...options,
  });
  const config = {
    network: { ...localNetwork('127.0.0.1', node.ports), nodes: node.network },
    operator: {
      accountId: node.operator.accountId,
      privateKey: new Secret(node.operator.privateKey),
      keyType: 'der' as const,
    },
  };
  const client = createClient(config, { grpcDeadlineMs: 3_000, requestTimeoutMs: 20_000 });
  // The tests' own SDK calls (no explicit node list) would otherwise find no node for 8 s after an injected fault:
  // the SDK does not readmit nodes within its node min readmit period. The publisher sets node lists explicitly.
  client.setNodeMinReadmitPeriod(0);
  const mirror = new MirrorRestClient({ baseUrl: node.mirrorRestUrl, retries: 2, minBackoffMs: 50 });
  const signer = operatorSigner(parsePrivateKey(config.operator));
  return {
    node,
    config,
    client,
    mirror,
    signer,
    async close() {
      client.close();
      await mirror.close();
      await node.stop();
    },
  };
}

/** Configuration as a user would give it, pointing at the harness's emulator (network local, its ports). */
export function emulatorConfig(h: Harness, cwd: string, flags: Record<string, unknown>): ResolvedConfig {
  return loadConfig({
    cwd,
    env: {
      HCS25_NETWORK: 'local',
      HCS25_NODES: `127.0.0.1:${h.node.ports.consensus}=0.0.3`,
      HCS25_MIRROR_GRPC: `127.0.0.1:${h.node.ports.mirrorGrpc}`,
      HCS25_MIRROR_REST_URL: h.node.mirrorRestUrl,
    },
    flags,
  });
}

export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'hcs25-pub-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const TEST_AGENT: Agent = {
  subject: 'uaid:aid:test;uid=0;proto=http;nativeId=127.0.0.1',
  name: 'test',
  protocol: 'http',
  endpoint: 'http://127.0.0.1:1/',
};

/** A journal with a start record and one result record per key, as a run would have before submitting. */
export async function journalWith(stateDir: string, keys: string[], topic = '0.0.1001'): Promise<Journal> {
  const journal = await Journal.create(stateDir, {
    run: ulid(),
    seed: 'test',
    runKey: Buffer.alloc(32, 7).toString('base64url'),
    topic,
    config: {
      network: 'local',
      evals: ['availability'],
      concurrency: 1,
      budgetMs: 1000,
      maxFeeHbar: 5,
      keepResponses: true,
    },
    agents: [TEST_AGENT],
  });
  for (const key of keys) {
    journal.append({
      t: 'result',
      key,
      result: {
        kind: 'availability',
        agent: TEST_AGENT,
        reachable: true,
        latencyMs: 1,
        transport: 'http',
        fetchedAt: new Date().toISOString(),
      },
      message: { json: messageFor(key), bytes: Buffer.byteLength(messageFor(key)) },
    });
  }
  await journal.flush();
  return journal;
}

/**
 * A new topic, a journal holding `n` results keyed `<prefix>-<i>`, and a Submitter for them on the harness (backoff
 * above the client's node backoff, ≤ 1 s, so a quarantined single node is back before attempts run out).
 */
export async function submitterSetup(
  h: Harness,
  stateDir: string,
  n: number,
  prefix: string,
  extra: Partial<SubmitterOptions> = {},
) {
  const { topicId } = await createSignalTopic(h.client);
  const keys = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const journal = await journalWith(stateDir, keys, topicId);
  const submitter = new Submitter({
    client: h.client,
    signer: h.signer,
    operatorId: h.node.operator.accountId,
    topicId,
    journal,
    memo: TRANSACTION_MEMOS.signal,
    mirror: h.mirror,
    minBackoffMs: 100,
    maxBackoffMs: 1_000,
    ...extra,
  });
  return { topicId, keys, journal, submitter };
}

export function messageFor(key: string): string {
  return JSON.stringify({ p: 'test', key });
}

/** Every whole message on a topic, waiting until at least `atLeast` are visible (mirror lag). */
export async function readTopic(
  mirror: MirrorRestClient,
  topicId: string,
  atLeast = 0,
  timeoutMs = 15_000,
): Promise<TopicMessage[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const all: TopicMessage[] = [];
    for await (const m of mirror.topicMessages(topicId)) all.push(m);
    if (all.length >= atLeast || Date.now() > deadline) return all;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The signals on a topic as a consumer reads them (v1, v2, packs), waiting until at least `atLeast` distinct ones are
 * visible. `occurrences` counts each (run, signal, subject) the reader kept; `duplicates` counts the copies it dropped
 * (a repeat of a signal already read), so a signal published twice shows.
 */
export async function topicSignals(
  mirror: MirrorRestClient,
  topic: string,
  atLeast = 0,
  timeoutMs = 15_000,
): Promise<CollectedSignals & { occurrences: Map<string, number>; duplicates: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = await collectTopicSignals({ topic, mirror });
    if (read.signals.length >= atLeast || Date.now() > deadline) {
      const occurrences = countBy(read.signals, (s) => `${s.message.run}|${s.message.signal}|${s.message.subject}`);
      return { ...read, occurrences, duplicates: read.rejected.filter((x) => x.reason === 'duplicate').length };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function countBy<T>(items: T[], key: (t: T) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of items) out.set(key(item), (out.get(key(item)) ?? 0) + 1);
  return out;
}

export const CLI_MAIN = new URL('../../dist/cli/main.js', import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`dist/`) against the harness's emulator, configured through the environment only. */
export function spawnCli(
  h: Harness,
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  if (!existsSync(CLI_MAIN))
    throw new Error(`${CLI_MAIN} is missing: these tests run the built CLI; run \`npm run build\` first`);
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HCS25_NETWORK: 'local',
      HCS25_NODES: `127.0.0.1:${h.node.ports.consensus}=0.0.3`,
      HCS25_MIRROR_GRPC: `127.0.0.1:${h.node.ports.mirrorGrpc}`,
      HCS25_MIRROR_REST_URL: h.node.mirrorRestUrl,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on('exit', (code, signal) => setImmediate(() => resolve({ code, signal, stdout, stderr }))),
  );
  return { child, done };
}

/** `runSignals` with an hcs25 client made for `config` (over a prepared SDK client when given) and closed afterwards. */
export async function runWith(
  config: ResolvedConfig,
  parameters: RunSignalsParameters & { client?: Client },
): Promise<RunReport> {
  const { client: sdk, ...rest } = parameters;
  const client = createHcs25Client(config, sdk ? { sdk } : {});
  try {
    return await runSignals(client, rest);
  } finally {
    await client.close();
  }
}
