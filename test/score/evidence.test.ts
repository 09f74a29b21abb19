import { describe, expect, it } from 'vitest';
import { LOW_EVIDENCE_COUNT, evidenceStrength, wilsonInterval } from '../../src/score/evidence.js';
import { computeScores, type ComponentBreakdown } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import type { ReadSignal } from '../../src/read/types.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';

/** The textbook Wilson score interval, written out here independently of the module. */
function textbookWilson(k: number, n: number): [number, number] {
  const z = 1.959963984540054; // Φ⁻¹(0.975)
  const p = k / n;
  const a = p + (z * z) / (2 * n);
  const b = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  const c = 1 + (z * z) / n;
  return [(a - b) / c, (a + b) / c];
}

describe('wilsonInterval', () => {
  it('is [0, 1] without observations', () => {
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it.each([
    [5, 10],
    [10, 10],
    [1, 1],
    [0, 10],
    [3, 7],
  ])('matches the textbook formula for %i of %i', (k, n) => {
    const [low, high] = textbookWilson(k, n);
    const got = wilsonInterval(k, n);
    expect(got.low).toBeCloseTo(low, 4);
    expect(got.high).toBeCloseTo(high, 4);
  });

  it('gives the published values: 5/10 → [0.2366, 0.7634], 10/10 → [0.7225, 1], 1/1 → [0.2065, 1]', () => {
    expect(wilsonInterval(5, 10)).toEqual({ low: 0.2366, high: 0.7634 });
    expect(wilsonInterval(10, 10)).toEqual({ low: 0.7225, high: 1 });
    expect(wilsonInterval(1, 1)).toEqual({ low: 0.2065, high: 1 });
  });

  it('narrows as observations grow at the same rate', () => {
    const small = wilsonInterval(4, 5);
    const large = wilsonInterval(80, 100);
    expect(large.high - large.low).toBeLessThan(small.high - small.low);
  });
});

const component = (c: Partial<ComponentBreakdown> & { adapterId: string }): ComponentBreakdown => ({
  value: 0,
  status: 'ok',
  samples: 0,
  newestAt: null,
  ...c,
});

describe('evidenceStrength', () => {
  it('reads each eval component as successes of its observations, by catalog signal id', () => {
    const e = evidenceStrength(
      {
        'availability.uptime': component({ adapterId: 'availability', value: 100, samples: 10 }),
        'simple-math.score': component({ adapterId: 'simple-math', value: 50, samples: 10 }),
        'simple-science.score': component({ adapterId: 'simple-science', value: 66.67, samples: 3 }),
      },
      DEFAULT_SCORING_CONFIG,
    );
    expect(e.basis).toBe('evals');
    expect(e.evalObservations).toBe(13);
    expect(e.lowEvidenceBelow).toBe(LOW_EVIDENCE_COUNT);
    expect(e.evals['simple-evals.a2a_math']).toEqual({
      component: 'simple-math.score',
      observations: 10,
      successes: 5,
      rate: 0.5,
      interval: { low: 0.2366, high: 0.7634 },
      lowEvidence: false,
    });
    const science = e.evals['simple-evals.a2a_science']!;
    expect(science.successes).toBe(2);
    expect(science.lowEvidence).toBe(true);
    const [low, high] = textbookWilson(2, 3);
    expect(science.interval.low).toBeCloseTo(low, 4);
    expect(science.interval.high).toBeCloseTo(high, 4);
    // One thin eval makes the subject's evidence low.
    expect(e.lowEvidence).toBe(true);
    expect(Object.keys(e.availability)).toEqual(['availability.probe']);
  });

  it('uses the value before m_stale: a stale component keeps its measured rate', () => {
    const e = evidenceStrength(
      {
        'simple-math.score': component({
          adapterId: 'simple-math',
          value: 40,
          beforeStale: 80,
          status: 'stale',
          samples: 5,
        }),
      },
      DEFAULT_SCORING_CONFIG,
    );
    expect(e.evals['simple-evals.a2a_math']).toMatchObject({ successes: 4, rate: 0.8, lowEvidence: false });
  });

  it('leaves out omitted components and says when nothing was measured', () => {
    const e = evidenceStrength(
      { 'simple-math.score': component({ adapterId: 'simple-math', omitted: true, samples: 3 }) },
      DEFAULT_SCORING_CONFIG,
    );
    expect(e).toMatchObject({ basis: 'none', lowEvidence: true, evalObservations: 0, evals: {}, availability: {} });
  });
});

describe('evidence in computed scores', () => {
  const now = new Date(T0 + HOUR);
  const probes = (subject: string, count: number, firstSeq: number): ReadSignal[] =>
    Array.from({ length: count }, (_, i) => probe(subject, { seq: firstSeq + i, at: T0 + i * 1000, run: firstSeq }));
  const evals = (subject: string, count: number, firstSeq: number): ReadSignal[] =>
    (['math', 'science'] as const).flatMap((kind, k) =>
      Array.from({ length: count }, (_, i) =>
        evalSignal(subject, kind, 'correct', { seq: firstSeq + k * count + i, at: T0 + i * 1000, run: firstSeq }),
      ),
    );

  it('ranks an MCP server that only answered probes after an agent that answered every question, at the same 100', () => {
    // "a" sorts first by name: only the evidence puts the agent ahead.
    const mcp = uaid('a-files.mcp.dev', 'mcp');
    const agent = uaid('b-calc.example.com', 'a2a');
    const thin = uaid('c-thin.example.com', 'a2a');
    const report = computeScores(
      [
        ...probes(mcp, 10, 1),
        ...probes(agent, 10, 100),
        ...evals(agent, 10, 200),
        ...probes(thin, 10, 300),
        ...evals(thin, 1, 400),
      ],
      DEFAULT_SCORING_CONFIG,
      { now },
    );
    expect(report.subjects.map((s) => [s.nativeId, s.trustScores.total])).toEqual([
      ['b-calc.example.com', 100],
      ['c-thin.example.com', 100],
      ['a-files.mcp.dev', 100],
    ]);
    const [well, thinScore, probesOnly] = report.subjects;
    expect(well!.evidenceStrength).toMatchObject({ basis: 'evals', lowEvidence: false, evalObservations: 20 });
    expect(thinScore!.evidenceStrength).toMatchObject({ basis: 'evals', lowEvidence: true, evalObservations: 2 });
    expect(thinScore!.evidenceStrength.evals['simple-evals.a2a_math']).toMatchObject({
      observations: 1,
      successes: 1,
      interval: { low: 0.2065, high: 1 },
      lowEvidence: true,
    });
    expect(probesOnly!.evidenceStrength).toMatchObject({
      basis: 'availability-only',
      lowEvidence: false,
      evalObservations: 0,
      evals: {},
    });
    expect(probesOnly!.evidenceStrength.availability['availability.probe']).toMatchObject({
      observations: 10,
      interval: { low: 0.7225, high: 1 },
    });
  });
});
