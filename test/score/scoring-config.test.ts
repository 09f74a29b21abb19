import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScoringConfigError } from '../../src/score/aggregate.js';
import {
  DEFAULT_SCORING_CONFIG,
  loadScoringConfig,
  parseScoringConfig,
  scoringConfigSchema,
} from '../../src/score/scoring-config.js';
import { parseUaid } from '../../src/discover/uaid.js';

describe('scoring config', () => {
  it('the default validates, round-trips through JSON and matches the spec example adapters', () => {
    expect(parseScoringConfig(JSON.parse(JSON.stringify(DEFAULT_SCORING_CONFIG)))).toEqual(DEFAULT_SCORING_CONFIG);
    expect(DEFAULT_SCORING_CONFIG.adapters.map((a) => [a.adapterId, a.contributionMode, a.weight])).toEqual([
      ['availability', 'universal', 1],
      ['simple-math', 'scoped', 0.5],
      ['simple-science', 'scoped', 0.5],
    ]);
  });

  it('fills HCS-25 defaults (conditional, weight 1, m_stale 1)', () => {
    const c = parseScoringConfig({
      trustScoreConfigVersion: 2,
      freshnessSeconds: 60,
      adapters: [{ adapterId: 'x', components: [{ key: 'x.score', signal: 'x.y', method: 'mean-score' }] }],
    });
    expect(c.adapters[0]).toMatchObject({ contributionMode: 'conditional', weight: 1 });
    expect(c.staleMultiplier).toBe(1);
    expect(c.window).toEqual({ kind: 'latest', count: 10 });
  });

  it.each([
    ['a duplicate adapter id', { adapters: [adapter('a'), adapter('a', 'a.other')] }, /used twice/],
    ['a duplicate component key', { adapters: [adapter('a'), adapter('b', 'a.score')] }, /used twice/],
    ['a bad adapter id', { adapters: [adapter('Bad_Id')] }, /adapters\.0\.adapterId/],
    ['a negative weight', { adapters: [{ ...adapter('a'), weight: -1 }] }, /weight/],
    ['m_stale above 1', { staleMultiplier: 1.5 }, /staleMultiplier/],
    ['version 0', { trustScoreConfigVersion: 0 }, /trustScoreConfigVersion/],
    ['an unknown key', { extra: true }, /Unrecognized key/i],
  ])('rejects %s', (_, patch, message) => {
    const value = { trustScoreConfigVersion: 1, freshnessSeconds: 60, adapters: [adapter('a')], ...patch };
    expect(() => parseScoringConfig(value)).toThrow(ScoringConfigError);
    expect(() => parseScoringConfig(value)).toThrow(message);
  });

  it('loads a file and names it in errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs25-scoring-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ ...DEFAULT_SCORING_CONFIG, trustScoreConfigVersion: 7 }));
    expect(loadScoringConfig(good).trustScoreConfigVersion).toBe(7);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{nope');
    expect(() => loadScoringConfig(bad)).toThrow(/bad\.json is not valid JSON/);
    expect(() => loadScoringConfig(join(dir, 'missing.json'))).toThrow(/ENOENT/);
  });

  it('has a JSON Schema representation', () => {
    expect(scoringConfigSchema.safeParse(DEFAULT_SCORING_CONFIG).success).toBe(true);
  });
});

function adapter(id: string, key = `${id}.score`) {
  return { adapterId: id, components: [{ key, signal: 'simple-evals.math', method: 'mean-score' }] };
}

describe('parseUaid', () => {
  it('reads registry, proto and nativeId', () => {
    expect(parseUaid('uaid:aid:2ayF;uid=0;registry=hol;proto=a2a;nativeId=calc.example.com')).toMatchObject({
      target: 'aid',
      id: '2ayF',
      registry: 'hol',
      proto: 'a2a',
      nativeId: 'calc.example.com',
    });
    expect(parseUaid('uaid:did:z6Mk;uid=0;proto=hcs-10;nativeId=hedera:testnet:0.0.1')).toMatchObject({
      target: 'did',
      proto: 'hcs-10',
      nativeId: 'hedera:testnet:0.0.1',
    });
  });

  it('tolerates junk: no params, repeated keys (first wins), empty pairs, percent-encoding, non-UAIDs', () => {
    const p = parseUaid('uaid:aid:x;registry=a;registry=b;;=v;novalue;proto=a%3Bb;__proto__=polluted');
    expect(p.registry).toBe('a');
    expect(p.proto).toBe('a;b');
    // biome-ignore lint/suspicious/noProto: the test is about a hostile __proto__ key
    expect(p.params.__proto__).toBe('polluted');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(parseUaid('uaid:aid:x')).toMatchObject({ id: 'x', params: {} });
    expect(parseUaid('did:key:z6')).toEqual({ target: null, id: 'did:key:z6', params: {} });
    expect(parseUaid('uaid:aid:x;proto=%E0%A4%A').proto).toBe('%E0%A4%A');
  });
});
