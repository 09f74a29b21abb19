import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_SCIENCE_BANK_ID,
  PRIVATE_SCIENCE_BANK_ID,
  QUESTION_GENERATOR,
  scienceBankDigest,
} from '../../src/evaluate/generator.js';
import { gradeQuestion } from '../../src/evaluate/graders.js';
import { questionFor, runEvals } from '../../src/evaluate/runner.js';
import { buildSignalV2, buildRevealMessageV2 } from '../../src/format/write.js';
import { fakeTransport, newLog, ok } from '../evaluate/runner-helpers.js';
import { loadScienceBank, type ScienceBankEntry } from '../../src/evaluate/science.js';
import type { AnyEvalResult, EvalResult, GraderId, Question } from '../../src/evaluate/types.js';
import { signalKey, type RunState } from '../../src/publish/journal.js';
import type { Agent } from '../../src/core/agent.js';
import { buildSignalMessage } from '../../src/format/write-v1.js';
import type { RevealMessageV2 } from '../../src/format/schema-v2.js';
import type { EvalSignalMessage } from '../../src/format/schema-v1.js';
import { journalResponses } from '../../src/verify/journal.js';
import { verifySignals, type VerifiableSignal } from '../../src/verify/signals.js';

const RUN = '01JDX3V9W5Q8K6T2N4M7P1R0ZA';
const KEY = Buffer.alloc(32, 9);
const SEED = 'seed-1';
const GRADER: GraderId = 'first-token@1';
const BANK = loadScienceBank();

const agents: Agent[] = Array.from({ length: 6 }, (_, i) => ({
  subject: `uaid:aid:agent${i};uid=0;registry=hol;proto=a2a;nativeId=agent${i}.example`,
  name: `agent${i}`,
  protocol: 'a2a',
  endpoint: `http://agent${i}.example/`,
}));

/** What agent i replies: mostly right, some wrong, some chatty, one unparseable. */
function reply(q: Question, i: number): string {
  const right = q.kind === 'math' ? String(q.expected) : q.answer;
  const wrong = q.kind === 'math' ? String(q.expected + 1) : q.answer === 'A' ? 'B' : 'A';
  return [right, wrong, `The answer is ${right}.`, 'I do not know', right, wrong][i]!;
}

interface Published {
  message: EvalSignalMessage;
  response: string | null;
}

/** An honest run, built the way the publisher builds it: questionFor → grade → buildSignalMessage. */
function honestRun(bank: readonly ScienceBankEntry[] = BANK, seed = SEED): Published[] {
  const out: Published[] = [];
  for (const [i, agent] of agents.entries()) {
    for (const kind of ['math', 'science'] as const) {
      const q = questionFor(kind, agent.subject, seed, bank);
      const skipped = i === 5 && kind === 'science';
      const response = skipped ? null : reply(q, i);
      const grade = response === null ? null : gradeQuestion(q, response, GRADER);
      const result: EvalResult = {
        kind,
        agent,
        questionId: q.id,
        outcome: grade?.outcome ?? 'skipped',
        score: grade?.outcome === 'correct' ? 100 : 0,
        answer: grade?.answer ?? null,
        compliant: grade?.compliant ?? false,
        latencyMs: 10,
        response,
        transport: 'a2a',
        grader: GRADER,
        fetchedAt: '2026-11-21T10:00:00.000Z',
      };
      out.push({
        message: buildSignalMessage(result, { run: RUN, runKey: KEY }).message as EvalSignalMessage,
        response,
      });
    }
  }
  return out;
}

function reveal(
  extra: Partial<RevealMessageV2> = {},
  bank: readonly ScienceBankEntry[] = BANK,
  bankId = BUILTIN_SCIENCE_BANK_ID,
): RevealMessageV2 {
  return buildRevealMessageV2({
    run: RUN,
    key: KEY.toString('base64url'),
    seed: SEED,
    generator: QUESTION_GENERATOR,
    grader: GRADER,
    bank: { id: bankId, digest: scienceBankDigest(bank) },
    ...extra,
  }).message;
}

const signals = (run: Published[]) => run.map((p) => p.message);

/**
 * The verdicts an honest run earns: graded answers re-derived; an unparseable reply only commitment-checked (its
 * question hash), unless its raw response is held and re-graded; a skipped eval not checkable (nothing was asked).
 */
function honestCounts(run: Published[], withResponses = false) {
  const n = (ok: (outcome: string) => boolean) => run.filter((p) => ok(p.message.data.outcome)).length;
  const graded = (o: string) => o === 'correct' || o === 'wrong';
  return {
    're-derived': n((o) => graded(o) || (withResponses && o === 'unparseable')),
    'commitment-checked': withResponses ? 0 : n((o) => o === 'unparseable'),
    'not-checkable': n((o) => o === 'skipped'),
    mismatch: 0,
    equivocation: 0,
  };
}

describe('verifySignals — an honest run', () => {
  it('re-derives every graded eval signal of a revealed run; unparseable ones are commitment-checked, skipped ones not checkable', () => {
    const run = honestRun();
    const outcomes = new Set(run.map((p) => p.message.data.outcome));
    expect(outcomes).toEqual(new Set(['correct', 'wrong', 'unparseable', 'skipped']));
    const report = verifySignals({ signals: signals(run), reveals: [reveal()] });
    const counts = honestCounts(run);
    expect(counts).toMatchObject({ 're-derived': 9, 'commitment-checked': 2, 'not-checkable': 1 });
    expect(report.counts).toEqual(counts);
    const { equivocation: _, ...verdicts } = counts;
    expect(report.runs).toEqual([{ run: RUN, revealed: true, ...verdicts, equivocation: 0, registries: [] }]);
    const of = (outcome: string) =>
      report.signals.filter((_s, i) => run[i]!.message.data.outcome === outcome).map((v) => [v.verdict, v.reason]);
    expect(new Set(of('unparseable').map(String))).toEqual(new Set(['commitment-checked,']));
    expect(of('skipped')).toEqual([['not-checkable', 'not-asked']]);
    expect(report.signals.some((v) => /verified/.test(v.detail))).toBe(false);
  });

  it('checks v1 response hashes where responses are supplied, and re-grades them', () => {
    const run = honestRun();
    const responses = new Map(run.map((p) => [`${p.message.signal}|${p.message.subject}`, p.response]));
    const report = verifySignals({
      signals: signals(run),
      reveals: [reveal()],
      responseOf: (s) => responses.get(`${s.signal}|${s.subject}`),
    });
    // The unparseable replies are re-graded from their responses: re-derived too.
    expect(report.counts).toEqual(honestCounts(run, true));
    expect(report.signals.filter((s) => s.responseChecked)).toHaveLength(11);
  });

  it('accepts v2-shaped signals: catalog ids, absent instead of null, keyed response hashes, no hash on a skipped eval', () => {
    const keyed = (key: Buffer, s: VerifiableSignal, response: string) =>
      `hs256:${createHmac('sha256', key).update(`${s.signal}\n${s.subject}\n${response}`).digest().subarray(0, 16).toString('base64url')}`;
    const run = honestRun();
    const v2: VerifiableSignal[] = run.map(({ message, response }) => {
      const signal = message.signal === 'simple-evals.math' ? 'simple-evals.a2a_math' : 'simple-evals.a2a_science';
      const { answer, responseHash: _, questionHash, ...data } = message.data;
      const base = { subject: message.subject, signal, run: message.run, status: message.status };
      return {
        ...base,
        data: {
          ...data,
          ...(answer !== null ? { answer } : {}),
          ...(data.outcome !== 'skipped' ? { questionHash } : {}),
          ...(response !== null ? { responseHash: keyed(KEY, base, response) } : {}),
        },
      };
    });
    const responses = new Map(run.map((p) => [p.message.subject + p.message.signal.slice(-4), p.response]));
    const report = verifySignals({
      signals: v2,
      reveals: [reveal()],
      keyedResponseHash: keyed,
      responseOf: (s) => responses.get(s.subject + s.signal.slice(-4)),
    });
    expect(report.counts).toEqual(honestCounts(run, true));
    expect(report.signals.filter((s) => s.responseChecked)).toHaveLength(11);
  });

  it('evals not asked because the probe found the agent unreachable are not checkable (v1 and v2), never mismatches', async () => {
    const log = newLog();
    const results: AnyEvalResult[] = [];
    for await (const r of runEvals(agents, {
      evals: ['availability', 'math', 'science'],
      budgetMs: 1000,
      concurrency: 3,
      seed: SEED,
      grader: GRADER,
      allowPrivateEndpoints: false,
      transportFactory: () =>
        fakeTransport(log, () => ok('x'), {
          probe: () => ({ reachable: false, latencyMs: 1, reason: 'connection refused' }),
        }),
    })) {
      results.push(r);
    }
    expect(log.asks).toBe(0);
    const evals = results.filter((r): r is EvalResult => r.kind !== 'availability');
    expect(evals.every((r) => r.outcome === 'skipped' && r.reason?.startsWith('probe-unreachable'))).toBe(true);
    const v1 = evals.map((r) => buildSignalMessage(r, { run: RUN, runKey: KEY }).message as EvalSignalMessage);
    const v2 = evals.map((r) => buildSignalV2(r, { run: RUN, runKey: KEY }).message as unknown as VerifiableSignal);
    expect(
      v2.every((s) => s.status === 'missing' && (s.data as { reason?: string }).reason === 'probe-unreachable'),
    ).toBe(true);
    for (const signals of [v1, v2]) {
      const report = verifySignals({ signals, reveals: [reveal()] });
      expect(report.counts).toMatchObject({ 'not-checkable': 12, mismatch: 0 });
      expect(report.signals.every((v) => v.reason === 'not-asked')).toBe(true);
    }
  });

  it('an availability probe, or a signal id it does not know, is not checkable and says why', () => {
    const probe = { subject: agents[0]!.subject, signal: 'availability.probe', run: RUN, status: 'ok' };
    const other = { ...probe, signal: 'reputation.stars' };
    const report = verifySignals({ signals: [probe, other], reveals: [reveal()] });
    expect(report.counts).toMatchObject({ 're-derived': 0, 'not-checkable': 2 });
    expect(report.signals.map((v) => [v.kind, v.reason])).toEqual([
      ['probe', 'probe'],
      ['other', 'unknown-signal'],
    ]);
    expect(report.signals[0]!.detail).toMatch(/nothing re-derives it/);
  });
});

describe('verifySignals — tampering', () => {
  type Data = EvalSignalMessage['data'];
  function tampered(index: number, change: Partial<Data>) {
    const run = signals(honestRun());
    run[index] = { ...run[index]!, data: { ...run[index]!.data, ...change } };
    const report = verifySignals({ signals: run, reveals: [reveal()] });
    expect(report.counts.mismatch).toBe(1);
    return report.signals[index]!;
  }

  it('a changed answer is a mismatch on answer', () => {
    // agent 0 answered math correctly; its answer is replaced by another number.
    const original = signals(honestRun())[0]!;
    expect(original.data.outcome).toBe('correct');
    const v = tampered(0, { answer: String(Number(original.data.answer) + 3) });
    expect(v).toMatchObject({ verdict: 'mismatch', field: 'answer' });
  });

  it('a wrong answer published as correct (with its score) is a mismatch on answer', () => {
    const v = tampered(2, { outcome: 'correct', score: 100 });
    expect(v).toMatchObject({ verdict: 'mismatch', field: 'answer' });
  });

  it('a changed question hash is a mismatch on questionHash', () => {
    expect(tampered(1, { questionHash: 'hs256:AAAAAAAAAAAAAAAAAAAAAA' })).toMatchObject({
      verdict: 'mismatch',
      field: 'questionHash',
    });
  });

  it('a score that does not follow the outcome is a mismatch on score', () => {
    expect(tampered(2, { score: 100 })).toMatchObject({ verdict: 'mismatch', field: 'score' });
  });

  it('a token on an unparseable outcome is a mismatch on answer', () => {
    const run = signals(honestRun());
    const index = run.findIndex((m) => m.data.outcome === 'unparseable');
    expect(tampered(index, { answer: '7' })).toMatchObject({ field: 'answer' });
  });

  it("a grader other than the run's is a mismatch on grader", () => {
    expect(tampered(0, { grader: 'last-answer@1' })).toMatchObject({ field: 'grader' });
  });

  it('a response that does not hash to the published hash is a mismatch on responseHash', () => {
    const run = honestRun();
    const report = verifySignals({
      signals: signals(run),
      reveals: [reveal()],
      responseOf: (s) => (s.subject === agents[0]!.subject ? 'something else' : null),
    });
    expect(report.signals.filter((s) => s.verdict === 'mismatch').map((s) => s.field)).toEqual([
      'responseHash',
      'responseHash',
    ]);
  });

  it('a reveal with another seed makes every asked question a questionHash mismatch', () => {
    const report = verifySignals({ signals: signals(honestRun()), reveals: [reveal({ seed: 'other' })] });
    expect(report.counts.mismatch).toBeGreaterThanOrEqual(11);
    expect(new Set(report.signals.filter((s) => s.verdict === 'mismatch').map((s) => s.field))).toEqual(
      new Set(['questionHash']),
    );
  });
});

describe('verifySignals — not checkable', () => {
  it('a run without a reveal', () => {
    const report = verifySignals({ signals: signals(honestRun()), reveals: [] });
    expect(report.counts).toMatchObject({ 're-derived': 0, 'not-checkable': 12 });
    expect(report.signals[0]).toMatchObject({ verdict: 'not-checkable', reason: 'no-reveal' });
    expect(report.runs[0]!.revealed).toBe(false);
  });

  it('a v1 reveal (key only) cannot re-derive questions', () => {
    const report = verifySignals({
      signals: signals(honestRun()),
      reveals: [{ run: RUN, key: KEY.toString('base64url') }],
    });
    expect(report.signals.every((s) => s.reason === 'reveal-without-seed')).toBe(true);
  });

  it('a question generator this version does not know', () => {
    const report = verifySignals({
      signals: signals(honestRun()),
      reveals: [reveal({ generator: 'hcs25-questions@9' })],
    });
    expect(report.signals.every((s) => s.reason === 'unknown-generator')).toBe(true);
  });

  it('a private bank: science is not checkable without it, re-derived with it; math is re-derived either way', () => {
    const privateBank = BANK.slice(0, 5);
    const published = honestRun(privateBank);
    const run = signals(published);
    const r = reveal({}, privateBank, PRIVATE_SCIENCE_BANK_ID);
    const without = verifySignals({ signals: run, reveals: [r] });
    const math = honestCounts(published.filter((p) => p.message.signal === 'simple-evals.math'));
    expect(without.counts).toEqual({ ...math, 'not-checkable': math['not-checkable'] + 6 });
    expect(without.signals.filter((s) => s.kind === 'science').every((s) => s.reason === 'bank-not-supplied')).toBe(
      true,
    );
    // A copy of the bank in another key order and formatting has the same digest.
    const copy = JSON.parse(
      JSON.stringify(
        privateBank.map((q) => ({
          answer: q.answer,
          options: q.options,
          stem: q.stem,
          category: q.category,
          id: q.id,
        })),
      ),
    ) as ScienceBankEntry[];
    expect(verifySignals({ signals: run, reveals: [r], scienceBank: copy }).counts).toEqual(honestCounts(published));
    // Another bank is not taken for it.
    expect(verifySignals({ signals: run, reveals: [r], scienceBank: BANK.slice(1, 6) }).counts).toEqual(without.counts);
  });
});

describe('journalResponses', () => {
  it('hands verifySignals the responses a run journal kept', () => {
    const run = honestRun();
    const state = {
      start: { run: RUN },
      signals: new Map(
        run.map(({ message, response }) => {
          const kind = message.signal === 'simple-evals.math' ? 'math' : 'science';
          return [
            signalKey(kind, message.subject),
            { key: '', txIds: [], result: { kind, agent: { subject: message.subject }, response } },
          ];
        }),
      ),
    } as unknown as RunState;
    const report = verifySignals({ signals: signals(run), reveals: [reveal()], responseOf: journalResponses(state) });
    expect(report.counts).toEqual(honestCounts(run, true));
    expect(report.signals.filter((s) => s.responseChecked)).toHaveLength(11);
    expect(journalResponses(state)({ ...run[0]!.message, run: '01JDX3V9W5Q8K6T2N4M7P1R0ZB' })).toBeNull();
  });
});

describe('verifySignals — status', () => {
  it('a status that does not follow the outcome (as the reference maps it) is a mismatch on status', () => {
    const run = signals(honestRun());
    run[1] = { ...run[1]!, status: 'timeout' };
    const report = verifySignals({ signals: run, reveals: [reveal()] });
    expect(report.signals[1]).toMatchObject({ verdict: 'mismatch', field: 'status' });
  });
});

describe('verifySignals — score records', () => {
  it('recomputes the score records it is given, naming the field that drifted', () => {
    const explanation = {
      configDigest: `sha256:${'A'.repeat(43)}`,
      adapters: [
        {
          id: 'availability',
          mode: 'universal' as const,
          w: 1,
          in: true,
          t: 80,
          c: [{ k: 'availability.uptime', v: 80, s: 'ok' as const }],
        },
      ],
    };
    const honest = {
      subject: agents[0]!.subject,
      trustScore: 80,
      trustScores: { total: 80, 'availability.uptime': 80 },
      trustScoreConfigVersion: 2,
      explanation,
    };
    const forged = { ...honest, subject: agents[1]!.subject, trustScores: { total: 80, 'availability.uptime': 95 } };
    const report = verifySignals({ signals: [], reveals: [], scores: [honest, forged] });
    expect(report.scores.map((s) => [s.subject, s.status, s.field])).toEqual([
      [agents[0]!.subject, 'verified', 'trustScores.total'],
      [agents[1]!.subject, 'mismatch', 'trustScores.availability.uptime'],
    ]);
  });
});

describe('verifySignals — payers', () => {
  it("a reveal paid by someone else does not apply to the publisher's signals", () => {
    const published = honestRun();
    const run = signals(published).map((m) => ({ ...m, payer: '0.0.1001' }));
    const forged = { ...reveal({ seed: 'forged' }), payer: '0.0.666' };
    const honest = { ...reveal(), payer: '0.0.1001' };
    expect(verifySignals({ signals: run, reveals: [forged, honest] }).counts).toEqual(honestCounts(published));
    expect(verifySignals({ signals: run, reveals: [forged] }).counts).toMatchObject({ 'not-checkable': 12 });
  });
});

describe('verifySignals — how a run was published', () => {
  const at = (seconds: number, nanos = 0) => `${1_800_000_000 + seconds}.${String(nanos).padStart(9, '0')}`;
  const timed = () =>
    honestRun().map((p, i) => ({ ...p.message, payer: '0.0.1001', consensusTimestamp: at(i), sequenceNumber: i + 1 }));

  it("a signal submitted after its run's reveal (same payer) is a mismatch on consensusTimestamp, even a nanosecond later", () => {
    const run = timed();
    // The reveal lands one nanosecond before the last signal, within the same millisecond.
    const revealed = { ...reveal(), payer: '0.0.1001', consensusTimestamp: at(11, 0), sequenceNumber: 99 };
    run[11] = { ...run[11]!, consensusTimestamp: at(11, 1) };
    const report = verifySignals({ signals: run, reveals: [revealed] });
    expect(report.counts.mismatch).toBe(1);
    expect(report.signals[11]).toMatchObject({ verdict: 'mismatch', field: 'consensusTimestamp' });
    expect(report.signals[11]!.detail).toMatch(/after the run's reveal \(sequence 99, /);
    expect(report.runs[0]).toMatchObject({ revealSequence: 99, revealConsensusTimestamp: at(11, 0), mismatch: 1 });
    // Another payer's reveal does not apply, so it says nothing about when the signals came.
    const foreign = { ...revealed, payer: '0.0.666' };
    expect(verifySignals({ signals: run, reveals: [foreign] }).counts).toMatchObject({ mismatch: 0 });
    // Without consensus times nothing is claimed.
    const untimed = run.map(({ consensusTimestamp: _, ...s }) => s);
    expect(verifySignals({ signals: untimed, reveals: [revealed] }).counts.mismatch).toBe(0);
  });

  it('a probe submitted after the reveal is reported too', () => {
    const probe = {
      subject: agents[0]!.subject,
      signal: 'availability.probe',
      run: RUN,
      status: 'ok',
      consensusTimestamp: at(50),
    };
    const report = verifySignals({ signals: [probe], reveals: [{ ...reveal(), consensusTimestamp: at(40) }] });
    expect(report.signals[0]).toMatchObject({ kind: 'probe', verdict: 'mismatch', field: 'consensusTimestamp' });
  });

  it('a subject its cited registry did not list when the run started is a mismatch on subject; an unreadable registry is not', () => {
    const run = timed();
    const outsider = agents[2]!.subject;
    const registries = [
      { run: RUN, source: 'hcs://2/0.0.77', asOf: '2027-01-15T08:00:00.000Z', cited: 6, notListed: [outsider] },
      { run: RUN, source: 'hcs://2/0.0.78', asOf: '2027-01-15T08:00:00.000Z', cited: 6, notCheckable: 'gone' },
    ];
    const report = verifySignals({ signals: run, reveals: [reveal()], registries });
    const flagged = report.signals.filter((v) => v.verdict === 'mismatch');
    expect(flagged.map((v) => [v.subject, v.field])).toEqual([
      [outsider, 'subject'],
      [outsider, 'subject'],
    ]);
    expect(flagged[0]!.detail).toBe(
      'hcs://2/0.0.77 did not list this subject when the run started (2027-01-15T08:00:00.000Z)',
    );
    expect(report.runs[0]!.registries).toEqual(registries);
    // Another run's registry check says nothing about this run.
    const elsewhere = registries.map((r) => ({ ...r, run: '01JDX3V9W5Q8K6T2N4M7P1R0ZB' }));
    expect(verifySignals({ signals: run, reveals: [reveal()], registries: elsewhere }).counts.mismatch).toBe(0);
  });

  it('conflicting copies are counted as equivocation, per run', () => {
    const equivocation = {
      run: RUN,
      signal: 'simple-evals.math',
      subject: agents[0]!.subject,
      payer: '0.0.1001',
      sequenceNumber: 40,
      firstSequence: 3,
    };
    const report = verifySignals({ signals: timed(), reveals: [reveal()], equivocations: [equivocation] });
    expect(report.counts.equivocation).toBe(1);
    expect(report.equivocations).toEqual([equivocation]);
    expect(report.runs[0]!.equivocation).toBe(1);
  });
});

describe('verifySignals — what only a hash can show', () => {
  it('an outcome this version does not know: commitment-checked when the question hash agrees, never graded', () => {
    const run = signals(honestRun());
    const i = run.findIndex((m) => m.data.outcome === 'wrong');
    const future = { ...run[i]!, status: 'ok', data: { ...run[i]!.data, outcome: 'partial', score: 50 } };
    const v = verifySignals({ signals: [future], reveals: [reveal()] }).signals[0]!;
    expect(v).toMatchObject({ verdict: 'commitment-checked' });
    expect(v.detail).toMatch(/outcome partial is not one this hcs25 knows/);
    const forged = { ...future, data: { ...future.data, questionHash: 'hs256:AAAAAAAAAAAAAAAAAAAAAA' } };
    expect(verifySignals({ signals: [forged], reveals: [reveal()] }).signals[0]).toMatchObject({
      verdict: 'mismatch',
      field: 'questionHash',
    });
  });

  it('a reveal without a seed: a response hash checked against a held response is commitment-checked', () => {
    const run = honestRun();
    const responses = new Map(run.map((p) => [`${p.message.signal}|${p.message.subject}`, p.response]));
    const v1Reveal = { run: RUN, key: KEY.toString('base64url') };
    const report = verifySignals({
      signals: signals(run),
      reveals: [v1Reveal],
      responseOf: (s) => responses.get(`${s.signal}|${s.subject}`),
    });
    expect(report.counts).toMatchObject({ 're-derived': 0, 'commitment-checked': 11, 'not-checkable': 1 });
    expect(report.signals.every((v) => v.reason === 'reveal-without-seed')).toBe(true);
    const wrong = verifySignals({ signals: signals(run), reveals: [v1Reveal], responseOf: () => 'other' });
    expect(wrong.counts).toMatchObject({ mismatch: 11 });
    expect(wrong.signals.find((v) => v.verdict === 'mismatch')!.field).toBe('responseHash');
  });
});
