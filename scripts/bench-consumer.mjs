#!/usr/bin/env node
/**
 * Consumer benchmark (run after the build; `npm run bench` does both).
 * Three processes: the emulator; this one, which fills a signal topic with N valid HCS-25 signals through the SDK;
 * and a fresh reader process, so its time and peak RSS cover only the consumer:
 *  - read: mirror REST paging + chunk assembly + validation + allow-list + dedupe (collectTopicSignals);
 *  - score: computeScores on the signals read (pure; best of 3), reported as signals/s;
 *  - report: JSON, table and HTML rendering of the result.
 * Env: BENCH_CONSUMER_SIGNALS (default 100000), BENCH_CONSUMER_SUBJECTS (default 1000).
 */
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { DIST, fastSigningClient, startEmulator, submitAll } from './lib/emulator.mjs';
import { signalBodies } from './lib/signal-bodies.mjs';

const SIGNALS = Number(process.env.BENCH_CONSUMER_SIGNALS ?? 100_000);
const SUBJECTS = Number(process.env.BENCH_CONSUMER_SUBJECTS ?? 1000);

if (process.argv[2] === '--read') await runReader(JSON.parse(process.argv[3]));
else await main();

async function main() {
  const node = await startEmulator();
  const sdk = await import('@hashgraph/sdk');
  const client = fastSigningClient(sdk, node);
  let code = 0;
  try {
    const topic = (await (await new sdk.TopicCreateTransaction().setTopicMemo('hcs-25:0:86400').execute(client)).getReceipt(client)).topicId.toString();
    const fillStart = performance.now();
    await submitAll(sdk, client, node, topic, signalBodies(SIGNALS, SUBJECTS), SIGNALS);
    const fillMs = performance.now() - fillStart;
    console.log(`topic: ${SIGNALS} signals about ${SUBJECTS} subjects (filled in ${(fillMs / 1000).toFixed(1)} s, ${Math.round(SIGNALS / (fillMs / 1000))} tx/s; not part of the figures below)`);

    const reader = fork(fileURLToPath(import.meta.url), ['--read', JSON.stringify({ topic, mirrorRestUrl: node.mirrorRestUrl, publisher: node.operator.accountId })], { stdio: 'inherit' });
    code = await new Promise((resolve) => reader.once('exit', (c) => resolve(c ?? 1)));
  } finally {
    client.close();
    await node.stop();
  }
  process.exit(code);
}

async function runReader({ topic, mirrorRestUrl, publisher }) {
  const { collectTopicSignals, countReasons } = await import(DIST('consumer/reader.js'));
  const { computeScores } = await import(DIST('consumer/scores.js'));
  const { DEFAULT_SCORING_CONFIG } = await import(DIST('consumer/scoring-config.js'));
  const { renderHtmlReport } = await import(DIST('consumer/html-report.js'));
  const { renderScoreTable } = await import(DIST('consumer/table.js'));
  const { MirrorRestClient } = await import(DIST('hedera/mirror-rest.js'));

  const rssBefore = process.memoryUsage().rss;
  const mirror = new MirrorRestClient({ baseUrl: mirrorRestUrl });
  const readStart = performance.now();
  const read = await collectTopicSignals({ topic, mirror, publishers: [publisher] });
  const readMs = performance.now() - readStart;
  await mirror.close();
  const rssAfterRead = process.memoryUsage().rss;

  const now = new Date(Date.now() + 60_000);
  const runs = [];
  let report;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    report = computeScores(read.signals, DEFAULT_SCORING_CONFIG, { now, publishers: [publisher], topic, rejected: countReasons(read.rejected) });
    runs.push(performance.now() - t0);
  }
  const scoreMs = Math.min(...runs);

  const renderStart = performance.now();
  const json = JSON.stringify(report);
  const table = renderScoreTable(report);
  const html = renderHtmlReport(report, read.signals, { network: 'local' });
  const renderMs = performance.now() - renderStart;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;

  const n = read.signals.length;
  console.log(`read (mirror REST → validate → allow-list → dedupe): ${n} signals, ${read.rejected.length} rejected in ${(readMs / 1000).toFixed(2)} s = ${Math.round(n / (readMs / 1000))} signals/s`);
  console.log(`score (pure, best of 3): ${report.counts.subjects} subjects from ${n} signals in ${scoreMs.toFixed(0)} ms = ${Math.round(n / (scoreMs / 1000))} signals/s`);
  console.log(`render: JSON ${(json.length / 2 ** 20).toFixed(1)} MB, table ${table.split('\n').length} lines, HTML ${(html.length / 2 ** 20).toFixed(1)} MB in ${renderMs.toFixed(0)} ms`);
  console.log(`memory: peak RSS ${peakRssMb.toFixed(0)} MB (start ${(rssBefore / 2 ** 20).toFixed(0)} MB, after read ${(rssAfterRead / 2 ** 20).toFixed(0)} MB)`);
  if (n !== SIGNALS || read.rejected.length !== 0) {
    console.log(`UNEXPECTED: expected ${SIGNALS} signals and no rejections`);
    process.exit(1);
  }
  process.exit(0);
}
