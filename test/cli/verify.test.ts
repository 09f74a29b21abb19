/**
 * `hcs25 verify` and `hcs25 scores --check-published` end to end on the emulator with the sample fleet: an honest run
 * (math and science, the bundled bank) is re-derived after its reveal (probes not checkable); what a tamperer holding
 * the operator key can really put on the topic is reported as a mismatch naming the field:
 * - a forged signal of a run that reaches the topic before the real one (the real one is then a conflicting copy);
 * - a copy of a revealed run under its own run id and reveal, with one question hash swapped and one answer changed;
 * - a score record whose total does not follow from its explanation.
 * A later identical copy of a real signal is a duplicate, one with another answer equivocation; v2 packs verify like
 * single signals; a private bank's science signals are re-derived with --science-bank only; a run without a reveal is
 * not checkable.
 */
import { writeFileSync } from 'node:fs';
import { deflateSync, inflateSync } from 'node:zlib';
import { TopicMessageSubmitTransaction } from '@hashgraph/sdk';
import { join } from 'node:path';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifySignalsReturnType } from '../../src/verify/verify-signals.js';
import { revealRun } from '../../src/publish/reveal-run.js';
import type { CheckScoresReturnType } from '../../src/verify/check-scores.js';
import { createHcs25Client } from '../../src/client.js';
import { register as scores } from '../../src/cli/scores.js';
import { register as verify } from '../../src/cli/verify.js';
import type { ResolvedConfig } from '../../src/config/load.js';
import { collectTopicSignals } from '../../src/read/reader.js';
import type { ReadSignal } from '../../src/read/types.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { loadScienceBank } from '../../src/evaluate/science.js';
import { submitMessage } from '../../src/hedera/tx.js';
import { journalPath, readJournal } from '../../src/publish/journal.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { buildSignalV2 } from '../../src/format/write.js';
import { decodeRunKey } from '../../src/format/hashing.js';
import { SignalPacker } from '../../src/format/pack.js';
import { canonicalSignalId, SIGNAL_IDS_V2, type PackBody } from '../../src/format/schema-v2.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';
import { emulatorConfig, runWith, startHarness, tempDir, type Harness } from '../publish/helpers.js';

let h: Harness;
let fleet: AgentFleet;
let topic: string;
let operator: string;
let restoreEnv: () => void;
const tmp = tempDir();
const stateDir = join(tmp.dir, 'state');
const agentsFile = join(tmp.dir, 'agents.json');

function config(): ResolvedConfig {
  return emulatorConfig(h, tmp.dir, { stateDir, budgetMs: 3_000, concurrency: 8 });
}

const hcs25 = (args: string[]) => runCli([verify, scores], args);

/** Reveals `run` and waits until the mirror node shows the reveal (a verify reads the topic as a consumer would). */
async function reveal(run: string): Promise<void> {
  const client = createHcs25Client(config());
  try {
    await mirrored((await revealRun(client, { run })).seq);
  } finally {
    await client.close();
  }
}

async function readAll() {
  return collectTopicSignals({ topic, mirror: h.node.mirrorRestUrl, publishers: [operator] });
}

/**
 * Submits a message as the operator: the allow-listed publisher itself. A signal read from a format-3 message is
 * expanded to the v2 single-signal shape (with `v: 3`): it goes back as the v2 single signal it equals.
 */
async function submit(message: unknown): Promise<number> {
  const m = message as { p?: unknown; v?: unknown };
  const body = m.p === 'hcs-25' && m.v === 3 ? { ...m, v: 2 } : message;
  return (await submitMessage(h.client, topic, JSON.stringify(body), undefined)).seq;
}

/** Waits until the mirror node has a message at `seq`. */
async function mirrored(seq: number): Promise<void> {
  for (let tries = 0; ; tries++) {
    const { lastSequence } = await readAll();
    if ((lastSequence ?? 0) >= seq) return;
    if (tries > 200) throw new Error(`sequence ${seq} never reached the mirror node`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function verifyJson(
  args: string[] = [],
): Promise<{ code: number; report: VerifySignalsReturnType; stdout: string }> {
  const r = await hcs25(['--json', 'verify', '--topic', topic, '--publisher', operator, ...args]);
  return { code: r.code, report: JSON.parse(r.stdout) as VerifySignalsReturnType, stdout: r.stdout };
}

const isEval = (s: ReadSignal) => canonicalSignalId(s.message.signal) !== SIGNAL_IDS_V2.availability;

/**
 * The verdicts honest eval signals earn: graded answers re-derived (and any reply re-graded from a response held),
 * skipped evals not checkable, the rest (unparseable without a response, failures) commitment-checked.
 */
function verdictsOf(outcomes: readonly string[], responses: boolean) {
  const counts = { 're-derived': 0, 'commitment-checked': 0, 'not-checkable': 0 };
  for (const o of outcomes) {
    if (o === 'skipped') counts['not-checkable']++;
    else if (o === 'correct' || o === 'wrong' || (responses && (o === 'unparseable' || o === 'empty')))
      counts['re-derived']++;
    else counts['commitment-checked']++;
  }
  return counts;
}
const outcomeOf = (s: ReadSignal) => (s.message.data as { outcome: string }).outcome;
const correctOf = (signals: ReadSignal[], kind: 'math' | 'science') =>
  signals.find(
    (s) =>
      canonicalSignalId(s.message.signal) === SIGNAL_IDS_V2[kind] &&
      (s.message.data as { outcome: string }).outcome === 'correct',
  )!;

beforeAll(async () => {
  h = await startHarness();
  operator = h.node.operator.accountId;
  fleet = await startAgentFleet({
    include: ['perfect', 'verbose', 'wrong', 'garbage', 'a2a-calc', 'mcp-tools', 'plain-http'],
  });
  writeFileSync(agentsFile, JSON.stringify(fleet.agents));
  topic = (await createSignalTopic(h.client)).topicId;
  restoreEnv = useEmulatorEnv(h.node, stateDir);
});

afterAll(async () => {
  restoreEnv?.();
  await fleet?.stop();
  await h?.close();
  tmp.cleanup();
});

describe('hcs25 verify on the emulator', () => {
  let honest = '';
  let honestSignals: ReadSignal[] = [];

  it('an honest run, revealed: its eval signals re-derived (math and science, bundled bank), probes not checkable', async () => {
    const report = await runWith(config(), {
      source: { agentsFile },
      topic,
      evals: ['availability', 'math', 'science'],
      seed: 'verify-e2e',
    });
    expect(report.status).toBe('complete');
    honest = report.run;
    await reveal(honest);

    const { code, report: verified } = await verifyJson(['--run', honest]);
    expect(code).toBe(0);
    const evalSignals = fleet.agents.length * 2;
    const read = (await readAll()).signals.filter((s) => s.message.run === honest && isEval(s));
    expect(read).toHaveLength(evalSignals);
    // Every reply is in the journal: each eval signal is re-derived unless nothing was asked or nothing came back.
    const expected = verdictsOf(read.map(outcomeOf), true);
    expect(expected['re-derived']).toBeGreaterThan(fleet.agents.length);
    expect(verified.counts).toEqual({
      ...expected,
      'not-checkable': expected['not-checkable'] + fleet.agents.length,
      mismatch: 0,
      equivocation: 0,
    });
    expect(verified.runs).toEqual([
      expect.objectContaining({
        run: honest,
        revealed: true,
        ...expected,
        'not-checkable': expected['not-checkable'] + fleet.agents.length,
        mismatch: 0,
        equivocation: 0,
        registries: [],
      }),
    ]);
    expect(verified.signals.filter((s) => s.kind === 'probe').every((s) => s.reason === 'probe')).toBe(true);
    expect(new Set(verified.signals.map((s) => s.kind))).toEqual(new Set(['math', 'science', 'probe']));
    // The run's journal is in the state dir: the raw responses check the response hashes too.
    expect(verified.journals).toEqual([honest]);
    // Format 3 carries a response hash only for a reply that was more than its answer: every one of them is checked.
    const hashed = read.filter((s) => (s.message.data as { responseHash?: string }).responseHash !== undefined);
    expect(hashed.length).toBeGreaterThan(0);
    expect(verified.signals.filter((s) => s.responseChecked)).toHaveLength(hashed.length);
    // Every signal carries where it was read.
    expect(verified.signals.every((s) => s.sequenceNumber! > 0 && s.index !== undefined)).toBe(true);

    const text = await hcs25(['verify', '--topic', topic, '--publisher', operator, '--run', honest]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `run ${honest}  revealed at #\\d+  ${evalSignals + fleet.agents.length} signal\\(s\\): ${expected['re-derived']} re-derived, `,
      ),
    );
    expect(text.stdout).toContain(`not-checkable:\n  run ${honest}  ${fleet.agents.length} signal(s)  probe: `);
    expect(text.stdout).not.toMatch(/\bverified\b/);
    honestSignals = (await readAll()).signals.filter((s) => s.message.run === honest);
  });

  it('a later identical copy of a real signal is a duplicate (exit 0); one with another answer is equivocation (exit 1)', async () => {
    const real = correctOf(honestSignals, 'math');
    await mirrored(await submit(real.message));
    const resent = await verifyJson(['--run', honest]);
    expect(resent.code).toBe(0);
    expect(resent.report.read.rejected).toMatchObject({ duplicate: 1 });
    expect(resent.report.counts.equivocation).toBe(0);

    const seq = await submit({ ...real.message, data: { ...real.message.data, answer: '1' } });
    await mirrored(seq);
    const { code, report } = await verifyJson(['--run', honest]);
    expect(code).toBe(1);
    // The first copy is the one read and verified; the contradicting one is reported, not verified.
    expect(report.counts.mismatch).toBe(0);
    expect(report.read.rejected).toMatchObject({ duplicate: 1, conflict: 1 });
    expect(report.equivocations).toEqual([
      {
        run: honest,
        signal: real.message.signal,
        subject: real.message.subject,
        payer: operator,
        sequenceNumber: seq,
        firstSequence: real.sequenceNumber,
      },
    ]);
    expect(report.runs[0]!.equivocation).toBe(1);
    const text = await hcs25(['verify', '--topic', topic, '--publisher', operator, '--run', honest]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      `  #${seq}[0]  ${real.message.signal}  ${real.message.subject}  payer ${operator}: contradicts #${real.sequenceNumber}`,
    );
  });

  it('a forged signal that reaches the topic before the real one: mismatch on answer, at the forged sequence number', async () => {
    // The run's submissions fail (as if the node refused them) after evaluating: everything is journaled, unsent.
    h.node.faults.injectPrecheck('submitMessage', 'INVALID_TOPIC_ID', 10_000);
    const stopped = await runWith(config(), {
      source: { agentsFile },
      topic,
      evals: ['math', 'science'],
      seed: 'forged-first',
    });
    h.node.faults.clear();
    expect(stopped.status).toBe('stopped');
    const { state } = await readJournal(journalPath(stateDir, stopped.run));
    const perfect = [...state.signals.values()]
      .map((s) => s.result)
      .find((r) => r.kind === 'math' && r.outcome === 'correct')!;
    expect(perfect).toBeDefined();
    // The tamperer holds the operator key (and so the run key): a well-formed signal that says the agent answered 1.
    const forged = buildSignalV2(perfect, { run: stopped.run, runKey: decodeRunKey(state.start.runKey) }).message;
    const forgedSeq = await submit({ ...forged, data: { ...forged.data, answer: '1' } });

    const resumed = await runWith(config(), { resume: stopped.run });
    expect(resumed.status).toBe('complete');
    await reveal(stopped.run);

    const { code, report } = await verifyJson(['--run', stopped.run]);
    expect(code).toBe(1);
    const mismatches = report.signals.filter((s) => s.verdict === 'mismatch');
    expect(mismatches).toHaveLength(1);
    expect(mismatches[0]).toMatchObject({
      sequenceNumber: forgedSeq,
      field: 'answer',
      subject: perfect.agent.subject,
      kind: 'math',
    });
    // With the journal, the answer is checked against the raw response; without it, against the question.
    expect(mismatches[0]!.detail).toMatch(/grading the response gives/);
    const blind = await verifyJson(['--run', stopped.run, '--no-responses']);
    expect(blind.report.signals.find((s) => s.verdict === 'mismatch')).toMatchObject({
      field: 'answer',
      responseChecked: false,
    });
    expect(blind.report.signals.find((s) => s.verdict === 'mismatch')!.detail).toMatch(
      /answer 1 grades wrong, published correct/,
    );
    // The real signal came second, with another answer: the publisher's key contradicted itself.
    expect(report.equivocations).toEqual([
      expect.objectContaining({ run: stopped.run, subject: perfect.agent.subject, firstSequence: forgedSeq }),
    ]);
  });

  it('a copy of a revealed run under its own run id: a swapped question hash and changed answers are mismatches', async () => {
    const { records } = await readAll();
    const honestReveal = records.find((r) => r.kind === 'reveal' && r.message.run === honest)!;
    const copy = ulid();
    const science = correctOf(honestSignals, 'science');
    const math = correctOf(honestSignals, 'math');
    // An answer token that would drive a terminal, claimed correct on a signal that was wrong.
    const hostile = honestSignals.find(
      (s) => s.message.signal === math.message.signal && (s.message.data as { outcome: string }).outcome === 'wrong',
    )!;
    const sequences = new Map<string, number>();
    for (const s of honestSignals.filter(isEval)) {
      let data = s.message.data as Record<string, unknown>;
      // Claims another question was asked: the math question's hash on the science signal.
      if (s === science) data = { ...data, questionHash: (math.message.data as { questionHash: string }).questionHash };
      if (s === math) data = { ...data, answer: String(Number(data.answer) + 1) };
      if (s === hostile) data = { ...data, outcome: 'correct', score: 100, answer: '\u001b[Jx' };
      sequences.set(`${s.message.signal}|${s.message.subject}`, await submit({ ...s.message, run: copy, data }));
    }
    const last = await submit({ ...honestReveal.message, run: copy });
    await mirrored(last);

    const { code, report, stdout } = await verifyJson(['--run', copy]);
    expect(code).toBe(1);
    expect(report.counts).toMatchObject({ mismatch: 3, equivocation: 0 });
    expect(report.counts['re-derived'] + report.counts['commitment-checked'] + report.counts['not-checkable']).toBe(
      honestSignals.filter(isEval).length - 3,
    );
    const mismatches = report.signals.filter((s) => s.verdict === 'mismatch');
    expect(mismatches.map((m) => [m.sequenceNumber, m.index, m.subject, m.field])).toEqual(
      expect.arrayContaining([
        [
          sequences.get(`${science.message.signal}|${science.message.subject}`),
          0,
          science.message.subject,
          'questionHash',
        ],
        [sequences.get(`${math.message.signal}|${math.message.subject}`), 0, math.message.subject, 'answer'],
      ]),
    );
    expect(stdout).not.toContain('Answer with'); // never a question

    const text = await hcs25(['verify', '--topic', topic, '--publisher', operator, '--run', copy]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(
      new RegExp(
        `#${sequences.get(`${science.message.signal}|${science.message.subject}`)}\\[0\\]  ${science.message.signal}  .*  questionHash: expected hs256:`,
      ),
    );
    // A subtraction can have a negative answer (10 - 50), so the changed answer may carry a sign.
    expect(text.stdout).toMatch(/answer: answer -?\d+ grades wrong, published correct/);
    expect(text.stdout).toMatch(/answer: answer \\x1b\[Jx grades \w+, published correct/);
    expect(text.stdout).not.toContain('\u001b');
  });

  it('v2 packs (dense zlib and per subject) verify like single signals; a tampered packed signal is named by its index', async () => {
    const { state } = await readJournal(journalPath(stateDir, honest));
    const runKey = decodeRunKey(state.start.runKey);
    const { records } = await readAll();
    const honestReveal = records.find((r) => r.kind === 'reveal' && r.message.run === honest)!;
    const results = [...state.signals.values()].map((s) => s.result).filter((r) => r.kind !== 'availability');
    const runs = { dense: ulid(), subject: ulid() } as const;
    let tampered: { seq: number; index: number; subject: string; answer: string } | undefined;
    for (const mode of ['dense', 'subject'] as const) {
      const packer = new SignalPacker({ mode });
      // The publisher's own signals, re-published as v2 under another run id with the same key and seed (and reveal).
      const messages = [
        ...results.flatMap((r) => packer.add(buildSignalV2(r, { run: runs[mode], runKey }).message)),
        ...packer.flush(),
      ];
      expect(messages.length).toBeLessThan(results.length);
      for (const [n, m] of messages.entries()) {
        let bytes = m.bytes;
        if (mode === 'dense' && n === 0) {
          const index = m.signals.map((x) => x.data.score === 100 && x.signal === SIGNAL_IDS_V2.math).lastIndexOf(true);
          expect(index).toBeGreaterThan(0);
          const body = JSON.parse(inflateSync(bytes).toString('utf8')) as PackBody;
          const packed = body.subjects.flatMap((x) => x.sig)[index]!;
          // The graded-correct answer with its last digit changed: wrong whatever the question (a fixed '0' is right
          // for 37 - 37), and as long as before, so the pack, deflated as the packer does, still fits one message.
          const answer = String(packed.d.answer).replace(/\d$/, (d) => String((Number(d) + 1) % 10));
          expect(answer).toMatch(/^-?\d+$/);
          packed.d = { ...packed.d, answer };
          bytes = deflateSync(JSON.stringify(body), { level: 9 });
          expect(bytes.length).toBeLessThanOrEqual(1024);
          tampered = { seq: 0, index, subject: m.signals[index]!.subject, answer };
        }
        const receipt = await (
          await new TopicMessageSubmitTransaction().setTopicId(topic).setMessage(bytes).execute(h.client)
        ).getReceipt(h.client);
        if (tampered && tampered.seq === 0) tampered.seq = Number(receipt.topicSequenceNumber!.toString());
      }
      await mirrored(await submit({ ...honestReveal.message, run: runs[mode] }));
    }

    // No journal holds these runs' responses: an unparseable reply is only commitment-checked.
    const expected = verdictsOf(
      results.map((r) => (r as { outcome: string }).outcome),
      false,
    );
    const subject = await verifyJson(['--run', runs.subject]);
    expect(subject.code).toBe(0);
    expect(subject.report.counts).toEqual({ ...expected, mismatch: 0, equivocation: 0 });
    expect(subject.report.signals.some((s) => s.index! > 0)).toBe(true);

    const dense = await verifyJson(['--run', runs.dense]);
    expect(dense.code).toBe(1);
    expect(dense.report.counts).toEqual({
      ...expected,
      're-derived': expected['re-derived'] - 1,
      mismatch: 1,
      equivocation: 0,
    });
    expect(dense.report.signals.find((s) => s.verdict === 'mismatch')).toMatchObject({
      sequenceNumber: tampered!.seq,
      index: tampered!.index,
      subject: tampered!.subject,
      field: 'answer',
    });
    const text = await hcs25(['verify', '--topic', topic, '--publisher', operator, '--run', runs.dense]);
    expect(text.stdout).toContain(
      `#${tampered!.seq}[${tampered!.index}]  ${SIGNAL_IDS_V2.math}  ${tampered!.subject}  answer: answer ${tampered!.answer} grades wrong, published correct`,
    );
  });

  it('a private science bank: science is not checkable without it, re-derived with --science-bank', async () => {
    const bankFile = join(tmp.dir, 'private-bank.json');
    writeFileSync(bankFile, JSON.stringify({ version: 1, questions: loadScienceBank().slice(0, 4) }));
    const report = await runWith(config(), {
      source: { agentsFile },
      topic,
      evals: ['math', 'science'],
      seed: 'private-bank',
      scienceBank: bankFile,
    });
    expect(report.status).toBe('complete');
    await reveal(report.run);

    const without = await verifyJson(['--run', report.run]);
    expect(without.code).toBe(0);
    expect(without.report.counts).toMatchObject({ mismatch: 0 });
    // No science question can be re-derived; a response hash the journal's response matches is all that is checked.
    const science = without.report.signals.filter((s) => s.kind === 'science');
    expect(science).toHaveLength(fleet.agents.length);
    expect(science.every((s) => s.verdict === 'not-checkable' || s.verdict === 'commitment-checked')).toBe(true);
    expect(
      without.report.signals.filter((s) => s.kind === 'science').every((s) => s.reason === 'bank-not-supplied'),
    ).toBe(true);
    const text = await hcs25(['verify', '--topic', topic, '--publisher', operator, '--run', report.run]);
    expect(text.stdout).toMatch(
      /bank-not-supplied: the run used a private bank \(sha256:[\w-]+\); whoever holds it can verify with --science-bank/,
    );

    const withBank = await verifyJson(['--run', report.run, '--science-bank', bankFile]);
    expect(withBank.code).toBe(0);
    const read = (await readAll()).signals.filter((s) => s.message.run === report.run);
    expect(withBank.report.counts).toEqual({
      ...verdictsOf(read.map(outcomeOf), true),
      mismatch: 0,
      equivocation: 0,
    });
    expect(withBank.report.counts['re-derived']).toBeGreaterThan(without.report.counts['re-derived']);
  });

  it('a run without a reveal is not checkable (exit 0); the whole topic reports per run', async () => {
    const report = await runWith(config(), { source: { agentsFile }, topic, evals: ['math'], seed: 'unrevealed' });
    expect(report.status).toBe('complete');
    const { code, report: verified } = await verifyJson(['--run', report.run]);
    expect(code).toBe(0);
    expect(verified.counts).toMatchObject({ 're-derived': 0, mismatch: 0, 'not-checkable': fleet.agents.length });
    expect(verified.signals.every((s) => s.reason === 'no-reveal')).toBe(true);
    expect(verified.runs).toEqual([
      {
        run: report.run,
        revealed: false,
        're-derived': 0,
        'commitment-checked': 0,
        'not-checkable': fleet.agents.length,
        mismatch: 0,
        equivocation: 0,
        registries: [],
      },
    ]);

    const all = await hcs25(['verify', '--topic', topic, '--publisher', operator]);
    expect(all.code).toBe(1);
    expect(all.stdout).toContain(`run ${honest}  revealed at #`);
    expect(all.stdout).toContain(`run ${report.run}  not revealed  ${fleet.agents.length} signal(s): 0 re-derived`);
    expect(all.stdout).toMatch(new RegExp(`run ${report.run}  ${fleet.agents.length} signal\\(s\\)  no-reveal: `));
  });

  it('score records: published format-3 records check against their evidence; a hand-written one with a wrong total is drift on trustScores.total', async () => {
    const published = await hcs25([
      '--json',
      'scores',
      '--topic',
      topic,
      '--publisher',
      operator,
      '--publish',
      '--score-topic',
      topic,
    ]);
    expect(published.code, published.stderr).toBe(0);
    const count = (JSON.parse(published.stdout) as { published: unknown[] }).published.length;
    expect(count).toBe(fleet.agents.length);
    await mirrored(
      Math.max(
        ...(JSON.parse(published.stdout) as { published: Array<{ sequenceNumber: number }> }).published.map(
          (p) => p.sequenceNumber,
        ),
      ),
    );

    const clean = await hcs25(['--json', 'scores', '--topic', topic, '--publisher', operator, '--check-published']);
    expect(clean.code, clean.stderr).toBe(0);
    const checked = JSON.parse(clean.stdout) as CheckScoresReturnType;
    expect(checked.counts).toEqual({ verified: count, mismatch: 0, unverifiable: 0 });
    const { records } = await readAll();
    expect(records.filter((r) => r.kind === 'score').every((r) => r.v === 3)).toBe(true);

    const record = records.find((r) => r.kind === 'score')!.message as {
      subject: string;
      trustScore: number;
      trustScores: Record<string, number>;
    };
    const wrong = record.trustScore === 100 ? 90 : Math.round(record.trustScore) + 5;
    const { buildScoreMessageV3 } = await import('../../src/format/score-v3.js');
    const forged = { ...record, trustScore: wrong, trustScores: { ...record.trustScores, total: wrong } };
    const seq = await submit(buildScoreMessageV3(forged as never).message);
    await mirrored(seq);

    const drift = await hcs25(['scores', '--score-topic', topic, '--publisher', operator, '--check-published']);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(
      `${count} recomputed from their evidence, 0 consistent with their own explanation, 1 mismatch, 0 not checkable`,
    );
    expect(drift.stdout).toContain(
      `#${seq}  ${record.subject}  trustScores.total: expected ${record.trustScore}, published ${wrong}`,
    );

    const { code, report } = await verifyJson();
    expect(code).toBe(1);
    expect(report.scoreCounts).toEqual({ verified: count, mismatch: 1, unverifiable: 0 });
    expect(report.scores.find((s) => s.status === 'mismatch')).toMatchObject({
      sequenceNumber: seq,
      subject: record.subject,
      field: 'trustScores.total',
      actual: wrong,
    });
  });

  it('a format-3 record is recomputed with the config its evidence names, whatever --scoring-config adds', async () => {
    const file = join(tmp.dir, 'other-config.json');
    const { DEFAULT_SCORING_CONFIG } = await import('../../src/score/scoring-config.js');
    writeFileSync(file, JSON.stringify({ ...DEFAULT_SCORING_CONFIG, trustScoreConfigVersion: 4 }));
    const r = await hcs25([
      '--json',
      'scores',
      '--topic',
      topic,
      '--publisher',
      operator,
      '--check-published',
      '--scoring-config',
      file,
    ]);
    const checked = JSON.parse(r.stdout) as CheckScoresReturnType;
    const honest = checked.results.filter((c) => c.status !== 'mismatch');
    expect(honest.length).toBeGreaterThan(0);
    expect(honest.every((c) => c.status === 'verified' && c.basis === 'evidence')).toBe(true);
  });
  it('scores --publish --pack: json (the default) is readable, dense batches records in op "zlib" messages, none sends one op "score" each; every record checks', async () => {
    type Published = { published: Array<{ subject: string; sequenceNumber: number; index: number }> };
    const run = async (pack?: string) => {
      const r = await hcs25([
        '--json',
        'scores',
        '--topic',
        topic,
        '--publisher',
        operator,
        '--publish',
        '--score-topic',
        topic,
        ...(pack ? ['--pack', pack] : []),
      ]);
      expect(r.code, r.stderr).toBe(0);
      return { ...(JSON.parse(r.stdout) as Published), stderr: r.stderr };
    };
    const json = await run();
    const dense = await run('dense');
    const none = await run('none');
    const n = fleet.agents.length;
    expect(json.published).toHaveLength(n);
    expect(dense.published).toHaveLength(n);
    expect(none.published).toHaveLength(n);
    const messages = (p: Published) => new Set(p.published.map((r) => r.sequenceNumber)).size;
    expect(messages(none)).toBe(n);
    expect(none.published.every((r) => r.index === 0)).toBe(true);
    expect(messages(dense)).toBeLessThan(n);
    expect(dense.stderr).toContain(`published ${n} score record(s) in ${messages(dense)} message(s)`);
    await mirrored(Math.max(...none.published.map((p) => p.sequenceNumber)));

    const checked = await hcs25([
      '--json',
      'scores',
      '--score-topic',
      topic,
      '--publisher',
      operator,
      '--check-published',
    ]);
    const { results } = JSON.parse(checked.stdout) as CheckScoresReturnType;
    for (const p of [...json.published, ...dense.published, ...none.published]) {
      expect(results.find((r) => r.sequenceNumber === p.sequenceNumber && r.index === p.index)).toMatchObject({
        status: 'verified',
        subject: p.subject,
      });
    }
  });

  it.each([
    [['--publish', '--score-topic', '0.0.5', '--pack', 'zip'], /--pack must be json, dense, subject or none/],
    [['--pack', 'none'], /--pack goes with --publish/],
    [
      ['--publish', '--score-topic', '0.0.5', '--resume', '01JDX3V9W5Q8K6T2N4M7P1R0ZA', '--pack', 'none'],
      /drop --pack/,
    ],
  ])('scores %j is a usage error before any network call', async (args, message) => {
    const r = await hcs25(['scores', '--topic', '0.0.5', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

describe('hcs25 verify flags', () => {
  it.each([
    [['--topic', 'nope'], /--topic must be an id/],
    [['--topic', '0.0.5', '--run', 'not-a-run'], /--run must be a run id/],
    [['--topic', '0.0.5', '--publisher', 'x'], /--publisher must be an id/],
    [['--topic', '0.0.5', '--science-bank', '/nonexistent/bank.json'], /bank/i],
  ])('%j exits 2 before any network call', async (args, message) => {
    const saved = process.env.HCS25_MIRROR_REST_URL;
    process.env.HCS25_MIRROR_REST_URL = 'http://127.0.0.1:1'; // nothing listens: a network call would fail otherwise
    try {
      const r = await hcs25(['verify', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    } finally {
      process.env.HCS25_MIRROR_REST_URL = saved;
    }
  });
});
