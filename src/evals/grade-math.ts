import type { GradeResult, GraderId } from './types.js';
import { DEFAULT_GRADER, gradeResult } from './grade-result.js';
import { charAt, charClass, charsToString, DIGIT, HAS_BACKSLASH, isBlank, isDigit, isSpace, normaliseReply, readsAt, reply, unparseableReason, word, WORD } from './normalise.js';

export interface GradeMathOptions {
  grader?: GraderId;
  /** The question's operands, so `last-answer@1` can drop one echo of each (`37 + 58 = 95`). */
  operands?: readonly number[];
}

/**
 * Numeric tokens, found by {@link numberEnd} as the regex
 * `(?<![A-Za-z0-9_]|\d\.)-?\d+(?:\.\d+)?(?![A-Za-z0-9_]|\.\d)` finds them: optional sign, digits, optional
 * decimals; not glued to letters (`1e2`, `v95`, `95th`), and a `-` right after a digit is subtraction (`80-12`), not a
 * sign. Scanned by char code over the normalised reply (see `reply` in normalise.ts): graders run once per reply.
 * Tokens are kept as positions (no substring per token) until the one answer is chosen.
 */

/**
 * End of the numeric token starting at `p`, or -1. At each position the regex above either matches its longest token
 * or nothing (a shorter one would end before a digit), so one try per position does.
 */
function numberEnd(t: Uint16Array, n: number, p: number): number {
  let i = t[p] === 45 /* - */ ? p + 1 : p;
  if (i >= n || (charClass(t[i]!) & DIGIT) === 0) return -1;
  if (p > 0) {
    const before = t[p - 1]!;
    if ((charClass(before) & WORD) !== 0 || (before === 46 /* . */ && p > 1 && (charClass(t[p - 2]!) & DIGIT) !== 0)) return -1;
  }
  while (i < n && (charClass(t[i]!) & DIGIT) !== 0) i++;
  if (i + 1 < n && t[i] === 46 && (charClass(t[i + 1]!) & DIGIT) !== 0) {
    i += 2;
    while (i < n && (charClass(t[i]!) & DIGIT) !== 0) i++;
  }
  if (i < n) {
    const after = t[i]!;
    if ((charClass(after) & WORD) !== 0 || (after === 46 && i + 1 < n && (charClass(t[i + 1]!) & DIGIT) !== 0)) return -1;
  }
  return i;
}

/** End of the token {@link findNumber} found. */
let foundEnd = 0;

/** Start of the first numeric token at or after `from` (its end in `foundEnd`), or -1. */
function findNumber(t: Uint16Array, n: number, from: number): number {
  for (let p = from; p < n; p++) {
    const c = t[p]!;
    if (c !== 45 && (charClass(c) & DIGIT) === 0) continue;
    const end = numberEnd(t, n, p);
    if (end === -1) continue;
    foundEnd = end;
    return p;
  }
  return -1;
}

/** Where the canonical form of the number {@link canonicalParts} looked at lies: `intFrom..fracEnd`. */
let intFrom = 0;
let fracEnd = 0;

/**
 * Leading zeros go but the integer part keeps its last digit (`007` → `7`), trailing decimal zeros go and the dot
 * with them when nothing is left (`95.0` → `95`); true when the number is negative and not zero (`-0` → `0`).
 */
function canonicalParts(t: Uint16Array, start: number, end: number): boolean {
  const negative = t[start] === 45;
  const from = negative ? start + 1 : start;
  let dot = from;
  while (dot < end && t[dot] !== 46) dot++;
  intFrom = from;
  while (intFrom < dot - 1 && t[intFrom] === 48 && isDigit(t[intFrom + 1]!)) intFrom++;
  fracEnd = end;
  if (dot < end) while (fracEnd > dot + 1 && t[fracEnd - 1] === 48) fracEnd--;
  if (fracEnd === dot + 1) fracEnd = dot;
  return negative && !(fracEnd === dot && dot - intFrom === 1 && t[intFrom] === 48);
}

/** The number at `start..end` of `t` has the canonical form `target`. */
function canonicalIs(t: Uint16Array, start: number, end: number, target: string): boolean {
  return partsAre(t, canonicalParts(t, start, end), target);
}

/** The parts {@link canonicalParts} found (`negative` its result) spell `target`. */
function partsAre(t: Uint16Array, negative: boolean, target: string): boolean {
  let j = 0;
  if (negative) {
    if (target.charCodeAt(0) !== 45) return false;
    j = 1;
  }
  if (target.length !== j + fracEnd - intFrom) return false;
  for (let k = intFrom; k < fracEnd; k++, j++) if (t[k] !== target.charCodeAt(j)) return false;
  return true;
}

/**
 * Canonical answers built lately, by a hash of their chars: agents give the same few wrong answers again and again,
 * and a hit costs no string.
 */
const answers: string[] = new Array<string>(256).fill('');

/** The canonical form of the number at `start..end` of `t`. */
function canonicalRange(t: Uint16Array, start: number, end: number): string {
  const negative = canonicalParts(t, start, end);
  let hash = negative ? 1 : 0;
  for (let k = intFrom; k < fracEnd; k++) hash = (hash * 31 + t[k]!) | 0;
  const slot = hash & 255;
  const cached = answers[slot]!;
  if (partsAre(t, negative, cached)) return cached;
  const digits = charsToString(t, intFrom, fracEnd);
  const answer = negative ? `-${digits}` : digits;
  answers[slot] = answer;
  return answer;
}

/** `95.0` → `95`, `-007` → `-7`, `-0` → `0`: numbers compare by value, exactly, without floating point. */
export function canonicalNumber(token: string): string {
  const chars = new Uint16Array(token.length);
  for (let i = 0; i < token.length; i++) chars[i] = token.charCodeAt(i);
  return canonicalRange(chars, 0, token.length);
}

/** `95%` or `95 %`: a percentage, not an answer. */
function percentAfter(t: Uint16Array, n: number, end: number): boolean {
  const c = charAt(t, n, end);
  return c === 37 /* % */ || (c === 32 && charAt(t, n, end + 1) === 37);
}

const FINAL_ANSWER = word('final answer');
const HASHES = word('####');
const ANSWER = word('answer');
const SPACE_IS = word(' is');

/**
 * End of the answer marker at `at`, or -1: the regex `/final answer|answer is|answer\s*:|####/i` tried at one
 * position (`\boxed{…}` arrives here as `#### …`, see normaliseReply).
 */
function markerAt(t: Uint16Array, n: number, at: number): number {
  const c = t[at]! | 32;
  if (c === 102 /* f */) return readsAt(t, n, at, FINAL_ANSWER) ? at + 12 : -1;
  if (c === 35 /* # */) return readsAt(t, n, at, HASHES) ? at + 4 : -1;
  if (c !== 97 /* a */ || !readsAt(t, n, at, ANSWER)) return -1;
  if (readsAt(t, n, at + 6, SPACE_IS)) return at + 9;
  let i = at + 6;
  while (i < n && isSpace(t[i]!)) i++;
  return i < n && t[i] === 58 /* : */ ? i + 1 : -1;
}

/**
 * What {@link tokenize} found, reused from reply to reply (grown when a reply holds more): the numbers' starts and
 * ends, whether a `%` follows each, and the answer markers' ends, all in reading order.
 */
let starts: Int32Array = new Int32Array(64);
let ends: Int32Array = new Int32Array(64);
let percents: Uint8Array = new Uint8Array(64);
let numbers = 0;
let markerEnds: Int32Array = new Int32Array(16);
let markers = 0;

/**
 * One pass over the normalised reply: every numeric token and every answer marker. Each is a regex that resumes after
 * its match, and no char starts both (`-`/digit against `f`/`a`/`#`), so each is tried at every position past its
 * own last match.
 */
function tokenize(t: Uint16Array, n: number): void {
  // Locals in the loop, module state once at the end: this loop runs over every char of every reply.
  let found = 0;
  let markersFound = 0;
  let numberFrom = 0;
  let markerFrom = 0;
  for (let p = 0; p < n; p++) {
    const c = t[p]!;
    // Most chars open nothing: one table load skips them.
    const opens = c < 128 ? OPENS[c]! : 0;
    if (opens === 0) continue;
    if (opens === OPENS_NUMBER) {
      if (p < numberFrom) continue;
      const end = numberEnd(t, n, p);
      if (end === -1) continue;
      if (found === starts.length) growNumbers();
      starts[found] = p;
      ends[found] = end;
      percents[found++] = percentAfter(t, n, end) ? 1 : 0;
      numberFrom = end;
      // No marker starts inside a number.
      p = end - 1;
    } else if (p >= markerFrom && p + 1 < n && markerMayStart(c, t[p + 1]!)) {
      const end = markerAt(t, n, p);
      if (end === -1) continue;
      if (markersFound === markerEnds.length) markerEnds = grow(markerEnds);
      markerEnds[markersFound++] = end;
      markerFrom = end;
      // No number starts inside a marker.
      p = end - 1;
    }
  }
  numbers = found;
  markers = markersFound;
}

/** What an ASCII char may open: a number (`-`, a digit) or a marker (`f`, `a`, `#`, any case). */
const OPENS_NUMBER = 1;
const OPENS_MARKER = 2;
const OPENS = new Uint8Array(128);
OPENS[45] = OPENS_NUMBER;
for (let c = 48; c <= 57; c++) OPENS[c] = OPENS_NUMBER;
for (const c of [35, 65, 70, 97, 102]) OPENS[c] = OPENS_MARKER;

function growNumbers(): void {
  starts = grow(starts);
  ends = grow(ends);
  const more = new Uint8Array(percents.length * 2);
  more.set(percents);
  percents = more;
}

/** `fi`, `an` or `##` (letters in any case): the only openings of a marker, a cheap test before {@link markerAt}. */
function markerMayStart(c: number, next: number): boolean {
  const lower = c | 32;
  if (lower === 97) return (next | 32) === 110;
  if (lower === 102) return (next | 32) === 105;
  return c === 35 && next === 35;
}

function grow(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

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

/** Tokens an operand echo took (`last-answer@1`), reused from reply to reply. */
let echoes = new Uint8Array(64);

/**
 * `last-answer@1` over the tokens: the first number after the last answer marker that has one, else the last
 * non-echo number. The chosen token's index, or -1 (then `unitOnly` says whether there were only percentages).
 */
let unitOnly = false;
function lastAnswer(t: Uint16Array, n: number, operands: readonly number[]): number {
  unitOnly = false;
  if (n > LONG_REPLY && answerAfterLastMarker(t, n)) return 0;
  tokenize(t, n);
  if (numbers === 0) return -1;
  if (starts[0] === 0 && ends[0] === n) return 0;
  // The markers' ends, last first: the first with a number after it wins.
  for (let m = markers - 1; m >= 0; m--) {
    const from = markerEnds[m]!;
    for (let k = 0; k < numbers; k++) if (starts[k]! >= from && percents[k] === 0) return k;
  }
  let answers = 0;
  if (echoes.length < numbers) echoes = new Uint8Array(starts.length);
  for (let k = 0; k < numbers; k++) {
    echoes[k] = 0;
    if (percents[k] === 0) answers++;
  }
  if (answers === 0) {
    unitOnly = true;
    return -1;
  }
  // One echo of each operand goes; only echoes left ("Half of 80: 40" for 80 − 40): the last number is still the
  // agent's answer.
  for (let o = 0; o < operands.length; o++) {
    const text = operandText(o, operands[o]!);
    for (let k = 0; k < numbers; k++) {
      // A canonical form is never longer than its token: most tokens are ruled out by length alone.
      if (percents[k] === 0 && echoes[k] === 0 && ends[k]! - starts[k]! >= text.length && canonicalIs(t, starts[k]!, ends[k]!, text)) {
        echoes[k] = 1;
        break;
      }
    }
  }
  let lastAnswerToken = -1;
  for (let k = numbers - 1; k >= 0; k--) {
    if (percents[k] !== 0) continue;
    if (lastAnswerToken === -1) lastAnswerToken = k;
    if (echoes[k] === 0) return k;
  }
  return lastAnswerToken;
}

/** Longer replies than this (reasoning, mostly) are first searched for a marker near their end. */
const LONG_REPLY = 48;
/** How far from the end that search goes. */
const MARKER_WINDOW = 64;

/**
 * A long reply mostly ends with its answer marker (`… 80 + 15 = 95. #### 95`): when the last marker starts in the
 * last {@link MARKER_WINDOW} chars and a number (not a percentage) follows it, that number is the answer, taken as
 * token 0 without tokenizing the reasoning before it. The tokenizer would find the same: the last marker start is its
 * last marker, or lies inside it (`final answer:`, `#####`) and ends later with no number start between the two ends;
 * no number runs across a marker's last char (a letter, `:` or `#`), so the numbers after it are the tokenizer's.
 */
function answerAfterLastMarker(t: Uint16Array, n: number): boolean {
  for (let p = n - 2, stop = Math.max(0, n - MARKER_WINDOW); p >= stop; p--) {
    if (!markerMayStart(t[p]!, t[p + 1]!)) continue;
    const from = markerAt(t, n, p);
    if (from === -1) continue;
    for (let q = from; q < n; q++) {
      if (OPENS[t[q]! & 127] !== OPENS_NUMBER || t[q]! >= 128) continue;
      const end = numberEnd(t, n, q);
      if (end === -1) continue;
      if (!percentAfter(t, n, end)) {
        starts[0] = q;
        ends[0] = end;
        return true;
      }
      q = end - 1;
    }
    return false;
  }
  return false;
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

/** The reply without the `\boxed` marker, kept when `last-answer@1` normalises a LaTeX reply twice. */
let plain = new Uint16Array(64);
let plainLength = -1;

function keepPlain(): void {
  if (plain.length < reply.length) plain = new Uint16Array(reply.length * 2);
  // A loop, not `set(subarray)`: no view object per reply.
  const t = reply.text;
  for (let i = 0; i < reply.length; i++) plain[i] = t[i]!;
  plainLength = reply.length;
}

/**
 * Grades a SimpleMath response. `first-token@1` (default) follows the seed literally: the first numeric token
 * of the normalised response. `last-answer@1`: see {@link lastAnswer}.
 */
export function gradeMath(response: string, expected: number, opts: GradeMathOptions = {}): GradeResult {
  plainLength = -1;
  let start: number;
  let end: number;
  let unit = false;
  const steps = normaliseReply(response, false);
  if (reply.length === 0 && isBlank(response)) return gradeResult('empty', null, false, 'empty');
  if ((opts.grader ?? DEFAULT_GRADER) === 'last-answer@1') {
    // A backslash in the raw reply, as the regex grader asks (a folded `＼` is not one): the steps only rule it out fast.
    if ((steps & HAS_BACKSLASH) !== 0 && response.includes('\\')) {
      keepPlain();
      normaliseReply(response, true);
    }
    const k = lastAnswer(reply.text, reply.length, opts.operands ?? []);
    unit = unitOnly;
    start = k === -1 ? -1 : starts[k]!;
    end = k === -1 ? 0 : ends[k]!;
  } else {
    start = findNumber(reply.text, reply.length, 0);
    end = foundEnd;
  }
  const t = reply.text;
  if (start === -1) {
    if (unit) return gradeResult('unparseable', null, false, 'unit');
    return gradeResult('unparseable', null, false, plainLength === -1 ? unparseableReason(t, reply.length, 'no-number') : unparseableReason(plain, plainLength, 'no-number'));
  }
  const target = expectedText(expected);
  const correct = canonicalIs(t, start, end, target);
  const answer = correct ? target : canonicalRange(t, start, end);
  return gradeResult(correct ? 'correct' : 'wrong', answer, plainLength === -1 ? start === 0 && end === reply.length : sameChars(plain, plainLength, t, start, end));
}

/** `a` (of length `n`) holds exactly the chars `from..to` of `b`. */
function sameChars(a: Uint16Array, n: number, b: Uint16Array, from: number, to: number): boolean {
  if (n !== to - from) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[from + i]) return false;
  return true;
}
