import { describe, expect, it } from 'vitest';
import { canonicalNumber, gradeMath } from '../../src/evaluate/grade-math.js';
import type { GradeOutcome, GraderId } from '../../src/evaluate/types.js';

type Row = [response: string, outcome: GradeOutcome, answer: string | null, compliant?: boolean, reason?: string];

/**
 * Expected 95 (37 + 58) unless a row says otherwise. `#N` is the case number in the peers digest §4;
 * where first-token@1 departs from that table's "Ours" column the literal rule wins.
 */
const FIRST_TOKEN: Row[] = [
  ['95', 'correct', '95', true], // #1
  ['  95\n', 'correct', '95', true], // #2
  ['95.', 'correct', '95', true], // #3
  ['95.0', 'correct', '95', true], // #4
  ['The answer is **95**.', 'correct', '95', false], // #5
  ['$\\boxed{95}$', 'correct', '95', true], // #6
  ['Answer: 95', 'correct', '95', false], // #7
  ['37 + 58 = 95', 'wrong', '37', false], // #8 literal: first token
  ['95 is the sum of 37 and 58', 'correct', '95', false], // #9
  ['7+8=15, carry 1… so 95', 'wrong', '7', false], // #10 literal
  ['Answer: 95 (37+58)', 'correct', '95', false], // #11
  ['ninety-five', 'unparseable', null, false, 'no-number'], // #17
  ['95%', 'correct', '95', false], // #18 literal: 95 is the first numeric token
  ['95 apples', 'correct', '95', false], // #19
  ['(95)', 'correct', '95', false], // #20
  ['95!', 'correct', '95', false], // #20
  ['I think 95, maybe 96', 'correct', '95', false], // #21 literal
  ['95 96 97 98', 'correct', '95', false], // #22 literal (a known gaming vector; last-answer@1 rejects it)
  ['9 5', 'wrong', '9', false], // #23
  ['1e2', 'unparseable', null, false, 'no-number'], // #24 glued to letters: not a number
  ["I can't help with that.", 'unparseable', null, false, 'refusal'], // #25
  ['I’m sorry, I cannot answer that', 'unparseable', null, false, 'refusal'],
  ['', 'empty', null, false, 'empty'], // #26
  ['   \n\t ', 'empty', null, false, 'empty'], // #26
  ['`95`', 'correct', '95', true],
  ['```\n95\n```', 'correct', '95', true],
  ['__95__', 'correct', '95', true],
  ['*95*', 'correct', '95', true],
  ['\\(95\\)', 'correct', '95', true],
  ['$95$', 'correct', '95', true],
  ['\\text{95}', 'correct', '95', true],
  ['９５', 'correct', '95', true], // full-width digits
  ['95.00', 'correct', '95', true],
  ['095', 'correct', '95', true],
  ['95.5', 'wrong', '95.5', true],
  ['96', 'wrong', '96', true],
  ['v95', 'unparseable', null, false, 'no-number'],
  ['95th', 'unparseable', null, false, 'no-number'],
  ['Sure! The sum is 95.', 'correct', '95', false],
  ['The result of the addition is: 95', 'correct', '95', false],
  ['**Answer:** 95', 'correct', '95', false],
  ['\\boxed{\\text{95}}', 'correct', '95', true],
];

const EXPECTED_OTHER: [string, number, GradeOutcome, string | null, boolean][] = [
  ['-12', -12, 'correct', '-12', true], // #12
  ['−12', -12, 'correct', '-12', true], // #13 U+2212
  ['12', -12, 'wrong', '12', true], // #14
  ['1,234', 1234, 'correct', '1234', true], // #15
  ['72, in total, so that is it', 72, 'correct', '72', false], // #16
  ['The answer is -40.', -40, 'correct', '-40', false],
  ['80-12=68', 68, 'wrong', '80', false], // a dash after a digit is subtraction, not a sign
  ['= -0', 0, 'correct', '0', false],
  ['12,345,678', 12345678, 'correct', '12345678', true],
  ['1,23', 123, 'wrong', '1', false], // not a thousands group
  ['56', 56, 'correct', '56', true],
  ['７×８＝５６', 56, 'wrong', '7', false],
  ['1,234,5678', 1, 'correct', '1', false], // a group of four digits: no thousands separator anywhere
  ['0.5,123,456', 5, 'wrong', '0.5', false], // a group after a decimal is not a thousands group
  ['x,123 and 4,567', 4567, 'wrong', '123', false],
  ['1**,**095', 1095, 'correct', '1095', true], // a separator the emphasis pass brings next to the digits
  ['1`,`095', 1095, 'correct', '1095', true], // and the backtick pass
  ['1, 095', 1095, 'wrong', '1', false], // no digit right after the comma: nothing to join
  ['\\fbox{4}\\,\\text{2}', 42, 'correct', '42', true], // LaTeX wrappers and thin spaces
  ['```js\n95\n```', 95, 'correct', '95', true], // a fence and its language word
  ['\\$95', 95, 'correct', '95', true],
  ['snake_case 7*8 = 56', 56, 'wrong', '7', false], // `_` and `*` between letters or digits stay
  ['－４２', -42, 'correct', '-42', true], // full-width minus and digits
  ['４２…', 42, 'correct', '42', false], // an ellipsis folds to three dots
];

const LAST_ANSWER: Row[] = [
  ['95', 'correct', '95', true], // #1
  ['37 + 58 = 95', 'correct', '95', false], // #8 echo removal
  ['95 is the sum of 37 and 58', 'correct', '95', false], // #9
  ['7+8=15, carry 1… so 95', 'correct', '95', false], // #10
  ['Answer: 95 (37+58)', 'correct', '95', false], // #11 first number after the marker
  ['95%', 'unparseable', null, false, 'unit'], // #18
  ['I think 95, maybe 96', 'wrong', '96', false], // #21
  ['95 96 97 98', 'wrong', '98', false], // #22
  ['9 5', 'wrong', '5', false], // #23
  ['1e2', 'unparseable', null, false, 'no-number'], // #24
  ["I can't help with that.", 'unparseable', null, false, 'refusal'], // #25
  ['', 'empty', null, false, 'empty'], // #26
  ['The answer is 95. 37 + 58 is easy.', 'correct', '95', false],
  ['Answer: 94. Wait, final answer: 95', 'correct', '95', false],
  ['Let me think: 37 + 58. #### 95', 'correct', '95', false],
  ['37 + 58 = \\boxed{95}, checked with 100 - 5', 'correct', '95', false],
  ['Final answer: ninety-five. Working: 37 + 58 = 95', 'wrong', '37', false], // the first number after the marker, literally
  ['Answer: ninety-five', 'unparseable', null, false, 'no-number'],
  ['The answer is **95**.', 'correct', '95', false], // #5
  ['$\\boxed{95}$', 'correct', '95', true], // #6
  ['37 and 58', 'wrong', '58', false], // only echoes: the last number
  ['The total is 95, not 37 or 58', 'correct', '95', false],
  // Edges of the char-code marker and token scanners.
  ['Answer: 0#### 9', 'wrong', '9', false], // `####` right after a number is still a marker
  ['###### 95', 'correct', '95', false], // a run of six `#`: one marker
  ['FINAL ANSWER 95', 'correct', '95', false], // markers in any case
  ['answer   : 95', 'correct', '95', false], // spaces before the colon
  ['answers: 12, so 95', 'correct', '95', false], // `answers:` is no marker: the last non-echo number
  ['Answer: 95%, no: 95', 'correct', '95', false], // a percentage after the marker is skipped
  ['-037 + 058 = 95', 'correct', '95', false], // echoes compare by value
  ['37 + 58 = -0095.00', 'wrong', '-95', false],
];

describe('gradeMath first-token@1 (default)', () => {
  it.each(FIRST_TOKEN)('%j → %s %s', (response, outcome, answer, compliant = false, reason) => {
    const r = gradeMath(response, 95);
    expect(r).toEqual(reason === undefined ? { outcome, answer, compliant } : { outcome, answer, compliant, reason });
  });

  it.each(EXPECTED_OTHER)('%j (expected %d) → %s', (response, expected, outcome, answer, compliant) => {
    expect(gradeMath(response, expected)).toEqual({ outcome, answer, compliant });
  });

  it('selects first-token@1 explicitly the same as by default', () => {
    expect(gradeMath('37 + 58 = 95', 95, { grader: 'first-token@1' })).toEqual(gradeMath('37 + 58 = 95', 95));
  });
});

describe('gradeMath last-answer@1', () => {
  const grader: GraderId = 'last-answer@1';
  it.each(LAST_ANSWER)('%j → %s %s', (response, outcome, answer, compliant = false, reason) => {
    const r = gradeMath(response, 95, { grader, operands: [37, 58] });
    expect(r).toEqual(reason === undefined ? { outcome, answer, compliant } : { outcome, answer, compliant, reason });
  });

  it('keeps an answer equal to an operand (80 − 40 = 40)', () => {
    expect(gradeMath('40', 40, { grader, operands: [80, 40] }).outcome).toBe('correct');
    expect(gradeMath('80 - 40 = 40', 40, { grader, operands: [80, 40] }).outcome).toBe('correct');
    expect(gradeMath('Half of 80: 40', 40, { grader, operands: [80, 40] }).outcome).toBe('correct');
  });

  it('removes echoes of equal operands once each (7 × 7 = 49)', () => {
    expect(gradeMath('7 × 7 = 49', 49, { grader, operands: [7, 7] }).answer).toBe('49');
    expect(gradeMath('7 times 7', 49, { grader, operands: [7, 7] }).answer).toBe('7');
  });

  it('takes the last number when no operands are given', () => {
    expect(gradeMath('37 + 58 = 95', 95, { grader }).outcome).toBe('correct');
  });

  it('reads negative answers after subtraction echoes', () => {
    expect(gradeMath('10 - 50 = -40', -40, { grader, operands: [10, 50] }).outcome).toBe('correct');
  });
});

describe('canonicalNumber', () => {
  it.each([
    ['95', '95'],
    ['95.0', '95'],
    ['095', '95'],
    ['-0', '0'],
    ['-0.50', '-0.5'],
    ['0.0', '0'],
    ['-007', '-7'],
    ['-007.10', '-7.1'],
    ['-0.000', '0'],
    ['000', '0'],
  ])('%s → %s', (input, output) => {
    expect(canonicalNumber(input)).toBe(output);
  });

  it('caps a long answer at 16 characters', () => {
    const r = gradeMath('123456789012345678901234567890', 95);
    expect(r.outcome).toBe('wrong');
    expect(r.answer).toHaveLength(16);
  });
});
