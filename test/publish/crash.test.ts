/**
 * Crash test: `hcs25 run` (the built CLI, `dist/`) is SIGKILLed in the middle of submission, then
 * `hcs25 run --resume` finishes it; the topic must hold every expected signal exactly once.
 * The emulator runs in this process with a consensus delay, so at the kill some transactions are sent but not yet
 * confirmed — the resume has to resend them under their journaled ids and get DUPLICATE_TRANSACTION, not a copy.
 * With packing on (json, the default), the run and its resumes are killed at random points of packing and submission; every
 * signal must still be on the topic exactly once, as a consumer reads it (packs expanded, duplicates counted).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSolver,
  scienceFacts,
  startAgentFleet,
  startOpenAiAgent,
  type AgentFleet,
  type RunningServer,
} from '../../src/devtools/agents/index.js';
import { loadScienceBank } from '../../src/evaluate/science.js';
import { readJournal, signalReceipt } from '../../src/publish/journal.js';
import type { RunReport } from '../../src/publish/report.js';
import { readMessage, type SignalItem } from '../../src/format/read.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { countBy, readTopic, spawnCli, startHarness, tempDir, topicSignals, type Harness } from './helpers.js';

const EXTRA_AGENTS = 12;

let h: Harness;
let fleet: AgentFleet;
const extra: RunningServer[] = [];
const tmp = tempDir();
let agentsFile: string;
let agentCount: number;

beforeAll(async () => {
  // Receipts arrive 300 ms after a submission: a window in which a kill leaves sent-but-unconfirmed transactions.
  h = await startHarness({ consensusDelayMs: 300, mirrorLagMs: 100 });
  fleet = await startAgentFleet({
    slowMs: 4_000,
    include: ['perfect', 'verbose', 'wrong', 'slow', 'a2a-calc', 'plain-http'],
  });
  const solve = createSolver(scienceFacts(loadScienceBank()));
  const records: unknown[] = [...fleet.agents];
  for (let i = 0; i < EXTRA_AGENTS; i++) {
    const agent = await startOpenAiAgent({ behaviour: 'perfect', solve });
    extra.push(agent);
    records.push({ name: `clone-${i}`, protocol: 'openai', endpoint: agent.origin, model: agent.model });
  }
  agentCount = records.length;
  agentsFile = join(tmp.dir, 'agents.json');
  writeFileSync(agentsFile, JSON.stringify(records));
});

afterAll(async () => {
  await Promise.all(extra.map((a) => a.close()));
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

function hcs25(args: string[]) {
  return spawnCli(h, tmp.dir, args);
}

function submits(): number {
  return Object.entries(h.node.stats().calls)
    .filter(([method]) => method.endsWith('submitMessage'))
    .reduce((n, [, count]) => n + count, 0);
}

function journalLines(stateDir: string): { t: string; key?: string }[] {
  const dir = join(stateDir, 'runs');
  if (!existsSync(dir)) return [];
  const file = readdirSync(dir).find((f) => f.endsWith('.jsonl'));
  if (!file) return [];
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { t: string; key?: string }];
      } catch {
        return [];
      }
    });
}

describe('crash and resume', () => {
  it('SIGKILL mid-submission, then --resume: every expected signal on the topic exactly once', async () => {
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = join(tmp.dir, 'state');
    // One signal per message: many transactions in flight at once, the window this test kills in.
    const args = [
      'run',
      '--agents',
      agentsFile,
      '--topic',
      topic,
      '--state-dir',
      stateDir,
      '--budget-ms',
      '1500',
      '--concurrency',
      '4',
      '--json',
      '--pack',
      'none',
    ];
    const first = hcs25(args);

    // Kill once the node has received several submissions whose receipts are not journaled yet.
    const submitsBefore = submits();
    let killedWith: { tx: number; receipts: number; results: number } | undefined;
    for (;;) {
      const lines = journalLines(stateDir);
      const tx = lines.filter((l) => l.t === 'tx').length;
      const receipts = lines.filter((l) => l.t === 'receipt').length;
      if (tx - receipts >= 3 && submits() - submitsBefore - receipts >= 3) {
        first.child.kill('SIGKILL');
        killedWith = { tx, receipts, results: lines.filter((l) => l.t === 'result').length };
        break;
      }
      if (first.child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const killed = await first.done;
    expect(killedWith, `the run ended before it could be killed: ${killed.stderr}`).toBeDefined();
    expect(killed.signal).toBe('SIGKILL');

    const runId = readdirSync(join(stateDir, 'runs'))
      .find((f) => f.endsWith('.jsonl'))!
      .replace(/\.jsonl$/, '');
    const afterKill = await readJournal(join(stateDir, 'runs', `${runId}.jsonl`));
    expect(afterKill.state.end).toBeUndefined();
    const unconfirmed = [...afterKill.state.packs.values()].filter((p) => p.txIds.length > 0 && !p.receipt);
    expect(unconfirmed.length).toBeGreaterThan(0);
    // Evaluation was not finished either: the resume must evaluate the rest.
    expect(afterKill.state.signals.size).toBeLessThan(agentCount * 3);

    const second = hcs25(['run', '--resume', runId, '--state-dir', stateDir, '--json']);
    const resumed = await second.done;
    expect(resumed.code, resumed.stderr).toBe(0);
    const report = JSON.parse(resumed.stdout) as RunReport;
    expect(report.status).toBe('complete');
    expect(report.resumed).toBe(true);
    expect(report.signals.expected).toBe(agentCount * 3);
    expect(report.signals.published).toBe(agentCount * 3);
    // Transactions the killed process had sent were answered DUPLICATE_TRANSACTION (or found) on resume, not sent twice.
    expect(report.signals.duplicates).toBeGreaterThan(0);

    const onTopic = await readTopic(h.mirror, topic, report.signals.expected);
    expect(onTopic).toHaveLength(agentCount * 3);
    const pairs = countBy(onTopic, (m) => {
      // `--pack none`: one format-3 signal per message.
      const read = readMessage(m.message);
      const items = read.ok ? read.items : [];
      expect(items).toHaveLength(1);
      const s = (items[0] as SignalItem).message;
      expect(s.run).toBe(runId);
      return `${s.signal}|${s.subject}`;
    });
    expect(pairs.size).toBe(agentCount * 3);
    expect([...pairs.values()].every((n) => n === 1)).toBe(true);

    // The journal agrees with the topic: every signal confirmed once, at the sequence number the topic shows.
    const final = await readJournal(join(stateDir, 'runs', `${runId}.jsonl`));
    const seqs = [...final.state.signals.values()].map((s) => signalReceipt(final.state, s)?.seq);
    expect(seqs.every((s) => s !== undefined)).toBe(true);
    expect(new Set(seqs).size).toBe(seqs.length);
    const bySeq = new Map(onTopic.map((m) => [m.sequenceNumber, m.message.toString('utf8')]));
    for (const s of final.state.signals.values())
      expect(bySeq.get(signalReceipt(final.state, s)!.seq)).toBe(s.message!.json);

    // The operator key is in neither process's output nor the journal.
    const secret = h.node.operator.privateKey.slice(-64);
    for (const text of [
      killed.stdout,
      killed.stderr,
      resumed.stdout,
      resumed.stderr,
      readFileSync(join(stateDir, 'runs', `${runId}.jsonl`), 'utf8'),
    ]) {
      expect(text).not.toContain(secret);
    }
    process.stderr.write(
      `crash test: killed at ${killedWith!.tx} tx / ${killedWith!.receipts} receipts / ${killedWith!.results} results; resume confirmed ${report.signals.duplicates} as duplicates\n`,
    );
  });

  it('packing on (json, the default): SIGKILLs at random points of packing and submission, then --resume: every signal exactly once', async () => {
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = join(tmp.dir, 'state-packed');
    const expected = agentCount * 3;
    const kills: string[] = [];
    let runId: string | undefined;
    let args = [
      'run',
      '--agents',
      agentsFile,
      '--topic',
      topic,
      '--state-dir',
      stateDir,
      '--budget-ms',
      '1500',
      '--concurrency',
      '4',
      '--json',
    ];
    // Up to two kills (the run, then its first resume), each once the journal has grown by a random number of
    // records: anywhere from results not yet packed, through packs journaled but not sent, to packs awaiting receipts.
    for (let attempt = 0; attempt < 2; attempt++) {
      const before = journalLines(stateDir).length;
      const target = before + 1 + Math.floor(Math.random() * 40);
      const child = hcs25(args);
      let killedAt: ReturnType<typeof journalLines> | undefined;
      while (child.child.exitCode === null) {
        const lines = journalLines(stateDir);
        if (lines.length >= target) {
          child.child.kill('SIGKILL');
          killedAt = lines;
          break;
        }
        await new Promise((r) => setTimeout(r, 3));
      }
      const ended = await child.done;
      runId ??= readdirSync(join(stateDir, 'runs'))
        .find((f) => f.endsWith('.jsonl'))!
        .replace(/\.jsonl$/, '');
      if (!killedAt) {
        expect(ended.code, ended.stderr).toBe(0);
        break;
      }
      const n = (t: string) => killedAt!.filter((l) => l.t === t).length;
      kills.push(`${n('result')} results/${n('pack')} packs/${n('tx')} tx/${n('receipt')} receipts`);
      args = ['run', '--resume', runId, '--state-dir', stateDir, '--json'];
    }
    expect(kills.length, 'the run ended before it could be killed').toBeGreaterThan(0);

    const last = await hcs25(['run', '--resume', runId!, '--state-dir', stateDir, '--json']).done;
    expect(last.code, last.stderr).toBe(0);
    const report = JSON.parse(last.stdout) as RunReport;
    expect(report.status).toBe('complete');
    expect(report.signals).toMatchObject({ expected, published: expected, unsent: 0 });
    // Packed: far fewer messages than signals.
    expect(report.messages.count).toBeLessThan(expected / 2);

    const read = await topicSignals(h.mirror, topic, expected);
    expect(read.rejected).toEqual([]);
    expect(read.duplicates).toBe(0);
    expect(read.signals).toHaveLength(expected);
    expect(read.occurrences.size).toBe(expected);
    expect([...read.occurrences.values()].every((c) => c === 1)).toBe(true);
    expect(read.signals.every((s) => s.message.run === runId)).toBe(true);
    // Every message on the topic is a journaled pack, and each signal sits at the (sequence, index) the journal says.
    const onTopic = await readTopic(h.mirror, topic, report.messages.count);
    expect(onTopic).toHaveLength(report.messages.count);
    const final = await readJournal(join(stateDir, 'runs', `${runId}.jsonl`));
    const byPlace = new Map(read.signals.map((s) => [`${s.sequenceNumber}.${s.index}`, s.message]));
    for (const s of final.state.signals.values()) {
      const receipt = signalReceipt(final.state, s);
      expect(receipt, s.key).toBeDefined();
      const m = byPlace.get(`${receipt!.seq}.${receipt!.index}`);
      expect(m && `${m.subject}`).toBe(s.result.agent.subject);
    }
    process.stderr.write(
      `crash test (json): killed at ${kills.join('; then ')}; ${report.messages.count} messages for ${expected} signals\n`,
    );
  });
});
