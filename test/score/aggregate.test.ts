import { describe, expect, it } from 'vitest';
import {
  ScoringConfigError,
  aggregateTrustScore,
  type AdapterInput,
  type AggregateInput,
} from '../../src/score/aggregate.js';

const now = new Date('2026-11-21T10:00:00.000Z');

// The spec's vectors name an adapter `simple_evals`, which its own adapter-id regex forbids; `simple-evals` is used here.
function vector1(reputation: AdapterInput): AggregateInput {
  return {
    subject: { id: 'uaid:aid:x' },
    trustScoreConfigVersion: 1,
    staleMultiplier: 1,
    now,
    adapters: [
      {
        adapterId: 'availability',
        contributionMode: 'scoped',
        weight: 1,
        components: [{ key: 'availability.uptime', value: 90, status: 'ok' }],
      },
      {
        adapterId: 'simple-evals',
        contributionMode: 'scoped',
        weight: 2,
        components: [
          { key: 'simple-evals.math', value: 100, status: 'ok' },
          { key: 'simple-evals.science', value: 73, status: 'missing' },
        ],
      },
      reputation,
    ],
  };
}

describe('aggregateTrustScore — HCS-25 test vectors', () => {
  it('test vector 1: missingness penalized → 57.5', () => {
    const r = aggregateTrustScore(
      vector1({
        adapterId: 'reputation',
        contributionMode: 'scoped',
        weight: 1,
        components: [{ key: 'reputation.stars', value: 40, status: 'ok' }],
      }),
    );
    expect(r.trustScores).toEqual({ total: 57.5, availability: 90, 'simple-evals': 50, reputation: 40 });
    expect(r.components['simple-evals.science']).toEqual({ value: 0, status: 'missing' });
    expect(r.trustScoreConfigVersion).toBe(1);
    expect(r.trustScoreUpdatedAt).toBe('2026-11-21T10:00:00.000Z');
  });

  it('test vector 2: sparse conditional adapter leaves the denominator → 63.33', () => {
    const r = aggregateTrustScore(
      vector1({ adapterId: 'reputation', contributionMode: 'conditional', weight: 1, components: [] }),
    );
    expect(r.trustScores.total).toBe(63.33);
    expect(r.trustScores.reputation).toBeUndefined();
    expect(r.denominator.map((d) => d.adapterId)).toEqual(['availability', 'simple-evals']);
  });
});

function one(
  adapter: Partial<AdapterInput> & { components: AdapterInput['components'] },
  extra: Partial<AggregateInput> = {},
) {
  return aggregateTrustScore({
    subject: { id: 's', registry: 'hol', protocol: 'a2a' },
    trustScoreConfigVersion: 3,
    now,
    adapters: [
      { adapterId: 'base', contributionMode: 'universal', components: [{ key: 'base.x', value: 50, status: 'ok' }] },
      { adapterId: 'probe', ...adapter },
    ],
    ...extra,
  });
}

describe('aggregateTrustScore — normalization', () => {
  it('clamps component values into [0,100] and treats non-finite values as 0', () => {
    const r = one({
      contributionMode: 'scoped',
      components: [
        { key: 'probe.a', value: 250, status: 'ok' },
        { key: 'probe.b', value: -5, status: 'ok' },
        { key: 'probe.c', value: Number.NaN, status: 'ok' },
      ],
    });
    expect(r.components['probe.a']!.value).toBe(100);
    expect(r.components['probe.b']!.value).toBe(0);
    expect(r.components['probe.c']!.value).toBe(0);
    expect(r.trustScores.probe).toBe(33.33);
  });

  it('multiplies stale values by the stale multiplier, default 1', () => {
    expect(
      one(
        { contributionMode: 'scoped', components: [{ key: 'probe.a', value: 80, status: 'stale' }] },
        { staleMultiplier: 0.5 },
      ).trustScores.probe,
    ).toBe(40);
    expect(
      one({ contributionMode: 'scoped', components: [{ key: 'probe.a', value: 80, status: 'stale' }] }).trustScores
        .probe,
    ).toBe(80);
  });

  it.each(['missing', 'timeout', 'error'] as const)('a %s component scores 0 whatever its value', (status) => {
    const r = one({
      contributionMode: 'scoped',
      components: [
        { key: 'probe.a', value: 90, status },
        { key: 'probe.b', value: 60, status: 'ok' },
      ],
    });
    expect(r.trustScores.probe).toBe(30);
  });

  it('omits an unavailable non-scorable component and reports it', () => {
    const r = one({
      contributionMode: 'scoped',
      components: [
        { key: 'probe.a', value: 90, status: 'timeout', nonScorable: true },
        { key: 'probe.b', value: 60, status: 'ok' },
      ],
    });
    expect(r.trustScores.probe).toBe(60);
    expect(r.unavailable).toEqual(['probe.a']);
    expect(r.components['probe.a']).toBeUndefined();
  });

  it('a non-scorable component that is ok still counts', () => {
    expect(
      one({ contributionMode: 'scoped', components: [{ key: 'probe.a', value: 90, status: 'ok', nonScorable: true }] })
        .trustScores.probe,
    ).toBe(90);
  });
});

describe('aggregateTrustScore — contribution modes and weights', () => {
  it('universal and scoped adapters with no output contribute 0 through the default component key', () => {
    for (const mode of ['universal', 'scoped'] as const) {
      const r = one({ contributionMode: mode, components: [] });
      expect(r.components['probe.score']).toEqual({ value: 0, status: 'missing' });
      expect(r.trustScores.total).toBe(25);
    }
  });

  it('uses a declared defaultComponentKey', () => {
    const r = one({ contributionMode: 'scoped', defaultComponentKey: 'probe.uptime', components: [] });
    expect(r.components['probe.uptime']).toEqual({ value: 0, status: 'missing' });
  });

  it('a required adapter whose only components are non-scorable and unavailable falls back to the default key', () => {
    const r = one({
      contributionMode: 'universal',
      components: [{ key: 'probe.a', value: 0, status: 'error', nonScorable: true }],
    });
    expect(r.unavailable).toEqual(['probe.a']);
    expect(r.components['probe.score']).toEqual({ value: 0, status: 'missing' });
    expect(r.trustScores.total).toBe(25);
  });

  it('a conditional adapter emptied by non-scorable omission leaves the denominator', () => {
    const r = one({
      contributionMode: 'conditional',
      components: [{ key: 'probe.a', value: 0, status: 'error', nonScorable: true }],
    });
    expect(r.trustScores.total).toBe(50);
  });

  it('defaults to conditional mode and weight 1', () => {
    expect(one({ components: [] }).trustScores.total).toBe(50);
    expect(one({ components: [{ key: 'probe.a', value: 100, status: 'ok' }] }).trustScores.total).toBe(75);
  });

  it('weight 0 is informational: shown but out of the denominator', () => {
    const r = one({
      contributionMode: 'universal',
      weight: 0,
      components: [{ key: 'probe.a', value: 100, status: 'ok' }],
    });
    expect(r.trustScores.probe).toBe(100);
    expect(r.trustScores.total).toBe(50);
  });

  it('weights are coefficients of a weighted mean', () => {
    expect(
      one({ contributionMode: 'scoped', weight: 3, components: [{ key: 'probe.a', value: 100, status: 'ok' }] })
        .trustScores.total,
    ).toBe(87.5);
  });

  it('an empty denominator gives 0', () => {
    const r = aggregateTrustScore({
      subject: { id: 's' },
      trustScoreConfigVersion: 1,
      now,
      adapters: [{ adapterId: 'a', components: [] }],
    });
    expect(r.trustScores).toEqual({ total: 0 });
  });

  it('rounds to two decimals', () => {
    const r = one({
      contributionMode: 'scoped',
      components: [
        { key: 'probe.a', value: 100, status: 'ok' },
        { key: 'probe.b', value: 100, status: 'ok' },
        { key: 'probe.c', value: 0, status: 'ok' },
      ],
    });
    expect(r.trustScores.probe).toBe(66.67);
    // The composite is taken over rounded adapter totals, as the reference implementation does: (50 + 66.67) / 2.
    // Rounding only at the end would give 58.33.
    expect(r.trustScores.total).toBe(58.34);
    expect(r.denominator.find((d) => d.adapterId === 'probe')!.total).toBe(66.67);
  });

  it('rounds each component before the adapter total', () => {
    // 0.005 → 0.01 and 0.004 → 0, mean 0.005 → 0.01; the unrounded mean 0.0045 would round to 0.
    const r = one({
      contributionMode: 'scoped',
      components: [
        { key: 'probe.a', value: 0.005, status: 'ok' },
        { key: 'probe.b', value: 0.004, status: 'ok' },
      ],
    });
    expect(r.components['probe.a']!.value).toBe(0.01);
    expect(r.trustScores.probe).toBe(0.01);
  });

  it('rounds a stale value once, after m_stale (the reference), not before it too', () => {
    // 0.025 × 0.5 = 0.0125 → 0.01; rounding first (0.03 × 0.5 = 0.015 → 0.02) would move a cent.
    const r = one(
      { contributionMode: 'scoped', components: [{ key: 'probe.a', value: 0.025, status: 'stale' }] },
      { staleMultiplier: 0.5 },
    );
    expect(r.components['probe.a']!.value).toBe(0.01);
  });

  it('trustConfidence is the weighted share of ok components over the denominator (the reference), 4 decimals', () => {
    const r = aggregateTrustScore({
      subject: { id: 'uaid:aid:x' },
      trustScoreConfigVersion: 1,
      now,
      adapters: [
        {
          adapterId: 'probe',
          contributionMode: 'universal',
          weight: 2,
          components: [
            { key: 'probe.a', value: 100, status: 'ok' },
            { key: 'probe.b', value: 100, status: 'stale' },
            { key: 'probe.c', value: 0, status: 'missing' },
          ],
        },
        { adapterId: 'evals', contributionMode: 'scoped', weight: 1, components: [] },
        { adapterId: 'info', contributionMode: 'universal', weight: 0, components: [] },
      ],
    });
    // probe: 1 of 3 ok, weight 2; evals: only its synthesized default (missing), weight 1; info out (weight 0).
    expect(r.trustConfidence).toBe(0.2222);
    expect(r.denominator.map((d) => d.confidence)).toEqual([1 / 3, 0]);
  });
});

describe('aggregateTrustScore — applicability', () => {
  const adapter = (extra: Partial<AdapterInput>) => ({
    contributionMode: 'universal' as const,
    components: [{ key: 'probe.a', value: 100, status: 'ok' as const }],
    ...extra,
  });

  it('an include list that does not name the registry keeps the adapter out of the denominator', () => {
    const r = one(adapter({ includeRegistries: ['agentverse'] }));
    expect(r.trustScores.total).toBe(50);
    expect(r.notApplicable).toEqual(['probe']);
    expect(r.components['probe.a']).toBeUndefined();
  });

  it('an include list that names the registry applies', () => {
    expect(one(adapter({ includeRegistries: ['hol'] })).trustScores.total).toBe(75);
  });

  it('an include list does not apply to a subject without a registry', () => {
    const r = aggregateTrustScore({
      subject: { id: 's' },
      trustScoreConfigVersion: 1,
      now,
      adapters: [{ adapterId: 'a', includeRegistries: ['hol'], contributionMode: 'universal', components: [] }],
    });
    expect(r.notApplicable).toEqual(['a']);
  });

  it('an exclude list removes the adapter', () => {
    expect(one(adapter({ excludeRegistries: ['hol'] })).trustScores.total).toBe(50);
    expect(one(adapter({ excludeRegistries: ['other'] })).trustScores.total).toBe(75);
  });

  it('the protocol predicate applies', () => {
    expect(one(adapter({ protocols: ['mcp'] })).trustScores.total).toBe(50);
    expect(one(adapter({ protocols: ['mcp', 'a2a'] })).trustScores.total).toBe(75);
  });
});

describe('aggregateTrustScore — validation', () => {
  const base = { subject: { id: 's' }, trustScoreConfigVersion: 1, now };
  it.each(['simple_evals', 'Availability', '1abc', 'a--b', 'a-', '', 'total'])('rejects adapter id %j', (adapterId) => {
    expect(() => aggregateTrustScore({ ...base, adapters: [{ adapterId, components: [] }] })).toThrow(
      ScoringConfigError,
    );
  });
  it('rejects duplicate adapter ids, bad weights, bad stale multipliers, bad versions, whitespace keys and duplicate keys', () => {
    expect(() =>
      aggregateTrustScore({
        ...base,
        adapters: [
          { adapterId: 'a', components: [] },
          { adapterId: 'a', components: [] },
        ],
      }),
    ).toThrow(/twice/);
    expect(() => aggregateTrustScore({ ...base, adapters: [{ adapterId: 'a', weight: -1, components: [] }] })).toThrow(
      /weight/,
    );
    expect(() => aggregateTrustScore({ ...base, staleMultiplier: 1.5, adapters: [] })).toThrow(/staleMultiplier/);
    expect(() => aggregateTrustScore({ ...base, trustScoreConfigVersion: 0, adapters: [] })).toThrow(
      /trustScoreConfigVersion/,
    );
    expect(() =>
      aggregateTrustScore({
        ...base,
        adapters: [{ adapterId: 'a', components: [{ key: 'a b', value: 1, status: 'ok' }] }],
      }),
    ).toThrow(/whitespace/);
    expect(() =>
      aggregateTrustScore({
        ...base,
        adapters: [
          { adapterId: 'a', components: [{ key: 'k', value: 1, status: 'ok' }] },
          { adapterId: 'b', components: [{ key: 'k', value: 1, status: 'ok' }] },
        ],
      }),
    ).toThrow(/twice/);
  });

  it('is deterministic', () => {
    const input = vector1({
      adapterId: 'reputation',
      contributionMode: 'scoped',
      components: [{ key: 'reputation.stars', value: 40, status: 'ok' }],
    });
    expect(JSON.stringify(aggregateTrustScore(input))).toBe(JSON.stringify(aggregateTrustScore(input)));
  });
});
