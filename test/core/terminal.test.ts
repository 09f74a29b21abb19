/** escapeTerminal and the library's text renderers that show agent and registry text. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TERMINAL_UNSAFE, escapeTerminal, stringifyForTerminal, stringifyInPieces } from '../../src/core/terminal.js';
import { csvCell } from '../../src/report/csv.js';
import { scoreLabel } from '../../src/report/display.js';
import { renderRejectedLine } from '../../src/report/table.js';
import { SkipList } from '../../src/discover/skips.js';
import { oneLine, preview } from '../../src/core/terminal.js';

const HOSTILE = 'a\u001b[2Jb\u001b]0;t\u0007c\u009b31md\u202ee\u2066f\u200bg\ufeffh\rj\u0000';
const ESCAPED = 'a\\x1b[2Jb\\x1b]0;t\\x07c\\x9b31md\\u202ee\\u2066f\\u200bg\\ufeffh\\x0dj\\x00';
const anyUnsafe = new RegExp(TERMINAL_UNSAFE.source, 'u');

describe('escapeTerminal', () => {
  it('shows escape, control, C1, bidi and invisible characters as escapes', () => {
    expect(escapeTerminal(HOSTILE)).toBe(ESCAPED);
  });

  it('leaves ordinary text, accents, emoji and right-to-left letters alone', () => {
    const text = 'Grüße — 42 ✓ 👋 שלום مرحبا \\x1b (a literal backslash)';
    expect(escapeTerminal(text)).toBe(text);
  });

  it('escapes line feeds and tabs unless asked to keep them; carriage returns always', () => {
    expect(escapeTerminal('a\nb\tc\r\n')).toBe('a\\x0ab\\x09c\\x0d\\x0a');
    expect(escapeTerminal('a\nb\tc\r\n', { keepNewlines: true })).toBe('a\nb\tc\\x0d\n');
  });

  it('JSON for a terminal is the same value with every unsafe character as a \\u escape', () => {
    const value = { reply: HOSTILE, n: 1 };
    const text = stringifyForTerminal(value, 2);
    expect(anyUnsafe.test(text.replace(/\n/g, ''))).toBe(false);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('stringifyInPieces', () => {
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom(HOSTILE, undefined, null, new Date(0), () => 1),
      fc.jsonValue(),
      fc.array(tie('node')),
      fc.dictionary(fc.string(), tie('node')),
    ),
  })).node;

  it('joins to exactly the JSON of stringifyForTerminal, at any depth of pieces', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 4 }), (v, depth) => {
        if (v === undefined || typeof v === 'function') return;
        expect([...stringifyInPieces(v, 2, depth)].join('')).toBe(stringifyForTerminal(v, 2));
      }),
    );
  });

  it('gives an array of a thousand members a piece at a time', () => {
    const report = { subjects: Array.from({ length: 1000 }, (_, i) => ({ rank: i + 1, name: HOSTILE })) };
    const pieces = [...stringifyInPieces(report, 2)];
    expect(pieces.length).toBeGreaterThan(1000);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(200);
    expect(pieces.join('')).toBe(stringifyForTerminal(report, 2));
  });
});

describe('renderers of untrusted text', () => {
  it('skip reasons and refs are stored escaped, whoever built them', () => {
    const skips = new SkipList();
    skips.add(`agents.json#${HOSTILE}`, `invalid name ${HOSTILE}`);
    const [entry] = skips.list();
    expect(entry).toEqual({ ref: `agents.json#${ESCAPED}`, reason: `invalid name ${ESCAPED}` });
  });

  it('previews of registry text (memos, JSON) are escaped, bidi included', () => {
    expect(preview(`memo${HOSTILE}`, 100)).toBe(`"memo${ESCAPED}"`);
  });

  it('one-line agent messages collapse whitespace and escape the rest', () => {
    expect(oneLine(`  task   failed:\n${HOSTILE}  `)).toBe(`task failed: ${ESCAPED}`);
  });

  it('CSV cells (scores --csv) are escaped, formula defusing kept', () => {
    expect(csvCell(`x${HOSTILE}`)).toBe(`x${ESCAPED}`);
    expect(csvCell(`=1+1${HOSTILE}`)).toBe(`'=1+1${ESCAPED}`);
  });

  it('score labels and rejected-message lines are escaped', () => {
    expect(scoreLabel({ subject: 'uaid:aid:x;uid=0', label: `evil${HOSTILE}` })).toBe(`evil${ESCAPED}`);
    const line = renderRejectedLine({
      sequenceNumber: 7,
      consensusTimestamp: '1.2',
      payerAccountId: '0.0.9',
      reason: 'duplicate',
      detail: `bad ${HOSTILE}`,
    });
    expect(anyUnsafe.test(line)).toBe(false);
    expect(line).toContain('\\x1b[2J');
  });
});
