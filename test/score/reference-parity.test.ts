/**
 * Parity with the reference implementation's arithmetic (standards-sdk hcs-25 `computeTrustScore`), on seeded random
 * stale, missing and ok components: the formula is written out here from the HCS-25 text (Normalization, Missing and
 * Stale Data, Aggregation) and the reference's rounding points, independently of src/score/aggregate.ts.
 */
import { describe, expect, it } from 'vitest';
import { aggregateTrustScore, type AdapterInput, type ContributionMode } from '../../src/score/aggregate.js';
import type { SignalStatus } from '../../src/format/protocol.js';

/** mulberry32: a small seeded generator, so every run draws the same cases. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The reference's roundScore: Math.round(value × 10^d) / 10^d.
const roundScore = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const clampScore = (x: number) => Math.min(100, Math.max(0, x));

interface RefResult {
  total: number;
  adapters: Record<string, number>;
  confidence: number;
}

/** HCS-25 Aggregation as the reference computes it. */
function referenceScore(adapters: AdapterInput[], mStale: number | undefined): RefResult {
  const m = mStale ?? 1; // HCS-25: m_stale MUST default to 1
  const totals: Record<string, number> = {};
  const denominator: Array<{ w: number; total: number; c: number }> = [];
  for (const a of adapters) {
    const values: number[] = [];
    let ok = 0;
    for (const c of a.components) {
      const unavailable = c.status === 'missing' || c.status === 'timeout' || c.status === 'error';
      if (unavailable && c.nonScorable) continue;
      // ok: the value as is; stale: value × m_stale, clamped then rounded once; unavailable: 0.
      const v = unavailable ? 0 : roundScore(clampScore(c.status === 'stale' ? c.value * m : c.value));
      values.push(v);
      if (c.status === 'ok') ok++;
    }
    const mode = a.contributionMode ?? 'conditional';
    if (values.length === 0) {
      if (mode === 'conditional') continue;
      values.push(0); // the default component, missing
    }
    const total = roundScore(values.reduce((s, v) => s + v, 0) / values.length);
    totals[a.adapterId] = total;
    const w = a.weight ?? 1;
    if (w > 0) denominator.push({ w, total, c: ok / values.length });
  }
  const ws = denominator.reduce((s, d) => s + d.w, 0);
  return {
    total: ws > 0 ? roundScore(denominator.reduce((s, d) => s + d.total * d.w, 0) / ws) : 0,
    adapters: totals,
    confidence: ws > 0 ? roundScore(denominator.reduce((s, d) => s + d.w * d.c, 0) / ws, 4) : 0,
  };
}

const STATUSES: SignalStatus[] = ['ok', 'ok', 'stale', 'stale', 'missing', 'timeout', 'error'];
const MODES: ContributionMode[] = ['universal', 'scoped', 'conditional'];
const MULTIPLIERS = [undefined, 1, 0.5, 0.33, 0.25, 0.8, 0.9, 0.1, 0];
const WEIGHTS = [undefined, 1, 0.5, 0, 2, 0.25, 3];

function randomCase(next: () => number): { adapters: AdapterInput[]; mStale: number | undefined } {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  // Values like the scorer's: shares and means of 0/100 scores (thirds, sevenths …), and raw two- to four-decimal ones.
  const value = () =>
    next() < 0.5
      ? (100 * Math.floor(next() * 8)) / (1 + Math.floor(next() * 7))
      : Math.round(next() * 1_000_000) / 10_000;
  const adapters: AdapterInput[] = [];
  const n = 1 + Math.floor(next() * 4);
  for (let i = 0; i < n; i++) {
    const adapterId = `adapter-a${i}`;
    const components = Array.from({ length: Math.floor(next() * 4) }, (_, k) => ({
      key: `${adapterId}.c${k}`,
      value: value(),
      status: pick(STATUSES),
      ...(next() < 0.2 ? { nonScorable: true } : {}),
    }));
    const weight = pick(WEIGHTS);
    adapters.push({
      adapterId,
      contributionMode: pick(MODES),
      ...(weight !== undefined ? { weight } : {}),
      components,
    });
  }
  return { adapters, mStale: pick(MULTIPLIERS) };
}

describe('HCS-25 arithmetic — parity with the reference formula', () => {
  it('equals the reference to the cent on 3,000 seeded cases of stale, missing and ok components', () => {
    const next = rng(0x25c0ffee);
    const differ: string[] = [];
    let stale = 0;
    for (let i = 0; i < 3000; i++) {
      const { adapters, mStale } = randomCase(next);
      stale += adapters.flatMap((a) => a.components).filter((c) => c.status === 'stale').length;
      const ref = referenceScore(adapters, mStale);
      const ours = aggregateTrustScore({
        subject: { id: 'uaid:aid:parity' },
        trustScoreConfigVersion: 1,
        ...(mStale !== undefined ? { staleMultiplier: mStale } : {}),
        adapters,
        now: new Date(0),
      });
      const { total, ...adapterTotals } = ours.trustScores;
      if (total !== ref.total || ours.trustConfidence !== ref.confidence)
        differ.push(
          `case ${i}: total ${total} vs ${ref.total}, confidence ${ours.trustConfidence} vs ${ref.confidence}`,
        );
      if (JSON.stringify(adapterTotals) !== JSON.stringify(ref.adapters))
        differ.push(`case ${i}: adapters ${JSON.stringify(adapterTotals)} vs ${JSON.stringify(ref.adapters)}`);
    }
    expect(differ).toEqual([]);
    // The cases exercise what they are about: many stale components.
    expect(stale).toBeGreaterThan(1000);
  });

  it('a stale value rounded before m_stale as well would differ: the set catches it', () => {
    // 66.666… × 0.5 = 33.333… → 33.33; rounding first gives 66.67 × 0.5 = 33.335 → 33.34.
    const adapters: AdapterInput[] = [
      {
        adapterId: 'availability',
        contributionMode: 'universal',
        components: [{ key: 'availability.uptime', value: 200 / 3, status: 'stale' }],
      },
    ];
    const ours = aggregateTrustScore({
      subject: { id: 'uaid:aid:parity' },
      trustScoreConfigVersion: 1,
      staleMultiplier: 0.5,
      adapters,
      now: new Date(0),
    });
    expect(ours.trustScores.total).toBe(referenceScore(adapters, 0.5).total);
    expect(ours.trustScores.total).toBe(33.33);
  });

  it('m_stale defaults to 1 when not configured', () => {
    const adapters: AdapterInput[] = [
      {
        adapterId: 'probe',
        contributionMode: 'universal',
        components: [{ key: 'probe.a', value: 80, status: 'stale' }],
      },
    ];
    expect(
      aggregateTrustScore({ subject: { id: 'uaid:aid:x' }, trustScoreConfigVersion: 1, adapters }).trustScores.total,
    ).toBe(80);
  });
});
