// What the benchmarks share: their options, the header and verdict lines docs/performance.md is filled from, the
// emulator (its own process, so its CPU and memory are not the measured process's), and synthetic agents. Only the
// package's public entry points are used (hcs25, hcs25/localnode, hcs25/devtools), through its own name.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';

export const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Parses `--name value` options; each also reads BENCH_<NAME> from the environment. `spec` maps an option to its
 * default (a number, a string or a boolean); `--quick` picks `quick`'s values instead of the defaults.
 */
export function options(spec, quick = {}) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: Object.fromEntries([
      ['quick', { type: 'boolean' }],
      ['help', { type: 'boolean' }],
      ['child', { type: 'boolean' }],
      ...Object.entries(spec).map(([k, v]) => [k, { type: typeof v === 'boolean' ? 'boolean' : 'string' }]),
    ]),
    strict: true,
  });
  const isQuick = values.quick === true || process.env.BENCH_QUICK === '1';
  const out = { quick: isQuick, help: values.help === true, child: values.child === true };
  for (const [k, def] of Object.entries(spec)) {
    const env = process.env[`BENCH_${k.toUpperCase().replaceAll('-', '_')}`];
    const raw = values[k] ?? env ?? (isQuick && k in quick ? quick[k] : def);
    out[k] =
      typeof def === 'number'
        ? Number(raw)
        : typeof def === 'boolean'
          ? raw === true || raw === 'true' || raw === '1'
          : String(raw);
    if (typeof def === 'number' && !Number.isFinite(out[k])) throw new Error(`--${k} must be a number, got ${raw}`);
  }
  return out;
}

/** The first lines of every benchmark: what was measured, on which commit and machine, when. */
export function header(name, description) {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (dirty.trim()) commit += '+changes';
  } catch {
    // Not a git checkout.
  }
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  console.log(`bench ${name}: ${description}`);
  console.log(
    `  commit ${commit}; machine ${availableParallelism()} cores (${cpu}), ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, ${process.platform}; ` +
      `date ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  );
}

const failures = [];

/** One result line: `RESULT <figure> (goal <goal>) PASS|FAIL`. */
export function verdict(label, figure, goal, pass) {
  if (!pass) failures.push(label);
  console.log(`RESULT ${label}: ${figure} (goal ${goal}) ${pass ? 'PASS' : 'FAIL'}`);
}

/** Exits 1 when a verdict failed. */
export function finish() {
  process.exit(failures.length === 0 ? 0 : 1);
}

/** Milliseconds as seconds: `12.3 s`. */
export const secs = (ms, digits = 1) => `${(ms / 1000).toFixed(digits)} s`;
export const mb = (bytes) => `${Math.round(bytes / 2 ** 20)} MB`;
export const fmt = (n) => Math.round(n).toLocaleString('en-US');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The emulator in its own process, on free ports. */
export async function startEmulator(extra = {}) {
  const { startLocalNodeProcess } = await import('hcs25/localnode');
  return startLocalNodeProcess({
    ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 },
    quiet: true,
    accounts: 1,
    ...extra,
  });
}

/** The `HCS25_*` environment of an hcs25 configuration for the emulator. */
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

/** An hcs25 client for the emulator `env` describes (emulatorEnv), its state in `stateDir`. */
export async function hcs25Client(env, stateDir, flags = {}) {
  const { createHcs25Client, loadConfig } = await import('hcs25');
  return createHcs25Client(loadConfig({ cwd: stateDir, env, flags: { stateDir, maxFeeHbar: 10_000, ...flags } }));
}

/** A synthetic agent: its subject is a UAID, its endpoint never resolved (benchmarks inject the transports). */
export function syntheticAgent(i) {
  return {
    subject: `uaid:aid:bench${i};uid=0;registry=hol;proto=a2a;nativeId=agent-${i}.agents.example.com`,
    name: `agent-${i}`,
    protocol: 'a2a',
    endpoint: `https://agent-${i}.agents.example.com`,
  };
}

/** The answer a simulated agent gives: the sum, difference or product a math question asks; `B` to anything else. */
export function answer(prompt) {
  const m = /(\d+) ([+\-×]) (\d+)\?/.exec(prompt);
  if (!m) return 'B';
  const a = Number(m[1]);
  const b = Number(m[3]);
  return String(m[2] === '+' ? a + b : m[2] === '-' ? a - b : a * b);
}

/** Simulated agents that answer at once. */
export function instantTransport(agent) {
  return {
    protocol: agent.protocol,
    canAsk: true,
    ask: async (prompt) => ({ ok: true, text: answer(prompt), latencyMs: 1, meta: {} }),
    probe: async () => ({ reachable: true, latencyMs: 1, httpStatus: 200 }),
  };
}

/**
 * Fills signal topic `topic` as `hcs25 run` publishes (its default packing), through runSignals with agents that answer at
 * once: `perSubject` signals about each of `subjects` agents, in runs of up to three evals.
 */
export async function fillSignalTopic(client, topic, subjects, perSubject) {
  const { runSignals } = await import('hcs25');
  const agents = Array.from({ length: subjects }, (_, i) => syntheticAgent(i));
  const all = ['availability', 'math', 'science'];
  let published = 0;
  for (let left = perSubject, run = 0; left > 0; left -= 3, run++) {
    const evals = all.slice(0, Math.min(3, left));
    const report = await runSignals(client, {
      source: { agents },
      topic,
      evals,
      seed: `bench-fill-${run}`,
      keepResponses: false,
      runner: { transportFactory: instantTransport },
    });
    if (report.status !== 'complete')
      throw new Error(`filling ${topic}: run ${report.status}: ${report.error?.message ?? ''}`);
    published += report.signals.published;
  }
  return published;
}

/**
 * An SDK client for the emulator that signs with node:crypto: the SDK's JavaScript ED25519 would make writing test
 * data (registrations) slower than what is measured. `sdk` is @hashgraph/sdk.
 */
export function fastSigningClient(sdk, node) {
  const client = sdk.Client.forNetwork(node.network, { scheduleNetworkUpdate: false });
  client.setMirrorNetwork([`127.0.0.1:${node.ports.mirrorGrpc}`]);
  const key = createPrivateKey({ key: Buffer.from(node.operator.privateKey, 'hex'), format: 'der', type: 'pkcs8' });
  const publicKey = sdk.PrivateKey.fromStringDer(node.operator.privateKey).publicKey;
  client.setOperatorWith(
    node.operator.accountId,
    publicKey,
    async (message) => new Uint8Array(cryptoSign(null, message, key)),
  );
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
  for (let tries = 0; tries < 1200; tries++) {
    const res = await fetch(`${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages/${upTo}`);
    await res.arrayBuffer();
    if (res.status === 200) return;
    await sleep(50);
  }
  throw new Error(`sequence number ${upTo} never reached the mirror node`);
}

/** An HCS-2 registration of agent `i` (name agent-i). */
export function registration(i) {
  const record = { name: `agent-${i}`, protocol: 'a2a', endpoint: `https://agent-${i}.agents.example.com` };
  return JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify(record) });
}
