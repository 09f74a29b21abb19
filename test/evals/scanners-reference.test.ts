import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalNumber, gradeMath } from '../../src/evals/grade-math.js';
import { gradeChoice, prepareChoiceQuestion, type ChoiceQuestion } from '../../src/evals/grade-choice.js';
import { loadScienceBank, scienceQuestionFromEntry } from '../../src/evals/science.js';
import { GRADER_IDS } from '../../src/evals/grade-result.js';
import { normaliseResponse as referenceNormaliseResponse, referenceCanonicalNumber, referenceGradeChoice, referenceGradeMath } from './reference-graders.js';
import { normaliseResponse } from '../../src/evals/normalise.js';

/** Pieces the graders' rules turn on: digits, signs, dots, letters A–D and their neighbours, wrappers, spaces of every kind, markers. */
const PIECES = [
  '0', '5', '9', '95', '007', '-', '.', ',', '1,095', '1.5', '.5', '3.14.15', '95.0', '%', ' %', ' ', '\t', '\n', '\u00a0', '\u2003', '\u3000', '\ufeff',
  'A', 'B', 'C', 'D', 'E', 'a', 'b', 'c', 'd', 'x', '_', '°', '(', ')', '[', ']', ':', '*', '**', '`', '```', '$', '\\',
  '\\boxed{', '\\text{', '}', '{', '#### ', 'Answer: ', 'answer is ', 'final answer', 'Option ', 'choice ', 'the ',
  'The answer is ', 'correct ', 'or ', 'is ', 'Oxygen', 'Carbon dioxide', 'oxygenated', 'Vitamin D', '3D', 'B12',
  '−', '９', 'Ｂ', '’', 'e', '1e2', "I can't", 'I am sorry', '. ', '!', '?',
  // Folded char by char (full-width punctuation, dashes, ellipsis, signs) or not (combining marks, İ, Kelvin sign).
  '…', '，', '＄', '＼', '＊', '｀', '–', '×', '\u0301', 'İ', '\u212a', 'ſ', '\\fbox{', '\\textbf {', '\\(', '\\$',
  '1,234,567', ',123', '12,3456', 'Choice: ', 'ANSWER IS ', 'option(', 'ＡＮＳＷＥＲ', 'answers', 'FINAL ANSWER ', '###',
];
/** More runs locally (`GRADER_PROPERTY_RUNS=200000`) before changing a grader; the default keeps the suite quick. */
const RUNS = Number(process.env.GRADER_PROPERTY_RUNS ?? 6000);
const reply = fc.array(fc.constantFrom(...PIECES), { maxLength: 14 }).map((parts) => parts.join(''));
const anyText = fc.oneof(reply, fc.string({ maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 12 }));

describe('graders scanned by char code give the regex graders\' verdicts', () => {
  it('gradeMath: every reply, both graders, with and without operands', () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(95, -7, 0, 1095, 9), fc.constantFrom(...GRADER_IDS), (response, expected, grader) => {
        const opts = { grader, operands: [37, 58] };
        expect(gradeMath(response, expected, opts)).toEqual(referenceGradeMath(response, expected, opts));
      }),
      { numRuns: RUNS },
    );
  });

  it('gradeMath: long replies (reasoning, then the answer near the end)', () => {
    const reasoning = fc.array(fc.constantFrom('First 30 + 50 = 80, ', 'then 7 + 8 = 15. ', 'so ', 'Step 2: ', '40% of it ', 'x'), { minLength: 3, maxLength: 5 });
    fc.assert(
      fc.property(reasoning, reply, fc.constantFrom(...GRADER_IDS), (before, after, grader) => {
        const response = before.join('') + after;
        const opts = { grader, operands: [37, 58] };
        expect(gradeMath(response, 95, opts)).toEqual(referenceGradeMath(response, 95, opts));
      }),
      { numRuns: RUNS },
    );
  });

  it('normaliseResponse: every reply, with and without the boxed marker', () => {
    fc.assert(
      fc.property(anyText, fc.boolean(), (response, markBoxed) => {
        expect(normaliseResponse(response, { markBoxed })).toBe(referenceNormaliseResponse(response, { markBoxed }));
      }),
      { numRuns: RUNS },
    );
  });

  it('canonicalNumber: every numeric token', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^-?\d{1,6}(\.\d{1,6})?$/), (token) => {
        expect(canonicalNumber(token)).toBe(referenceCanonicalNumber(token));
      }),
      { numRuns: 3000 },
    );
  });

  it('gradeChoice: every reply, both graders, plain and lettered options', () => {
    const questions: ChoiceQuestion[] = [
      { options: ['Oxygen', 'Carbon dioxide', 'Nitrogen', 'Helium'], answer: 'B' },
      { options: ['Vitamin A', 'Vitamin D', '3D', 'B12'], answer: 'D' },
      ...loadScienceBank().slice(0, 6).map((entry) => scienceQuestionFromEntry(entry)),
    ];
    fc.assert(
      fc.property(anyText, fc.constantFrom(...questions), fc.constantFrom(...GRADER_IDS), (response, q, grader) => {
        const expected = referenceGradeChoice(response, q, { grader });
        expect(gradeChoice(response, q, { grader })).toEqual(expected);
        expect(prepareChoiceQuestion(q)(response, { grader })).toEqual(expected);
      }),
      { numRuns: RUNS },
    );
  });

  it('gradeChoice: replies of one option\'s whole text, in any case, with the bank\'s and lettered options', () => {
    const questions: ChoiceQuestion[] = [
      { options: ['Vitamin A', 'Vitamin D', '3D', 'B12'], answer: 'D' },
      { options: ['A gas', 'Plan B', 'Answer C', 'an option'], answer: 'A' },
      { options: ['Oxygen', 'Oxygen', 'Nitrogen', 'b'], answer: 'B' },
      ...loadScienceBank().map((entry) => scienceQuestionFromEntry(entry)),
    ];
    const cased = (text: string, bits: number): string =>
      [...text].map((ch, i) => ((bits >> i % 31) & 1 ? ch.toUpperCase() : ch.toLowerCase())).join('');
    fc.assert(
      fc.property(fc.constantFrom(...questions), fc.nat(3), fc.integer(), fc.constantFrom('', ' ', '.', '**'), fc.constantFrom(...GRADER_IDS), (q, k, bits, wrap, grader) => {
        const response = `${wrap}${cased(q.options[k]!, bits)}${wrap}`;
        const expected = referenceGradeChoice(response, q, { grader });
        expect(gradeChoice(response, q, { grader })).toEqual(expected);
        expect(prepareChoiceQuestion(q)(response, { grader })).toEqual(expected);
      }),
      { numRuns: Math.min(RUNS, 20000) },
    );
  });
});
