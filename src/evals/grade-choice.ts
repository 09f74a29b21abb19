import type { GradeResult, GraderId, Letter } from './types.js';
import { DEFAULT_GRADER, EMPTY_RESULT, gradeResult } from './grade-result.js';
import { isBlank, isSpace, isWordChar, normaliseOption, normaliseResponse, unparseableReason } from './normalise.js';

export const LETTERS: readonly Letter[] = ['A', 'B', 'C', 'D'];

export interface ChoiceQuestion {
  options: readonly [string, string, string, string];
  answer: Letter;
}

export interface GradeChoiceOptions {
  grader?: GraderId;
}

/** A standalone capital A–D, not part of a word, a number or a unit (`DNA`, `3D`, `B12`, `25 °C` are not letters). */
const UPPER_LETTER = /(?<![A-Za-z0-9_°])[A-D](?![A-Za-z0-9_])/;
/** A letter after an answer anchor, any case: `Answer: b`, `answer is C`, `Option B`, `choice (d)`. */
const ANCHORED = /\b(?:answer|option|choice)(?:\s+is)?\s*[:-]?\s*[([]?([A-Da-d])(?![A-Za-z0-9_])/gi;
/** A leading letter with option text attached: `B) Oxygen`, `(B) Oxygen`, `Answer: B. Oxygen`. */
const LEADING =
  /^(?:(?:the\s+)?(?:final\s+|correct\s+)?answer(?:\s+is)?\s*:?\s*)?[([]?([A-Da-d])\s*[)\].:-]\s*(\S[^\n]*)/i;
/** First characters LEADING can start with, as `| 32` folds them (`A` → `a`, `(` stays, `[` → `{`). */
const LEADING_INITIALS = new Set([...'abcdtf({'].map((c) => c.charCodeAt(0)));
const NON_ASCII = /[^\x00-\x7f]/;
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
  private longestFirst: number[] | undefined;
  private letteredIndices: number[] | undefined;
  constructor(private readonly options: readonly string[]) {}

  /** Normalised, lower-cased option texts, in the asked order. */
  get texts(): string[] {
    this.normalised ??= this.options.map(normaliseOption);
    return this.normalised;
  }

  /** Every option's index, longest text first (the order `scanOptions` matches them in). */
  get all(): number[] {
    this.longestFirst ??= this.longestFirstOf([0, 1, 2, 3]);
    return this.longestFirst;
  }

  /** Indices of options holding a standalone A–D of their own, longest text first. */
  get lettered(): number[] {
    if (this.letteredIndices === undefined) {
      const out: number[] = [];
      this.options.forEach((o, i) => {
        if (UPPER_LETTER.test(NON_ASCII.test(o) ? o.normalize('NFKC') : o)) out.push(i);
      });
      this.letteredIndices = this.longestFirstOf(out);
    }
    return this.letteredIndices;
  }

  private longestFirstOf(which: number[]): number[] {
    const texts = this.texts;
    return which.sort((x, y) => (texts[y]?.length ?? 0) - (texts[x]?.length ?? 0));
  }
}

/**
 * The whole response is one letter, bare or wrapped: `B`, `b`, `(B)`, `B)`, `[B]`, `B:` (the regex
 * `^[([]?\s*([A-Za-z])\s*[)\]:]?$`, scanned by char code): the letter, upper-cased, or undefined.
 */
function loneLetter(text: string): string | undefined {
  const n = text.length;
  let i = 0;
  if (i < n && (text.charCodeAt(i) === 40 /* ( */ || text.charCodeAt(i) === 91) /* [ */) i++;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (i >= n) return undefined;
  const c = text.charCodeAt(i) & ~32;
  if (c < 65 || c > 90) return undefined;
  i++;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (i < n) {
    const close = text.charCodeAt(i);
    if (close === 41 /* ) */ || close === 93 /* ] */ || close === 58 /* : */) i++;
  }
  return i === n ? String.fromCharCode(c) : undefined;
}

/** The standalone capitals A–D of `UPPER_LETTER`, by char code: position of the next at or after `from`, or -1. */
function nextUpperLetter(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 65 || c > 68) continue;
    if (i > 0) {
      const before = text.charCodeAt(i - 1);
      if (isWordChar(before) || before === 0xb0 /* ° */) continue;
    }
    if (i + 1 < text.length && isWordChar(text.charCodeAt(i + 1))) continue;
    return i;
  }
  return -1;
}

function isBoundary(text: string, index: number): boolean {
  const c = text[index];
  return c === undefined || !WORD_CHAR.test(c);
}

/**
 * Which options appear in full, as whole words (`Oxygen` is not found in `Oxygenated`). Options are matched in
 * `order`, longest first, and blanked out, so `Iron` is not also found inside `Iron oxide`.
 */
function scanOptions(lower: string, texts: readonly string[], order: readonly number[]): { found: number[]; masked: string } {
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

/** The letters found, one bit each (A = 1, B = 2, C = 4, D = 8). */
function standaloneLetters(text: string): number {
  let out = 0;
  for (let at = nextUpperLetter(text, 0); at !== -1; at = nextUpperLetter(text, at + 1)) {
    const code = text.charCodeAt(at);
    if (code === 65 && isArticle(text, at)) continue;
    out |= 1 << (code - 65);
  }
  for (const letter of anchoredLetters(text)) out |= 1 << (letter.charCodeAt(0) - 65);
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
  // LEADING can only match text opening with a letter A–D, `(`, `[`, or a word it allows (the, final, correct, answer).
  if (!LEADING_INITIALS.has(normalised.charCodeAt(0) | 32)) return false;
  const m = LEADING.exec(normalised);
  if (!m) return false;
  const letter = LETTERS.indexOf((m[1] as string).toUpperCase() as Letter);
  const { found } = scanOptions((m[2] as string).toLowerCase(), p.texts, p.all);
  return found.length === 1 && found[0] !== letter;
}

function firstLineLetter(normalised: string): Letter | undefined {
  const nl = normalised.indexOf('\n');
  if (nl === -1) return undefined;
  let line = normalised.slice(0, nl).trim();
  if (line.endsWith('.')) line = line.slice(0, -1);
  const letter = loneLetter(line) as Letter | undefined;
  return letter !== undefined && LETTERS.includes(letter) ? letter : undefined;
}

type Extraction = { letter: Letter } | { reason: string };

function extract(normalised: string, p: PreparedOptions, grader: GraderId): Extraction {
  const lone = loneLetter(normalised) as Letter | undefined;
  if (lone !== undefined) return LETTERS.includes(lone) ? { letter: lone } : { reason: 'invalid-option' };
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
  if (letters !== 0) return (letters & (letters - 1)) === 0 ? { letter: LETTERS[31 - Math.clz32(letters)]! } : { reason: 'ambiguous' };
  const { found } = scanOptions(lower, p.texts, p.all);
  if (found.length === 1) return { letter: LETTERS[found[0] as number] as Letter };
  if (found.length > 1) return { reason: 'ambiguous' };
  return { reason: unparseableReason(normalised, 'no-answer') };
}

/** Grades replies to one question: its options are prepared once, whatever the number of replies. */
export type ChoiceGrader = (response: string, opts?: GradeChoiceOptions) => GradeResult;

/**
 * Prepares a question's options once and returns its grader. The question's options are read here and never again,
 * so grading many replies to one question (a run asks each bank question of many agents) costs only the replies.
 */
export function prepareChoiceQuestion(question: ChoiceQuestion): ChoiceGrader {
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
export function gradeChoice(response: string, question: ChoiceQuestion, opts: GradeChoiceOptions = {}): GradeResult {
  return prepareChoiceQuestion(question)(response, opts);
}
