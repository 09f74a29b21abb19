import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { checkScoreRecords } from '../../src/verify/check-scores.js';
import { packScores, scoreMessageFor } from '../../src/score/publish-scores.js';
import { computeScores, type SubjectScore } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG, scoringConfigDigest } from '../../src/score/scoring-config.js';
import type { ReadRecord } from '../../src/read/types.js';
import { PACK_MODES, ScorePacker, batchRecords, scoresBody } from '../../src/format/pack.js';
import { readMessage } from '../../src/format/read.js';
import type { MessageItem } from '../../src/format/read-common.js';
import { SCORES_MAX_RECORDS, scoresBodySchema } from '../../src/format/schema-v2.js';
import { expandScores } from '../../src/format/read-v2.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';

/** Scores of `n` subjects (a probe, a math and a science eval each), all computed at one instant with the built-in config. */
function subjects(n: number, name = (i: number) => `agent-${i}.example.com`): SubjectScore[] {
  const signals = Array.from({ length: n }, (_, i) => [
    probe(uaid(name(i)), { seq: 2 * i + 1, at: T0 + i * 1000, reachable: i % 3 !== 0 }),
    evalSignal(uaid(name(i)), 'math', i % 2 ? 'correct' : 'wrong', { seq: 2 * i + 2, at: T0 + i * 1000 + 500 }),
    evalSignal(uaid(name(i)), 'science', i % 5 ? 'correct' : 'wrong', { seq: 10_000 + i, at: T0 + i * 1000 + 700 }),
  ]).flat();
  return computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) }).subjects;
}

/** What the reader hands a consumer, for every message in topic order (sequence numbers from 1). */
function read(messages: readonly Buffer[]): ReadRecord[] {
  return messages.flatMap((bytes, i) => {
    const result = readMessage(bytes);
    if (!result.ok) throw new Error(`message ${i + 1} rejected: ${result.reason} ${result.detail}`);
    return result.items.map((item) => {
      if (item.kind !== 'score') throw new Error(`message ${i + 1}: unexpected ${item.kind}`);
      return {
        sequenceNumber: i + 1,
        consensusTimestamp: `${1000 + i}.0`,
        consensusAt: new Date(0).toISOString(),
        payerAccountId: '0.0.2',
        ...item,
      };
    });
  });
}

const items = (r: ReturnType<typeof readMessage>): MessageItem[] => (r.ok ? r.items : []);

describe('score record batches (op "scores")', () => {
  const scored = subjects(60);
  const singles = scored.map((s) => scoreMessageFor(s));

  it.each(PACK_MODES)(
    '%s: build → read → check gives every record exactly as its single op "score" form, verified, addressable as (sequence, index)',
    (mode) => {
      const messages = packScores(scored, mode);
      expect(messages.every((m) => m.bytes.length <= 1024)).toBe(true);
      expect(messages.flatMap((m) => m.records.map((r) => r.subject))).toEqual(scored.map((s) => s.subject));
      const records = read(messages.map((m) => m.bytes));
      // Byte for byte: the batch writes each record minus what it shares, and the reader puts exactly that back.
      expect(records.map((r) => JSON.stringify(r.message))).toEqual(singles.map((s) => s.json));
      expect(records.every((r) => r.validated && r.v === 2)).toBe(true);
      const { counts, results } = checkScoreRecords(records, {
        configDigest: scoringConfigDigest(DEFAULT_SCORING_CONFIG),
        configVersion: DEFAULT_SCORING_CONFIG.trustScoreConfigVersion,
      });
      expect(counts).toEqual({ verified: 60, mismatch: 0, unverifiable: 0 });
      const places = results.map((r) => `${r.sequenceNumber}.${r.index}`);
      expect(new Set(places).size).toBe(60);
      const perMessage = messages.map((m) => m.records.length);
      expect(results.map((r) => r.index)).toEqual(perMessage.flatMap((n) => Array.from({ length: n }, (_, k) => k)));
      if (mode === 'none') {
        expect(messages.map((m) => m.bytes.toString('utf8'))).toEqual(singles.map((s) => s.json));
      } else {
        expect(
          messages.every(
            (m) => JSON.parse((mode === 'dense' ? inflateSync(m.bytes) : m.bytes).toString('utf8')).op === 'scores',
          ),
        ).toBe(true);
        expect(
          messages.every(
            (m) => m.encoding === (mode === 'dense' ? 'zlib' : 'json') && (mode !== 'dense' || m.bytes[0] === 0x78),
          ),
        ).toBe(true);
      }
      if (mode === 'dense') expect(messages.length).toBeLessThanOrEqual(Math.ceil(60 / 5));
      expect(messages.flatMap((m) => batchRecords(m.bytes).map((r) => JSON.stringify(r)))).toEqual(
        singles.map((s) => s.json),
      );
    },
  );

  it('an old single op "score" record and the same record in a batch read alike', () => {
    const [alone] = read([Buffer.from(singles[7]!.json)]);
    const batched = read(packScores(scored, 'dense').map((m) => m.bytes)).find(
      (r) => r.message.subject === scored[7]!.subject,
    )!;
    expect(batched.message).toEqual(alone!.message);
    expect(checkScoreRecords([batched])).toEqual({
      ...checkScoreRecords([alone!]),
      results: [
        { ...checkScoreRecords([alone!]).results[0]!, sequenceNumber: batched.sequenceNumber, index: batched.index },
      ],
    });
    expect(batched.index).toBeGreaterThan(0);
  });

  it('writes shared fields once only when every record agrees; a record keeps its own otherwise', () => {
    const records = singles.slice(0, 3).map((s) => s.message);
    const shared = scoresBody(records);
    expect(shared).toMatchObject({
      trustScoreConfigVersion: records[0]!.trustScoreConfigVersion,
      trustScoreUpdatedAt: records[0]!.trustScoreUpdatedAt,
      configDigest: records[0]!.explanation!.configDigest,
    });
    expect(
      shared.records.every((r) => r.trustScoreConfigVersion === undefined && r.explanation!.configDigest === undefined),
    ).toBe(true);

    const other = {
      ...records[1]!,
      trustScoreConfigVersion: 9,
      explanation: { ...records[1]!.explanation!, configDigest: `sha256:${'B'.repeat(43)}` },
    };
    const mixed = scoresBody([records[0]!, other]);
    expect(mixed.trustScoreConfigVersion).toBeUndefined();
    expect(mixed.configDigest).toBeUndefined();
    expect(expandScores(scoresBodySchema.parse(mixed)).map((r) => JSON.stringify(r))).toEqual([
      JSON.stringify(records[0]),
      JSON.stringify(other),
    ]);
  });

  it('a record without its explanation (a very long subject id) travels in a batch and reads as unverifiable, as alone', () => {
    const long = subjects(3, (i) => (i === 1 ? `agent.${'x'.repeat(330)}.example` : `agent-${i}.example.com`));
    expect(long.map((s) => scoreMessageFor(s).explained).filter((e) => !e)).toHaveLength(1);
    const records = read(packScores(long, 'dense').map((m) => m.bytes));
    expect(records.map((r) => JSON.stringify(r.message))).toEqual(long.map((s) => scoreMessageFor(s).json));
    expect(checkScoreRecords(records).counts).toEqual({ verified: 2, mismatch: 0, unverifiable: 1 });
  });

  it('rejects a batch whose body breaks the schema (it is a known op), naming the record', () => {
    const body = scoresBody(singles.slice(0, 2).map((s) => s.message));
    const cases: Array<[unknown, RegExp]> = [
      [{ ...body, records: [] }, /^records: /],
      [{ ...body, records: [{ ...body.records[0], trustScore: 101 }] }, /^records\.0\.trustScore: /],
      [{ ...body, records: [{ ...body.records[0], subject: 'agent-1' }] }, /^records\.0\.subject: /],
      [{ ...body, configDigest: undefined }, /^record 0: explanation\.configDigest: /],
      [{ ...body, trustScoreConfigVersion: undefined }, /^record 0: trustScoreConfigVersion: /],
      [
        {
          ...body,
          records: Array.from({ length: SCORES_MAX_RECORDS + 1 }, () => ({
            subject: body.records[0]!.subject,
            trustScore: 0,
            trustScores: { total: 0 },
          })),
        },
        /^records: /,
      ],
    ];
    for (const [bad, detail] of cases) {
      const result = readMessage(deflateSync(JSON.stringify(bad)));
      expect(result).toMatchObject({ ok: false, reason: 'schema', detail: expect.stringMatching(detail) });
    }
    expect(
      readMessage(
        Buffer.from(JSON.stringify({ ...body, records: [body.records[0]], trustScoreUpdatedAt: 'yesterday' })),
      ),
    ).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('an op a reader does not know is counted, not rejected, and a batch under another version is too', () => {
    const body = scoresBody(singles.slice(0, 2).map((s) => s.message));
    expect(items(readMessage(deflateSync(JSON.stringify({ ...body, op: 'scores-v9' }))))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'op', name: 'scores-v9' },
    ]);
    expect(items(readMessage(deflateSync(JSON.stringify({ ...body, v: 3 }))))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'version', name: '3' },
    ]);
  });

  it('fills each dense message as far as the limit allows', () => {
    const packer = new ScorePacker({ mode: 'dense', maxBytes: 600 });
    const out = [...singles.flatMap((s) => packer.add(s)), ...packer.flush()];
    expect(out.every((m) => m.bytes.length <= 600)).toBe(true);
    // Each message but the last was closed because the next record did not fit.
    for (let i = 0; i < out.length - 1; i++) {
      const next = singles[out.slice(0, i + 1).reduce((n, m) => n + m.records.length, 0)]!;
      const tried = [...out[i]!.records, next.message];
      expect(deflateSync(JSON.stringify(scoresBody(tried)), { level: 9 }).length).toBeGreaterThan(600);
    }
  });
});
