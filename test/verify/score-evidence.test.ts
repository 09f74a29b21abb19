/**
 * Format-3 score records recomputed from their evidence. Pure: a record recomputes from the signals of its cited range,
 * and any inflated or altered field is a drift. On the emulator: records published by `hcs25 scores --publish` check
 * clean with `hcs25 verify` and `hcs25 scores --check-published`; a self-consistent record lifting a failing agent to
 * 100 is a mismatch (exit 1) in both; a record citing a config the verifier does not hold is not checkable until
 * `--scoring-config` gives it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register as scores } from '../../src/cli/scores.js';
import { register as verify } from '../../src/cli/verify.js';
import { createTopic } from '../../src/actions.js';
import { createHcs25Client, type Hcs25Client } from '../../src/client.js';
import { buildScoreMessageV3, withScoreDefaultsV3 } from '../../src/format/score-v3.js';
import { submitMessage } from '../../src/hedera/tx.js';
import type { ReadSignal } from '../../src/read/types.js';
import { scoreRecordV3For } from '../../src/score/record-v3.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG, parseScoringConfig } from '../../src/score/scoring-config.js';
import type { CheckScoresReturnType } from '../../src/verify/check-scores.js';
import { recomputeFromEvidence } from '../../src/verify/score-evidence.js';
import type { VerifySignalsReturnType } from '../../src/verify/verify-signals.js';
import { emulatorConfig, readTopic, startHarness, tempDir, type Harness } from '../publish/helpers.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';
import { HOUR, T0, evalSignal, probe, runId, uaid } from '../support/signals.js';

const GOOD = uaid('good.example.com');
const FAILING = uaid('failing.example.com');

/** Two runs over two agents: the good one answers and is reachable, the failing one neither. */
function signalsAt(start: number): ReadSignal[] {
  return [1, 2].flatMap((run, r) =>
    [GOOD, FAILING].flatMap((subject, i) => {
      const good = subject === GOOD;
      const seq = 1 + r * 6 + i * 3;
      const at = start + r * 60_000 + i * 1000;
      return [
        probe(subject, { seq, at, run, reachable: good }),
        evalSignal(subject, 'math', good ? 'correct' : 'wrong', { seq: seq + 1, at: at + 100, run }),
        evalSignal(subject, 'science', good ? 'correct' : 'wrong', { seq: seq + 2, at: at + 200, run }),
      ];
    }),
  );
}

/** A record lifted to 100 and consistent with itself: every component, adapter total and the composite at 100. */
function inflate(record: Record<string, unknown>): Record<string, unknown> {
  const breakdown = record.breakdown as { adapters: Array<Record<string, unknown>> };
  return {
    ...record,
    trustScore: 100,
    trustScores: { total: 100 },
    trustConfidence: 1,
    breakdown: {
      adapters: breakdown.adapters.map((a) => ({
        ...a,
        total: 100,
        components: (a.components as Array<Record<string, unknown>>).map((c) => ({ ...c, value: 100, status: 'ok' })),
      })),
    },
  };
}

describe('recomputeFromEvidence', () => {
  const signals = signalsAt(T0);
  const now = new Date(T0 + HOUR);
  const honest = (subject: string) => {
    const s = computeScores(signals, DEFAULT_SCORING_CONFIG, { now }).subjects.find((x) => x.subject === subject)!;
    const built = buildScoreMessageV3(scoreRecordV3For(s, { topic: '0.0.77', seq: [1, 12] }));
    return withScoreDefaultsV3(JSON.parse(built.json)) as Parameters<typeof recomputeFromEvidence>[0];
  };

  it('an honest record recomputes exactly from the signals of its range', () => {
    expect(honest(FAILING).trustScore).toBe(0);
    expect(recomputeFromEvidence(honest(FAILING), signals, DEFAULT_SCORING_CONFIG)).toEqual([]);
    expect(recomputeFromEvidence(honest(GOOD), signals, DEFAULT_SCORING_CONFIG)).toEqual([]);
  });

  it('a self-consistent record lifting a failing agent to 100 differs in its total, adapters and components', () => {
    const drifts = recomputeFromEvidence(
      inflate(honest(FAILING)) as Parameters<typeof recomputeFromEvidence>[0],
      signals,
      DEFAULT_SCORING_CONFIG,
    );
    expect(drifts[0]).toEqual({ field: 'trustScores.total', expected: 0, actual: 100 });
    expect(drifts.map((d) => d.field)).toEqual(
      expect.arrayContaining([
        'trustScore',
        'breakdown.availability.total',
        'breakdown.availability.availability.uptime',
        'breakdown.simple-math.simple-math.score',
      ]),
    );
  });

  it('other runs, a narrower range than the one scored, or another subject are drift too', () => {
    const record = honest(GOOD);
    const evidence = record.evidence;
    const runs = recomputeFromEvidence(
      { ...record, evidence: { ...evidence, runs: [runId(1)] } },
      signals,
      DEFAULT_SCORING_CONFIG,
    );
    expect(runs).toEqual([{ field: 'evidence.runs', expected: `${runId(1)},${runId(2)}`, actual: runId(1) }]);
    // Only the first run's signals in the cited range: the record claims runs it did not read.
    const narrow = recomputeFromEvidence(
      { ...record, evidence: { ...evidence, seq: [1, 6] } },
      signals,
      DEFAULT_SCORING_CONFIG,
    );
    expect(narrow.map((d) => d.field)).toContain('evidence.runs');
    const nobody = recomputeFromEvidence(
      { ...record, subject: uaid('nobody.example') },
      signals,
      DEFAULT_SCORING_CONFIG,
    );
    expect(nobody).toMatchObject([{ field: 'evidence' }]);
  });

  it('m_stale is part of the config: a record claiming another one differs', () => {
    const record = honest(GOOD);
    const halved = parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, staleMultiplier: 0.5 });
    expect(recomputeFromEvidence(record, signals, halved).map((d) => d.field)).toContain('evidence.staleMultiplier');
  });
});

describe('score records against their evidence on the emulator (hcs25 verify, scores --check-published)', () => {
  const tmp = tempDir();
  let h: Harness;
  let client: Hcs25Client;
  let topic: string;
  let operator: string;
  let restoreEnv: () => void;
  const hcs25 = (args: string[]) => runCli([verify, scores], args);
  let count = 0;

  async function submit(message: unknown): Promise<number> {
    const { seq } = await submitMessage(h.client, topic, JSON.stringify(message), undefined);
    count = Math.max(count, seq);
    await readTopic(h.mirror, topic, count);
    return seq;
  }

  beforeAll(async () => {
    h = await startHarness();
    client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir: tmp.dir }));
    operator = h.node.operator.accountId;
    ({ topicId: topic } = await createTopic(client, {}));
    for (const s of signalsAt(Date.now() - HOUR)) await submit(s.message);
    restoreEnv = useEmulatorEnv(h.node, tmp.dir);
  });
  afterAll(async () => {
    restoreEnv?.();
    await client?.close();
    await h?.close();
    tmp.cleanup();
  });

  it('honest records check clean; an inflated one is a mismatch (exit 1) in verify and in scores --check-published', async () => {
    const base = ['--topic', topic, '--publisher', operator];
    const published = await hcs25(['--json', 'scores', ...base, '--publish', '--score-topic', topic]);
    expect(published.code, published.stderr).toBe(0);
    const out = JSON.parse(published.stdout) as { published: Array<{ sequenceNumber: number }> };
    expect(out.published).toHaveLength(2);
    await readTopic(h.mirror, topic, Math.max(...out.published.map((p) => p.sequenceNumber)));
    count = Math.max(count, ...out.published.map((p) => p.sequenceNumber));

    const clean = await hcs25(['--json', 'scores', ...base, '--check-published']);
    expect(clean.code, clean.stderr).toBe(0);
    const checked = JSON.parse(clean.stdout) as CheckScoresReturnType;
    expect(checked.counts).toEqual({ verified: 2, mismatch: 0, unverifiable: 0 });
    expect(checked.results.every((r) => r.basis === 'evidence')).toBe(true);
    const honestVerify = await hcs25(['--json', 'verify', ...base]);
    expect((JSON.parse(honestVerify.stdout) as VerifySignalsReturnType).scoreCounts).toEqual({
      verified: 2,
      mismatch: 0,
      unverifiable: 0,
    });

    const { records } = await import('../../src/read/read-signals.js').then((m) =>
      m.collectSignals(client, { topic, publishers: [operator] }),
    );
    const failing = records.find((r) => r.kind === 'score' && r.message.subject === FAILING)!;
    expect(failing).toMatchObject({ v: 3, message: { trustScore: 0 } });
    // Sent as a publisher would build it (defaults left out, so that it fits one message).
    const seq = await submit(buildScoreMessageV3(inflate(failing.message) as never).message);

    const text = await hcs25(['scores', '--score-topic', topic, '--publisher', operator, '--check-published']);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      '2 recomputed from their evidence, 0 consistent with their own explanation, 1 mismatch',
    );
    expect(text.stdout).toContain(`#${seq}  ${FAILING}  trustScores.total: expected 0, published 100`);

    const v = await hcs25(['--json', 'verify', ...base]);
    expect(v.code).toBe(1);
    const report = JSON.parse(v.stdout) as VerifySignalsReturnType;
    expect(report.scoreCounts).toEqual({ verified: 2, mismatch: 1, unverifiable: 0 });
    expect(report.scores.find((s) => s.status === 'mismatch')).toMatchObject({
      sequenceNumber: seq,
      subject: FAILING,
      basis: 'evidence',
      field: 'trustScores.total',
      expected: 0,
      actual: 100,
    });
  });

  it('a record citing a config the verifier does not hold is not checkable until --scoring-config gives it', async () => {
    const file = join(tmp.dir, 'halved.json');
    writeFileSync(
      file,
      JSON.stringify({ ...DEFAULT_SCORING_CONFIG, trustScoreConfigVersion: 4, staleMultiplier: 0.5 }),
    );
    const scoreTopic = (await createTopic(client, {})).topicId;
    const base = ['--topic', topic, '--publisher', operator];
    const published = await hcs25([
      '--json',
      'scores',
      ...base,
      '--scoring-config',
      file,
      '--publish',
      '--score-topic',
      scoreTopic,
    ]);
    expect(published.code, published.stderr).toBe(0);
    await readTopic(h.mirror, scoreTopic, 2);

    const unknown = await hcs25(['verify', '--topic', scoreTopic, '--publisher', operator]);
    expect(unknown.stdout).toContain('0 mismatch, 2 not checkable');
    expect(unknown.stdout).toMatch(/not checkable \(config-unknown\): scoring config sha256:\S+ is not held/);
    const known = await hcs25([
      '--json',
      'verify',
      '--topic',
      scoreTopic,
      '--publisher',
      operator,
      '--scoring-config',
      file,
    ]);
    expect((JSON.parse(known.stdout) as VerifySignalsReturnType).scoreCounts).toEqual({
      verified: 2,
      mismatch: 0,
      unverifiable: 0,
    });
  });
});
