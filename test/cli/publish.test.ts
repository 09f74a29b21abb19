/** `hcs25 topic create`, `hcs25 run --dry-run`, `hcs25 run` and `hcs25 reveal`, in-process, as a user sets them up. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { readJournal } from '../../src/publish/journal.js';
import type { RunReport } from '../../src/publish/report.js';
import { questionHash, responseHashV2 } from '../../src/format/hashing.js';
import { readMessage } from '../../src/format/read.js';
import { type SignalMessageV2, revealMessageV2Schema } from '../../src/format/schema-v2.js';
import { journalResponses } from '../../src/verify/journal.js';
import { verifySignals } from '../../src/verify/signals.js';
import { readTopic, startHarness, tempDir, type Harness } from '../publish/helpers.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';
import { register as registerTopic } from '../../src/cli/topic.js';
import { register as registerRun } from '../../src/cli/run.js';
import { register as registerReveal } from '../../src/cli/reveal.js';

let h: Harness;
let fleet: AgentFleet;
const tmp = tempDir();
let agentsFile: string;
let restoreEnv: () => void = () => undefined;

beforeAll(async () => {
  h = await startHarness();
  fleet = await startAgentFleet({ include: ['perfect', 'wrong', 'plain-http'] });
  agentsFile = join(tmp.dir, 'agents.json');
  writeFileSync(agentsFile, JSON.stringify(fleet.agents));
  // The `local` network: the sample agents listen on 127.0.0.1.
  restoreEnv = useEmulatorEnv(h.node, tmp.dir, { HCS25_NETWORK: 'local' });
});
afterAll(async () => {
  restoreEnv();
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

const cli = (args: string[]) => runCli([registerTopic, registerRun, registerReveal], args);
const secret = () => h.node.operator.privateKey.slice(-64);

describe('hcs25 topic create', () => {
  it('creates a format-3 signal topic whose memo names its schema file, and prints its id', async () => {
    const r = await cli(['topic', 'create']);
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim();
    expect(id).toMatch(/^0\.0\.\d+$/);
    const topic = await h.mirror.getTopic(id);
    expect(topic?.memo).toMatch(/^hcs25-tool\/3 hcs:\/\/1\/0\.0\.\d+$/);
    expect(topic?.submit_key ?? null).toBeNull();
  });

  it('--submit-key-operator --json sets the operator key as submit key, and --memo is used', async () => {
    const r = await cli(['--json', 'topic', 'create', '--submit-key-operator', '--memo', 'hcs-25:0:3600']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { topicId: string; memo: string; submitKey: string };
    expect(out.memo).toBe('hcs-25:0:3600');
    const topic = await h.mirror.getTopic(out.topicId);
    expect(topic?.submit_key?.key).toBeTruthy();
    expect(out.submitKey.toLowerCase()).toContain(topic!.submit_key!.key.toLowerCase());
    expect(r.stdout + r.stderr).not.toContain(secret());
  });

  it('refuses a submit key that is not a public key', async () => {
    const r = await cli(['topic', 'create', '--submit-key', 'not-a-key']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--submit-key is not a public key/);
  });
});

describe('hcs25 run and reveal', () => {
  let topic: string;

  it('--dry-run lists every message with its op, size, signals, subjects and estimated fee, the first in full (zlib decoded), and submits nothing', async () => {
    topic = (await cli(['topic', 'create'])).stdout.trim();
    const dry = (pack: string) =>
      cli([
        'run',
        '--agents',
        agentsFile,
        '--topic',
        topic,
        '--dry-run',
        '--state-dir',
        join(tmp.dir, 'dry'),
        '--evals',
        'math,availability',
        '--pack',
        pack,
      ]);
    const line = /^message (\d+): op (zlib \()?signals\)?, (\d+) B, (\d+) signal\(s\), ~(\S+) ℏ: (.+)$/;
    for (const pack of ['json', 'dense', 'none']) {
      const r = await dry(pack);
      expect(r.code, r.stderr).toBe(0);
      const out = r.stdout.split('\n');
      const lines = out.flatMap((l) => {
        const m = line.exec(l);
        return m
          ? [{ bytes: Number(m[3]), zlib: m[2] !== undefined, signals: Number(m[4]), subjects: m[6]!.split(', ') }]
          : [];
      });
      expect(lines.reduce((n, l) => n + l.signals, 0)).toBe(fleet.agents.length * 2);
      expect(lines).toHaveLength(pack === 'none' ? fleet.agents.length * 2 : 1);
      for (const l of lines) {
        expect(l.bytes).toBeLessThanOrEqual(1024);
        expect(l.zlib).toBe(pack === 'dense');
        // Subjects by their native id (host:port), whole.
        for (const subject of l.subjects) expect(subject).toMatch(/^127\.0\.0\.1:\d+$/);
      }
      // The first message in full, indented, one field per line: its JSON (an op "zlib" message inflated).
      const first = out.indexOf(out.find((l) => /as it would read on the ledger/.test(l))!);
      const body: string[] = [];
      for (const l of out.slice(first + 1)) {
        if (!l.startsWith('  ')) break;
        body.push(l.slice(2));
      }
      expect(body.length).toBeGreaterThan(10);
      const preview = body.join('\n');
      expect(JSON.parse(preview)).toMatchObject({ fmt: 'hcs25-tool/3', op: 'signals' });
      const read = readMessage(JSON.stringify(JSON.parse(preview)), { encoding: 'utf8' });
      expect(read.ok && read.items.filter((i) => i.kind === 'signal')).toHaveLength(lines[0]!.signals);
      if (!lines[0]!.zlib) expect(lines[0]!.bytes).toBe(Buffer.byteLength(JSON.stringify(JSON.parse(preview))));
      expect(r.stdout).toMatch(/signals built\s+6 \(nothing submitted\)/);
      expect(r.stdout).toMatch(
        new RegExp(
          `messages \\(estimated\\)\\s+${lines.length}, \\d+ B \\(max \\d+ B\\), [\\d.]+ signals per message, ${(lines.length / fleet.agents.length).toFixed(3).replace(/\.?0+$/, '')} per agent`,
        ),
      );
    }
    expect(await readTopic(h.mirror, topic, 0, 0)).toHaveLength(0);
  });

  it('run publishes and prints a summary; --json lists every signal with its sequence number and index', async () => {
    const r = await cli([
      '--json',
      'run',
      '--agents',
      agentsFile,
      '--topic',
      topic,
      '--state-dir',
      join(tmp.dir, 'state'),
      '--seed',
      'cli',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as RunReport;
    expect(report.status).toBe('complete');
    // Nine signals of three agents in readable format-3 messages (json, the default): whole subjects per message.
    expect(report.messages).toMatchObject({ count: 2 });
    expect(report.list).toHaveLength(9);
    const bySubject = new Map<string, Set<number>>();
    for (const l of report.list) bySubject.set(l.subject, (bySubject.get(l.subject) ?? new Set()).add(l.seq!));
    expect([...bySubject.values()].every((seqs) => seqs.size === 1)).toBe(true);
    const places = report.list.map((l) => `${l.seq}.${l.index}`);
    expect(new Set(places).size).toBe(9);
    // The forecast is what the emulator charges: messages × the per-message estimate, to the tinybar.
    expect(BigInt(report.fees.spentTinybar)).toBe(
      BigInt(report.messages.count) * BigInt(report.fees.estimatePerMessageTinybar),
    );
    expect(r.stdout + r.stderr).not.toContain(secret());

    const text = await cli([
      'run',
      '--agents',
      agentsFile,
      '--topic',
      topic,
      '--state-dir',
      join(tmp.dir, 'state2'),
      '--evals',
      'availability',
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/signals published\s+3\/3/);
    expect(text.stdout).toMatch(/messages\s+1, \d+ B \(max \d+ B\), 3 signals per message, 0\.333 per agent/);
    expect(text.stdout).toMatch(/fees\s+0\.\d+ ℏ \(≈0\.\d+ ℏ per message/);
  });

  it('reveal refuses an unfinished run, publishes the key once, and the key reproduces the question hashes', async () => {
    const stateDir = join(tmp.dir, 'state');
    const runs = (await import('node:fs')).readdirSync(join(stateDir, 'runs'));
    const run = runs.find((f) => f.endsWith('.jsonl'))!.replace('.jsonl', '');

    const r = await cli(['--json', 'reveal', '--run', run, '--state-dir', stateDir]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { topic: string; seq: number; already: boolean };
    expect(out).toMatchObject({ topic, already: false });
    const again = JSON.parse((await cli(['--json', 'reveal', '--run', run, '--state-dir', stateDir])).stdout) as {
      seq: number;
      already: boolean;
    };
    expect(again).toMatchObject({ seq: out.seq, already: true });

    const messages = await readTopic(h.mirror, topic, out.seq);
    const reveals = messages.filter((m) => m.message.toString('utf8').includes('"op":"reveal"'));
    expect(reveals).toHaveLength(1);
    const reveal = JSON.parse(reveals[0]!.message.toString('utf8')) as { fmt: string; run: string; key: string };
    expect(reveal).toMatchObject({ fmt: 'hcs25-tool/3', op: 'reveal', run });
    const key = Buffer.from(reveal.key, 'base64url');
    const { state } = await readJournal(join(stateDir, 'runs', `${run}.jsonl`));
    for (const s of state.signals.values()) {
      const r2 = s.result as { questionId?: string };
      if (!r2.questionId) continue;
      const published = JSON.parse(s.message!.json) as { subjects: { sig: { q: string }[] }[] };
      expect(`hs256:${published.subjects[0]!.sig[0]!.q}`).toBe(questionHash(key, r2.questionId));
    }

    // Everything a consumer reads from the topic checks against the reveal, including the journal's raw responses.
    const all = (await readTopic(h.mirror, topic, out.seq)).map((m) => readMessage(m.message));
    const signals = all.flatMap((m) =>
      m.ok ? m.items.flatMap((i) => (i.kind === 'signal' ? [i.message as SignalMessageV2] : [])) : [],
    );
    const verified = verifySignals({
      signals,
      // The reveal's fields in the shape this verifier reads (a format-3 reveal carries the v2 reveal's fields).
      reveals: [revealMessageV2Schema.parse({ ...reveal, fmt: undefined, p: 'hcs-25', v: 2 })],
      responseOf: journalResponses(state),
      // v2 response hashes are keyed by the run key.
      keyedResponseHash: (k, s, response) => responseHashV2(k, s.signal, s.subject, response),
    });
    expect(verified.counts).toMatchObject({ mismatch: 0, equivocation: 0 });
    // Probes cannot be re-derived; the graded evals are.
    const evals = verified.signals.filter((v) => v.kind !== 'probe');
    expect(evals).toHaveLength(6);
    expect(verified.signals.filter((v) => v.kind === 'probe').every((v) => v.verdict === 'not-checkable')).toBe(true);
    expect(evals.some((v) => v.verdict === 're-derived')).toBe(true);
    expect(new Set(evals.map((v) => v.kind))).toEqual(new Set(['math', 'science']));
    // Format 3 writes a response hash only for a reply that was not exactly its answer: each one is checked.
    const hashed = signals.filter((x) => 'responseHash' in x.data && x.data.responseHash !== undefined).length;
    expect(verified.signals.filter((v) => v.responseChecked)).toHaveLength(hashed);

    // A run that stopped is not revealed without --force.
    writeFileSync(
      join(stateDir, 'runs', `${run}.jsonl`),
      `${(await import('node:fs')).readFileSync(join(stateDir, 'runs', `${run}.jsonl`), 'utf8')}{"t":"resume","at":"x"}\n`,
    );
    const refused = await cli(['reveal', '--run', run, '--state-dir', stateDir, '--topic', '0.0.999']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/has not finished publishing/);
  });
});
