/**
 * The graders as they were before the char-code scanners (normalise.ts, grade-math.ts, grade-choice.ts at ef01946),
 * kept as the property test's oracle: the scanners must give the same verdict for every reply.
 */
import type { GradeResult, GraderId, Letter } from '../../src/evals/types.js';
import { DEFAULT_GRADER, EMPTY_RESULT, gradeResult } from '../../src/evals/grade-result.js';

/**
 * Response normalisation shared by both graders. Every regex is compiled once; the cheap `includes`/`test`
 * guards skip the work that most short, plain-ASCII responses never need (graders run 100k times in a bench).
 */

const NON_ASCII = /[^\x00-\x7f]/;
const UNICODE_MINUS = /[\u2212\ufe63\uff0d]/g;
const CURLY_APOSTROPHE = /[\u2018\u2019]/g;
/** LaTeX wrappers whose argument is the answer; applied a few times so `\boxed{\text{B}}` unwraps fully. */
const LATEX_WRAPPER = /\\(?:boxed|fbox|text|textbf|textit|textrm|mathrm|mathbf|mathit)\s*\{([^{}]*)\}/g;
const LATEX_DELIMITER = /\\[()[\]]|\\,|\\!|\\ /g;
const CODE_FENCE = /```[\w+-]*/g;
const BACKTICK = /`/g;
const DOLLAR = /\\?\$/g;
const EMPHASIS = /[*_]+/g;
const ALNUM = /[A-Za-z0-9]/;
/** `1,234` and `12,345,678`: commas only as 3-digit groups, never `72, in total` or `1,23`. */
const THOUSANDS = /(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d]|,\d)/g;
const COMMA = /,/g;

interface NormaliseOptions {
  /**
   * Keep a marker where `\boxed{…}` stood (as `#### …`): the last-answer grader treats `\boxed` as an
   * answer marker, but the wrapper itself is stripped before extraction.
   */
  markBoxed?: boolean;
}

function unwrapLatex(text: string, markBoxed: boolean): string {
  let t = text;
  for (let i = 0; i < 3 && t.includes('{'); i++) {
    const before = t;
    t = t.replace(LATEX_WRAPPER, (whole, inner: string) =>
      markBoxed && (whole.startsWith('\\boxed') || whole.startsWith('\\fbox')) ? ` #### ${inner} ` : inner,
    );
    if (t === before) break;
  }
  return t.replace(LATEX_DELIMITER, '');
}

/** Emphasis markers go; a `*` or `_` between two letters/digits stays (`7*8`, `snake_case`). */
function stripEmphasis(text: string): string {
  return text.replace(EMPHASIS, (run, offset: number, all: string) => {
    const before = all[offset - 1];
    const after = all[offset + run.length];
    return before !== undefined && after !== undefined && ALNUM.test(before) && ALNUM.test(after) ? run : '';
  });
}

/**
 * Trim; NFKC (full-width digits and letters), Unicode minus → `-`; markdown emphasis, code ticks and fences;
 * `$…$`, `\(…\)`, `\boxed{}`, `\text{}`; thousands separators; one trailing period.
 */
export function normaliseResponse(response: string, options: NormaliseOptions = {}): string {
  let t = response;
  if (NON_ASCII.test(t)) {
    t = t.normalize('NFKC').replace(UNICODE_MINUS, '-').replace(CURLY_APOSTROPHE, "'");
  }
  if (t.includes('\\')) t = unwrapLatex(t, options.markBoxed === true);
  if (t.includes('`')) t = t.replace(CODE_FENCE, '').replace(BACKTICK, '');
  if (t.includes('$')) t = t.replace(DOLLAR, '');
  if (t.includes('*') || t.includes('_')) t = stripEmphasis(t);
  if (t.includes(',')) t = t.replace(THOUSANDS, (group) => group.replace(COMMA, ''));
  t = t.trim();
  if (t.endsWith('.')) t = t.slice(0, -1).trimEnd();
  return t;
}

/** The same normalisation for option texts, lower-cased, so an option and a response quoting it compare equal. */
function normaliseOption(option: string): string {
  return normaliseResponse(option).toLowerCase();
}

/** Empty or whitespace only: the agent said nothing. */
function isBlank(response: string): boolean {
  return response.trim() === '';
}

const REFUSAL =
  /\b(?:i\s*(?:can ?not|can't|won't|will not|am (?:not able|unable)|'m (?:not able|unable)|do not know|don't know)|unable to (?:help|assist|answer|comply)|as an ai\b|i'm sorry|i am sorry)/i;

/** Why a response without an answer has none: a refusal, or just no answer token. */
function unparseableReason(normalised: string, noAnswer: string): string {
  return REFUSAL.test(normalised) ? 'refusal' : noAnswer;
}

interface GradeMathOptions {
  grader?: GraderId;
  /** The question's operands, so `last-answer@1` can drop one echo of each (`37 + 58 = 95`). */
  operands?: readonly number[];
}

/**
 * A numeric token: optional sign, digits, optional decimals. Not glued to letters (`1e2`, `v95`, `95th`),
 * and a `-` right after a digit is subtraction (`80-12`), not a sign.
 */
const NUMBER = /(?<![A-Za-z0-9_]|\d\.)-?\d+(?:\.\d+)?(?![A-Za-z0-9_]|\.\d)/g;
const WHOLE_NUMBER = /^-?\d+(?:\.\d+)?$/;
/** Answer markers for `last-answer@1`; `\boxed{…}` arrives here as `#### …` (see normaliseResponse). */
const MARKER = /final answer|answer is|answer\s*:|####/gi;
const PERCENT_AFTER = /^ ?%/;

interface NumberToken {
  text: string;
  end: number;
}

/** `95.0` → `95`, `-007` → `-7`, `-0` → `0`: numbers compare by value, exactly, without floating point. */
export function referenceCanonicalNumber(token: string): string {
  const negative = token.startsWith('-');
  const body = negative ? token.slice(1) : token;
  const dot = body.indexOf('.');
  const intPart = (dot === -1 ? body : body.slice(0, dot)).replace(/^0+(?=\d)/, '');
  const fracPart = dot === -1 ? '' : body.slice(dot + 1).replace(/0+$/, '');
  const magnitude = fracPart === '' ? intPart : `${intPart}.${fracPart}`;
  return negative && magnitude !== '0' ? `-${magnitude}` : magnitude;
}

function numbersIn(text: string, from = 0, skipPercent = false): NumberToken[] {
  const out: NumberToken[] = [];
  NUMBER.lastIndex = from;
  for (let m = NUMBER.exec(text); m !== null; m = NUMBER.exec(text)) {
    const end = m.index + m[0].length;
    if (skipPercent && PERCENT_AFTER.test(text.slice(end, end + 2))) continue;
    out.push({ text: m[0], end });
  }
  return out;
}

function firstNumber(text: string): string | undefined {
  NUMBER.lastIndex = 0;
  return NUMBER.exec(text)?.[0];
}

/** `last-answer@1`: the first number after the last answer marker that has one, else the last non-echo number. */
function lastAnswer(marked: string, operands: readonly number[]): { token?: string; reason?: string } {
  if (WHOLE_NUMBER.test(marked)) return { token: marked };
  const markers: number[] = [];
  MARKER.lastIndex = 0;
  for (let m = MARKER.exec(marked); m !== null; m = MARKER.exec(marked)) markers.push(m.index + m[0].length);
  for (let i = markers.length - 1; i >= 0; i--) {
    const after = numbersIn(marked, markers[i], true)[0];
    if (after) return { token: after.text };
  }
  const tokens = numbersIn(marked, 0, true);
  if (tokens.length === 0) return { reason: numbersIn(marked).length > 0 ? 'unit' : undefined };
  const remaining = tokens.slice();
  for (const operand of operands) {
    const echo = remaining.findIndex((t) => referenceCanonicalNumber(t.text) === String(operand));
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
export function referenceGradeMath(response: string, expected: number, opts: GradeMathOptions = {}): GradeResult {
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
  const answer = referenceCanonicalNumber(token);
  const correct = answer === referenceCanonicalNumber(String(expected));
  return gradeResult(correct ? 'correct' : 'wrong', answer, normalised === token);
}

const LETTERS: readonly Letter[] = ['A', 'B', 'C', 'D'];

interface ChoiceQuestion {
  options: readonly [string, string, string, string];
  answer: Letter;
}

interface GradeChoiceOptions {
  grader?: GraderId;
}

/** The whole response is one letter, bare or wrapped: `B`, `b`, `(B)`, `B)`, `[B]`, `B:`. */
const LONE_LETTER = /^[([]?\s*([A-Za-z])\s*[)\]:]?$/;
/** A standalone capital A–D, not part of a word, a number or a unit (`DNA`, `3D`, `B12`, `25 °C` are not letters). */
const UPPER_LETTER = /(?<![A-Za-z0-9_°])[A-D](?![A-Za-z0-9_])/g;
/** A letter after an answer anchor, any case: `Answer: b`, `answer is C`, `Option B`, `choice (d)`. */
const ANCHORED = /\b(?:answer|option|choice)(?:\s+is)?\s*[:-]?\s*[([]?([A-Da-d])(?![A-Za-z0-9_])/gi;
/** A leading letter with option text attached: `B) Oxygen`, `(B) Oxygen`, `Answer: B. Oxygen`. */
const LEADING =
  /^(?:(?:the\s+)?(?:final\s+|correct\s+)?answer(?:\s+is)?\s*:?\s*)?[([]?([A-Da-d])\s*[)\].:-]\s*(\S[^\n]*)/i;
const OPTION_HAS_LETTER = new RegExp(UPPER_LETTER.source);
const FOLLOWING_WORD = /[ \t]+([a-z]+)/y;
const WORD_CHAR = /[a-z0-9]/;
/** Words that follow a letter but never the article "A": `A or B`, `A is correct`. */
const NOT_AFTER_ARTICLE = new Set(['or', 'and', 'nor', 'but', 'is', 'was', 'because', 'since', 'vs', 'versus', 'then']);

/**
 * The options as the grader needs them, worked out once per question (`prepareChoiceQuestion`): the normalised,
 * lower-cased texts, and which options hold a standalone A–D of their own (`Vitamin D`), masked before the letter
 * scan. A bare-letter reply needs neither, so neither is computed before a reply needs it.
 */
class PreparedOptions {
  private normalised: string[] | undefined;
  private letteredIndices: number[] | undefined;
  constructor(private readonly options: readonly string[]) {}

  /** Normalised, lower-cased option texts, in the asked order. */
  get texts(): string[] {
    this.normalised ??= this.options.map(normaliseOption);
    return this.normalised;
  }

  /** Indices of options holding a standalone A–D of their own. */
  get lettered(): number[] {
    if (this.letteredIndices === undefined) {
      const out: number[] = [];
      this.options.forEach((o, i) => {
        if (OPTION_HAS_LETTER.test(NON_ASCII.test(o) ? o.normalize('NFKC') : o)) out.push(i);
      });
      this.letteredIndices = out;
    }
    return this.letteredIndices;
  }
}

function isBoundary(text: string, index: number): boolean {
  const c = text[index];
  return c === undefined || !WORD_CHAR.test(c);
}

/**
 * Which options appear in full, as whole words (`Oxygen` is not found in `Oxygenated`). Longer options
 * are matched first and blanked out, so `Iron` is not also found inside `Iron oxide`.
 */
function scanOptions(lower: string, texts: readonly string[], which: readonly number[]): { found: number[]; masked: string } {
  const order = which.slice().sort((x, y) => (texts[y]?.length ?? 0) - (texts[x]?.length ?? 0));
  let masked = lower;
  const found: number[] = [];
  for (const k of order) {
    const text = texts[k];
    if (!text) continue;
    let hit = false;
    for (let at = masked.indexOf(text); at !== -1; at = masked.indexOf(text, at + text.length)) {
      if (isBoundary(masked, at - 1) && isBoundary(masked, at + text.length)) {
        hit = true;
        masked = masked.slice(0, at) + ' '.repeat(text.length) + masked.slice(at + text.length);
      }
    }
    if (hit) found.push(k);
  }
  return { found, masked };
}

const ALL = [0, 1, 2, 3];

function sentenceInitial(text: string, index: number): boolean {
  let j = index - 1;
  let spaced = false;
  while (j >= 0 && (text[j] === ' ' || text[j] === '\t')) {
    j--;
    spaced = true;
  }
  if (j < 0) return true;
  const c = text[j];
  return c === '\n' || c === '\r' || (spaced && (c === '.' || c === '!' || c === '?'));
}

/** "A plant absorbs CO2" — a sentence-initial `A` followed by a lowercase word is the article. */
function isArticle(text: string, index: number): boolean {
  if (!sentenceInitial(text, index)) return false;
  FOLLOWING_WORD.lastIndex = index + 1;
  const m = FOLLOWING_WORD.exec(text);
  return m !== null && !NOT_AFTER_ARTICLE.has(m[1] as string);
}

/** A lowercase `a` after an anchor is still the article when a word follows: "the answer is a gas". */
function anchoredLetters(text: string): Letter[] {
  const out: Letter[] = [];
  ANCHORED.lastIndex = 0;
  for (let m = ANCHORED.exec(text); m !== null; m = ANCHORED.exec(text)) {
    const raw = m[1] as string;
    const end = m.index + m[0].length;
    if (raw === 'a') {
      FOLLOWING_WORD.lastIndex = end;
      if (FOLLOWING_WORD.test(text)) continue;
    }
    out.push(raw.toUpperCase() as Letter);
  }
  return out;
}

function standaloneLetters(text: string): Set<Letter> {
  const out = new Set<Letter>();
  UPPER_LETTER.lastIndex = 0;
  for (let m = UPPER_LETTER.exec(text); m !== null; m = UPPER_LETTER.exec(text)) {
    if (m[0] === 'A' && isArticle(text, m.index)) continue;
    out.add(m[0] as Letter);
  }
  for (const letter of anchoredLetters(text)) out.add(letter);
  return out;
}

/** Blank out options that contain a letter of their own, so quoting `Vitamin D` is not an answer `D`. */
function maskLetteredOptions(normalised: string, lower: string, p: PreparedOptions): string {
  const lettered = p.lettered;
  if (lettered.length === 0 || lower.length !== normalised.length) return normalised;
  const { masked } = scanOptions(lower, p.texts, lettered);
  if (masked === lower) return normalised;
  let out = '';
  for (let i = 0; i < normalised.length; i++) out += masked[i] === ' ' && lower[i] !== ' ' ? ' ' : normalised[i];
  return out;
}

/** `B) Oxygen` when B is not Oxygen: the agent contradicts itself. */
function leadingConflict(normalised: string, p: PreparedOptions): boolean {
  const m = LEADING.exec(normalised);
  if (!m) return false;
  const letter = LETTERS.indexOf((m[1] as string).toUpperCase() as Letter);
  const { found } = scanOptions((m[2] as string).toLowerCase(), p.texts, ALL);
  return found.length === 1 && found[0] !== letter;
}

function firstLineLetter(normalised: string): Letter | undefined {
  const nl = normalised.indexOf('\n');
  if (nl === -1) return undefined;
  let line = normalised.slice(0, nl).trim();
  if (line.endsWith('.')) line = line.slice(0, -1);
  const m = LONE_LETTER.exec(line);
  const letter = m?.[1]?.toUpperCase() as Letter | undefined;
  return letter !== undefined && LETTERS.includes(letter) ? letter : undefined;
}

type Extraction = { letter: Letter } | { reason: string };

function extract(normalised: string, p: PreparedOptions, grader: GraderId): Extraction {
  const lone = LONE_LETTER.exec(normalised);
  if (lone) {
    const letter = (lone[1] as string).toUpperCase() as Letter;
    return LETTERS.includes(letter) ? { letter } : { reason: 'invalid-option' };
  }
  const lastAnswer = grader === 'last-answer@1';
  if (lastAnswer) {
    const first = firstLineLetter(normalised);
    if (first) return { letter: first };
  }
  if (leadingConflict(normalised, p)) return { reason: 'conflict' };
  const lower = normalised.toLowerCase();
  const scanned = maskLetteredOptions(normalised, lower, p);
  if (lastAnswer) {
    const anchored = anchoredLetters(scanned);
    const last = anchored[anchored.length - 1];
    if (last) return { letter: last };
  }
  const letters = standaloneLetters(scanned);
  if (letters.size === 1) return { letter: letters.values().next().value as Letter };
  if (letters.size > 1) return { reason: 'ambiguous' };
  const { found } = scanOptions(lower, p.texts, ALL);
  if (found.length === 1) return { letter: LETTERS[found[0] as number] as Letter };
  if (found.length > 1) return { reason: 'ambiguous' };
  return { reason: unparseableReason(normalised, 'no-answer') };
}

/** Grades replies to one question: its options are prepared once, whatever the number of replies. */
type ChoiceGrader = (response: string, opts?: GradeChoiceOptions) => GradeResult;

/**
 * Prepares a question's options once and returns its grader. The question's options are read here and never again,
 * so grading many replies to one question (a run asks each bank question of many agents) costs only the replies.
 */
function prepareChoiceQuestion(question: ChoiceQuestion): ChoiceGrader {
  const prepared = new PreparedOptions([...question.options]);
  const answer = question.answer;
  return (response, opts = {}) => {
    if (isBlank(response)) return { ...EMPTY_RESULT };
    const normalised = normaliseResponse(response);
    const got = extract(normalised, prepared, opts.grader ?? DEFAULT_GRADER);
    if ('reason' in got) return gradeResult('unparseable', null, false, got.reason);
    return gradeResult(got.letter === answer ? 'correct' : 'wrong', got.letter, normalised === got.letter);
  };
}

/**
 * Grades a SimpleScience response against the options as asked. `first-token@1` (default): a lone letter,
 * else the single standalone letter A–D, else exactly one option's full text; two letters are ambiguous.
 * `last-answer@1` also takes a lone letter on the first line and the letter after the last answer anchor.
 * A run grades each question object once, so nothing is kept between calls (a cache keyed by question object costs
 * more than it saves there); to grade many replies to one question, prepare it once with `prepareChoiceQuestion`.
 */
export function referenceGradeChoice(response: string, question: ChoiceQuestion, opts: GradeChoiceOptions = {}): GradeResult {
  return prepareChoiceQuestion(question)(response, opts);
}
