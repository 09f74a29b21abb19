import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileScoringConfig, computeScores, ScoreAccumulator } from '../../src/consumer/scores.js';
import { DEFAULT_SCORING_CONFIG, parseScoringConfig, type ScoringConfig } from '../../src/consumer/scoring-config.js';
import { consensusMs } from '../../src/consumer/reader.js';
import type { ReadSignal } from '../../src/consumer/types.js';
import { SIGNAL_STATUSES } from '../../src/signals/protocol.js';
import { referenceScores } from './reference-scores.js';
import { T0, runId, uaid } from './helpers.js';

const SUBJECTS = [
  uaid('calc.example.com', 'a2a'),
  uaid('files.mcp.dev', 'mcp'),
  uaid('gpt.openrouter.ai', 'openai', 'openrouter'),
  uaid('near.example', 'a2a', 'near-ai'),
  'uaid:did:z6Mk;uid=0;proto=a2a',
  'not-a-uaid',
];
const SIGNALS = ['availability.probe', 'simple-evals.math', 'simple-evals.a2a_math', 'simple-evals.science', 'simple-evals.a2a_science', 'reputation.stars'];
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
        adapterId: `adapter-${"abcd"[i]}`,
        ...Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)),
        ...(defaultComponent ? { defaultComponentKey: `adapter-${"abcd"[i]}.fallback` } : {}),
        components: components.map((c, k) => ({ key: `adapter-${"abcd"[i]}.c${"xyz"[k]}`, ...Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) })),
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
    atMs: fc.oneof(fc.integer({ min: 0, max: 8 }).map((s) => s * 10_000), fc.integer({ min: 0, max: 80_000 })),
    nanos: fc.integer({ min: 0, max: 999_999 }),
    fetchedDelta: fc.oneof(fc.constant(0), fc.integer({ min: -10, max: 10 }).map((s) => s * 1000), fc.integer({ min: -10_000, max: 10_000 })),
    run: fc.integer({ min: 0, max: 3 }),
    payer: fc.constantFrom('0.0.1001', '0.0.1002'),
  })
  .map((s) => {
    const at = T0 + s.atMs;
    const consensusTimestamp = `${Math.floor(at / 1000)}.${String((at % 1000) * 1_000_000 + s.nanos).padStart(9, '0')}`;
    const data = s.reachable === undefined ? { score: s.score, latencyMs: s.latencyMs } : { reachable: s.reachable, score: s.score, latencyMs: s.latencyMs };
    return {
      sequenceNumber: s.seq,
      consensusTimestamp,
      consensusAt: new Date(at).toISOString(),
      payerAccountId: s.payer,
      index: 0,
      message: { subject: s.subject, signal: s.signal, status: s.status, fetchedAt: new Date(at + s.fetchedDelta).toISOString(), run: runId(s.run), data },
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
    message: { subject, signal: 'availability.probe', status: 'ok', fetchedAt: new Date(T0).toISOString(), run: runId(k), data: { reachable, score: reachable ? 100 : 0, latencyMs: 100 + k } },
  } as unknown as ReadSignal);
}

describe('computeScores against the straightforward reference', () => {
  it('gives byte-identical reports for random signals, configs and options', () => {
    fc.assert(
      fc.property(fc.array(signalArb, { maxLength: 80 }), fc.oneof(fc.constant(DEFAULT_SCORING_CONFIG), configArb), optionsArb, (signals, config, o) => {
        const options = { now: new Date(T0 + o.nowMs), labels: o.labels, publishers: o.publishers, topic: '0.0.5', rejected: { malformed: 2 } };
        expect(JSON.stringify(computeScores(signals, config, options))).toBe(JSON.stringify(referenceScores(signals, config, options)));
      }),
      { numRuns: 400 },
    );
  });

  it('breaks ties between equally fresh signals by sequence number, as the reference does', () => {
    const at = (seq: number, status: string) =>
      ({
        sequenceNumber: seq,
        consensusTimestamp: `${T0 / 1000}.000000000`,
        consensusAt: new Date(T0).toISOString(),
        payerAccountId: '0.0.1001',
        index: 0,
        message: { subject: SUBJECTS[0], signal: 'simple-evals.math', status, fetchedAt: new Date(T0).toISOString(), run: runId(seq), data: { score: 0, latencyMs: 1 } },
      }) as unknown as ReadSignal;
    const signals = [at(2, 'timeout'), at(3, 'error')];
    const options = { now: new Date(T0 + 1000) };
    const report = computeScores(signals, DEFAULT_SCORING_CONFIG, options);
    expect(report.subjects[0]!.components['simple-math.score']!.status).toBe('error');
    expect(report).toEqual(referenceScores(signals, DEFAULT_SCORING_CONFIG, options));
  });

  it('takes any iterable, not only arrays', () => {
    fc.assert(
      fc.property(fc.array(signalArb, { maxLength: 40 }), (signals) => {
        const options = { now: new Date(T0 + 60_000) };
        const once = function* () {
          yield* signals;
        };
        expect(computeScores(once(), DEFAULT_SCORING_CONFIG, options)).toEqual(referenceScores(signals, DEFAULT_SCORING_CONFIG, options));
      }),
      { numRuns: 50 },
    );
  });

  it('folds signals one at a time (ScoreAccumulator) into the reference report, labels given only at the end', () => {
    fc.assert(
      fc.property(fc.array(signalArb, { maxLength: 60 }), fc.oneof(fc.constant(DEFAULT_SCORING_CONFIG), configArb), optionsArb, (signals, config, o) => {
        const now = new Date(T0 + o.nowMs);
        const fold = new ScoreAccumulator(config, now);
        for (const s of signals) fold.add(s);
        expect(fold.size).toBe(signals.filter((s) => consensusMs(s.consensusTimestamp) <= now.getTime()).length);
        const options = { labels: o.labels, publishers: o.publishers, topic: '0.0.5', rejected: { duplicate: 1 } };
        expect(JSON.stringify(fold.finish(options))).toBe(JSON.stringify(referenceScores(signals, config, { now, ...options })));
        expect(() => fold.finish(options)).toThrow(/already finished/);
      }),
      { numRuns: 150 },
    );
  });

  it('ranks a registry-sized report (ties by name) as the reference does', () => {
    // Names share prefixes, as a registry's do.
    const signals: ReadSignal[] = [];
    for (let i = 0; i < 17_000; i++) {
      const subject = uaid(`agent-${(i * 7919) % 17_000}.example.com`, i % 10 === 0 ? 'mcp' : 'a2a');
      for (let k = 0; k <= i % 4; k++) pushProbe(signals, subject, k, (i + k) % 3 !== 0);
    }
    const options = { now: new Date(T0 + 60_000), labels: { [uaid('agent-5.example.com')]: 'agent-5.example.co' } };
    expect(JSON.stringify(computeScores(signals, DEFAULT_SCORING_CONFIG, options))).toBe(JSON.stringify(referenceScores(signals, DEFAULT_SCORING_CONFIG, options)));
  });

  it('ranks names that share prefixes, end early or use many characters (keys sorted natively, ties by name) as the reference does', () => {
    // Few scores, so most subjects tie on place and are ordered by name; alphabets from a handful of characters (wide
    // keys) to many (narrow keys, more ties left to compare), names that are prefixes of others, and labels.
    const alphabet = fc.constantFrom('ab', 'ab.-0123456789', 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_~', 'aé€😀\u0000z');
    const names = (chars: string) => fc.array(fc.string({ unit: fc.constantFrom(...chars), maxLength: 12 }), { minLength: 1, maxLength: 120 });
    fc.assert(
      fc.property(alphabet.chain((chars) => fc.tuple(names(chars), fc.constantFrom('', 'agent-', 'x'), fc.boolean())), ([raw, prefix, labelled]) => {
        const signals: ReadSignal[] = [];
        const labels: Record<string, string> = {};
        raw.forEach((name, i) => {
          const subject = uaid(`${prefix}${name}`, i % 5 === 0 ? 'mcp' : 'a2a') + `;n=${i}`;
          if (labelled && i % 3 === 0) labels[subject] = `${prefix}${name}`.split('').reverse().join('');
          for (let k = 0; k <= i % 2; k++) pushProbe(signals, subject, k, (i + k) % 4 !== 0);
        });
        const options = { now: new Date(T0 + 60_000), labels };
        expect(JSON.stringify(computeScores(signals, DEFAULT_SCORING_CONFIG, options))).toBe(JSON.stringify(referenceScores(signals, DEFAULT_SCORING_CONFIG, options)));
      }),
      { numRuns: 200 },
    );
  });

  it('compiles a config once per config object', () => {
    const config = parseScoringConfig(DEFAULT_SCORING_CONFIG);
    expect(compileScoringConfig(config)).toBe(compileScoringConfig(config));
    expect(compileScoringConfig(config).digest).toMatch(/^sha256:/);
  });
});
