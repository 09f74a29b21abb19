/**
 * Packed publishing. Packed and unpacked topics read alike: the same results (one evaluation of the sample agents,
 * one seed) are published in format 3 with `--pack json`, `subject`, `none` and `dense`, and in v2 (as a run journaled
 * in v2 finishes) with `dense`, `subject` and `none`; `hcs25 scores` (the built CLI) scores every topic the same. The
 * flush timer sends a partly filled pack while a slow agent is still out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignals, type BuiltSignal } from '../../src/publish/build-signals.js';
import { writeFileSync } from 'node:fs';
import { discoverAgents } from '../../src/discover/discover-agents.js';
import { evaluateAgents } from '../../src/evaluate/evaluate-agents.js';
import type { Agent } from '../../src/core/agent.js';
import type { AnyEvalResult } from '../../src/evaluate/types.js';
import { publishSignals } from '../../src/publish/publish-signals.js';
import { createHcs25Client, type Hcs25Client } from '../../src/client.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { estimateSubmitFee } from '../../src/publish/fees.js';
import { Journal, readJournal } from '../../src/publish/journal.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { decodeRunKey, encodeRunKey, newRunKey } from '../../src/format/hashing.js';
import type { PackMode } from '../../src/format/pack.js';
import { ulid } from 'ulid';
import { emulatorConfig, readTopic, spawnCli, startHarness, tempDir, type Harness } from './helpers.js';

let h: Harness;
let fleet: AgentFleet;
let client: Hcs25Client;
let agents: Agent[];
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness();
  fleet = await startAgentFleet({ include: ['perfect', 'wrong', 'verbose', 'a2a-calc', 'plain-http'] });
  client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir: tmp.dir, budgetMs: 1_500 }));
  writeFileSync(`${tmp.dir}/agents.json`, JSON.stringify(fleet.agents));
  agents = (await discoverAgents(client, { agentsFile: `${tmp.dir}/agents.json` })).agents;
});
afterAll(async () => {
  await client.close();
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

async function* each<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

/** Publishes the built signals of one run to a new topic in a pack mode; returns the topic and its message count. */
async function publish(
  run: string,
  runKey: string,
  built: BuiltSignal[] | AsyncIterable<BuiltSignal>,
  pack: PackMode,
  options: { flushMs?: number; topic?: string; format?: 2 | 3 } = {},
): Promise<{ topic: string; messages: number; journal: string }> {
  const { flushMs, format = 3 } = options;
  const topic = options.topic ?? (await createSignalTopic(h.client)).topicId;
  const config = {
    network: 'local',
    evals: ['availability', 'math', 'science'],
    concurrency: 4,
    budgetMs: 1500,
    maxFeeHbar: 5,
    keepResponses: true,
    pack,
    ...(format === 3 && { format: 3 as const }),
  };
  // One run id per topic would do as well; the same id shows the topics differ in packing only.
  const journal = await Journal.create(`${tmp.dir}/v${format}-${pack}-${flushMs ?? 'default'}`, {
    run,
    seed: 'same',
    runKey,
    topic,
    config,
    agents,
  });
  const { state } = await readJournal(journal.path);
  const estimate = await estimateSubmitFee('local', client.mirror);
  const signals = Array.isArray(built) ? each(built) : built;
  const published = await publishSignals(client, {
    journal,
    state,
    signals,
    estimateTinybar: estimate.tinybar,
    stop: new AbortController(),
    ...(flushMs !== undefined && { flushMs }),
  });
  expect(published.status).toBe('complete');
  return { topic, messages: state.packs.size, journal: journal.path };
}

describe('hcs25 scores on packed and unpacked topics', () => {
  it('gives the same scores for the same signals whether packed json, dense, by subject or not at all, in format 3 or v2', async () => {
    const run = ulid();
    const runKey = encodeRunKey(newRunKey());
    const results: AnyEvalResult[] = [];
    for await (const r of evaluateAgents(client, {
      agents,
      evals: ['availability', 'math', 'science'],
      seed: 'same',
      budgetMs: 1_500,
    }))
      results.push(r);
    const built = { 3: [] as BuiltSignal[], 2: [] as BuiltSignal[] };
    for (const version of [3, 2] as const) {
      for await (const b of buildSignals(each(results), { run, runKey: decodeRunKey(runKey), version }))
        built[version].push(b);
      expect(built[version].every((b) => b.message)).toBe(true);
    }
    const signals = results.length;

    const now = new Date(Date.now() + 60_000).toISOString();
    const scores: Record<string, unknown> = {};
    const messages: Record<string, number> = {};
    const variants = [
      ...(['json', 'subject', 'none', 'dense'] as const).map((pack) => ({ pack, format: 3 as const })),
      ...(['dense', 'subject', 'none'] as const).map((pack) => ({ pack, format: 2 as const })),
    ];
    for (const { pack, format } of variants) {
      const name = `${pack}${format === 2 ? '-v2' : ''}`;
      const { topic, messages: count } = await publish(run, runKey, built[format], pack, { format });
      messages[name] = count;
      await readTopic(h.mirror, topic, count);
      const r = await spawnCli(h, tmp.dir, ['--json', 'scores', '--topic', topic, '--now', now]).done;
      expect(r.code, r.stderr).toBe(0);
      // Where and when the signals landed (topic, sequence numbers, consensus times) differs; what they score must not.
      scores[name] = JSON.parse(r.stdout.replaceAll(topic, 'TOPIC'), (k, v: unknown) =>
        /^(sequenceNumber|consensus\w*|lastSeq|seq|firstAt|lastAt)$/i.test(k) ? undefined : v,
      );
    }
    for (const v of ['', '-v2']) {
      expect(messages[`none${v}`]).toBe(signals);
      expect(messages[`subject${v}`]).toBe(agents.length);
      expect(messages[`dense${v}`]).toBeLessThan(messages[`subject${v}`]!);
    }
    expect(messages.json).toBeLessThan(messages.subject!);
    for (const name of Object.keys(scores)) expect(scores[name], name).toEqual(scores.none);
    expect(JSON.stringify(scores.none)).toContain('trustScore');
  });

  it('flush timer: a partly filled pack goes out while a slow agent is still being asked, not after it', async () => {
    const run = ulid();
    const runKey = encodeRunKey(newRunKey());
    const results = evaluateAgents(client, {
      agents: agents.slice(0, 2),
      evals: ['availability'],
      seed: 'flush',
      budgetMs: 1_500,
    });
    const built: BuiltSignal[] = [];
    for await (const b of buildSignals(results, { run, runKey: decodeRunKey(runKey) })) built.push(b);
    let resumeSlow: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (resumeSlow = resolve));
    // The first signal, then nothing until its pack is on the topic: only the timer can send it.
    async function* source(): AsyncGenerator<BuiltSignal> {
      yield built[0]!;
      await slow;
      yield built[1]!;
    }
    const topic = (await createSignalTopic(h.client)).topicId;
    const pending = publish(run, runKey, source(), 'dense', { flushMs: 50, topic });
    const first = await readTopic(h.mirror, topic, 1, 10_000);
    expect(first).toHaveLength(1);
    resumeSlow();
    const done = await pending;
    expect(done.messages).toBe(2);
    const { state } = await readJournal(done.journal);
    expect([...state.packs.values()].map((p) => p.signals.length)).toEqual([1, 1]);
  });
});
