/**
 * docs/formats.md shows real messages: they must stay readable by the reader, verify against the reveal shown beside
 * them, recompute to their published total, and the closed reason list must be the code's. Its v1 messages must stay
 * what the v1 reader accepts, and its dense pack must inflate to the subject pack's signals.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCORING_CONFIG, scoringConfigDigest } from '../../src/score/scoring-config.js';
import { responseHashV2 } from '../../src/format/hashing.js';
import { parseSignalMessage } from '../../src/format/read-v1.js';
import { readMessage, type MessageItem } from '../../src/format/read.js';
import { FAILURE_REASONS } from '../../src/format/reasons.js';
import { checkPublishedScore, type ScoreRecordLike } from '../../src/verify/score.js';
import { verifySignals, type VerifiableReveal, type VerifiableSignal } from '../../src/verify/signals.js';

const page = readFileSync(new URL('../../docs/formats.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('## Version 2'), page.indexOf('## Reading rules'));
const v1Section = page.slice(page.indexOf('## Version 1'), page.indexOf('## Other schemas'));
const jsonBlocks = (text: string) =>
  [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.stringify(JSON.parse(m[1]!)));
const blocks = jsonBlocks(section);
const v1Blocks = jsonBlocks(v1Section);
const denseBlock = /\*\*Dense pack\*\*[\s\S]*?```text\n([\s\S]*?)```/.exec(section)?.[1]?.trim() ?? '';

function items(json: string): MessageItem[] {
  const read = readMessage(json, { encoding: 'utf8' });
  if (!read.ok) throw new Error(`${read.reason}: ${read.detail}`);
  return read.items;
}

describe('docs/formats.md examples', () => {
  it('shows a v2 signal, a subject pack, a score record and a reveal, each read as such and within 1024 bytes', () => {
    expect(blocks).toHaveLength(4);
    const kinds = blocks.map((b) => items(b).map((i) => i.kind));
    expect(kinds).toEqual([['signal'], ['signal', 'signal', 'signal'], ['score'], ['reveal']]);
    for (const b of blocks) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(1024);
    expect(items(blocks[2]!)[0]).toMatchObject({ v: 2, validated: true });
    expect(items(blocks[3]!)[0]).toMatchObject({ v: 2, validated: true });
  });

  it('the signals verify against the reveal shown (bundled bank), and the score record recomputes', () => {
    const [single, pack, score, reveal] = blocks.map(items) as [
      MessageItem[],
      MessageItem[],
      MessageItem[],
      MessageItem[],
    ];
    const signals = [...single, ...pack].map((i) => (i as { message: VerifiableSignal }).message);
    const report = verifySignals({
      signals,
      reveals: [(reveal[0] as unknown as { message: VerifiableReveal }).message],
      keyedResponseHash: (key, s, response) => responseHashV2(key, s.signal, s.subject, response),
      // The replies the example was built from: a bare "24", and a chatty "D".
      responseOf: (s) => (s.data?.answer === '24' ? '24' : s.data?.answer === 'D' ? 'The answer is **D**.' : null),
    });
    // The probe cannot be re-derived; the three evals are.
    expect(report.counts).toEqual({
      're-derived': 3,
      'commitment-checked': 0,
      'not-checkable': 1,
      mismatch: 0,
      equivocation: 0,
    });
    expect(report.signals.filter((s) => s.kind !== 'probe').every((s) => s.responseChecked)).toBe(true);

    const record = (score[0] as { message: unknown }).message as ScoreRecordLike;
    // The v2 example was computed with the built-in config of its time (v2, m_stale 0.5), not today's.
    const check = checkPublishedScore(record, { configVersion: 2 });
    expect(check).toMatchObject({ status: 'verified', expected: 75, actual: 75 });
    expect(record.explanation?.configDigest).not.toBe(scoringConfigDigest(DEFAULT_SCORING_CONFIG));
  });

  it('lists exactly the closed failure reasons of the code', () => {
    const paragraph = section.slice(section.indexOf('**Failure reasons**'), section.indexOf('**Hashes.**'));
    const listed = [...paragraph.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]).filter((r) => r !== 'data.reason');
    expect(new Set(listed)).toEqual(new Set(FAILURE_REASONS));
  });

  it('shows a dense pack that inflates to the subject pack signals, and the same for a second subject', () => {
    const read = readMessage(denseBlock);
    if (!read.ok) throw new Error(`${read.reason}: ${read.detail}`);
    const bytes = Buffer.from(denseBlock, 'base64');
    expect(bytes[0]).toBe(0x78);
    expect(bytes.length).toBeLessThanOrEqual(1024);
    expect(read.items.map((i) => i.kind)).toEqual(Array(6).fill('signal'));
    const message = (i: MessageItem) => (i as { message: { subject: string } }).message;
    const subjectPack = items(blocks[1]!).map(message);
    expect(read.items.slice(0, 3).map(message)).toEqual(subjectPack);
    expect(read.items.slice(3).map(message)).toEqual(
      subjectPack.map((m) => ({ ...m, subject: expect.stringContaining('nativeId=quiz.example.org') })),
    );
  });

  it('shows a v1 signal, score record and reveal that the strict v1 parser accepts', () => {
    expect(v1Blocks).toHaveLength(3);
    for (const b of v1Blocks) {
      expect(parseSignalMessage(b, { encoding: 'utf8' }).ok).toBe(true);
      expect(Buffer.byteLength(b)).toBeLessThanOrEqual(1024);
    }
    expect(v1Blocks.map((b) => items(b).map((i) => [i.kind, (i as { message: { v: number } }).message.v]))).toEqual([
      [['signal', 1]],
      [['score', 1]],
      [['reveal', 1]],
    ]);
    // The v1 id reads as an alias of the catalog's math signal.
    expect((items(v1Blocks[0]!)[0] as { message: { signal: string } }).message.signal).toBe('simple-evals.math');
  });
});
