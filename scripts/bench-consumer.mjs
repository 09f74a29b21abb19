#!/usr/bin/env node
/**
 * consumer: what `hcs25 scores` costs a reader of a large topic. The emulator's topic holds SIGNALS signals about
 * SUBJECTS subjects, published as `hcs25 run` publishes them (its default packing). A fresh process reads it from the mirror
 * REST API, validates and scores it (scoreSignals); another fetches and JSON-parses the same pages and does nothing
 * else — the floor any reader pays, measured in the same run. Goals: scoring ≤ 1.5× that floor, peak RSS of the
 * scoring process ≤ 1 GB.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as bench from './lib/bench.mjs';

const HELP = `npm run bench -- consumer [--signals N] [--subjects N] [--quick]
  --signals   signals on the topic (default 1000000; --quick 10000); a multiple of --subjects
  --subjects  agents they are about (default 250000; --quick 2500)`;
const opts = bench.options({ signals: 1_000_000, subjects: 250_000 }, { signals: 10_000, subjects: 2500 });
const MAX_RATIO = 1.5;
const MAX_RSS_MB = 1024;

if (opts.help) console.log(HELP);
else if (opts.child) await child();
else await parent();

async function parent() {
  if (opts.signals % opts.subjects !== 0) throw new Error('--signals must be a multiple of --subjects');
  bench.header(
    'consumer',
    `${bench.fmt(opts.signals)} signals over ${bench.fmt(opts.subjects)} subjects: ` +
      'read from the mirror REST API, validated, scored',
  );
  const { createTopic } = await import('hcs25');
  const emu = await bench.startEmulator();
  const stateDir = mkdtempSync(join(tmpdir(), 'hcs25-bench-consumer-'));
  try {
    const env = bench.emulatorEnv(emu);
    const client = await bench.hcs25Client(env, stateDir, { concurrency: 1000 });
    const topic = (await createTopic(client)).topicId;
    const fillStart = performance.now();
    const published = await bench.fillSignalTopic(client, topic, opts.subjects, opts.signals / opts.subjects);
    await client.close();
    console.log(
      `  topic ${topic}: ${bench.fmt(published)} signals published ` +
        `in ${bench.secs(performance.now() - fillStart)} (not timed)`,
    );

    const job = { env, topic, stateDir, publisher: emu.operator.accountId };
    const pages = await inChild('pages', job);
    const scores = await inChild('scores', job);
    console.log(
      `  fetch and parse only: ${bench.fmt(pages.messages)} messages in ${bench.fmt(pages.pages)} pages, ` +
        bench.secs(pages.ms, 2),
    );
    console.log(
      `  read, validate and score: ${bench.fmt(scores.signals)} signals, ` +
        `${bench.fmt(scores.subjects)} subjects scored, ` +
        `${scores.rejected} rejected, ${bench.secs(scores.ms, 2)} = ` +
        `${bench.fmt(scores.signals / (scores.ms / 1000))} signals/s`,
    );
    const ratio = scores.ms / pages.ms;
    bench.verdict(
      'consumer read and score vs fetch and parse',
      `${ratio.toFixed(2)}× (${(scores.ms / 1000).toFixed(2)} s / ${(pages.ms / 1000).toFixed(2)} s)`,
      `≤ ${MAX_RATIO}×`,
      ratio <= MAX_RATIO,
    );
    bench.verdict(
      'consumer peak RSS',
      `${Math.round(scores.maxRssKb / 1024)} MB`,
      `≤ ${MAX_RSS_MB} MB`,
      scores.maxRssKb / 1024 <= MAX_RSS_MB,
    );
    bench.verdict(
      'consumer signals read',
      `${bench.fmt(scores.signals)} of ${bench.fmt(opts.signals)}, ${bench.fmt(scores.subjects)} subjects`,
      'all',
      scores.signals === opts.signals && scores.subjects === opts.subjects,
    );
  } finally {
    await emu.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  bench.finish();
}

/** Runs one measurement in a fresh process, so each has its own heap and peak RSS. */
async function inChild(mode, job) {
  const proc = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--child'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    proc.once('message', resolve);
    proc.once('exit', (code) => reject(new Error(`the ${mode} process exited ${code}`)));
    proc.send({ mode, ...job });
  });
}

async function child() {
  const job = await new Promise((resolve) => process.once('message', resolve));
  const result = job.mode === 'pages' ? await fetchPages(job) : await score(job);
  process.send({ ...result, maxRssKb: process.resourceUsage().maxRSS });
  process.exit(0);
}

/** Every page of the topic as a reader asks for it (100 messages, the next requested while this one is parsed). */
async function fetchPages({ env, topic }) {
  const base = env.HCS25_MIRROR_REST_URL;
  const get = async (path) => JSON.parse(await (await fetch(new URL(path, base))).text());
  const t0 = performance.now();
  let pages = 0;
  let messages = 0;
  let pending = get(`/api/v1/topics/${topic}/messages?limit=100&order=asc`);
  while (pending) {
    const page = await pending;
    pending = page.links?.next && page.messages.length > 0 ? get(page.links.next) : null;
    pages++;
    messages += page.messages.length;
  }
  return { ms: performance.now() - t0, pages, messages };
}

async function score({ env, topic, stateDir, publisher }) {
  const { scoreSignals } = await import('hcs25');
  const client = await bench.hcs25Client(env, stateDir);
  const t0 = performance.now();
  const { report, rejected } = await scoreSignals(client, { topic, publishers: [publisher] });
  const ms = performance.now() - t0;
  await client.close();
  return { ms, signals: report.counts.signals, subjects: report.counts.subjects, rejected };
}
