import { describe, expect, it } from 'vitest';
import { explanationFor, scoreMessageFor } from '../../src/score/publish-scores.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG, parseScoringConfig, scoringConfigDigest } from '../../src/score/scoring-config.js';
import { buildScoreMessageV2 } from '../../src/format/write.js';
import { scoreMessageV2Schema, type ScoreExplanation } from '../../src/format/schema-v2.js';
import { checkPublishedScore, recomputeScore, explanationOf } from '../../src/verify/score.js';
import { HOUR, T0, evalSignal, probe, uaid, vectorConfig, vectorSignals } from '../support/signals.js';

const SUBJECT = uaid('calc.example.com', 'a2a');
const UPDATED = '2026-11-21T10:05:00.000Z';
const DIGEST = scoringConfigDigest(DEFAULT_SCORING_CONFIG);

/** The spec's vectors as our explanation (`simple_evals` is `simple-evals`: the spec's own adapter-id rule forbids `_`). */
function vectorExplanation(vector: 1 | 2): ScoreExplanation {
  return {
    configDigest: DIGEST,
    adapters: [
      { id: 'availability', mode: 'scoped', w: 1, in: true, t: 90, c: [{ k: 'availability.uptime', v: 90, s: 'ok' }] },
      {
        id: 'simple-evals',
        mode: 'scoped',
        w: 2,
        in: true,
        t: 50,
        c: [
          { k: 'simple-evals.math', v: 100, s: 'ok' },
          { k: 'simple-evals.science', v: 0, s: 'missing' },
        ],
      },
      vector === 1
        ? { id: 'reputation', mode: 'scoped', w: 1, in: true, t: 40, c: [{ k: 'reputation.stars', v: 40, s: 'ok' }] }
        : { id: 'reputation', mode: 'conditional', w: 1, in: false, t: 0, c: [] },
    ],
  };
}

/** A record as the reference implementation shapes it: component keys in trustScores, its own breakdown. */
function referenceRecord(vector: 1 | 2): unknown {
  const total = vector === 1 ? 57.5 : 63.33;
  return {
    p: 'hcs-25',
    op: 'score',
    v: 2,
    subject: SUBJECT,
    trustScore: total,
    trustScores: {
      total,
      'availability.uptime': 90,
      'simple-evals.math': 100,
      'simple-evals.science': 0,
      ...(vector === 1 ? { 'reputation.stars': 40 } : {}),
    },
    trustScoreConfigVersion: 1,
    trustScoreUpdatedAt: '2026-11-21T10:05:00Z',
    trustConfidence: 0.75,
    breakdown: {
      adapters: [
        {
          adapterId: 'availability',
          contributionMode: 'scoped',
          applicable: true,
          inDenominator: true,
          weight: 1,
          components: [{ key: 'availability.uptime', value: 90, status: 'ok', weight: 1 }],
          unavailable: [],
          total: 90,
        },
        {
          adapterId: 'simple-evals',
          contributionMode: 'scoped',
          applicable: true,
          inDenominator: true,
          weight: 2,
          components: [
            { key: 'simple-evals.math', value: 100, status: 'ok', weight: 1 },
            { key: 'simple-evals.science', value: 0, status: 'missing', weight: 1 },
          ],
          unavailable: [],
          total: 50,
        },
        vector === 1
          ? {
              adapterId: 'reputation',
              contributionMode: 'scoped',
              applicable: true,
              inDenominator: true,
              weight: 1,
              components: [{ key: 'reputation.stars', value: 40, status: 'ok' }],
              unavailable: [],
              total: 40,
            }
          : {
              adapterId: 'reputation',
              contributionMode: 'conditional',
              applicable: true,
              inDenominator: false,
              weight: 1,
              components: [],
              unavailable: ['reputation.stars'],
              total: 0,
            },
        {
          adapterId: 'x402',
          contributionMode: 'scoped',
          applicable: false,
          inDenominator: false,
          weight: 1,
          components: [],
          total: 0,
        },
      ],
    },
    extraFieldFromTheFuture: { kept: true },
  };
}

describe('score records v2 — HCS-25 test vectors', () => {
  it.each([
    [1, 57.5],
    [2, 63.33],
  ] as const)('vector %i: our explanation recomputes to %d and builds a record that checks', (vector, total) => {
    const explanation = vectorExplanation(vector);
    expect(recomputeScore({ staleMultiplier: 1, adapters: explanation.adapters }).total).toBe(total);
    const built = buildScoreMessageV2({
      subject: SUBJECT,
      total,
      trustScoreConfigVersion: 1,
      trustScoreUpdatedAt: UPDATED,
      explanation,
    });
    expect(built.message.trustScore).toBe(total);
    expect(built.message.trustScores['simple-evals.math']).toBe(100);
    expect(checkPublishedScore(scoreMessageV2Schema.parse(JSON.parse(built.json)))).toMatchObject({
      ok: true,
      status: 'verified',
      expected: total,
      actual: total,
    });
  });

  it.each([
    [1, 57.5],
    [2, 63.33],
  ] as const)('vector %i: a record built the reference way parses and recomputes to %d', (vector, total) => {
    const parsed = scoreMessageV2Schema.safeParse(referenceRecord(vector));
    expect(parsed.success).toBe(true);
    const record = parsed.data!;
    expect((record as Record<string, unknown>).extraFieldFromTheFuture).toEqual({ kept: true });
    expect(explanationOf(record)!.adapters.map((a) => a.id)).toEqual(['availability', 'simple-evals', 'reputation']);
    expect(checkPublishedScore(record)).toMatchObject({ ok: true, expected: total, actual: total });
  });

  it('the scorer computes the vectors from signals, and its published records recompute to the same totals', () => {
    for (const [vector, total] of [
      [1, 57.5],
      [2, 63.33],
    ] as const) {
      const config = parseScoringConfig(vectorConfig(vector));
      const s = computeScores(vectorSignals(SUBJECT), config, { now: new Date(T0 + HOUR) }).subjects[0]!;
      expect(s.trustScores.total).toBe(total);
      const record = scoreMessageV2Schema.parse(JSON.parse(scoreMessageFor(s).json));
      expect(
        checkPublishedScore(record, { configDigest: scoringConfigDigest(config), configVersion: 1 }),
      ).toMatchObject({ ok: true, expected: total });
    }
  });
});

describe('score records v2 — rounding where the order matters', () => {
  const explanation = (t: number): ScoreExplanation => ({
    configDigest: DIGEST,
    adapters: [
      {
        id: 'a',
        mode: 'scoped',
        w: 1,
        in: true,
        t,
        c: [
          { k: 'a.x', v: 100, s: 'ok' },
          { k: 'a.y', v: 100, s: 'ok' },
          { k: 'a.z', v: 0, s: 'ok' },
        ],
      },
      { id: 'b', mode: 'scoped', w: 1, in: true, t: 50, c: [{ k: 'b.x', v: 50, s: 'ok' }] },
    ],
  });

  it('the composite is taken over adapter totals rounded to 2 decimals: 58.34, not 58.33', () => {
    expect(recomputeScore({ staleMultiplier: 1, adapters: explanation(66.67).adapters }).total).toBe(58.34);
    const record = buildScoreMessageV2({
      subject: SUBJECT,
      total: 58.33,
      trustScoreConfigVersion: 1,
      trustScoreUpdatedAt: UPDATED,
      explanation: explanation(66.67),
    }).message;
    expect(checkPublishedScore(record)).toMatchObject({
      ok: false,
      status: 'mismatch',
      field: 'trustScores.total',
      expected: 58.34,
      actual: 58.33,
    });
  });

  it('a stale component is multiplied by m_stale after rounding, and rounded again', () => {
    const e: ScoreExplanation = {
      configDigest: DIGEST,
      staleMultiplier: 0.5,
      adapters: [{ id: 'a', mode: 'scoped', w: 1, in: true, t: 0.02, c: [{ k: 'a.x', v: 0.03, s: 'stale' }] }],
    };
    expect(
      recomputeScore(explanationOf({ trustScores: { total: 0 }, trustScoreConfigVersion: 1, explanation: e })!).total,
    ).toBe(0.02);
  });
});

describe('checkPublishedScore — drift', () => {
  const good = () =>
    buildScoreMessageV2({
      subject: SUBJECT,
      total: 57.5,
      trustScoreConfigVersion: 1,
      trustScoreUpdatedAt: UPDATED,
      explanation: vectorExplanation(1),
    }).message;

  it('names the field: total, trustScore, a component value, an adapter total, denominator membership', () => {
    const total = { ...good(), trustScore: 80, trustScores: { ...good().trustScores, total: 80 } };
    expect(checkPublishedScore(total)).toMatchObject({ field: 'trustScores.total', expected: 57.5, actual: 80 });
    const mirrored = scoreMessageV2Schema.parse({ ...good(), trustScore: 80 });
    expect(checkPublishedScore(mirrored)).toMatchObject({ field: 'trustScore', expected: 57.5, actual: 80 });
    const component = { ...good(), trustScores: { ...good().trustScores, 'reputation.stars': 90 } };
    expect(checkPublishedScore(component)).toMatchObject({
      field: 'trustScores.reputation.stars',
      expected: 40,
      actual: 90,
    });
    const e = vectorExplanation(1);
    e.adapters[1] = { ...e.adapters[1]!, t: 70 };
    expect(checkPublishedScore({ ...good(), explanation: e })).toMatchObject({
      field: 'explanation.adapters[1].t',
      expected: 50,
      actual: 70,
    });
    const out = vectorExplanation(1);
    out.adapters[2] = { ...out.adapters[2]!, in: false };
    expect(checkPublishedScore({ ...good(), explanation: out })).toMatchObject({
      field: 'explanation.adapters[2].in',
      expected: true,
      actual: false,
    });
  });

  it('checks the config digest and version when the caller knows them', () => {
    const other = scoringConfigDigest(parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, staleMultiplier: 0.5 }));
    expect(other).not.toBe(DIGEST);
    expect(checkPublishedScore(good(), { configDigest: other })).toMatchObject({ field: 'explanation.configDigest' });
    expect(checkPublishedScore(good(), { configVersion: 2 })).toMatchObject({
      field: 'trustScoreConfigVersion',
      expected: 2,
      actual: 1,
    });
  });

  it('a record without an explanation (v1) is unverifiable, not a mismatch', () => {
    const v1 = { trustScores: { total: 57.5, availability: 90 }, trustScoreConfigVersion: 1 };
    expect(checkPublishedScore(v1)).toMatchObject({ ok: false, status: 'unverifiable', field: 'explanation' });
  });
});

describe('score records v2 — from the scorer', () => {
  // The reference implementation's example UAID: a long one, to measure the size.
  const LONG =
    'uaid:aid:2ayFqipw6krtLto6minZALXx9qyKUrr17pEPCqtMyHHCZFzMRvSCKhr3dEVcRaM23i;uid=agent1qghw9n306v4jynrxtj07an03g8xtzmjcpmpl0l4cggmvqmjmrqr6c0np39q;registry=agentverse;proto=a2a;nativeId=agent1qghw9n306v4jynrxtj07an03g8xtzmjcpmpl0l4cggmvqmjmrqr6c0np39q';

  function scored(subject: string, at = T0, config = DEFAULT_SCORING_CONFIG) {
    const signals = [
      ...Array.from({ length: 9 }, (_, i) => probe(subject, { seq: i + 1, at: at + i * 1000, reachable: i % 3 !== 0 })),
      evalSignal(subject, 'math', 'correct', { seq: 20, at: at + 20_000 }),
      evalSignal(subject, 'math', 'wrong', { seq: 21, at: at + 21_000 }),
      evalSignal(subject, 'math', 'timeout', { seq: 22, at: at + 22_000 }),
      evalSignal(subject, 'science', 'correct', { seq: 23, at: at + 23_000 }),
      evalSignal(subject, 'science', 'unparseable', { seq: 24, at: at + 24_000 }),
      evalSignal(subject, 'science', 'wrong', { seq: 25, at: at + 25_000 }),
    ];
    return computeScores(signals, config, { now: new Date(T0 + HOUR) }).subjects[0]!;
  }

  it('fits one HCS message with the default config, even for a long UAID, and recomputes', () => {
    const s = scored(LONG);
    const built = scoreMessageFor(s);
    expect(built.bytes).toBeLessThanOrEqual(1024);
    expect(built.message.trustScores).toEqual({
      total: 50,
      'availability.uptime': 66.67,
      'simple-math.score': 33.33,
      'simple-science.score': 33.33,
    });
    expect(checkPublishedScore(scoreMessageV2Schema.parse(JSON.parse(built.json)))).toMatchObject({
      ok: true,
      expected: 50,
    });
  });

  it('a subject id too long for the explanation is published without it, and checks as unverifiable', () => {
    const huge = uaid(`agent.${'x'.repeat(330)}.example`);
    const built = scoreMessageFor(scored(huge));
    expect(built).toMatchObject({ explained: false });
    expect(built.bytes).toBeLessThanOrEqual(1024);
    expect(built.message.explanation).toBeUndefined();
    expect(built.message.trustScores).toMatchObject({ total: 50, 'availability.uptime': 66.67 });
    expect(checkPublishedScore(built.message)).toMatchObject({ status: 'unverifiable' });
    expect(scoreMessageFor(scored(LONG)).explained).toBe(true);
  });

  it('stale components publish their value before m_stale; the record recomputes', () => {
    const halved = parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, staleMultiplier: 0.5 });
    const s = scored(SUBJECT, T0 - 5 * 24 * HOUR, halved);
    // 66.666… × 0.5 rounded once; the explanation's rounded 66.67 × 0.5 = 33.335 rounds to the same cent here.
    expect(s.components['availability.uptime']).toMatchObject({ status: 'stale', value: 33.33, beforeStale: 66.67 });
    const e = explanationFor(s);
    expect(e.staleMultiplier).toBe(0.5);
    expect(e.adapters[0]!.c[0]).toEqual({ k: 'availability.uptime', v: 66.67, s: 'stale' });
    // A v2 explanation rounds before m_stale, so recomputing it moves this total by a cent: the reason format 3
    // publishes the value after m_stale, and v2 records are no longer written (those once written recompute, as they
    // were computed at the same rounding points).
    expect(s.trustScores.total).toBe(25);
    expect(checkPublishedScore(scoreMessageFor(s).message)).toMatchObject({
      status: 'mismatch',
      field: 'trustScores.total',
      expected: 25.01,
      actual: 25,
    });
  });

  it('non-applicable adapters are left out; omitted and synthesized components are explained', () => {
    const mcp = uaid('files.mcp.dev', 'mcp');
    const s = computeScores([probe(mcp, { seq: 1, at: T0 })], DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) })
      .subjects[0]!;
    expect(explanationFor(s).adapters.map((a) => a.id)).toEqual(['availability']);

    const config = parseScoringConfig({
      ...DEFAULT_SCORING_CONFIG,
      adapters: [
        DEFAULT_SCORING_CONFIG.adapters[0]!,
        {
          adapterId: 'info',
          contributionMode: 'scoped',
          weight: 0,
          components: [{ key: 'info.math', signal: 'simple-evals.math', method: 'mean-score' }],
        },
        {
          adapterId: 'evals',
          contributionMode: 'scoped',
          weight: 1,
          components: [
            {
              key: 'evals.science',
              signal: 'simple-evals.science',
              method: 'mean-score',
              nonScorableWhenUnavailable: true,
            },
          ],
        },
        {
          adapterId: 'extra',
          contributionMode: 'conditional',
          weight: 1,
          components: [{ key: 'extra.x', signal: 'extra.signal', method: 'mean-score' }],
        },
      ],
    });
    const signals = [
      probe(SUBJECT, { seq: 1, at: T0 }),
      evalSignal(SUBJECT, 'math', 'correct', { seq: 2, at: T0 }),
      evalSignal(SUBJECT, 'science', 'timeout', { seq: 3, at: T0 }),
    ];
    const t = computeScores(signals, config, { now: new Date(T0 + HOUR) }).subjects[0]!;
    const record = scoreMessageFor(t).message;
    expect(record.explanation!.adapters).toEqual([
      {
        id: 'availability',
        mode: 'universal',
        w: 1,
        in: true,
        t: 100,
        c: [{ k: 'availability.uptime', v: 100, s: 'ok' }],
      },
      { id: 'info', mode: 'scoped', w: 0, in: false, t: 100, c: [{ k: 'info.math', v: 100, s: 'ok' }] },
      {
        id: 'evals',
        mode: 'scoped',
        w: 1,
        in: true,
        t: 0,
        c: [
          { k: 'evals.science', v: null, s: 'timeout' },
          { k: 'evals.score', v: 0, s: 'missing' },
        ],
      },
      { id: 'extra', mode: 'conditional', w: 1, in: false, t: 0, c: [] },
    ]);
    expect(record.trustScores).toEqual({ total: 50, 'availability.uptime': 100, 'info.math': 100, 'evals.score': 0 });
    expect(checkPublishedScore(record)).toMatchObject({ ok: true, expected: 50 });
  });

  it('the config digest ignores key order and $schema, and changes with the config', () => {
    const reversed = { $schema: 'x', ...Object.fromEntries(Object.entries(DEFAULT_SCORING_CONFIG).reverse()) };
    expect(Object.keys(reversed)[1]).toBe('adapters');
    const reordered = parseScoringConfig(JSON.parse(JSON.stringify(reversed)));
    expect(scoringConfigDigest(reordered)).toBe(DIGEST);
    expect(scoringConfigDigest(parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, trustScoreConfigVersion: 4 }))).not.toBe(
      DIGEST,
    );
  });
});
