/**
 * The README's on-chain section shows real messages: they must stay readable by the reader, verify against the
 * reveal shown beside them, recompute to their published total, and the closed reason list must be the code's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCORING_CONFIG, scoringConfigDigest } from '../../src/consumer/scoring-config.js';
import { responseHashV2 } from '../../src/signals/hashing.js';
import { readMessage } from '../../src/signals/read.js';
import type { MessageItem } from '../../src/signals/read-common.js';
import { FAILURE_REASONS } from '../../src/signals/reasons.js';
import { checkPublishedScore, type ScoreRecordLike } from '../../src/verify/score.js';
import { verifySignals, type VerifiableReveal, type VerifiableSignal } from '../../src/verify/signals.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## On-chain formats'), readme.indexOf('## The evals'));
const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.stringify(JSON.parse(m[1]!)));

function items(json: string): MessageItem[] {
  const read = readMessage(json, { encoding: 'utf8' });
  if (!read.ok) throw new Error(`${read.reason}: ${read.detail}`);
  return read.items;
}

describe('README on-chain examples', () => {
  it('shows a v2 signal, a subject pack, a score record and a reveal, each read as such and within 1024 bytes', () => {
    expect(blocks).toHaveLength(4);
    const kinds = blocks.map((b) => items(b).map((i) => i.kind));
    expect(kinds).toEqual([['signal'], ['signal', 'signal', 'signal'], ['score'], ['reveal']]);
    for (const b of blocks) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(1024);
    expect(items(blocks[2]!)[0]).toMatchObject({ v: 2, validated: true });
    expect(items(blocks[3]!)[0]).toMatchObject({ v: 2, validated: true });
  });

  it('the signals verify against the reveal shown (bundled bank), and the score record recomputes', () => {
    const [single, pack, score, reveal] = blocks.map(items) as [MessageItem[], MessageItem[], MessageItem[], MessageItem[]];
    const signals = [...single, ...pack].map((i) => (i as { message: VerifiableSignal }).message);
    const report = verifySignals({
      signals,
      reveals: [(reveal[0] as unknown as { message: VerifiableReveal }).message],
      keyedResponseHash: (key, s, response) => responseHashV2(key, s.signal, s.subject, response),
      // The replies the example was built from: a bare "24", and a chatty "D".
      responseOf: (s) => (s.data?.answer === '24' ? '24' : s.data?.answer === 'D' ? 'The answer is **D**.' : null),
    });
    expect(report.counts).toEqual({ verified: 3, mismatch: 0, unverifiable: 0, ignored: 1 });
    expect(report.signals.every((s) => s.responseChecked)).toBe(true);

    const record = (score[0] as { message: unknown }).message as ScoreRecordLike;
    const check = checkPublishedScore(record, { configDigest: scoringConfigDigest(DEFAULT_SCORING_CONFIG), configVersion: DEFAULT_SCORING_CONFIG.trustScoreConfigVersion });
    expect(check).toMatchObject({ status: 'verified', expected: 75, actual: 75 });
  });

  it('lists exactly the closed failure reasons of the code', () => {
    const paragraph = section.slice(section.indexOf('**Failure reasons**'), section.indexOf('**Hashes.**'));
    const listed = [...paragraph.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]).filter((r) => r !== 'data.reason');
    expect(new Set(listed)).toEqual(new Set(FAILURE_REASONS));
  });
});
