import { describe, expect, it } from 'vitest';
import { gradeChoice, prepareChoiceQuestion, type ChoiceQuestion } from '../../src/evaluate/grade-choice.js';
import type { GradeOutcome, GraderId } from '../../src/evaluate/types.js';

/** The digest's letter ladder question: correct is B. */
const Q: ChoiceQuestion = { options: ['Oxygen', 'Carbon dioxide', 'Nitrogen', 'Helium'], answer: 'B' };

type Row = [response: string, outcome: GradeOutcome, answer: string | null, compliant?: boolean, reason?: string];

function expectRow(grader: GraderId, [response, outcome, answer, compliant = false, reason]: Row, q = Q): void {
  const r = gradeChoice(response, q, { grader });
  expect(r).toEqual(reason === undefined ? { outcome, answer, compliant } : { outcome, answer, compliant, reason });
}

/** `#N` is the case number in the peers digest §4; the rules win where first-token@1 differs. */
const FIRST_TOKEN: Row[] = [
  ['B', 'correct', 'B', true], // #27
  ['b', 'correct', 'B', false], // #28 a lone lowercase letter is the answer (not the bare "B")
  ['(B)', 'correct', 'B', false], // #29
  ['B)', 'correct', 'B', false], // #30
  ['B.', 'correct', 'B', true], // #30 trailing period normalised
  ['**B**', 'correct', 'B', true], // #31
  ['$B$', 'correct', 'B', true], // #31
  ['Answer: B', 'correct', 'B', false], // #32
  ['answer: b', 'correct', 'B', false], // #32 a lowercase letter right after an anchor
  ['**Answer:** B', 'correct', 'B', false], // #33
  ['The answer is B. Carbon dioxide', 'correct', 'B', false], // #34
  ['B) Carbon dioxide', 'correct', 'B', false], // #35
  ['B) Oxygen', 'unparseable', null, false, 'conflict'], // #36
  ['Carbon dioxide', 'correct', 'B', false], // #37 exactly one option's full text
  ['A or B', 'unparseable', null, false, 'ambiguous'], // #38
  ['A, B', 'unparseable', null, false, 'ambiguous'], // #38
  ['A plant absorbs CO2, so B.', 'correct', 'B', false], // #39 sentence-initial article
  ['It is a gas: B', 'correct', 'B', false], // #40
  ['Answer: B … Answer: C', 'unparseable', null, false, 'ambiguous'], // #41 literal: two letters
  ["I don't know", 'unparseable', null, false, 'refusal'], // #42
  ['None of the above', 'unparseable', null, false, 'no-answer'], // #42
  ['Ｂ', 'correct', 'B', true], // #43 full-width
  ['E', 'unparseable', null, false, 'invalid-option'], // #44
  ['Option B', 'correct', 'B', false], // #45
  ['choice B', 'correct', 'B', false], // #45
  ['B\n\nUnlike A) Oxygen, it is absorbed', 'unparseable', null, false, 'ambiguous'], // #46 literal: two letters
  ['', 'empty', null, false, 'empty'],
  ['  \n ', 'empty', null, false, 'empty'],
  ['A', 'wrong', 'A', true],
  ['a', 'wrong', 'A', false], // a lone lowercase letter that is the whole response
  ['D', 'wrong', 'D', true],
  ['`B`', 'correct', 'B', true],
  ['\\boxed{B}', 'correct', 'B', true],
  ['\\boxed{\\text{B}}', 'correct', 'B', true],
  ['[B]', 'correct', 'B', false],
  ['(b)', 'correct', 'B', false],
  ['B: Carbon dioxide', 'correct', 'B', false],
  ['(A) Carbon dioxide', 'unparseable', null, false, 'conflict'],
  ['Answer: C. Carbon dioxide', 'unparseable', null, false, 'conflict'],
  ['B) Carbon dioxide, not oxygen', 'correct', 'B', false], // attached text names two options: no conflict
  ['carbon dioxide', 'correct', 'B', false],
  ['Carbon dioxide.', 'correct', 'B', false],
  ['**Carbon dioxide**', 'correct', 'B', false],
  ['Oxygen', 'wrong', 'A', false],
  ['Oxygen or helium', 'unparseable', null, false, 'ambiguous'],
  ['Oxygenated water', 'unparseable', null, false, 'no-answer'], // whole words only
  ['A plant takes in carbon dioxide', 'correct', 'B', false], // article, then option text
  ['The answer is C', 'wrong', 'C', false],
  ['I pick D because helium is light', 'wrong', 'D', false],
  ['DNA is not involved; the answer is B', 'correct', 'B', false], // DNA is not the letter D
  ['A is correct', 'wrong', 'A', false], // "A is" is a letter, not the article
  ['the answer is a gas', 'unparseable', null, false, 'no-answer'], // lowercase "a" + word: the article
  ['It could be A. Or maybe B.', 'unparseable', null, false, 'ambiguous'],
  ['I cannot answer that.', 'unparseable', null, false, 'refusal'],
  ['Answer: E', 'unparseable', null, false, 'no-answer'],
  ['Water boils at 100 °C, so B', 'correct', 'B', false], // °C is a unit, not the letter C
  // Edges of the char-code letter and anchor scanners.
  ['CHOICE: (d)', 'wrong', 'D', false], // anchors in any case, a bracket before the letter
  ['ANSWER IS b', 'correct', 'B', false],
  ['answer isb', 'correct', 'B', false], // as the regex reads it: `is`, then the letter
  ['Answers: b', 'unparseable', null, false, 'no-answer'], // `Answers` is not an anchor; a lowercase b is no letter
  ['option-c, or so', 'wrong', 'C', false],
  ['The answer: B. Carbon dioxide', 'correct', 'B', false], // no `is`: the anchor still reads the letter
  ['Final answer: C) Carbon dioxide', 'unparseable', null, false, 'conflict'], // a qualified prefix before a leading letter
  ['THE CORRECT ANSWER IS (A). Oxygen', 'wrong', 'A', false],
  ['İ think B', 'correct', 'B', false], // lower-casing changes the length: the letters are scanned char by char
  ['Ｃａｒｂｏｎ　ｄｉｏｘｉｄｅ', 'correct', 'B', false], // full-width option text
  ['A\tplant, so B', 'correct', 'B', false], // a tab before the article's word
];

const LAST_ANSWER: Row[] = [
  ['B', 'correct', 'B', true], // #27
  ['Answer: B … Answer: C', 'wrong', 'C', false], // #41 the last anchor wins
  ['B\n\nUnlike A) Oxygen, it is absorbed', 'correct', 'B', false], // #46 first line
  ['A) Oxygen is released. B) Carbon dioxide is absorbed. Answer: B', 'correct', 'B', false],
  ['A or B', 'unparseable', null, false, 'ambiguous'], // #38
  ['B) Oxygen', 'unparseable', null, false, 'conflict'], // #36
  ['Carbon dioxide', 'correct', 'B', false], // #37
  ['A plant absorbs CO2, so B.', 'correct', 'B', false], // #39
  ['option c', 'wrong', 'C', false],
  ['', 'empty', null, false, 'empty'],
];

describe('gradeChoice first-token@1 (default)', () => {
  it.each(FIRST_TOKEN)('%j → %s %s', (...row) => expectRow('first-token@1', row));
});

describe('gradeChoice last-answer@1', () => {
  it.each(LAST_ANSWER)('%j → %s %s', (...row) => expectRow('last-answer@1', row));
});

describe('gradeChoice with lettered options', () => {
  const vitamins: ChoiceQuestion = { options: ['Vitamin C', 'Vitamin D', 'Vitamin K', 'Iron'], answer: 'B' };

  it('does not read the letter inside a quoted option as an answer', () => {
    expectRow('first-token@1', ['B (Vitamin D)', 'correct', 'B', false], vitamins);
    expectRow('first-token@1', ['Vitamin D', 'correct', 'B', false], vitamins);
    expectRow('first-token@1', ['The answer is B, vitamin D', 'correct', 'B', false], vitamins);
  });

  it('matches the longest option first', () => {
    const q: ChoiceQuestion = { options: ['Iron', 'Iron oxide', 'Copper', 'Zinc'], answer: 'B' };
    expectRow('first-token@1', ['iron oxide', 'correct', 'B', false], q);
    expectRow('first-token@1', ['Iron', 'wrong', 'A', false], q);
  });

  it('grades against the options in the order asked', () => {
    const shuffled: ChoiceQuestion = { options: ['Helium', 'Nitrogen', 'Oxygen', 'Carbon dioxide'], answer: 'D' };
    expectRow('first-token@1', ['Carbon dioxide', 'correct', 'D', false], shuffled);
    expectRow('first-token@1', ['B', 'wrong', 'B', true], shuffled);
  });
});

describe('prepareChoiceQuestion', () => {
  /** A question whose option texts count how often they are read. */
  function counted(): { question: ChoiceQuestion; reads: () => number } {
    let reads = 0;
    const texts = ['Oxygen', 'Carbon dioxide', 'Vitamin D', 'Helium'];
    const options = [0, 1, 2, 3].map(() => '') as unknown as ChoiceQuestion['options'];
    for (const [i, text] of texts.entries()) {
      Object.defineProperty(options, i, {
        get: () => {
          reads++;
          return text;
        },
      });
    }
    return { question: { options, answer: 'B' }, reads: () => reads };
  }
  // Replies that need the option texts: full-text matches, lettered options to mask, a leading conflict.
  const replies = ['Carbon dioxide', 'It is carbon dioxide, not Vitamin D', 'B) Oxygen', 'A or B', 'Helium? No: B'];

  it('prepareChoiceQuestion reads the options when prepared, never while grading', () => {
    const { question, reads } = counted();
    const grade = prepareChoiceQuestion(question);
    const prepared = reads();
    for (const r of replies) grade(r);
    expect(reads()).toBe(prepared);
    expect(replies.map((r) => grade(r))).toEqual(
      replies.map((r) => gradeChoice(r, { options: ['Oxygen', 'Carbon dioxide', 'Vitamin D', 'Helium'], answer: 'B' })),
    );
  });
});
