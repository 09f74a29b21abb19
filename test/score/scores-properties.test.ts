import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byCodeUnit, computeScores, ScoreAccumulator, type ScoreReport } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG, parseScoringConfig, type ScoringConfig } from '../../src/score/scoring-config.js';
import { consensusMs } from '../../src/core/consensus-time.js';
import type { ReadSignal } from '../../src/read/types.js';
import { SIGNAL_STATUSES } from '../../src/format/protocol.js';
import { subjectLabel } from '../../src/read/labels.js';
import { T0, runId, uaid } from '../support/signals.js';

const SUBJECTS = [
  uaid('calc.example.com', 'a2a'),
  uaid('files.mcp.dev', 'mcp'),
  uaid('gpt.openrouter.ai', 'openai', 'openrouter'),
  uaid('near.example', 'a2a', 'near-ai'),
  'uaid:did:z6Mk;uid=0;proto=a2a',
  'not-a-uaid',
];
const SIGNALS = [
  'availability.probe',
  'simple-evals.math',
  'simple-evals.a2a_math',
  'simple-evals.science',
  'simple-evals.a2a_science',
  'reputation.stars',
];
const window = fc.oneof(
  fc.record({ kind: fc.constant('latest' as const), count: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ kind: fc.constant('time' as const), seconds: fc.integer({ min: 1, max: 30 }) }),
);
const list = (values: string[]) => fc.option(fc.subarray(values), { nil: undefined });

const configArb: fc.Arbitrary<ScoringConfig> = fc
  .record({
    staleMultiplier: fc.constantFrom(0, 0.33, 0.5, 1),
    freshnessSeconds: fc.integer({ min: 1, max: 90 }),
    window,
    confidence: fc.record({ fullAtSamples: fc.integer({ min: 1, max: 6 }), staleFactor: fc.constantFrom(0, 0.5, 1) }),
    latency: fc.record({ signal: fc.constantFrom('availability.probe', 'simple-evals.math'), window }),
    adapters: fc.array(
      fc.record({
        contributionMode: fc.constantFrom('universal', 'scoped', 'conditional'),
        weight: fc.constantFrom(0, 0.5, 1, 2),
        includeRegistries: list(['hol', 'openrouter', 'near-ai']),
        excludeRegistries: list(['hol', 'openrouter', 'near-ai']),
        protocols: list(['a2a', 'mcp', 'openai']),
        excludeProtocols: list(['a2a', 'mcp']),
        defaultComponent: fc.boolean(),
        components: fc.array(
          fc.record({
            signal: fc.constantFrom(...SIGNALS),
            method: fc.constantFrom('reachable-share', 'mean-score'),
            window: fc.option(window, { nil: undefined }),
            nonScorableWhenUnavailable: fc.option(fc.boolean(), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ adapters, ...rest }) =>
    parseScoringConfig({
      trustScoreConfigVersion: 3,
      ...rest,
      adapters: adapters.map(({ defaultComponent, components, ...a }, i) => ({
        adapterId: `adapter-${'abcd'[i]}`,
        ...Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)),
        ...(defaultComponent ? { defaultComponentKey: `adapter-${'abcd'[i]}.fallback` } : {}),
        components: components.map((c, k) => ({
          key: `adapter-${'abcd'[i]}.c${'xyz'[k]}`,
          ...Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)),
        })),
      })),
    }),
  );

/** Signals as the reader yields them, in any order, with duplicate sequence numbers and signals after `now`. */
const signalArb: fc.Arbitrary<ReadSignal> = fc
  .record({
    subject: fc.constantFrom(...SUBJECTS),
    signal: fc.constantFrom(...SIGNALS),
    status: fc.constantFrom(...SIGNAL_STATUSES),
    reachable: fc.option(fc.boolean(), { nil: undefined }),
    score: fc.constantFrom(0, 100, 37.5, 33.335, 66.665, 99.995),
    latencyMs: fc.integer({ min: 0, max: 2000 }),
    seq: fc.integer({ min: 1, max: 40 }),
    // Whole seconds mostly, so observation times tie (ties are broken by sequence number).
    atMs: fc.oneof(
      fc.integer({ min: 0, max: 8 }).map((s) => s * 10_000),
      fc.integer({ min: 0, max: 80_000 }),
    ),
    nanos: fc.integer({ min: 0, max: 999_999 }),
    fetchedDelta: fc.oneof(
      fc.constant(0),
      fc.integer({ min: -10, max: 10 }).map((s) => s * 1000),
      fc.integer({ min: -10_000, max: 10_000 }),
    ),
    run: fc.integer({ min: 0, max: 3 }),
    payer: fc.constantFrom('0.0.1001', '0.0.1002'),
  })
  .map((s) => {
    const at = T0 + s.atMs;
    const consensusTimestamp = `${Math.floor(at / 1000)}.${String((at % 1000) * 1_000_000 + s.nanos).padStart(9, '0')}`;
    const data =
      s.reachable === undefined
        ? { score: s.score, latencyMs: s.latencyMs }
        : { reachable: s.reachable, score: s.score, latencyMs: s.latencyMs };
    return {
      sequenceNumber: s.seq,
      consensusTimestamp,
      consensusAt: new Date(at).toISOString(),
      payerAccountId: s.payer,
      index: 0,
      message: {
        subject: s.subject,
        signal: s.signal,
        status: s.status,
        fetchedAt: new Date(at + s.fetchedDelta).toISOString(),
        run: runId(s.run),
        data,
      },
    } as unknown as ReadSignal;
  });

const optionsArb = fc.record({
  nowMs: fc.integer({ min: 20_000, max: 200_000 }),
  labels: fc.dictionary(fc.constantFrom(...SUBJECTS), fc.constantFrom('Calc', '  ', 'Zed', 'a'.repeat(60))),
  publishers: fc.array(fc.constantFrom('0.0.1001', '0.0.1002')),
});

/** A probe of run k, a millisecond after the last signal. */
function pushProbe(signals: ReadSignal[], subject: string, k: number, reachable: boolean): void {
  const at = T0 + signals.length;
  signals.push({
    sequenceNumber: signals.length + 1,
    consensusTimestamp: `${Math.floor(at / 1000)}.${String((at % 1000) * 1_000_000).padStart(9, '0')}`,
    consensusAt: new Date(at).toISOString(),
    payerAccountId: '0.0.1001',
    index: 0,
    message: {
      subject,
      signal: 'availability.probe',
      status: 'ok',
      fetchedAt: new Date(T0).toISOString(),
      run: runId(k),
      data: { reachable, score: reachable ? 100 : 0, latencyMs: 100 + k },
    },
  } as unknown as ReadSignal);
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * What every report must satisfy, worked out from its own breakdown by hand: each adapter total is the mean of its
 * kept components, the composite the weighted mean of the totals in the denominator, counts add up, and subjects are
 * ranked by score, confidence, name and UAID.
 */
function expectConsistent(report: ScoreReport, labels: Readonly<Record<string, string>> = {}): void {
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => ok || problems.push(what);
  let signals = 0;
  for (const s of report.subjects) {
    signals += s.counts.signals;
    check(Object.values(s.counts.bySignal).reduce((a, b) => a + b, 0) === s.counts.signals, `${s.subject}: bySignal`);
    let weighted = 0;
    let weights = 0;
    for (const a of s.adapters) {
      if (a.total === null) {
        check(!a.inDenominator, `${s.subject} ${a.adapterId}: in the denominator without a total`);
        continue;
      }
      const kept = Object.values(s.components).filter((c) => c.adapterId === a.adapterId && !c.omitted);
      check(
        kept.length > 0 && kept.every((c) => c.value >= 0 && c.value <= 100),
        `${s.subject} ${a.adapterId}: components`,
      );
      const mean = round2(kept.reduce((sum, c) => sum + c.value, 0) / kept.length);
      check(
        a.total === mean && s.trustScores[a.adapterId] === mean,
        `${s.subject} ${a.adapterId}: total ${a.total}, mean ${mean}`,
      );
      check(a.inDenominator === a.weight > 0, `${s.subject} ${a.adapterId}: denominator`);
      if (a.inDenominator) {
        weighted += a.total * a.weight;
        weights += a.weight;
      }
    }
    const composite = weights === 0 ? 0 : round2(Math.min(100, weighted / weights));
    check(s.trustScores.total === composite, `${s.subject}: total ${s.trustScores.total}, composite ${composite}`);
    check(s.trustConfidence >= 0 && s.trustConfidence <= 1, `${s.subject}: confidence ${s.trustConfidence}`);
    const label = labels[s.subject];
    check((s.label !== undefined) === (label !== undefined && label.trim() !== ''), `${s.subject}: label`);
  }
  check(report.counts.signals === signals, 'counts.signals');
  check(report.counts.subjects === report.subjects.length, 'counts.subjects');
  const name = (s: ScoreReport['subjects'][number]) => s.label ?? subjectLabel(s.subject);
  for (let i = 1; i < report.subjects.length; i++) {
    const a = report.subjects[i - 1]!;
    const b = report.subjects[i]!;
    const order =
      b.trustScores.total - a.trustScores.total ||
      b.evidenceStrength.evalObservations - a.evidenceStrength.evalObservations ||
      b.trustConfidence - a.trustConfidence ||
      b.sampleConfidence - a.sampleConfidence ||
      byCodeUnit(name(a), name(b)) ||
      byCodeUnit(a.subject, b.subject);
    check(order < 0, `${a.subject} before ${b.subject}`);
  }
  expect(problems).toEqual([]);
}

/** The signals with distinct sequence numbers (a topic never repeats one within a subject's series), scrambled. */
const distinctSignals = (maxLength: number) =>
  fc
    .array(signalArb, { maxLength })
    .map((list) => list.map((s, i) => ({ ...s, sequenceNumber: ((i * 7919) % 10_007) + 1 })));

describe('computeScores — properties', () => {
  it('gives reports consistent with their own breakdown, for random signals, configs and options', () => {
    fc.assert(
      fc.property(
        fc.array(signalArb, { maxLength: 80 }),
        fc.oneof(fc.constant(DEFAULT_SCORING_CONFIG), configArb),
        optionsArb,
        (signals, config, o) => {
          const options = {
            now: new Date(T0 + o.nowMs),
            labels: o.labels,
            publishers: o.publishers,
            topic: '0.0.5',
            rejected: { malformed: 2 },
          };
          const report = computeScores(signals, config, options);
          expectConsistent(report, o.labels);
          expect(report.counts.signals + report.counts.ignoredAfterNow).toBe(signals.length);
          expect(report.counts.rejected).toEqual({ malformed: 2 });
        },
      ),
      { numRuns: 400 },
    );
  });

  it('gives byte-identical reports for the same signals in any order', () => {
    fc.assert(
      fc.property(
        distinctSignals(80),
        fc.oneof(fc.constant(DEFAULT_SCORING_CONFIG), configArb),
        optionsArb,
        fc.nat(),
        (signals, config, o, k) => {
          const options = { now: new Date(T0 + o.nowMs), labels: o.labels, publishers: o.publishers };
          const turned = [...signals].reverse();
          const rotated = [...turned.slice(k % (signals.length || 1)), ...turned.slice(0, k % (signals.length || 1))];
          expect(JSON.stringify(computeScores(rotated, config, options))).toBe(
            JSON.stringify(computeScores(signals, config, options)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('breaks ties between equally fresh signals by sequence number', () => {
    const at = (seq: number, status: string) =>
      ({
        sequenceNumber: seq,
        consensusTimestamp: `${T0 / 1000}.000000000`,
        consensusAt: new Date(T0).toISOString(),
        payerAccountId: '0.0.1001',
        index: 0,
        message: {
          subject: SUBJECTS[0],
          signal: 'simple-evals.math',
          status,
          fetchedAt: new Date(T0).toISOString(),
          run: runId(seq),
          data: { score: 0, latencyMs: 1 },
        },
      }) as unknown as ReadSignal;
    const options = { now: new Date(T0 + 1000) };
    for (const signals of [
      [at(2, 'timeout'), at(3, 'error')],
      [at(3, 'error'), at(2, 'timeout')],
    ]) {
      const report = computeScores(signals, DEFAULT_SCORING_CONFIG, options);
      expect(report.subjects[0]!.components['simple-math.score']).toMatchObject({
        status: 'error',
        samples: 2,
        value: 0,
      });
    }
  });

  it('takes any iterable, not only arrays', () => {
    fc.assert(
      fc.property(fc.array(signalArb, { maxLength: 40 }), (signals) => {
        const options = { now: new Date(T0 + 60_000) };
        const once = function* () {
          yield* signals;
        };
        expect(computeScores(once(), DEFAULT_SCORING_CONFIG, options)).toEqual(
          computeScores(signals, DEFAULT_SCORING_CONFIG, options),
        );
      }),
      { numRuns: 50 },
    );
  });

  it('folds signals one at a time (ScoreAccumulator) into the same report, labels given only at the end', () => {
    fc.assert(
      fc.property(
        fc.array(signalArb, { maxLength: 60 }),
        fc.oneof(fc.constant(DEFAULT_SCORING_CONFIG), configArb),
        optionsArb,
        (signals, config, o) => {
          const now = new Date(T0 + o.nowMs);
          const fold = new ScoreAccumulator(config, now);
          for (const s of signals) fold.add(s);
          expect(fold.size).toBe(signals.filter((s) => consensusMs(s.consensusTimestamp) <= now.getTime()).length);
          const options = { labels: o.labels, publishers: o.publishers, topic: '0.0.5', rejected: { duplicate: 1 } };
          expect(JSON.stringify(fold.finish(options))).toBe(
            JSON.stringify(computeScores(signals, config, { now, ...options })),
          );
          expect(() => fold.finish(options)).toThrow(/already finished/);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('ranks a registry-sized report (ties by name)', () => {
    // Names share prefixes, as a registry's do.
    const signals: ReadSignal[] = [];
    for (let i = 0; i < 17_000; i++) {
      const subject = uaid(`agent-${(i * 7919) % 17_000}.example.com`, i % 10 === 0 ? 'mcp' : 'a2a');
      for (let k = 0; k <= i % 4; k++) pushProbe(signals, subject, k, (i + k) % 3 !== 0);
    }
    const labels = { [uaid('agent-5.example.com')]: 'agent-5.example.co' };
    const report = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + 60_000), labels });
    expect(report.counts).toMatchObject({ subjects: 17_000, signals: signals.length });
    expectConsistent(report, labels);
  });

  it('ranks names that share prefixes, end early or use many characters (ties by name)', () => {
    const alphabet = fc.constantFrom(
      'ab',
      'ab.-0123456789',
      'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_~',
      'aé€😀\u0000z',
    );
    const names = (chars: string) =>
      fc.array(fc.string({ unit: fc.constantFrom(...chars), maxLength: 12 }), { minLength: 1, maxLength: 120 });
    fc.assert(
      fc.property(
        alphabet.chain((chars) => fc.tuple(names(chars), fc.constantFrom('', 'agent-', 'x'), fc.boolean())),
        ([raw, prefix, labelled]) => {
          const signals: ReadSignal[] = [];
          const labels: Record<string, string> = {};
          raw.forEach((name, i) => {
            const subject = `${uaid(`${prefix}${name}`, i % 5 === 0 ? 'mcp' : 'a2a')};n=${i}`;
            if (labelled && i % 3 === 0) labels[subject] = `${prefix}${name}`.split('').reverse().join('');
            for (let k = 0; k <= i % 2; k++) pushProbe(signals, subject, k, (i + k) % 4 !== 0);
          });
          expectConsistent(
            computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + 60_000), labels }),
            labels,
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
