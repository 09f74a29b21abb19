/**
 * docs/formats.md shows real messages: they must stay readable by the reader, validate against their JSON Schemas,
 * verify against the reveal shown beside them, recompute to their published total, and the reason list must be the
 * code's. Its v2 and v1 messages must stay what those readers accept, and its compressed messages must inflate to the
 * readable ones shown.
 */
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCORING_CONFIG, scoringConfigDigest } from '../../src/score/scoring-config.js';
import { responseHashV2 } from '../../src/format/hashing.js';
import { parseSignalMessage } from '../../src/format/read-v1.js';
import { readMessage, type MessageItem } from '../../src/format/read.js';
import { FAILURE_REASONS } from '../../src/format/reasons.js';
import { checkPublishedScore, type ScoreRecordLike } from '../../src/verify/score.js';
import { verifySignals, type VerifiableReveal, type VerifiableSignal } from '../../src/verify/signals.js';

const page = readFileSync(new URL('../../docs/formats.md', import.meta.url), 'utf8');
const v3Section = page.slice(page.indexOf('## Format 3'), page.indexOf('## Version 2'));
const section = page.slice(page.indexOf('## Version 2'), page.indexOf('## Version 1'));
const v1Section = page.slice(page.indexOf('## Version 1'), page.indexOf('## Other schemas'));
const jsonBlocks = (text: string) =>
  [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.stringify(JSON.parse(m[1]!)));
const blocks = jsonBlocks(section);
const v3Blocks = jsonBlocks(v3Section);
const zlibBlock = /\*\*Compressed, on request\*\*[\s\S]*?```text\n([\s\S]*?)```/.exec(v3Section)?.[1]?.trim() ?? '';
const ajv = new Ajv2020({ strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const schemaOf = (op: string) => {
  const { $id: _id, ...schema } = JSON.parse(
    readFileSync(new URL(`../../schemas/${op}-3.schema.json`, import.meta.url), 'utf8'),
  ) as Record<string, unknown>;
  return ajv.compile(schema);
};
const v1Blocks = jsonBlocks(v1Section);
const denseBlock = /\*\*Dense pack\*\*[\s\S]*?```text\n([\s\S]*?)```/.exec(section)?.[1]?.trim() ?? '';

function items(json: string): MessageItem[] {
  const read = readMessage(json, { encoding: 'utf8' });
  if (!read.ok) throw new Error(`${read.reason}: ${read.detail}`);
  return read.items;
}

describe('docs/formats.md examples', () => {
  it('shows format-3 signals, a score record and a reveal: read as such, within 1024 bytes, valid by their schemas', () => {
    expect(v3Blocks).toHaveLength(3);
    expect(v3Blocks.map((b) => items(b).map((i) => i.kind))).toEqual([Array(6).fill('signal'), ['score'], ['reveal']]);
    for (const b of v3Blocks) {
      expect(Buffer.byteLength(b)).toBeLessThanOrEqual(1024);
      const value = JSON.parse(b) as { op: string };
      const validate = schemaOf(value.op);
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
      // Nothing in the examples is unknown to the reader.
      expect(items(b).filter((i) => i.kind === 'unknown')).toEqual([]);
    }
  });

  it('the format-3 signals verify against the reveal shown, and the score record recomputes from its breakdown', () => {
    const [signalItems, score, reveal] = v3Blocks.map(items) as [MessageItem[], MessageItem[], MessageItem[]];
    const replies: Record<string, string> = {
      '24': '24',
      D: 'The answer is **D**.',
      '26': '26',
      B: 'The answer is **B**.',
    };
    const report = verifySignals({
      signals: signalItems.map((i) => (i as { message: VerifiableSignal }).message),
      reveals: [(reveal[0] as unknown as { message: VerifiableReveal }).message],
      keyedResponseHash: (key, s, response) => responseHashV2(key, s.signal, s.subject, response),
      responseOf: (s) => replies[s.data?.answer ?? ''] ?? null,
    });
    // Two probes cannot be re-derived; the four evals are (one of them a wrong answer, published as wrong).
    expect(report.counts).toEqual({
      're-derived': 4,
      'commitment-checked': 0,
      'not-checkable': 2,
      mismatch: 0,
      equivocation: 0,
    });
    // The two replies that said more than their answer carry `r`, and it is checked.
    expect(report.signals.filter((s) => s.responseChecked)).toHaveLength(2);

    const record = (score[0] as { message: unknown }).message as ScoreRecordLike;
    const check = checkPublishedScore(record, {
      configDigest: scoringConfigDigest(DEFAULT_SCORING_CONFIG),
      configVersion: DEFAULT_SCORING_CONFIG.trustScoreConfigVersion,
    });
    expect(check).toMatchObject({ status: 'verified', expected: 75, actual: 75 });
  });

  it('shows the format-3 signals compressed: op "zlib" inflates to exactly that message', () => {
    const value = JSON.parse(zlibBlock) as { fmt: string; op: string; zlib: string };
    expect(value).toMatchObject({ fmt: 'hcs25-tool/3', op: 'zlib' });
    expect(Buffer.byteLength(zlibBlock)).toBeLessThanOrEqual(1024);
    expect(schemaOf('zlib')(value)).toBe(true);
    expect(JSON.parse(inflateSync(Buffer.from(value.zlib, 'base64')).toString('utf8'))).toEqual(
      JSON.parse(v3Blocks[0]!),
    );
    expect(items(zlibBlock)).toEqual(items(v3Blocks[0]!));
  });

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

  it('lists exactly the failure reasons the code writes', () => {
    const paragraph = v3Section.slice(v3Section.indexOf('**Failure reasons**'), v3Section.indexOf('**Hashes.**'));
    const listed = [...paragraph.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]).filter((r) => r !== 'reason');
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
