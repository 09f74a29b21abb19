import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalNumber, gradeMath } from '../../src/evaluate/grade-math.js';
import { gradeChoice, LETTERS, prepareChoiceQuestion, type ChoiceQuestion } from '../../src/evaluate/grade-choice.js';
import { normaliseResponse } from '../../src/evaluate/normalise.js';
import { loadScienceBank, scienceQuestionFromEntry } from '../../src/evaluate/science.js';
import { GRADER_IDS } from '../../src/evaluate/grade-result.js';
import type { GradeResult } from '../../src/evaluate/types.js';

/** Pieces the graders' rules turn on: digits, signs, dots, letters A–D and neighbours, wrappers, spaces, markers. */
// biome-ignore format: a table, one theme a line
const PIECES = [
  '0', '5', '9', '95', '007', '-', '.', ',', '1,095', '1.5', '.5', '3.14.15', '95.0', '%', ' %',
  ' ', '\t', '\n', '\u00a0', '\u2003', '\u3000', '\ufeff',
  'A', 'B', 'C', 'D', 'E', 'a', 'b', 'c', 'd', 'x', '_', '°', '(', ')', '[', ']', ':', '*', '**', '`', '```', '$', '\\',
  '\\boxed{', '\\text{', '}', '{', '#### ', 'Answer: ', 'answer is ', 'final answer', 'Option ', 'choice ', 'the ',
  'The answer is ', 'correct ', 'or ', 'is ', 'Oxygen', 'Carbon dioxide', 'oxygenated', 'Vitamin D', '3D', 'B12',
  '−', '９', 'Ｂ', '’', 'e', '1e2', "I can't", 'I am sorry', '. ', '!', '?',
  '…', '，', '＄', '＼', '＊', '｀', '–', '×', '\u0301', 'İ', '\u212a', 'ſ', '\\fbox{', '\\textbf {', '\\(', '\\$',
  '1,234,567', ',123', '12,3456', 'Choice: ', 'ANSWER IS ', 'option(', 'ＡＮＳＷＥＲ', 'answers', 'FINAL ANSWER ', '###',
];
/** More runs locally (`GRADER_PROPERTY_RUNS=200000`) before changing a grader; the default keeps the suite quick. */
const RUNS = Number(process.env.GRADER_PROPERTY_RUNS ?? 3000);
const reply = fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }).map((parts) => parts.join(''));
const anyText = fc.oneof(reply, fc.string({ maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 12 }));
const QUESTIONS: ChoiceQuestion[] = [
  { options: ['Oxygen', 'Carbon dioxide', 'Nitrogen', 'Helium'], answer: 'B' },
  { options: ['Vitamin A', 'Vitamin D', '3D', 'B12'], answer: 'D' },
  ...loadScienceBank()
    .slice(0, 6)
    .map((entry) => scienceQuestionFromEntry(entry)),
];
const BANK = loadScienceBank().map((entry) => scienceQuestionFromEntry(entry));

/** What every verdict satisfies, whatever the reply. */
function expectWellFormed(r: GradeResult): void {
  if (r.outcome === 'correct' || r.outcome === 'wrong') {
    expect(r.answer).not.toBeNull();
    expect(r.reason).toBeUndefined();
  } else {
    expect(r.answer).toBeNull();
    expect(r.compliant).toBe(false);
    expect(r.reason).toMatch(/^(empty|refusal|no-number|no-answer|unit|invalid-option|conflict|ambiguous)$/);
  }
  expect((r.answer ?? '').length).toBeLessThanOrEqual(16);
}

describe('gradeMath — properties', () => {
  it('gives a well-formed verdict for every reply, both graders; correct means the canonical expected number', () => {
    fc.assert(
      fc.property(
        anyText,
        fc.constantFrom(95, -7, 0, 1095, 9),
        fc.constantFrom(...GRADER_IDS),
        (response, expected, grader) => {
          const r = gradeMath(response, expected, { grader, operands: [37, 58] });
          expectWellFormed(r);
          if (r.outcome === 'correct') expect(r.answer).toBe(String(expected));
          if (r.outcome === 'wrong') expect(r.answer).not.toBe(String(expected));
          if (r.compliant) expect(canonicalNumber(normaliseResponse(response))).toBe(r.answer);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('grades the answer right in the usual wrappings, both graders', () => {
    const wrap = fc.constantFrom(
      '%s',
      '  %s\n',
      '%s.',
      'The answer is **%s**.',
      '$\\boxed{%s}$',
      'Answer: %s',
      '#### %s',
      '`%s`',
      '%s.0',
    );
    fc.assert(
      fc.property(
        fc.integer({ min: -100_000, max: 100_000 }),
        wrap,
        fc.constantFrom(...GRADER_IDS),
        (expected, form, grader) => {
          const response = form.replace('%s', String(expected));
          expect(gradeMath(response, expected, { grader })).toMatchObject({
            outcome: 'correct',
            answer: String(expected),
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps no state between replies: a verdict does not depend on what was graded before', () => {
    fc.assert(
      fc.property(anyText, anyText, fc.constantFrom(...GRADER_IDS), (first, other, grader) => {
        const opts = { grader, operands: [37, 58] };
        const before = gradeMath(first, 95, opts);
        gradeMath(other, 1095, { grader, operands: [1000, 95] });
        expect(gradeMath(first, 95, opts)).toEqual(before);
      }),
      { numRuns: Math.min(RUNS, 1000) },
    );
  });
});

describe('normaliseResponse — properties', () => {
  it('leaves no surrounding space, code ticks or dollar signs, with and without the boxed marker', () => {
    fc.assert(
      fc.property(anyText, fc.boolean(), (response, markBoxed) => {
        const t = normaliseResponse(response, { markBoxed });
        expect(t).toBe(t.trim());
        expect(t).not.toMatch(/[`$]/);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('canonicalNumber — properties', () => {
  it('keeps the value and writes it one way (no leading zeros, no trailing fraction zeros, no -0)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^-?\d{1,6}(\.\d{1,6})?$/), (token) => {
        const canonical = canonicalNumber(token);
        expect(Number(canonical)).toBe(Number(token) === 0 ? 0 : Number(token));
        expect(canonical).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$/);
        expect(canonical).not.toBe('-0');
        expect(canonicalNumber(canonical)).toBe(canonical);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('gradeChoice — properties', () => {
  it('gives a well-formed verdict for every reply, both graders, plain and lettered options', () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(...QUESTIONS), fc.constantFrom(...GRADER_IDS), (response, q, grader) => {
        const r = gradeChoice(response, q, { grader });
        expectWellFormed(r);
        if (r.answer !== null) expect(LETTERS).toContain(r.answer);
        expect(r.outcome === 'correct').toBe(r.answer === q.answer);
        expect(prepareChoiceQuestion(q)(response, { grader })).toEqual(r);
      }),
      { numRuns: RUNS },
    );
  });

  it('reads a lone letter, bare or wrapped, in either case', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LETTERS),
        fc.boolean(),
        fc.constantFrom('%s', '(%s)', '%s)', '[%s]', '%s:', ' %s. ', '**%s**'),
        fc.constantFrom(...GRADER_IDS),
        (letter, lower, form, grader) => {
          const response = form.replace('%s', lower ? letter.toLowerCase() : letter);
          const r = gradeChoice(response, QUESTIONS[0]!, { grader });
          expect(r).toMatchObject({ outcome: letter === 'B' ? 'correct' : 'wrong', answer: letter });
          expect(r.compliant).toBe(!lower && normaliseResponse(response) === letter);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reads a reply of one bank option's text (as written or lower-cased, wrapped, a period) as that option", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BANK),
        fc.nat(3),
        fc.boolean(),
        fc.constantFrom('', ' ', '**'),
        fc.boolean(),
        fc.constantFrom(...GRADER_IDS),
        (q, k, lower, wrap, period, grader) => {
          const text = lower ? q.options[k]!.toLowerCase() : q.options[k]!;
          const letter = LETTERS[k]!;
          expect(gradeChoice(`${wrap}${text}${wrap}${period ? '.' : ''}`, q, { grader })).toEqual({
            outcome: letter === q.answer ? 'correct' : 'wrong',
            answer: letter,
            compliant: false,
          });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps no state between replies: a verdict does not depend on what was graded before', () => {
    fc.assert(
      fc.property(
        anyText,
        fc.constantFrom(...QUESTIONS),
        anyText,
        fc.constantFrom(...QUESTIONS),
        fc.constantFrom(...GRADER_IDS),
        (first, q, other, p, grader) => {
          const before = gradeChoice(first, q, { grader });
          gradeChoice(other, p, { grader });
          expect(gradeChoice(first, q, { grader })).toEqual(before);
        },
      ),
      { numRuns: Math.min(RUNS, 1000) },
    );
  });
});
