/**
 * `runSignals` end to end on the emulator with the sample agent fleet: an HCS-2 registry is discovered, every agent
 * evaluated, every signal lands on the topic exactly once (format 3, packed json by default), every message validates
 * against schemas/signals-3.schema.json, fits one chunk and carries no raw response; journals begun in v1 or v2
 * finish in v1 or v2. Also: injected BUSY / UNAVAILABLE complete; a foreign submit key stops the run
 * with a clear error and the journal keeps every unsent signal; the operator key appears nowhere.
 */
import { readFileSync } from 'node:fs';
import { KeyList, PrivateKey } from '@hashgraph/sdk';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../../src/config/load.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { createTopic, submitMessage } from '../../src/hedera/tx.js';
import { Journal, readJournal, resultKey, signalReceipt } from '../../src/publish/journal.js';
import { runWith } from './helpers.js';
import type { RunReport } from '../../src/publish/report.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { ulid } from 'ulid';
import { discoverAgents } from '../../src/discover/discover-agents.js';
import { createHcs25Client } from '../../src/client.js';
import { buildSignalMessage } from '../../src/format/write-v1.js';
import { buildSignalV2 } from '../../src/format/write.js';
import { encodeRunKey, newRunKey } from '../../src/format/hashing.js';
import { parseSignalMessage } from '../../src/format/read-v1.js';
import { readMessage } from '../../src/format/read.js';
import { emulatorConfig, readTopic, startHarness, tempDir, topicSignals, type Harness } from './helpers.js';

let h: Harness;
let fleet: AgentFleet;
let registry: string;
const tmp = tempDir();

function configFor(stateDir: string, extra: Record<string, unknown> = {}): ResolvedConfig {
  return emulatorConfig(h, tmp.dir, { stateDir, budgetMs: 1_500, concurrency: 16, ...extra });
}

beforeAll(async () => {
  h = await startHarness({ mirrorLagMs: 150 });
  fleet = await startAgentFleet({
    slowMs: 5_000,
    include: ['perfect', 'verbose', 'wrong', 'slow', 'garbage', 'a2a-calc', 'mcp-tools', 'plain-http'],
  });
  registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
  for (const record of fleet.agents) {
    await submitMessage(
      h.client,
      registry,
      JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify(record) }),
      undefined,
    );
  }
  // The mirror lags consensus: discovery must see the whole registry.
  await readTopic(h.mirror, registry, fleet.agents.length);
});

afterAll(async () => {
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

const ajv = new Ajv2020({ strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const schema = (name: string) =>
  ajv.compile(JSON.parse(readFileSync(new URL(`../../schemas/${name}`, import.meta.url), 'utf8')) as object);
const validateSignals = schema('signals-3.schema.json');

describe('hcs25 run on the emulator', () => {
  let report: RunReport;
  let topic: string;

  it('discovers the registry, evaluates every agent and publishes every signal exactly once', async () => {
    topic = (await createSignalTopic(h.client)).topicId;
    report = await runWith(configFor(`${tmp.dir}/e2e`), { source: { registry }, topic, seed: 'e2e' });
    expect(report.error).toBeUndefined();
    expect(report.status).toBe('complete');
    expect(report.agents).toBe(fleet.agents.length);
    expect(report.evals.total).toBe(fleet.agents.length * 3);
    expect(report.signals).toMatchObject({
      expected: fleet.agents.length * 3,
      published: fleet.agents.length * 3,
      unsent: 0,
      buildErrors: 0,
    });
    expect(BigInt(report.fees.spentTinybar)).toBeGreaterThan(0n);
    expect(report.mirror).toEqual({ confirmed: report.signals.expected, missing: 0, mismatched: 0 });
    const journaled = await readJournal(report.journal!);
    expect(
      [...journaled.state.signals.values()].every((s) =>
        /^\d+\.\d{9}$/.test(signalReceipt(journaled.state, s)?.consensusTimestamp ?? ''),
      ),
    ).toBe(true);

    // Packed: fewer messages than signals, each signal once, at the (sequence, index) the report names.
    expect(report.messages.count).toBeLessThan(report.signals.expected);
    const read = await topicSignals(h.mirror, topic, report.signals.expected);
    expect(read.rejected).toEqual([]);
    expect(read.duplicates).toBe(0);
    expect(read.signals).toHaveLength(report.signals.expected);
    const byPlace = new Map(read.signals.map((s) => [`${s.sequenceNumber}.${s.index}`, s.message]));
    for (const entry of report.list) {
      const m = byPlace.get(`${entry.seq!}.${entry.index!}`);
      expect(m, entry.key).toBeDefined();
      expect(`${m!.signal}|${m!.subject}`).toBe(`${entry.signal}|${entry.subject}`);
      expect(m!.run).toBe(report.run);
    }
    expect([...read.occurrences.values()].every((n) => n === 1)).toBe(true);
    expect(read.occurrences.size).toBe(report.signals.expected);
  });

  it('every signal validates against schemas/, fits one chunk, and carries no raw response or question id', async () => {
    const onTopic = await readTopic(h.mirror, topic, report.messages.count);
    const { state } = await readJournal(report.journal!);
    const secrets: string[] = [];
    for (const sig of state.signals.values()) {
      const r = sig.result as { response?: string | null; questionId?: string };
      if (r.response && r.response.length > 16) secrets.push(r.response);
      if (r.questionId) secrets.push(r.questionId);
    }
    expect(secrets.length).toBeGreaterThan(0);
    expect(onTopic).toHaveLength(report.messages.count);
    for (const m of onTopic) {
      expect(m.message.length).toBeLessThanOrEqual(1024);
      expect(m.chunks).toBe(1);
      const parsed = readMessage(m.message);
      expect(parsed.ok && parsed.items.every((i) => i.kind === 'signal')).toBe(true);
      expect(m.message[0]).toBe(0x7b);
      const text = m.message.toString('utf8');
      const json = JSON.parse(text) as { fmt: string; op: string };
      expect([json.fmt, json.op]).toEqual(['hcs25-tool/3', 'signals']);
      expect(validateSignals(json), JSON.stringify(validateSignals.errors)).toBe(true);
      for (const s of secrets) expect(text.includes(s)).toBe(false);
    }
  });

  it('keeps the run key and the raw responses in the journal only, and never the operator key', async () => {
    const text = readFileSync(report.journal!, 'utf8');
    expect(text).not.toContain(h.node.operator.privateKey);
    expect(text).not.toContain(h.node.operator.privateKey.slice(-64));
    expect(JSON.stringify(report)).not.toContain(h.node.operator.privateKey.slice(-64));
    const { state } = await readJournal(report.journal!);
    expect(state.start.runKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect([...state.signals.values()].some((s) => (s.result as { response?: string | null }).response)).toBe(true);
  });

  it('--no-keep-responses keeps no raw response in the journal', async () => {
    const t = (await createSignalTopic(h.client)).topicId;
    const r = await runWith(configFor(`${tmp.dir}/nokeep`), {
      source: { agents: [] as never[] },
      topic: t,
      keepResponses: false,
    }).catch((e: Error) => e);
    expect(r).toBeInstanceOf(Error); // no agents: refused before a journal is written
    const report2 = await runWith(configFor(`${tmp.dir}/nokeep`), {
      source: { registry },
      topic: t,
      keepResponses: false,
      evals: ['math'],
    });
    expect(report2.status).toBe('complete');
    const { state } = await readJournal(report2.journal!);
    for (const s of state.signals.values()) expect((s.result as { response?: unknown }).response ?? null).toBeNull();
  });

  it('completes through injected BUSY and UNAVAILABLE', async () => {
    const t = (await createSignalTopic(h.client)).topicId;
    h.node.faults.injectPrecheck('submitMessage', 'BUSY', 4);
    h.node.faults.injectGrpcError('submitMessage', 14, 2);
    h.node.faults.injectGrpcError('getTransactionReceipts', 14, 1);
    // The SDK's own BUSY backoff (500 ms doubling to 8 s) is right for a throttled network; the test shortens it.
    h.client.setMaxBackoff(1_000);
    const r = await runWith(configFor(`${tmp.dir}/faults`), {
      source: { registry },
      topic: t,
      evals: ['availability', 'math'],
      client: h.client,
      submitter: { minBackoffMs: 100, maxBackoffMs: 1_000 },
    });
    h.node.faults.clear();
    expect(r.error).toBeUndefined();
    expect(r.status).toBe('complete');
    expect(r.signals.retries).toBeGreaterThan(0);
    const read = await topicSignals(h.mirror, t, r.signals.expected);
    expect(read.signals).toHaveLength(r.signals.expected);
    expect(read.duplicates).toBe(0);
    expect(read.occurrences.size).toBe(r.signals.expected);
  });

  it('rides out a network busy for longer than the SDK retries, saying so; with less patience it stops resumable', async () => {
    const t = (await createSignalTopic(h.client)).topicId;
    // The SDK gives up after two tries: the run's own patience is what carries it through.
    h.client.setMaxAttempts(2);
    h.client.setMinBackoff(100);
    h.client.setMaxBackoff(200);
    const quick = { minBackoffMs: 100, maxBackoffMs: 500 };
    try {
      // Submissions, receipts and balance queries answer BUSY, then submissions UNAVAILABLE: dozens of SDK give-ups.
      h.node.faults.injectPrecheck('submitMessage', 'BUSY', 16);
      h.node.faults.injectGrpcError('submitMessage', 14, 4);
      h.node.faults.injectPrecheck('cryptoGetBalance', 'BUSY', 4);
      h.node.faults.injectPrecheck('getTransactionReceipts', 'BUSY', 4);
      const notes: string[] = [];
      const r = await runWith(configFor(`${tmp.dir}/busy`), {
        source: { registry },
        topic: t,
        evals: ['availability', 'math'],
        client: h.client,
        submitter: quick,
        onNote: (line) => notes.push(line),
      });
      h.node.faults.clear();
      expect(r.error).toBeUndefined();
      expect(r.status).toBe('complete');
      const busy =
        /^network busy or unreachable \(.+\): retrying in [\d.]+ s; the run gives up after 5 min without progress$/;
      expect(notes.filter((n) => busy.test(n)).length).toBeGreaterThan(0);
      const read = await topicSignals(h.mirror, t, r.signals.expected);
      expect(read.signals).toHaveLength(r.signals.expected);
      expect(read.duplicates).toBe(0);

      // Busy for longer than the run's patience: it stops, its journal resumable, and the resume finishes exactly once.
      const t2 = (await createSignalTopic(h.client)).topicId;
      h.node.faults.injectPrecheck('submitMessage', 'BUSY', Number.POSITIVE_INFINITY);
      const config = configFor(`${tmp.dir}/busy-stop`);
      const stopped = await runWith(config, {
        source: { registry },
        topic: t2,
        evals: ['availability', 'math'],
        client: h.client,
        submitter: quick,
        retryForMs: 1_500,
      });
      h.node.faults.clear();
      expect(stopped.status).toBe('stopped');
      expect(String((stopped.error as Error | undefined)?.message)).toMatch(/the network kept failing for \d+ s/);
      const resumed = await runWith(config, { resume: stopped.run, client: h.client, submitter: quick });
      expect(resumed.status).toBe('complete');
      const again = await topicSignals(h.mirror, t2, resumed.signals.expected);
      expect(again.signals).toHaveLength(resumed.signals.expected);
      expect(again.duplicates).toBe(0);
    } finally {
      h.node.faults.clear();
      h.client.setMaxAttempts(10);
      h.client.setMaxBackoff(8_000);
      h.client.setMinBackoff(250);
    }
  }, 120_000);

  it('stops with a clear error on a submit key the operator does not hold; the journal keeps every unsent signal', async () => {
    // A key list: the pre-run check cannot tell whether the operator is in it (a single foreign key is refused
    // before evaluating: test/cli/run-topic-check.test.ts), so the network's INVALID_SIGNATURE stops the run.
    const t = (
      await createSignalTopic(h.client, { submitKey: new KeyList([PrivateKey.generateED25519().publicKey], 1) })
    ).topicId;
    const r = await runWith(configFor(`${tmp.dir}/badkey`), {
      source: { registry },
      topic: t,
      evals: ['availability', 'math'],
    });
    expect(r.status).toBe('stopped');
    expect(r.error?.code).toBe('SUBMIT_INVALID_SIGNATURE');
    expect(r.error?.message).toMatch(/INVALID_SIGNATURE/);
    expect(r.error?.hint).toMatch(/submit key/);
    expect(r.signals.published).toBe(0);
    const { state } = await readJournal(r.journal!);
    expect(state.end?.status).toBe('stopped');
    const unsent = [...state.signals.values()].filter((s) => s.message && !s.receipt);
    // Everything evaluated before the stop is journaled with its built message, ready for --resume.
    expect(unsent.length).toBe(state.signals.size);
    expect(unsent.length).toBeGreaterThan(0);
    expect(r.signals.unsent).toBe(unsent.length);
    expect(await readTopic(h.mirror, t, 0, 0)).toHaveLength(0);
  });

  it('resumes a run journaled before packing (v1): one v1 message per signal, as it began', async () => {
    const t = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/v1`;
    const client = createHcs25Client(configFor(stateDir));
    const agents = (await discoverAgents(client, { registry })).agents.slice(0, 3);
    const run = ulid();
    const runKey = newRunKey();
    // A v1 journal as the previous release wrote it: no pack mode, one agent evaluated and built, nothing sent.
    const config = {
      network: 'local',
      operator: h.node.operator.accountId,
      evals: ['availability'],
      concurrency: 4,
      budgetMs: 1500,
      maxFeeHbar: 5,
      keepResponses: true,
    };
    const journal = await Journal.create(stateDir, {
      run,
      seed: 'v1',
      runKey: encodeRunKey(runKey),
      topic: t,
      config,
      agents,
    });
    const result = {
      kind: 'availability' as const,
      agent: agents[0]!,
      reachable: true,
      latencyMs: 3,
      httpStatus: 200,
      transport: 'http' as const,
      fetchedAt: new Date().toISOString(),
    };
    const v1 = buildSignalMessage(result, { run, runKey });
    journal.append({ t: 'result', key: resultKey(result), result, message: { json: v1.json, bytes: v1.bytes } });
    await journal.close();
    await client.close();

    const r = await runWith(configFor(stateDir), { resume: run });
    expect(r.status).toBe('complete');
    expect(r.signals).toMatchObject({ expected: 3, published: 3 });
    expect(r.messages.count).toBe(3);
    const onTopic = await readTopic(h.mirror, t, 3);
    expect(onTopic).toHaveLength(3);
    for (const m of onTopic) expect(parseSignalMessage(m.message).ok).toBe(true);
    expect(onTopic.some((m) => m.message.toString('utf8') === v1.json)).toBe(true);
  });

  it('resumes a run journaled in v2 (dense): it finishes in v2 dense packs, as it began', async () => {
    const t = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/v2`;
    const client = createHcs25Client(configFor(stateDir));
    const agents = (await discoverAgents(client, { registry })).agents.slice(0, 4);
    const run = ulid();
    const runKey = newRunKey();
    // A v2 journal as the previous release wrote it: pack mode, no format, one result built, nothing sent.
    const config = {
      network: 'local',
      operator: h.node.operator.accountId,
      evals: ['availability', 'math'],
      concurrency: 4,
      budgetMs: 1500,
      maxFeeHbar: 5,
      keepResponses: true,
      pack: 'dense' as const,
    };
    const journal = await Journal.create(stateDir, {
      run,
      seed: 'v2',
      runKey: encodeRunKey(runKey),
      topic: t,
      config,
      agents,
    });
    const result = {
      kind: 'availability' as const,
      agent: agents[0]!,
      reachable: true,
      latencyMs: 3,
      httpStatus: 200,
      transport: 'http' as const,
      fetchedAt: new Date().toISOString(),
    };
    const v2 = buildSignalV2(result, { run, runKey });
    journal.append({ t: 'result', key: resultKey(result), result, message: { json: v2.json, bytes: v2.bytes } });
    await journal.close();
    await client.close();

    const r = await runWith(configFor(stateDir), { resume: run });
    expect(r.status).toBe('complete');
    expect(r.signals).toMatchObject({ expected: 8, published: 8 });
    const onTopic = await readTopic(h.mirror, t, r.messages.count);
    expect(onTopic.length).toBeLessThan(8);
    const read = onTopic.flatMap((m) => {
      // v2 dense: the raw zlib stream, no format-3 envelope.
      expect(m.message[0]).toBe(0x78);
      const parsed = readMessage(m.message);
      if (!parsed.ok) throw new Error(parsed.detail);
      expect(parsed.encoding).toBe('zlib');
      return parsed.items.flatMap((i) => (i.kind === 'signal' ? [i.message] : []));
    });
    expect(read).toHaveLength(8);
    expect(read.every((m) => m.v === 2)).toBe(true);
    expect(read).toContainEqual(v2.message);
    const { state } = await readJournal(r.journal!);
    expect(state.start.config).toMatchObject({ pack: 'dense' });
    expect(state.start.config.format).toBeUndefined();
  });

  it('a new run journals format 3 and its pack mode', async () => {
    const { state } = await readJournal(report.journal!);
    expect(state.start.config).toMatchObject({ pack: 'json', format: 3 });
  });
});
