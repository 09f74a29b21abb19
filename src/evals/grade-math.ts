import type { GradeResult, GraderId } from './types.js';
import { DEFAULT_GRADER, gradeResult } from './grade-result.js';
import { codeAt, isBlank, isDigit, isSpace, isWordChar, normaliseResponse, readsAt, unparseableReason } from './normalise.js';

export interface GradeMathOptions {
  grader?: GraderId;
  /** The question's operands, so `last-answer@1` can drop one echo of each (`37 + 58 = 95`). */
  operands?: readonly number[];
}

/**
 * Numeric tokens, found by {@link findNumber} as the regex
 * `(?<![A-Za-z0-9_]|\d\.)-?\d+(?:\.\d+)?(?![A-Za-z0-9_]|\.\d)` finds them: optional sign, digits, optional
 * decimals; not glued to letters (`1e2`, `v95`, `95th`), and a `-` right after a digit is subtraction (`80-12`), not a
 * sign. Scanned by char code: graders run once per reply, and this is several times faster than the regex.
 * Tokens are kept as positions (no substring per token) until the one answer is chosen.
 */

/** End of the token {@link findNumber} found last. */
let foundEnd = 0;

/**
 * Start of the first numeric token at or after `from` (its end in `foundEnd`), or -1. At each position the regex above
 * either matches its longest token or nothing (a shorter one would end before a digit), so this tries each position
 * the way the regex does.
 */
function findNumber(text: string, from: number): number {
  const n = text.length;
  for (let p = from; p < n; p++) {
    const c = text.charCodeAt(p);
    let i = p;
    if (c === 45 /* - */) i++;
    if (i >= n || !isDigit(text.charCodeAt(i))) continue;
    if (p > 0) {
      const before = text.charCodeAt(p - 1);
      if (isWordChar(before) || (before === 46 /* . */ && p > 1 && isDigit(text.charCodeAt(p - 2)))) continue;
    }
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    if (i + 1 < n && text.charCodeAt(i) === 46 && isDigit(text.charCodeAt(i + 1))) {
      i += 2;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
    }
    if (i < n) {
      const after = text.charCodeAt(i);
      if (isWordChar(after) || (after === 46 && i + 1 < n && isDigit(text.charCodeAt(i + 1)))) continue;
    }
    foundEnd = i;
    return p;
  }
  return -1;
}

/** Where the canonical form of the number {@link canonicalParts} looked at lies: `intFrom..fracEnd`, `intEnd` the dot. */
let intFrom = 0;
let intEnd = 0;
let fracEnd = 0;

/**
 * Leading zeros go but the integer part keeps its last digit (`007` → `7`), trailing decimal zeros go and the dot
 * with them when nothing is left (`95.0` → `95`); true when the number is negative and not zero (`-0` → `0`).
 */
function canonicalParts(text: string, start: number, end: number): boolean {
  const negative = text.charCodeAt(start) === 45;
  const from = negative ? start + 1 : start;
  let dot = text.indexOf('.', from);
  if (dot === -1 || dot > end) dot = end;
  intEnd = dot;
  intFrom = from;
  while (intFrom < dot - 1 && text.charCodeAt(intFrom) === 48 && isDigit(text.charCodeAt(intFrom + 1))) intFrom++;
  fracEnd = end;
  if (dot < end) while (fracEnd > dot + 1 && text.charCodeAt(fracEnd - 1) === 48) fracEnd--;
  if (fracEnd === dot + 1) fracEnd = dot;
  return negative && !(fracEnd === dot && dot - intFrom === 1 && text.charCodeAt(intFrom) === 48);
}

/** The canonical form of the number at `start..end` of `text` (the same string when that is all of it already). */
function canonicalRange(text: string, start: number, end: number): string {
  const negative = canonicalParts(text, start, end);
  if (negative && intFrom !== start + 1) return `-${text.slice(intFrom, fracEnd)}`;
  const from = negative ? start : intFrom;
  return from === 0 && fracEnd === text.length ? text : text.slice(from, fracEnd);
}

/** The number at `start..end` of `text` has the canonical form `target`. */
function canonicalIs(text: string, start: number, end: number, target: string): boolean {
  const negative = canonicalParts(text, start, end);
  let j = 0;
  if (negative) {
    if (target.charCodeAt(0) !== 45) return false;
    j = 1;
  }
  if (target.length !== j + fracEnd - intFrom) return false;
  for (let k = intFrom; k < fracEnd; k++, j++) if (text.charCodeAt(k) !== target.charCodeAt(j)) return false;
  return true;
}

/** `95.0` → `95`, `-007` → `-7`, `-0` → `0`: numbers compare by value, exactly, without floating point. */
export function canonicalNumber(token: string): string {
  return canonicalRange(token, 0, token.length);
}

/** `95%` or `95 %`: a percentage, not an answer. */
function percentAfter(text: string, end: number): boolean {
  const c = codeAt(text, end);
  return c === 37 /* % */ || (c === 32 && codeAt(text, end + 1) === 37);
}

/** Start of the first number at or after `from` that is not a percentage (its end in `foundEnd`), or -1. */
function answerNumber(text: string, from: number): number {
  for (let at = findNumber(text, from); at !== -1; at = findNumber(text, foundEnd)) if (!percentAfter(text, foundEnd)) return at;
  return -1;
}

/**
 * End of the answer marker at `at`, or -1: the regex `/final answer|answer is|answer\s*:|####/i` tried at one
 * position (`\boxed{…}` arrives here as `#### …`, see normaliseResponse).
 */
function markerAt(text: string, at: number): number {
  const c = codeAt(text, at) | 32;
  if (c === 102 /* f */) return readsAt(text, at, 'final answer') ? at + 12 : -1;
  if (c === 35 /* # */) return text.startsWith('####', at) ? at + 4 : -1;
  if (c !== 97 /* a */ || !readsAt(text, at, 'answer')) return -1;
  if (readsAt(text, at + 6, ' is')) return at + 9;
  let i = at + 6;
  while (isSpace(codeAt(text, i))) i++;
  return codeAt(text, i) === 58 /* : */ ? i + 1 : -1;
}

/**
 * The ends of the answer markers of `text`, in order, into `ends`; their count. Candidates come from the native
 * `indexOf` (`answer` in the lower-cased text, `####`), far cheaper than trying the marker at every char; the
 * markers never overlap one another, so each candidate is tried where the regex would try it. A text that
 * lower-casing changes in length is tried char by char.
 */
function findMarkers(text: string): number {
  let count = 0;
  const lower = text.toLowerCase();
  if (lower.length !== text.length) {
    for (let p = 0; p < text.length; p++) {
      const end = markerAt(text, p);
      if (end === -1) continue;
      count = pushEnd(count, end);
      p = end - 1;
    }
    return count;
  }
  for (let p = text.indexOf('####'); p !== -1; p = text.indexOf('####', p + 4)) count = pushEnd(count, p + 4);
  const hashes = count;
  for (let q = lower.indexOf('answer'); q !== -1; q = lower.indexOf('answer', q + 6)) {
    const end = q >= 6 && readsAt(text, q - 6, 'final ') ? q + 6 : markerAt(text, q);
    if (end !== -1) count = pushEnd(count, end);
  }
  // Two runs of ascending ends: in order for the search from the last.
  if (hashes > 0 && count > hashes) ends.subarray(0, count).sort();
  return count;
}

function pushEnd(count: number, end: number): number {
  if (count === ends.length) ends = grow(ends);
  ends[count] = end;
  return count + 1;
}

/** The numbers' starts and ends, reused from reply to reply (grown when a reply holds more). */
let starts: Int32Array = new Int32Array(64);
let ends: Int32Array = new Int32Array(64);
/** `String(operand)` for the operands seen last: the same question's operands come again and again. */
const operandValues: number[] = [NaN, NaN];
const operandTexts: string[] = ['', ''];

function operandText(slot: number, operand: number): string {
  if (slot >= operandValues.length) return String(operand);
  if (operandValues[slot] !== operand) {
    operandValues[slot] = operand;
    operandTexts[slot] = String(operand);
  }
  return operandTexts[slot]!;
}
/** The token `lastAnswer` chose, or `tokenStart` -1 with `unit` saying whether there were only percentages. */
let tokenStart = -1;
let tokenEnd = 0;
let unit = false;

/** `last-answer@1`: the first number after the last answer marker that has one, else the last non-echo number. */
function lastAnswer(marked: string, operands: readonly number[]): void {
  unit = false;
  tokenStart = findNumber(marked, 0);
  if (tokenStart === 0 && foundEnd === marked.length) {
    tokenEnd = foundEnd;
    return;
  }
  // The markers' ends, last first: the first with a number after it wins.
  let count = findMarkers(marked);
  for (let i = count - 1; i >= 0; i--) {
    tokenStart = answerNumber(marked, ends[i]!);
    if (tokenStart !== -1) {
      tokenEnd = foundEnd;
      return;
    }
  }
  count = 0;
  for (let at = answerNumber(marked, 0); at !== -1; at = answerNumber(marked, foundEnd)) {
    if (count === starts.length) {
      starts = grow(starts);
      ends = grow(ends);
    }
    starts[count] = at;
    ends[count++] = foundEnd;
  }
  if (count === 0) {
    tokenStart = -1;
    unit = findNumber(marked, 0) !== -1;
    return;
  }
  // One echo of each operand goes (`ends[k] = -1`); only echoes left ("Half of 80: 40" for 80 − 40): the last
  // number is still the agent's answer.
  for (let o = 0; o < operands.length; o++) {
    const text = operandText(o, operands[o]!);
    for (let k = 0; k < count; k++) {
      if (ends[k] !== -1 && canonicalIs(marked, starts[k]!, ends[k]!, text)) {
        ends[k] = -1;
        break;
      }
    }
  }
  let last = count - 1;
  while (last >= 0 && ends[last] === -1) last--;
  if (last === -1) {
    last = count - 1;
    answerNumber(marked, starts[last]!);
    ends[last] = foundEnd;
  }
  tokenStart = starts[last]!;
  tokenEnd = ends[last]!;
}

function grow(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

/** The canonical form of the expected answer seen last: one question is graded for many replies. */
let lastExpected = NaN;
let lastExpectedText = 'NaN';
function expectedText(expected: number): string {
  if (expected !== lastExpected) {
    lastExpected = expected;
    lastExpectedText = canonicalNumber(String(expected));
  }
  return lastExpectedText;
}

/**
 * Grades a SimpleMath response. `first-token@1` (default) follows the seed literally: the first numeric token
 * of the normalised response. `last-answer@1`: see {@link lastAnswer}.
 */
export function gradeMath(response: string, expected: number, opts: GradeMathOptions = {}): GradeResult {
  if (isBlank(response)) return gradeResult('empty', null, false, 'empty');
  const normalised = normaliseResponse(response);
  let text = normalised;
  if ((opts.grader ?? DEFAULT_GRADER) === 'last-answer@1') {
    if (response.includes('\\')) text = normaliseResponse(response, { markBoxed: true });
    lastAnswer(text, opts.operands ?? []);
  } else {
    unit = false;
    tokenStart = findNumber(text, 0);
    tokenEnd = foundEnd;
  }
  if (tokenStart === -1) return gradeResult('unparseable', null, false, unit ? 'unit' : unparseableReason(normalised, 'no-number'));
  const answer = canonicalRange(text, tokenStart, tokenEnd);
  const correct = answer === expectedText(expected);
  const compliant = text === normalised ? tokenStart === 0 && tokenEnd === text.length : normalised === text.slice(tokenStart, tokenEnd);
  return gradeResult(correct ? 'correct' : 'wrong', answer, compliant);
}
