import type { GradeResult, GraderId } from './types.js';
import { DEFAULT_GRADER, EMPTY_RESULT, gradeResult } from './grade-result.js';
import { isBlank, isDigit, isWordChar, normaliseResponse, unparseableReason } from './normalise.js';

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
 */
/** Answer markers for `last-answer@1`; `\boxed{…}` arrives here as `#### …` (see normaliseResponse). */
const MARKER = /final answer|answer is|answer\s*:|####/gi;

interface NumberToken {
  text: string;
  end: number;
}

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

/** The whole text is one number (`^-?\d+(?:\.\d+)?$`). */
function isWholeNumber(text: string): boolean {
  return findNumber(text, 0) === 0 && foundEnd === text.length;
}

/** `95.0` → `95`, `-007` → `-7`, `-0` → `0`: numbers compare by value, exactly, without floating point. */
export function canonicalNumber(token: string): string {
  const negative = token.charCodeAt(0) === 45;
  const start = negative ? 1 : 0;
  const dot = token.indexOf('.', start);
  const intEnd = dot === -1 ? token.length : dot;
  // Leading zeros go, but the last digit of the integer part stays (`007` → `7`, `0` → `0`).
  let from = start;
  while (from < intEnd - 1 && token.charCodeAt(from) === 48 && isDigit(token.charCodeAt(from + 1))) from++;
  let fracEnd = token.length;
  if (dot !== -1) while (fracEnd > dot + 1 && token.charCodeAt(fracEnd - 1) === 48) fracEnd--;
  const intPart = from === start && intEnd === token.length ? (negative ? token.slice(1) : token) : token.slice(from, intEnd);
  const magnitude = dot === -1 || fracEnd === dot + 1 ? intPart : `${intPart}.${token.slice(dot + 1, fracEnd)}`;
  return negative && magnitude !== '0' ? `-${magnitude}` : magnitude;
}

/** The numbers of `text` that are not percentages. */
function numbersIn(text: string, from: number): NumberToken[] {
  const out: NumberToken[] = [];
  for (let at = answerNumber(text, from); at !== -1; at = answerNumber(text, foundEnd)) out.push({ text: text.slice(at, foundEnd), end: foundEnd });
  return out;
}

/** `95%` or `95 %`: a percentage, not an answer. */
function percentAfter(text: string, end: number): boolean {
  const c = text.charCodeAt(end);
  return c === 37 /* % */ || (c === 32 && text.charCodeAt(end + 1) === 37);
}

function firstNumber(text: string): string | undefined {
  const at = findNumber(text, 0);
  return at === -1 ? undefined : text.slice(at, foundEnd);
}

/** `last-answer@1`: the first number after the last answer marker that has one, else the last non-echo number. */
function lastAnswer(marked: string, operands: readonly number[]): { token?: string; reason?: string } {
  if (isWholeNumber(marked)) return { token: marked };
  const markers: number[] = [];
  MARKER.lastIndex = 0;
  for (let m = MARKER.exec(marked); m !== null; m = MARKER.exec(marked)) markers.push(m.index + m[0].length);
  for (let i = markers.length - 1; i >= 0; i--) {
    const at = answerNumber(marked, markers[i]!);
    if (at !== -1) return { token: marked.slice(at, foundEnd) };
  }
  const tokens = numbersIn(marked, 0);
  if (tokens.length === 0) return { reason: findNumber(marked, 0) !== -1 ? 'unit' : undefined };
  const values = tokens.map((t) => canonicalNumber(t.text));
  const echoed = new Array<boolean>(tokens.length).fill(false);
  for (const operand of operands) {
    const text = String(operand);
    const echo = values.findIndex((v, k) => !echoed[k] && v === text);
    if (echo !== -1) echoed[echo] = true;
  }
  // Only echoes left ("Half of 80: 40" for 80 − 40): the last number is still the agent's answer.
  const last = echoed.lastIndexOf(false);
  return { token: tokens[last === -1 ? tokens.length - 1 : last]!.text };
}

/** Start of the first number at or after `from` that is not a percentage (its end in `foundEnd`), or -1. */
function answerNumber(text: string, from: number): number {
  for (let at = findNumber(text, from); at !== -1; at = findNumber(text, foundEnd)) if (!percentAfter(text, foundEnd)) return at;
  return -1;
}

/**
 * Grades a SimpleMath response. `first-token@1` (default) follows the seed literally: the first numeric token
 * of the normalised response. `last-answer@1`: see {@link lastAnswer}.
 */
export function gradeMath(response: string, expected: number, opts: GradeMathOptions = {}): GradeResult {
  if (isBlank(response)) return { ...EMPTY_RESULT };
  const grader = opts.grader ?? DEFAULT_GRADER;
  const normalised = normaliseResponse(response);
  let token: string | undefined;
  let reason: string | undefined;
  if (grader === 'last-answer@1') {
    const marked = response.includes('\\') ? normaliseResponse(response, { markBoxed: true }) : normalised;
    ({ token, reason } = lastAnswer(marked, opts.operands ?? []));
  } else {
    token = firstNumber(normalised);
  }
  if (token === undefined) return gradeResult('unparseable', null, false, reason ?? unparseableReason(normalised, 'no-number'));
  const answer = canonicalNumber(token);
  const correct = answer === canonicalNumber(String(expected));
  return gradeResult(correct ? 'correct' : 'wrong', answer, normalised === token);
}
