/**
 * What `hcs25 verify` reports about how a run was published, end to end on the emulator with a registry run: an honest
 * run verifies (exit 0) with verdict counts equal to what was re-derived and its cited registry checked as of its
 * start; a signal submitted after its run's reveal, a subject the cited registry listed only after the run started,
 * and a conflicting copy in a pack are each reported with exit 1; a registry that cannot be read is not checkable.
 */
import { join } from 'node:path';
import { TopicMessageSubmitTransaction } from '@hashgraph/sdk';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHcs25Client } from '../../src/client.js';
import { register as verify } from '../../src/cli/verify.js';
import type { ResolvedConfig } from '../../src/config/load.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { discoverAgents } from '../../src/discover/discover-agents.js';
import { questionFor } from '../../src/evaluate/runner.js';
import type { EvalResult } from '../../src/evaluate/types.js';
import { decodeRunKey } from '../../src/format/hashing.js';
import { SignalPacker } from '../../src/format/pack.js';
import { canonicalSignalId, SIGNAL_IDS_V2, type SignalMessageV2 } from '../../src/format/schema-v2.js';
import { buildSignalV2 } from '../../src/format/write.js';
import { createTopic, submitMessage } from '../../src/hedera/tx.js';
import { journalPath, readJournal } from '../../src/publish/journal.js';
import { revealRun } from '../../src/publish/reveal-run.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { collectTopicSignals } from '../../src/read/reader.js';
import type { ReadSignal } from '../../src/read/types.js';
import type { VerifySignalsReturnType } from '../../src/verify/verify-signals.js';
import { emulatorConfig, readTopic, runWith, startHarness, tempDir, type Harness } from '../publish/helpers.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';

let h: Harness;
let fleet: AgentFleet;
let topic: string;
let registry: string;
let operator: string;
let restoreEnv: () => void;
const tmp = tempDir();
const stateDir = join(tmp.dir, 'state');

const config = (): ResolvedConfig => emulatorConfig(h, tmp.dir, { stateDir, budgetMs: 3_000, concurrency: 8 });
const hcs25 = (args: string[]) => runCli([verify], args);
const readAll = () => collectTopicSignals({ topic, mirror: h.mirror, publishers: [operator] });

async function mirrored(seq: number): Promise<void> {
  for (let tries = 0; (await readAll()).lastSequence! < seq; tries++) {
    if (tries > 200) throw new Error(`sequence ${seq} never reached the mirror node`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function submit(body: string): Promise<number> {
  return (await submitMessage(h.client, topic, body, undefined)).seq;
}

/** Bytes as they are (a zlib pack is not text). */
async function submitBytes(bytes: Uint8Array): Promise<number> {
  const tx = await new TopicMessageSubmitTransaction().setTopicId(topic).setMessage(bytes).execute(h.client);
  return Number((await tx.getReceipt(h.client)).topicSequenceNumber!.toString());
}

async function reveal(run: string): Promise<number> {
  const client = createHcs25Client(config());
  try {
    const { seq } = await revealRun(client, { run });
    await mirrored(seq);
    return seq;
  } finally {
    await client.close();
  }
}

async function verifyJson(args: string[]): Promise<{ code: number; report: VerifySignalsReturnType }> {
  const r = await hcs25(['--json', 'verify', '--topic', topic, '--publisher', operator, ...args]);
  return { code: r.code, report: JSON.parse(r.stdout) as VerifySignalsReturnType };
}

/** What an honest eval signal earns, with its raw response held (the run's journal is in the state dir). */
function expectedVerdict(s: ReadSignal): string {
  if (canonicalSignalId(s.message.signal) === SIGNAL_IDS_V2.availability) return 'not-checkable';
  const { outcome } = s.message.data as { outcome: string };
  if (outcome === 'skipped') return 'not-checkable';
  return ['correct', 'wrong', 'unparseable', 'empty'].includes(outcome) ? 're-derived' : 'commitment-checked';
}

async function journaled(run: string) {
  const { state } = await readJournal(journalPath(stateDir, run));
  const results = [...state.signals.values()].map((s) => s.result);
  return { state, runKey: decodeRunKey(state.start.runKey), results };
}

beforeAll(async () => {
  h = await startHarness();
  operator = h.node.operator.accountId;
  fleet = await startAgentFleet({ include: ['perfect', 'wrong', 'garbage'] });
  registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
  for (const record of fleet.agents) {
    const body = JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify(record) });
    await submitMessage(h.client, registry, body, undefined);
  }
  await readTopic(h.mirror, registry, fleet.agents.length);
  topic = (await createSignalTopic(h.client)).topicId;
  restoreEnv = useEmulatorEnv(h.node, stateDir);
});

afterAll(async () => {
  restoreEnv?.();
  await fleet?.stop();
  await h?.close();
  tmp.cleanup();
});

describe('hcs25 verify: how a run was published', () => {
  let honest = '';

  it('an honest registry run: verdict counts equal what was re-derived, the registry listed every subject (exit 0)', async () => {
    const run = await runWith(config(), {
      source: { registry },
      topic,
      evals: ['availability', 'math', 'science'],
      seed: 'findings',
    });
    expect(run.status).toBe('complete');
    honest = run.run;
    await reveal(honest);

    const { code, report } = await verifyJson(['--run', honest]);
    expect(code).toBe(0);
    const read = (await readAll()).signals.filter((s) => s.message.run === honest);
    expect(read).toHaveLength(fleet.agents.length * 3);
    const expected = { 're-derived': 0, 'commitment-checked': 0, 'not-checkable': 0, mismatch: 0, equivocation: 0 };
    for (const s of read) expected[expectedVerdict(s) as keyof typeof expected]++;
    expect(expected['re-derived']).toBeGreaterThanOrEqual(fleet.agents.length);
    expect(report.counts).toEqual(expected);
    // Each signal's own verdict, not only the totals.
    expect(report.signals.map((v) => v.verdict)).toEqual(read.map(expectedVerdict));
    expect(report.runs[0]!.registries).toEqual([
      {
        run: honest,
        source: `hcs://2/${registry}`,
        asOf: read[0]!.consensusAt,
        cited: fleet.agents.length,
        notListed: [],
      },
    ]);
    const text = await hcs25(['verify', '--topic', topic, '--publisher', operator, '--run', honest]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `registry hcs://2/${registry} as of ${read[0]!.consensusAt}: ${fleet.agents.length} subject(s) cited, 0 not listed`,
    );
  });

  it("a signal submitted after its run's reveal is a mismatch on consensusTimestamp (exit 1)", async () => {
    const run = await runWith(config(), { source: { registry }, topic, evals: ['math'], seed: 'late' });
    expect(run.status).toBe('complete');
    const revealSeq = await reveal(run.run);
    const { runKey, results } = await journaled(run.run);
    const math = results.find((r): r is EvalResult => r.kind === 'math')!;
    // The science signal the run never published, added once its key and seed are public.
    const late = buildSignalV2({ ...math, kind: 'science' }, { run: run.run, runKey }).message;
    const seq = await submit(JSON.stringify(late));
    await mirrored(seq);

    const { code, report } = await verifyJson(['--run', run.run]);
    expect(code).toBe(1);
    const mismatches = report.signals.filter((v) => v.verdict === 'mismatch');
    expect(mismatches.map((v) => [v.sequenceNumber, v.subject, v.field])).toEqual([
      [seq, math.agent.subject, 'consensusTimestamp'],
    ]);
    expect(mismatches[0]!.detail).toMatch(new RegExp(`after the run's reveal \\(sequence ${revealSeq}, `));
    expect(report.runs[0]).toMatchObject({ revealSequence: revealSeq, mismatch: 1 });
  });

  it('a subject the cited registry listed only after the run started is a mismatch on subject (exit 1)', async () => {
    const { state, runKey, results } = await journaled(honest);
    const copy = ulid();
    const evals = results.filter((r): r is EvalResult => r.kind === 'math');
    for (const r of evals) await submit(JSON.stringify(buildSignalV2(r, { run: copy, runKey }).message));
    // The registry lists a new agent only now, after the run's first signal.
    const first = fleet.agents[0] as { endpoint: string };
    // Another name and host: a registry lists one agent per endpoint.
    const record = { ...first, name: 'late-agent', endpoint: first.endpoint.replace('127.0.0.1', 'localhost') };
    const regSeq = (
      await submitMessage(
        h.client,
        registry,
        JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify(record) }),
        undefined,
      )
    ).seq;
    await readTopic(h.mirror, registry, regSeq);
    const client = createHcs25Client(config());
    const now = await discoverAgents(client, { registry }).finally(() => client.close());
    const known = new Set(evals.map((r) => r.agent.subject));
    const newcomer = now.agents.find((a) => !known.has(a.subject))!;
    expect(newcomer).toBeDefined();
    // A signal for it that is right in every other way: its question re-derives and its answer is correct.
    const q = questionFor('math', newcomer.subject, state.start.seed, []);
    const expected = String((q as { expected: number }).expected);
    const forged: EvalResult = {
      ...evals[0]!,
      agent: newcomer,
      questionId: q.id,
      outcome: 'correct',
      score: 100,
      answer: expected,
      compliant: true,
      response: expected,
    };
    const seq = await submit(JSON.stringify(buildSignalV2(forged, { run: copy, runKey }).message));
    const { records } = await readAll();
    const honestReveal = records.find((r) => r.kind === 'reveal' && r.message.run === honest)!;
    await mirrored(await submit(JSON.stringify({ ...honestReveal.message, run: copy })));

    const { code, report } = await verifyJson(['--run', copy]);
    expect(code).toBe(1);
    expect(report.signals.filter((v) => v.verdict === 'mismatch').map((v) => [v.sequenceNumber, v.field])).toEqual([
      [seq, 'subject'],
    ]);
    expect(report.runs[0]!.registries).toEqual([
      expect.objectContaining({
        source: `hcs://2/${registry}`,
        cited: evals.length + 1,
        notListed: [newcomer.subject],
      }),
    ]);
    // Without the registry check the signal itself holds up: the registry as of the run's start is what flags it.
    const blind = await verifyJson(['--run', copy, '--no-registries']);
    expect(blind.code).toBe(0);
    expect(blind.report.signals.find((v) => v.sequenceNumber === seq)!.verdict).toBe('re-derived');
  });

  it('a registry that cannot be read is not checkable for that run, not a mismatch (exit 0)', async () => {
    const { runKey, results } = await journaled(honest);
    const ghost = ulid();
    const math = results.find((r): r is EvalResult => r.kind === 'math')!;
    const cited = { ...math, agent: { ...math.agent, source: 'hcs://2/0.0.999999' } };
    await submit(JSON.stringify(buildSignalV2(cited, { run: ghost, runKey }).message));
    const { records } = await readAll();
    const honestReveal = records.find((r) => r.kind === 'reveal' && r.message.run === honest)!;
    await mirrored(await submit(JSON.stringify({ ...honestReveal.message, run: ghost })));

    const { code, report } = await verifyJson(['--run', ghost]);
    expect(code).toBe(0);
    expect(report.counts.mismatch).toBe(0);
    const [check] = report.runs[0]!.registries;
    expect(check).toMatchObject({ source: 'hcs://2/0.0.999999', cited: 1 });
    expect(check!.notListed).toBeUndefined();
    expect(check!.notCheckable).toMatch(/does not exist/);
  });

  it('a pack repeating signals already read: identical ones are duplicates, one with other content equivocation (exit 1)', async () => {
    const read = (await readAll()).signals.filter((s) => s.message.run === honest && s.message.signal.includes('math'));
    expect(read.length).toBeGreaterThanOrEqual(2);
    const [same, changed] = read as [ReadSignal, ReadSignal];
    const packer = new SignalPacker({ mode: 'dense' });
    const body = changed.message as SignalMessageV2;
    const other = { ...body, data: { ...body.data, latencyMs: body.data.latencyMs + 1 } } as SignalMessageV2;
    const messages = [...[same.message as SignalMessageV2, other].flatMap((m) => packer.add(m)), ...packer.flush()];
    expect(messages).toHaveLength(1);
    const seq = await submitBytes(messages[0]!.bytes);
    await mirrored(seq);

    const { code, report } = await verifyJson(['--run', honest]);
    expect(code).toBe(1);
    expect(report.counts.mismatch).toBe(0);
    expect(report.equivocations).toEqual([
      {
        run: honest,
        signal: changed.message.signal,
        subject: changed.message.subject,
        payer: operator,
        sequenceNumber: seq,
        index: 1,
        firstSequence: changed.sequenceNumber,
      },
    ]);
    expect(report.read.rejected).toMatchObject({ duplicate: 1, conflict: 1 });
  });
});
