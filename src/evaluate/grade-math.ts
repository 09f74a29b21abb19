import type { GradeResult, GraderId } from './types.js';
import { DEFAULT_GRADER, EMPTY_RESULT, gradeResult } from './grade-result.js';
import { isBlank, matchesFrom, normaliseResponse, unparseableReason } from './normalise.js';

export interface GradeMathOptions {
  grader?: GraderId;
  /** The question's operands, so `last-answer@1` can drop one echo of each (`37 + 58 = 95`). */
  operands?: readonly number[];
}

/**
 * A numeric token: optional sign, digits, optional decimals. Not glued to letters (`1e2`, `v95`, `95th`),
 * and a `-` right after a digit is subtraction (`80-12`), not a sign.
 */
const NUMBER = /(?<![A-Za-z0-9_]|\d\.)-?\d+(?:\.\d+)?(?![A-Za-z0-9_]|\.\d)/;
const WHOLE_NUMBER = /^-?\d+(?:\.\d+)?$/;
/** Answer markers for `last-answer@1`; `\boxed{…}` arrives here as `#### …` (see normaliseResponse). */
const MARKER = /final answer|answer is|answer\s*:|####/i;
const PERCENT_AFTER = /^ ?%/;

interface NumberToken {
  text: string;
  end: number;
}

/** `95.0` → `95`, `-007` → `-7`, `-0` → `0`: numbers compare by value, exactly, without floating point. */
export function canonicalNumber(token: string): string {
  const negative = token.startsWith('-');
  const body = negative ? token.slice(1) : token;
  const dot = body.indexOf('.');
  const intPart = (dot === -1 ? body : body.slice(0, dot)).replace(/^0+(?=\d)/, '');
  const fracPart = dot === -1 ? '' : body.slice(dot + 1).replace(/0+$/, '');
  const magnitude = fracPart === '' ? intPart : `${intPart}.${fracPart}`;
  return negative && magnitude !== '0' ? `-${magnitude}` : magnitude;
}

/** The numeric tokens of `text` from index `from`; `skipPercent` leaves out percentages (`40%`, `40 %`). */
function numbersIn(text: string, from = 0, skipPercent = false): NumberToken[] {
  const out: NumberToken[] = [];
  for (const m of matchesFrom(NUMBER, text, from)) {
    const end = m.index + m[0].length;
    if (skipPercent && PERCENT_AFTER.test(text.slice(end, end + 2))) continue;
    out.push({ text: m[0], end });
  }
  return out;
}

/** `last-answer@1`: the first number after the last answer marker that has one, else the last non-echo number. */
function lastAnswer(marked: string, operands: readonly number[]): { token?: string; reason?: string } {
  if (WHOLE_NUMBER.test(marked)) return { token: marked };
  const markers = [...matchesFrom(MARKER, marked)].map((m) => m.index + m[0].length);
  for (let i = markers.length - 1; i >= 0; i--) {
    const after = numbersIn(marked, markers[i], true)[0];
    if (after) return { token: after.text };
  }
  const tokens = numbersIn(marked, 0, true);
  // Numbers, but each one a percentage: the answer came with a unit.
  if (tokens.length === 0) return { reason: numbersIn(marked).length > 0 ? 'unit' : undefined };
  const remaining = tokens.slice();
  for (const operand of operands) {
    const echo = remaining.findIndex((t) => canonicalNumber(t.text) === String(operand));
    if (echo !== -1) remaining.splice(echo, 1);
  }
  // Only echoes left ("Half of 80: 40" for 80 − 40): the last number is still the agent's answer.
  const chosen = remaining.length > 0 ? remaining[remaining.length - 1] : tokens[tokens.length - 1];
  return { token: chosen?.text };
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
    token = NUMBER.exec(normalised)?.[0];
  }
  if (token === undefined) {
    return gradeResult('unparseable', null, false, reason ?? unparseableReason(normalised, 'no-number'));
  }
  const answer = canonicalNumber(token);
  const correct = answer === canonicalNumber(String(expected));
  return gradeResult(correct ? 'correct' : 'wrong', answer, normalised === token);
}
