#!/usr/bin/env node
// Packed signal messages: 1,000 agents × 3 signals (availability, math, science) with real `buildUaid` UAIDs,
// packed in each mode. Prints messages per agent, bytes per message and the fee per 1,000 agents at $0.0008 a
// message (HCS ConsensusSubmitMessage from 2026), against v1 (one message per signal). Run after build.
import { buildSignalMessage, buildSignalV2, newRunKey, readMessage, SignalPacker, PACK_MODES } from '../dist/signals/index.js';
import { syntheticResults } from './lib/fleet.mjs';

const AGENTS = 1000;
const FEE_USD = 0.0008;
const RUN = '01JDX3V9W5Q8K6T2N4M7P1R0ZA';
const runKey = newRunKey();
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

const results = await syntheticResults(AGENTS);
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
