#!/usr/bin/env node
/**
 * Where pure scoring's time goes: the bench's "pure" scenario (computeScores over 300,000 ReadSignals about 1,000
 * subjects, made as bench-scoring.mjs makes them) under the V8 CPU profiler, which is started after the signals are
 * made, so only the scoring is sampled. Prints self time per function, highest first. Run after the build.
 * Usage: node scripts/profile-pure-scoring.mjs [runs (default 10)] [--out file.cpuprofile]
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { Session } from 'node:inspector/promises';
import { DIST } from './lib/emulator.mjs';
import { readSignalBatches } from './lib/signal-bodies.mjs';

const SIGNALS = 300_000;
const SUBJECTS = 1000;
const runs = Number(process.argv[2] ?? 10);
const outAt = process.argv.indexOf('--out');

const { computeScores } = await import(DIST('consumer/scores.js'));
const { DEFAULT_SCORING_CONFIG } = await import(DIST('consumer/scoring-config.js'));
const now = new Date(Date.now() + 60_000);
const options = { now, publishers: ['0.0.2'], topic: '0.0.1001', rejected: {} };

const { consensusMs } = await import(DIST('consumer/time.js'));
// As the reader yields them (with the consensus time parsed), as the bench's goal row takes them.
const signals = [...readSignalBatches(SIGNALS, SUBJECTS, SIGNALS, consensusMs)].flat();
// Warm up outside the profile, as the bench's best of 3 effectively does.
computeScores(signals, DEFAULT_SCORING_CONFIG, options);

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const c0 = process.cpuUsage();
for (let i = 0; i < runs; i++) computeScores(signals, DEFAULT_SCORING_CONFIG, options);
const { user, system } = process.cpuUsage(c0);
const { profile } = await session.post('Profiler.stop');
session.disconnect();
if (outAt > 0) writeFileSync(process.argv[outAt + 1], JSON.stringify(profile));

// Samples by function and by source line (of the build), the profiler's idle and this script's own frames aside.
const self = new Map();
const lines = new Map();
let total = 0;
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  if (url === import.meta.url || ['(idle)', '(program)', '(root)'].includes(functionName)) continue;
  const where = url.split('/').slice(-2).join('/');
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + node.hitCount);
  total += node.hitCount;
  for (const { line, ticks } of node.positionTicks ?? []) lines.set(`${where}:${line} ${functionName}`, (lines.get(`${where}:${line} ${functionName}`) ?? 0) + ticks);
}
const cpuPerSignal = (user + system) / (runs * SIGNALS);
const share = (hits) => `${((100 * hits) / total).toFixed(1).padStart(5)}% ≈ ${((cpuPerSignal * hits) / total).toFixed(3)} µs/signal`;
console.log(`${runs} runs, CPU ${((user + system) / runs / 1000).toFixed(0)} ms a run = ${cpuPerSignal.toFixed(3)} µs/signal; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('self time by function (sampled):');
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${share(hits)}  ${key}`);
console.log('self time by line of dist/ (sampled):');
for (const [key, hits] of [...lines].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${share(hits)}  ${key}`);
