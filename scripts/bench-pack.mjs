#!/usr/bin/env node
// Packed signal messages: 1,000 agents × 3 signals (availability, math, science) with real `buildUaid` UAIDs,
// packed in each mode. Prints messages per agent, bytes per message and the fee per 1,000 agents at $0.0008 a
// message (HCS ConsensusSubmitMessage from 2026), against v1 (one message per signal). Run after build.
import { createHash } from 'node:crypto';
import { buildUaid } from '../dist/registry/uaid.js';
import { buildSignalMessage, buildSignalV2, newRunKey, readMessage, SignalPacker, PACK_MODES } from '../dist/signals/index.js';

const AGENTS = 1000;
const FEE_USD = 0.0008;
const RUN = '01JDX3V9W5Q8K6T2N4M7P1R0ZA';
const runKey = newRunKey();
const PROTOCOLS = ['a2a', 'openai', 'http', 'mcp'];
const DOMAINS = ['example.com', 'agents.dev', 'ai-hub.io', 'cloud-run.app'];
const T0 = Date.parse('2026-11-21T10:00:00.000Z');

const rand = (i, k) => createHash('sha256').update(`${i}:${k}`).digest().readUInt32BE(0);

async function fleet() {
  const results = [];
  for (let i = 0; i < AGENTS; i++) {
    const protocol = PROTOCOLS[i % PROTOCOLS.length];
    const endpoint = `https://agent-${i}.${DOMAINS[i % DOMAINS.length]}`;
    const subject = await buildUaid({ name: `agent-${i}`, protocol, network: 'testnet', endpoint });
    const agent = { subject, name: `agent-${i}`, protocol, endpoint, source: 'hcs://2/0.0.4815162' };
    const at = (dt) => new Date(T0 + i * 1379 + dt).toISOString();
    const common = { agent, transport: protocol, grader: 'first-token@1', compliant: true };
    const [a, b] = [10 + (rand(i, 1) % 90), 10 + (rand(i, 2) % 90)];
    const correct = rand(i, 3) % 4 !== 0;
    const answer = String(correct ? a + b : a + b + 1);
    const letter = 'ABCD'[rand(i, 4) % 4];
    const reachable = rand(i, 5) % 10 !== 0;
    results.push(
      { kind: 'availability', agent, reachable, latencyMs: 40 + (rand(i, 6) % 900), httpStatus: reachable ? 200 : 503, ...(reachable ? {} : { reason: 'server error' }), transport: protocol, fetchedAt: at(0) },
      { ...common, kind: 'math', questionId: `math:add:${a}+${b}`, outcome: correct ? 'correct' : 'wrong', score: correct ? 100 : 0, answer, latencyMs: 300 + (rand(i, 7) % 4000), response: answer, fetchedAt: at(1000 + (rand(i, 8) % 3000)) },
      { ...common, kind: 'science', questionId: `sci:physics:q${rand(i, 9) % 200}`, outcome: 'correct', score: 100, answer: letter, latencyMs: 300 + (rand(i, 10) % 4000), response: letter, fetchedAt: at(2000 + (rand(i, 11) % 3000)) },
    );
  }
  return results;
}

function row(label, sizes, ms, readMs) {
  const n = sizes.length;
  const perAgent = n / AGENTS;
  const avg = sizes.reduce((x, y) => x + y, 0) / n;
  console.log(
    `${label.padEnd(16)} ${String(n).padStart(5)} msgs  ${perAgent.toFixed(3).padStart(6)} msgs/agent  ` +
      `${avg.toFixed(0).padStart(4)} B avg  ${String(Math.max(...sizes)).padStart(4)} B max  ` +
      `${((AGENTS * 3) / n).toFixed(2).padStart(5)} signals/msg  $${(perAgent * 1000 * FEE_USD).toFixed(3).padStart(6)} per 1,000 agents` +
      `${ms === undefined ? '' : `  pack ${ms.toFixed(0)} ms`}${readMs === undefined ? '' : `  read ${((readMs * 1e6) / (AGENTS * 3)).toFixed(0)} ns/signal`}`,
  );
}

/** Parses mirror-style base64 bodies; best of three passes, so JIT warm-up does not count. */
function readAll(bodies) {
  let best = Number.POSITIVE_INFINITY;
  let read = 0;
  for (let pass = 0; pass < 3; pass++) {
    const start = performance.now();
    read = 0;
    for (const body of bodies) {
      const r = readMessage(body);
      if (r.ok) read += r.items.length;
    }
    best = Math.min(best, performance.now() - start);
  }
  return { read, ms: best };
}

const results = await fleet();
const uaidAvg = results.filter((r) => r.kind === 'availability').reduce((n, r) => n + r.agent.subject.length, 0) / AGENTS;
console.log(`bench-pack: ${AGENTS} agents × 3 signals, UAIDs ${uaidAvg.toFixed(0)} characters on average, $${FEE_USD}/message (target ≤ 0.375 msgs/agent, every message ≤ 1024 B)`);
const v1 = results.map((r) => buildSignalMessage(r, { run: RUN, runKey }).json);
row('v1 (today)', v1.map((json) => Buffer.byteLength(json)), undefined, readAll(v1.map((json) => Buffer.from(json).toString('base64'))).ms);
const signals = results.map((r) => buildSignalV2(r, { run: RUN, runKey }).message);
let failed = false;
for (const mode of [...PACK_MODES]) {
  const start = performance.now();
  const packer = new SignalPacker({ mode });
  const messages = [...signals.flatMap((s) => packer.add(s)), ...packer.flush()];
  const ms = performance.now() - start;
  const { read, ms: readMs } = readAll(messages.map((m) => m.bytes.toString('base64')));
  if (read !== signals.length || messages.some((m) => m.bytes.length > 1024)) failed = true;
  row(`v2 --pack ${mode}`, messages.map((m) => m.bytes.length), ms, readMs);
  if (mode === 'dense' && messages.length / AGENTS > 0.375) failed = true;
}
if (failed) {
  console.error('bench-pack: a target was missed (messages/agent, a message over 1024 bytes, or a signal not read back)');
  process.exit(1);
}
