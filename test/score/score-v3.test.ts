/** Format-3 score records: built from computed scores, packed in every mode, read back, within 1024 bytes. */
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MessageTooLargeError } from '../../src/core/errors.js';
import { packScores, packScoresV3, publicationMemo } from '../../src/score/publish-scores.js';
import { packData } from '../../src/publish/journal.js';
import { scoreRecordV3For, type ScoreEvidenceSource } from '../../src/score/record-v3.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG, parseScoringConfig, scoringConfigDigest } from '../../src/score/scoring-config.js';
import { readScoreOpsV3 } from '../../src/format/read-score-v3.js';
import { FORMAT_ID_V3 } from '../../src/format/schema-v3.js';
import type { PackMode } from '../../src/format/pack.js';
import {
  buildScoreMessageV3,
  scoreMessageV3Schema,
  scoresBatchV3,
  withScoreDefaultsV3,
} from '../../src/format/score-v3.js';
import { HOUR, T0, evalSignal, probe, runId, uaid } from '../support/signals.js';

const SOURCE: ScoreEvidenceSource = { topic: '0.0.1234', seq: [1, 400], publishers: ['0.0.1001'] };

/** A subject whose UAID is exactly `length` characters. */
function longUaid(length: number, i = 0): string {
  const base = uaid('');
  const tail = `agent-${i}.`;
  return `${base}${tail}${'x'.repeat(length - base.length - tail.length - 4)}.com`;
}

function scored(subjects: string[], config = DEFAULT_SCORING_CONFIG) {
  const signals = subjects.flatMap((s, i) => [
    probe(s, { seq: 3 * i + 1, at: T0 + i * 1000, reachable: i % 3 !== 0, run: 1 }),
    evalSignal(s, 'math', i % 2 ? 'correct' : 'wrong', { seq: 3 * i + 2, at: T0 + i * 1000 + 100, run: 1 }),
    evalSignal(s, 'science', 'correct', { seq: 3 * i + 3, at: T0 + i * 1000 + 200, run: 2 }),
  ]);
  return computeScores(signals, config, { now: new Date(T0 + HOUR) }).subjects;
}

/** The op "score" records a packed message holds, as a reader gets them. */
function readBack(bytes: Buffer): Array<Record<string, unknown>> {
  let value = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  expect(value.fmt).toBe(FORMAT_ID_V3);
  if (value.op === 'zlib') value = JSON.parse(inflateSync(Buffer.from(value.zlib as string, 'base64')).toString());
  return readScoreOpsV3(value).map((item, index) => {
    expect(item).toMatchObject({ kind: 'score', index, v: 3, validated: true });
    return (item as { message: Record<string, unknown> }).message;
  });
}

describe('format-3 score records', () => {
  it("carry the reference's fields, a breakdown per applicable adapter and the evidence", () => {
    const [s] = scored([uaid('calc.example.com')]);
    const built = buildScoreMessageV3(scoreRecordV3For(s!, SOURCE));
    const record = JSON.parse(built.json) as Record<string, unknown>;
    expect(Object.keys(record).slice(0, 2)).toEqual(['fmt', 'op']);
    expect(record).toMatchObject({
      fmt: 'hcs25-tool/3',
      op: 'score',
      subject: s!.subject,
      trustScore: s!.trustScores.total,
      trustScores: { total: s!.trustScores.total },
      trustScoreConfigVersion: DEFAULT_SCORING_CONFIG.trustScoreConfigVersion,
      trustConfidence: 1,
      evidence: {
        topic: '0.0.1234',
        seq: [1, 400],
        runs: [runId(1), runId(2)],
        publishers: ['0.0.1001'],
        config: scoringConfigDigest(DEFAULT_SCORING_CONFIG),
      },
    });
    // m_stale 1 and the reference's defaults are left out.
    expect(built.json).not.toContain('staleMultiplier');
    expect(built.json).not.toContain('"applicable"');
    expect(built.json).not.toContain('"unavailable"');
    const adapters = (record.breakdown as { adapters: Array<{ adapterId: string }> }).adapters;
    expect(adapters.map((a) => a.adapterId)).toEqual(['availability', 'simple-math', 'simple-science']);
    expect(adapters[1]).toEqual({
      adapterId: 'simple-math',
      contributionMode: 'scoped',
      inDenominator: true,
      weight: 0.5,
      total: 0,
      components: [{ key: 'simple-math.score', value: 0 }],
    });
    expect(adapters[0]).not.toHaveProperty('weight');
    expect(scoreMessageV3Schema.safeParse(record).success).toBe(true);
    // The reader puts the defaults back: the reference's shape, whole.
    const [read] = readBack(Buffer.from(built.json));
    expect((read!.breakdown as { adapters: unknown[] }).adapters[0]).toEqual({
      adapterId: 'availability',
      contributionMode: 'universal',
      inDenominator: true,
      weight: 1,
      total: 0,
      components: [{ key: 'availability.uptime', value: 0, status: 'ok', weight: 1 }],
      unavailable: [],
    });
    expect(read!.evidence).toMatchObject({ staleMultiplier: 1 });
  });

  it('a record whose runs do not fit leaves them out (the range still names its evidence); short ones keep them', () => {
    const subject = longUaid(140);
    const signals = Array.from({ length: 10 }, (_, k) => probe(subject, { seq: k + 1, at: T0 + k, run: k + 1 }));
    const [s] = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) }).subjects;
    expect(s!.evidence.runs).toHaveLength(10);
    const built = buildScoreMessageV3(scoreRecordV3For(s!, SOURCE));
    expect(built.bytes).toBeLessThanOrEqual(1024);
    expect(built.message.evidence).not.toHaveProperty('runs');
    expect(built.message.evidence).toMatchObject({ topic: '0.0.1234', seq: [1, 400] });
    const three = Array.from({ length: 3 }, (_, k) =>
      probe('uaid:aid:a;proto=a2a', { seq: k + 1, at: T0 + k, run: k + 1 }),
    );
    const [short] = computeScores(three, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) }).subjects;
    expect(buildScoreMessageV3(scoreRecordV3For(short!, SOURCE)).message.evidence.runs).toHaveLength(3);
  });

  it('a record with a 140-character UAID and the default config fits 1024 bytes (with m_stale and two publishers)', () => {
    const subject = longUaid(140);
    expect(subject).toHaveLength(140);
    const config = parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, staleMultiplier: 0.5 });
    const [s] = scored([subject], config);
    const built = buildScoreMessageV3(scoreRecordV3For(s!, { ...SOURCE, publishers: ['0.0.1001', '0.0.4567890'] }));
    expect(built.bytes).toBeLessThanOrEqual(1024);
    expect(built.json).toContain('"staleMultiplier":0.5');
    // A UAID far past that does not fit: the builder says so instead of sending a chunked message.
    const [huge] = scored([longUaid(500)]);
    expect(() => buildScoreMessageV3(scoreRecordV3For(huge!, SOURCE))).toThrow(MessageTooLargeError);
  });

  it.each<PackMode>(['json', 'dense', 'subject', 'none'])(
    '--pack %s: every message ≤ 1024 bytes, and its records read back exactly as built alone, in order',
    (mode) => {
      // UAIDs of 140 characters: a readable batch holds one such record; shorter ones share messages.
      const list = scored(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? longUaid(140, i) : `uaid:aid:z${i};proto=a2a`)),
      );
      const messages = packScoresV3(list, SOURCE, mode);
      const alone = list.map((s) =>
        JSON.stringify(withScoreDefaultsV3(JSON.parse(buildScoreMessageV3(scoreRecordV3For(s, SOURCE)).json))),
      );
      for (const m of messages) expect(m.bytes.length).toBeLessThanOrEqual(1024);
      const read = messages.flatMap((m) => readBack(m.bytes));
      expect(read.map((r) => JSON.stringify(r))).toEqual(alone);
      // A default record is ~750 bytes before its UAID: a readable batch rarely holds two, and one goes as op "score".
      if (mode !== 'dense') expect(messages).toHaveLength(20);
      if (mode !== 'dense') expect(messages.every((m) => JSON.parse(m.bytes.toString()).op === 'score')).toBe(true);
      if (mode === 'dense') {
        const json = packScoresV3(list, SOURCE, 'json').length;
        expect(messages.length).toBeLessThan(json);
        expect(messages.every((m) => JSON.parse(m.bytes.toString()).op === 'zlib')).toBe(true);
      }
    },
  );

  it('a batch writes what its records share once; a record of the batch keeps its own runs', () => {
    const list = scored(['uaid:aid:a;proto=a2a', 'uaid:aid:b;proto=a2a']);
    const built = list.map((s) => buildScoreMessageV3(scoreRecordV3For(s, SOURCE)));
    const batch = JSON.parse(JSON.stringify(scoresBatchV3(built.map((b) => b.message)))) as Record<string, unknown>;
    expect(readScoreOpsV3(batch).map((i) => (i as { message: unknown }).message)).toEqual(
      built.map((b) => withScoreDefaultsV3(JSON.parse(b.json))),
    );
    expect(batch).toMatchObject({
      fmt: 'hcs25-tool/3',
      op: 'scores',
      trustScoreConfigVersion: DEFAULT_SCORING_CONFIG.trustScoreConfigVersion,
      evidence: { topic: '0.0.1234', seq: [1, 400], publishers: ['0.0.1001'] },
    });
    const records = batch.records as Array<Record<string, unknown>>;
    expect(records).toHaveLength(2);
    expect(records.every((r) => Object.keys(r.evidence as object).join() === 'runs')).toBe(true);
    expect(records[0]).not.toHaveProperty('trustScoreConfigVersion');
  });

  it('reads open tokens and unknown fields; the record wins over the batch; a malformed record rejects the batch', () => {
    const [s] = scored([uaid('a.example.com')]);
    const { fmt: _f, op: _o, ...record } = buildScoreMessageV3(scoreRecordV3For(s!, SOURCE)).message;
    const future = {
      ...record,
      futureField: { any: 'thing' },
      evidence: { runs: [], topic: '0.0.9' },
      breakdown: {
        adapters: [
          {
            adapterId: 'reputation',
            contributionMode: 'graph-node',
            inDenominator: true,
            weight: 1,
            total: 40,
            components: [{ key: 'reputation.stars', value: 40, status: 'estimated', confidence: 0.3 }],
          },
        ],
      },
    };
    const items = readScoreOpsV3({
      fmt: FORMAT_ID_V3,
      op: 'scores',
      trustScoreConfigVersion: 3,
      trustScoreUpdatedAt: '2026-11-21T10:05:00.000Z',
      evidence: { topic: '0.0.1234', seq: [1, 9], config: scoringConfigDigest(DEFAULT_SCORING_CONFIG) },
      records: [future],
    });
    expect(items).toHaveLength(1);
    const message = (items[0] as { message: Record<string, unknown> }).message;
    expect(message).toMatchObject({ op: 'score', futureField: { any: 'thing' } });
    expect(message.evidence).toMatchObject({ topic: '0.0.9', seq: [1, 9], runs: [] });
    expect(message.breakdown).toMatchObject({
      adapters: [
        {
          contributionMode: 'graph-node',
          components: [{ key: 'reputation.stars', status: 'estimated', weight: 1, confidence: 0.3 }],
        },
      ],
    });
    expect(() =>
      readScoreOpsV3({ fmt: FORMAT_ID_V3, op: 'scores', records: [{ ...future, trustScore: 101 }] }),
    ).toThrow(/records\.0\.trustScore/);
  });

  it('a publication journaled in v2 (begun by an earlier hcs25) resumes under the v2 memo; anything else is format 3', () => {
    const list = scored([uaid('a.example.com')]);
    const state = (bytes: Buffer, encoding: 'json' | 'zlib' = 'json') => ({
      scores: new Map([
        ['s0', { key: 's0', encoding, data: packData(encoding, bytes), bytes: bytes.length, subjects: [], txIds: [] }],
      ]),
    });
    expect(publicationMemo(state(packScoresV3(list, SOURCE, 'none')[0]!.bytes))).toBe('hcs25-tool/3:score');
    expect(publicationMemo(state(packScoresV3(list, SOURCE, 'dense')[0]!.bytes))).toBe('hcs25-tool/3:score');
    expect(publicationMemo(state(packScores(list, 'none')[0]!.bytes))).toBe('hcs-25:op:1');
    const dense = packScores(list, 'dense')[0]!;
    expect(publicationMemo(state(dense.bytes, dense.encoding))).toBe('hcs-25:op:1');
    expect(publicationMemo({})).toBe('hcs25-tool/3:score');
  });
});
