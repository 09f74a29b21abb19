import { describe, expect, it } from 'vitest';
import { ScoreAccumulator, computeScores, type SubjectScore } from '../../src/score/scores.js';
import { percentile } from '../../src/score/window.js';
import { consensusMs } from '../../src/core/consensus-time.js';
import { DEFAULT_SCORING_CONFIG, parseScoringConfig, type ScoringConfig } from '../../src/score/scoring-config.js';
import type { ReadSignal } from '../../src/read/types.js';
import { HOUR, T0, evalSignal, probe, uaid, vectorConfig, vectorSignals } from '../support/signals.js';
import { buildSignalV2 } from '../../src/format/write.js';
import { RUN_KEY, agent, evalResult as evalFixture } from '../format/fixtures.js';

const A2A = uaid('calc.example.com', 'a2a');
const MCP = uaid('files.mcp.dev', 'mcp');
const now = new Date(T0 + HOUR);

function score(signals: ReadSignal[], config: ScoringConfig = DEFAULT_SCORING_CONFIG, at = now) {
  return computeScores(signals, config, { now: at });
}

function probes(
  subject: string,
  count: number,
  options: { start?: number; reachable?: (i: number) => boolean; firstSeq?: number } = {},
): ReadSignal[] {
  return Array.from({ length: count }, (_, i) =>
    probe(subject, {
      seq: (options.firstSeq ?? 1) + i,
      at: (options.start ?? T0) + i * 1000,
      run: (options.firstSeq ?? 1) + i,
      reachable: options.reachable?.(i) ?? true,
      latencyMs: 100 + i,
    }),
  );
}

describe('computeScores — HCS-25 test vectors from signals', () => {
  it('TV1: missingness penalized (scoped) → 57.5', () => {
    const r = score(vectorSignals(A2A), parseScoringConfig(vectorConfig(1)));
    const s = r.subjects[0]!;
    expect(s.trustScores).toEqual({ total: 57.5, availability: 90, 'simple-evals': 50, reputation: 40 });
    expect(s.components['simple-evals.science']).toMatchObject({ value: 0, status: 'missing', samples: 0 });
    expect(s.components['simple-evals.math']).toMatchObject({ value: 100, status: 'ok', samples: 1 });
  });

  it('TV2: a conditional adapter without output leaves the denominator → 63.33', () => {
    const r = score(vectorSignals(A2A), parseScoringConfig(vectorConfig(2)));
    const s = r.subjects[0]!;
    expect(s.trustScores.total).toBe(63.33);
    expect(s.trustScores.reputation).toBeUndefined();
    expect(s.adapters.find((a) => a.adapterId === 'reputation')).toMatchObject({
      applicable: true,
      inDenominator: false,
      total: null,
      confidence: null,
    });
  });
});

describe('computeScores — default adapters', () => {
  it('availability.uptime is the share of reachable probes in the latest-N window', () => {
    // 12 probes, the first two down: the default window (latest 10) sees only reachable ones.
    const s = score(probes(MCP, 12, { reachable: (i) => i >= 2 })).subjects[0]!;
    expect(s.components['availability.uptime']).toMatchObject({ value: 100, samples: 10, status: 'ok' });
    const s2 = score(probes(MCP, 10, { reachable: (i) => i % 4 !== 0 })).subjects[0]!;
    expect(s2.components['availability.uptime']!.value).toBe(70);
  });

  it('a time window counts what was observed within it before the newest signal', () => {
    const config = parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, window: { kind: 'time', seconds: 5 } });
    // Probes one second apart; the newest 6 (0..5 s before the newest) are in the window, and only those are reachable.
    const s = score(probes(MCP, 10, { reachable: (i) => i >= 4 }), config).subjects[0]!;
    expect(s.components['availability.uptime']).toMatchObject({ value: 100, samples: 6 });
  });

  it('a non-applicable adapter leaves the denominator (MCP subjects are not asked eval questions)', () => {
    const s = score(probes(MCP, 10, { reachable: (i) => i !== 0 })).subjects[0]!;
    expect(s.trustScores).toEqual({ total: 90, availability: 90 });
    expect(s.adapters.filter((a) => !a.applicable).map((a) => a.adapterId)).toEqual(['simple-math', 'simple-science']);
    expect(s.components['simple-math.score']).toBeUndefined();
  });

  it('an applicable scoped adapter without signals scores a synthesized 0 (missing) and zero confidence', () => {
    const s = score(probes(A2A, 10)).subjects[0]!;
    expect(s.trustScores).toEqual({ total: 50, availability: 100, 'simple-math': 0, 'simple-science': 0 });
    expect(s.components['simple-math.score']).toMatchObject({ value: 0, status: 'missing', synthesized: true });
    expect(s.trustConfidence).toBe(0.5);
  });

  it('mean-score counts timeouts and errors as 0; all-timeout evals are status timeout', () => {
    const signals = [
      ...probes(A2A, 5),
      evalSignal(A2A, 'math', 'correct', { seq: 10, at: T0 + 10_000 }),
      evalSignal(A2A, 'math', 'timeout', { seq: 11, at: T0 + 11_000 }),
      evalSignal(A2A, 'math', 'skipped', { seq: 12, at: T0 + 12_000 }),
      evalSignal(A2A, 'math', 'wrong', { seq: 13, at: T0 + 13_000 }),
      evalSignal(A2A, 'science', 'timeout', { seq: 14, at: T0 + 14_000 }),
      evalSignal(A2A, 'science', 'error', { seq: 15, at: T0 + 15_000 }),
    ];
    const s = score(signals).subjects[0]!;
    // math: correct, timeout, wrong → 100/3 (skipped carries no measurement).
    expect(s.components['simple-math.score']).toMatchObject({ value: 33.33, status: 'ok', samples: 3 });
    expect(s.components['simple-science.score']).toMatchObject({ value: 0, status: 'error', samples: 2 });
    expect(s.adapters.find((a) => a.adapterId === 'simple-science')!.confidence).toBe(0);
  });

  it('stale: the newest observation older than the freshness window multiplies the value by m_stale', () => {
    const old = probes(MCP, 10, { start: T0 - 5 * 24 * HOUR, reachable: (i) => i !== 0 });
    const halved = parseScoringConfig({ ...DEFAULT_SCORING_CONFIG, staleMultiplier: 0.5 });
    const s = computeScores(old, halved, { now }).subjects[0]!;
    expect(s.components['availability.uptime']).toMatchObject({ status: 'stale', value: 45 });
    expect(s.trustScores.total).toBe(45);
    // Not ok: the reference's confidence counts it out; ours counts it at the stale factor.
    expect(s.trustConfidence).toBe(0);
    expect(s.sampleConfidence).toBe(DEFAULT_SCORING_CONFIG.confidence.staleFactor);
    // The built-in config sets m_stale 1 (HCS-25's default): a stale value keeps its value.
    expect(score(old).subjects[0]!.components['availability.uptime']).toMatchObject({ status: 'stale', value: 90 });
  });

  it('staleness uses min(fetchedAt, consensus): a future fetchedAt cannot freshen an old signal', () => {
    const at = T0 - 5 * 24 * HOUR;
    const forged = [probe(MCP, { seq: 1, at, fetched: T0 + 24 * HOUR })];
    expect(score(forged).subjects[0]!.components['availability.uptime']!.status).toBe('stale');
    const lateSubmit = [probe(MCP, { seq: 1, at: T0, fetched: T0 - 5 * 24 * HOUR })];
    expect(score(lateSubmit).subjects[0]!.components['availability.uptime']!.status).toBe('stale');
  });

  it('signals after now are ignored and counted', () => {
    const r = score([...probes(MCP, 3), probe(MCP, { seq: 9, at: now.getTime() + 1000, reachable: false })]);
    expect(r.counts).toMatchObject({ signals: 3, ignoredAfterNow: 1 });
    expect(r.subjects[0]!.trustScores.availability).toBe(100);
  });

  it('the consensus time a ReadSignal carries parsed (consensusMs, as the reader gives it) is the one scored; without it the text is parsed', () => {
    const late = probe(MCP, { seq: 9, at: now.getTime() + 1000, reachable: false });
    const early = probe(MCP, { seq: 9, at: T0, reachable: false });
    // Text and number disagree only here, to show which one is read: the reader gives both from one timestamp.
    expect(score([...probes(MCP, 3), { ...early, consensusMs: now.getTime() + 1000 }]).counts).toMatchObject({
      signals: 3,
      ignoredAfterNow: 1,
    });
    expect(score([...probes(MCP, 3), { ...late, consensusMs: T0 }]).counts).toMatchObject({
      signals: 4,
      ignoredAfterNow: 0,
    });
    expect(score([...probes(MCP, 3), early]).counts).toMatchObject({ signals: 4, ignoredAfterNow: 0 });
  });

  it('sampleConfidence grows with samples up to fullAtSamples; trustConfidence does not depend on them', () => {
    expect(score(probes(MCP, 2)).subjects[0]!).toMatchObject({ sampleConfidence: 0.4, trustConfidence: 1 });
    expect(score(probes(MCP, 5)).subjects[0]!).toMatchObject({ sampleConfidence: 1, trustConfidence: 1 });
  });

  it('latency p50/p95 are nearest-rank over reachable probes only', () => {
    const list = probes(MCP, 20, { reachable: (i) => i < 19 });
    const s = score(list).subjects[0]!;
    // Default latency window: latest 100; reachable latencies 100..118.
    expect(s.latency).toEqual({ p50Ms: 109, p95Ms: 118, samples: 19 });
    expect(percentile([5], 95)).toBe(5);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
  });

  it('weight 0 is informational; a non-scorable unavailable component is omitted', () => {
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
      ],
    });
    const signals = [
      ...probes(A2A, 5),
      evalSignal(A2A, 'math', 'correct', { seq: 10, at: T0 + 10_000 }),
      evalSignal(A2A, 'science', 'timeout', { seq: 11, at: T0 + 11_000 }),
    ];
    const s = score(signals, config).subjects[0]!;
    expect(s.trustScores).toEqual({ total: 50, availability: 100, info: 100, evals: 0 });
    expect(s.adapters.find((a) => a.adapterId === 'info')).toMatchObject({ inDenominator: false, total: 100 });
    expect(s.components['evals.science']).toMatchObject({ omitted: true, status: 'timeout' });
    expect(s.components['evals.score']).toMatchObject({ synthesized: true, value: 0 });
  });

  it('ranks by score, then confidence, then subject id', () => {
    const b = uaid('b.example', 'mcp');
    const a = uaid('a.example', 'mcp');
    const c = uaid('c.example', 'mcp');
    const r = score([...probes(b, 5), ...probes(a, 5, { firstSeq: 10 }), ...probes(c, 2, { firstSeq: 20 })]);
    expect(r.subjects.map((s) => s.nativeId)).toEqual(['a.example', 'b.example', 'c.example']);
  });

  it('ranks by score, then confidence, when a hand-built config puts sampleConfidence above 1 (stale factor 2, past the schema)', () => {
    const config: ScoringConfig = {
      ...DEFAULT_SCORING_CONFIG,
      staleMultiplier: 0.5,
      confidence: { fullAtSamples: 2, staleFactor: 2 },
    };
    const names = ['d.example', 'b.example', 'a.example', 'c.example'];
    const signals = names.flatMap((name, i) =>
      probes(uaid(name, 'mcp'), 1 + (i % 3), { firstSeq: 10 * i + 1, reachable: (k) => k !== 1 }),
    );
    const r = computeScores(signals, config, { now: new Date(T0 + 4 * 24 * HOUR) });
    expect(Math.max(...r.subjects.map((s) => s.sampleConfidence))).toBeGreaterThan(1);
    expect(r.subjects.map((s) => [s.nativeId, s.trustScores.total, s.sampleConfidence])).toEqual([
      // One reachable probe, stale: 100 × m_stale 0.5; confidence 2 × min(1, 1/2). Tied: by name.
      ['c.example', 50, 1],
      ['d.example', 50, 1],
      // Two of three reachable: 66.666… × 0.5, rounded once; one of two: 50 × 0.5; confidence 2 × 1.
      ['a.example', 33.33, 2],
      ['b.example', 25, 2],
    ]);
  });

  it('each subject reports its own times and values (a newest observation one millisecond later, another value)', () => {
    const r = score([
      ...probes(uaid('a.example', 'mcp'), 3),
      ...probes(uaid('b.example', 'mcp'), 3, { firstSeq: 10, start: T0 + 1 }),
    ]);
    const [a, b] = r.subjects as [SubjectScore, SubjectScore];
    expect(Date.parse(b.components['availability.uptime']!.newestAt!)).toBe(
      Date.parse(a.components['availability.uptime']!.newestAt!) + 1,
    );
    expect(Date.parse(b.counts.firstAt)).toBe(Date.parse(a.counts.firstAt) + 1);
    expect(b.latency).toEqual(a.latency);
    // Same times and samples, another value (one probe of three unreachable).
    const c = score([
      ...probes(uaid('a.example', 'mcp'), 3),
      ...probes(uaid('c.example', 'mcp'), 3, { firstSeq: 20, reachable: (i) => i !== 1 }),
    ]);
    const [best, worse] = c.subjects as [SubjectScore, SubjectScore];
    expect(best.components['availability.uptime']!.value).toBe(100);
    expect(worse.components['availability.uptime']!.value).toBe(66.67);
    expect(worse.latency).toEqual({ p50Ms: 100, p95Ms: 102, samples: 2 });
  });

  it('marks the publisher filter', () => {
    expect(score([]).publishers).toEqual({ filter: 'none', accounts: [] });
    const r = computeScores([], DEFAULT_SCORING_CONFIG, { now, publishers: ['0.0.9', '0.0.10', '0.0.9'] });
    expect(r.publishers).toEqual({ filter: 'allow-list', accounts: ['0.0.10', '0.0.9'] });
  });

  it('is deterministic: the same signals in any order, config and now give byte-identical JSON', () => {
    const signals = [...vectorSignals(A2A), ...probes(MCP, 12, { firstSeq: 100, reachable: (i) => i % 3 !== 0 })];
    const shuffled = [...signals].sort((x, y) => ((x.sequenceNumber * 7919) % 101) - ((y.sequenceNumber * 7919) % 101));
    expect(shuffled.map((s) => s.sequenceNumber)).not.toEqual(signals.map((s) => s.sequenceNumber));
    const a = JSON.stringify(
      computeScores(signals, DEFAULT_SCORING_CONFIG, { now, rejected: { duplicate: 1, 'bad-json': 2 } }),
    );
    const b = JSON.stringify(
      computeScores(shuffled, DEFAULT_SCORING_CONFIG, { now, rejected: { 'bad-json': 2, duplicate: 1 } }),
    );
    expect(b).toBe(a);
  });
});

describe('ScoreAccumulator — the compact form', () => {
  it('addSignal (message and primitives, as the reader folds) gives the report add gives, whatever order runs list their subjects in', () => {
    const subjects = Array.from({ length: 7 }, (_, i) => uaid(`agent-${i}.example.com`, i % 3 === 0 ? 'mcp' : 'a2a'));
    // Per run, an order of subject indexes: the same, reversed, rotated, with one left out, with one back and a
    // repeat: the subject that came next last time is guessed first, and every guess that misses must still be exact.
    const orders = [
      [0, 1, 2, 3, 4, 5],
      [0, 1, 2, 3, 4, 5],
      [5, 4, 3, 2, 1, 0],
      [2, 3, 4, 5, 0, 1],
      [2, 4, 5, 0, 1],
      [6, 2, 3, 3, 4, 5, 0, 1],
    ];
    const signals: ReadSignal[] = [];
    let seq = 0;
    orders.forEach((order, run) => {
      for (const i of order) {
        const at = T0 + seq * 1000;
        signals.push(
          probe(subjects[i]!, { seq: ++seq, at, run: run + 1, reachable: (seq + i) % 4 !== 0, latencyMs: 100 + seq }),
        );
        if (i % 3 !== 0)
          signals.push(
            evalSignal(subjects[i]!, 'math', (seq + run) % 3 === 0 ? 'wrong' : 'correct', {
              seq: ++seq,
              at: at + 1,
              run: run + 1,
            }),
          );
      }
    });
    const options = { now, publishers: ['0.0.1001'], topic: '0.0.5' };
    const compact = new ScoreAccumulator(DEFAULT_SCORING_CONFIG, now);
    for (const s of signals)
      compact.addSignal(s.message, s.sequenceNumber, consensusMs(s.consensusTimestamp), s.payerAccountId);
    const report = compact.finish(options);
    expect(report.counts).toMatchObject({ subjects: 7, signals: signals.length });
    expect(JSON.stringify(report)).toBe(JSON.stringify(computeScores(signals, DEFAULT_SCORING_CONFIG, options)));
  });
});

describe('computeScores — v1 and v2 signals of one subject', () => {
  it('reads v1 ids as aliases of the catalog ids: a v2 signal continues the v1 series', () => {
    const old = evalSignal(A2A, 'math', 'wrong', { seq: 1, at: T0, run: 1 });
    const v2 = buildSignalV2(
      { ...evalFixture(), agent: { ...agent, subject: A2A }, fetchedAt: new Date(T0 + 1000).toISOString() },
      { run: '01JDX3V9W5Q8K6T2N4M7P1R0ZB', runKey: RUN_KEY },
    ).message;
    const read: ReadSignal = {
      ...old,
      sequenceNumber: 2,
      consensusTimestamp: `${(T0 + 2000) / 1000}.000000000`,
      index: 1,
      message: v2,
    };
    const s = score([old, read]).subjects[0]!;
    expect(s.components['simple-math.score']).toMatchObject({ value: 50, samples: 2 });
  });
});

describe('computeScores — signal ids', () => {
  it('v1 ids are scored as their catalog (v2) ids: both feed the default components', () => {
    const v1 = evalSignal(A2A, 'math', 'correct', { seq: 2, at: T0 + 1000 });
    const v2 = {
      ...v1,
      sequenceNumber: 3,
      message: { ...v1.message, signal: 'simple-evals.a2a_math' },
    } as unknown as ReadSignal;
    const wrong = evalSignal(A2A, 'math', 'wrong', { seq: 4, at: T0 + 2000 });
    const s = score([
      probe(A2A, { seq: 1, at: T0 }),
      v1,
      v2,
      { ...wrong, message: { ...wrong.message, signal: 'simple-evals.a2a_math' } } as unknown as ReadSignal,
    ]).subjects[0]!;
    expect(DEFAULT_SCORING_CONFIG.adapters[1]!.components[0]!.signal).toBe('simple-evals.a2a_math');
    expect(s.components['simple-math.score']).toMatchObject({ value: 66.67, samples: 3 });
    expect(s.counts.bySignal).toEqual({ 'availability.probe': 1, 'simple-evals.a2a_math': 3 });
  });

  it('a failed v1 probe (status timeout/error) is a measured 0, status ok', () => {
    const s = score([
      probe(MCP, { seq: 1, at: T0, reachable: false, status: 'error' }),
      probe(MCP, { seq: 2, at: T0 + 1000, reachable: false }),
    ]).subjects[0]!;
    expect(s.components['availability.uptime']).toMatchObject({ value: 0, status: 'ok', samples: 2 });
  });
});

describe('computeScores — evals not asked because the probe failed', () => {
  it('are not measured: an earlier measurement in the window still counts, and without one the component is missing', () => {
    const notAsked = (kind: 'math' | 'science', seq: number) => {
      const s = evalSignal(A2A, kind, 'skipped', { seq, at: T0 + seq * 1000, run: seq });
      (s.message.data as Record<string, unknown>).reason = 'probe-unreachable';
      return s;
    };
    const r = score([
      evalSignal(A2A, 'math', 'correct', { seq: 1, at: T0, run: 1 }),
      probe(A2A, { seq: 2, at: T0 + 2000, run: 2, reachable: false, status: 'ok' }),
      notAsked('math', 3),
      notAsked('science', 4),
    ]);
    const s = r.subjects[0]!;
    expect(s.components['simple-math.score']).toMatchObject({ value: 100, status: 'ok', samples: 1 });
    expect(s.components['simple-science.score']).toMatchObject({ value: 0, status: 'missing', samples: 0 });
  });
});
