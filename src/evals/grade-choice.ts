import type { GradeResult, GraderId, Letter } from './types.js';
import { DEFAULT_GRADER, gradeResult } from './grade-result.js';
import { codeAt, isBlank, isSpace, isWordChar, normaliseOption, normaliseResponse, readsAt, unparseableReason } from './normalise.js';

export const LETTERS: readonly Letter[] = ['A', 'B', 'C', 'D'];

export interface ChoiceQuestion {
  options: readonly [string, string, string, string];
  answer: Letter;
}

export interface GradeChoiceOptions {
  grader?: GraderId;
}

/**
 * Every rule below is scanned by char code over the normalised reply, in place: graders run once per reply, and the
 * regexes they follow (kept in test/evals/reference-graders.ts, the property test's oracle) cost several times more.
 * Letters found are kept as bits (A = 1, B = 2, C = 4, D = 8) and options as indices, so a reply allocates nothing
 * but its result unless it holds non-ASCII text (then the option scan reads a lower-cased copy).
 */

const NON_ASCII = /[^\x00-\x7f]/;
/** Words that follow a letter but never the article "A": `A or B`, `A is correct`. */
const NOT_AFTER_ARTICLE = new Set(['or', 'and', 'nor', 'but', 'is', 'was', 'because', 'since', 'vs', 'versus', 'then']);

/** Option indices, longest text first; equal lengths keep the asked order. */
function longestFirst(texts: readonly string[], which: readonly number[]): number[] {
  const out: number[] = [];
  for (const k of which) {
    let i = out.length;
    while (i > 0 && texts[out[i - 1]!]!.length < texts[k]!.length) i--;
    out.splice(i, 0, k);
  }
  return out;
}

/**
 * What grading needs of one option text, kept by text: a run makes a new question object per agent (its options
 * shuffled), but the texts come from a bank of a few hundred questions, so the same strings come back again and
 * again. Bounded: cleared when full.
 */
interface OptionFacts {
  /** Normalised and lower-cased. */
  text: string;
  /** Holds a standalone A–D of its own (`Vitamin D`). */
  lettered: boolean;
}
const OPTION_FACTS_LIMIT = 4096;
const optionFactsByText = new Map<string, OptionFacts>();

function optionFacts(option: string): OptionFacts {
  let facts = optionFactsByText.get(option);
  if (facts === undefined) {
    if (optionFactsByText.size >= OPTION_FACTS_LIMIT) optionFactsByText.clear();
    facts = {
      text: normaliseOption(option),
      lettered: nextUpperLetter(NON_ASCII.test(option) ? option.normalize('NFKC') : option, 0) !== -1,
    };
    optionFactsByText.set(option, facts);
  }
  return facts;
}

/**
 * The options as the grader needs them, worked out once per question (`prepareChoiceQuestion`): the normalised,
 * lower-cased texts, and which options hold a standalone A–D of their own (`Vitamin D`), masked before the letter
 * scan. A bare-letter reply needs neither, so neither is computed before a reply needs it.
 */
class PreparedOptions {
  private normalised: string[] | undefined;
  private longest: number[] | undefined;
  private letteredIndices: number[] | undefined;
  constructor(private readonly options: readonly string[]) {}

  /** Normalised, lower-cased option texts, in the asked order. */
  get texts(): string[] {
    this.normalised ??= this.options.map((o) => optionFacts(o).text);
    return this.normalised;
  }

  /** Every option's index, longest text first (the order `scanOptions` matches them in). */
  get all(): number[] {
    this.longest ??= longestFirst(this.texts, [0, 1, 2, 3]);
    return this.longest;
  }

  /** Indices of options holding a standalone A–D of their own, longest text first. */
  get lettered(): number[] {
    if (this.letteredIndices === undefined) {
      const out: number[] = [];
      this.options.forEach((o, i) => {
        if (optionFacts(o).lettered) out.push(i);
      });
      this.letteredIndices = out.length === 0 ? out : longestFirst(this.texts, out);
    }
    return this.letteredIndices;
  }
}

/** A–D or a–d: its index 0–3, else -1. */
function letterIndex(c: number): number {
  const k = (c | 32) - 97;
  return k >= 0 && k <= 3 ? k : -1;
}

/**
 * The text `start..end` is one letter, bare or wrapped: `B`, `b`, `(B)`, `B)`, `[B]`, `B:` (the regex
 * `^[([]?\s*([A-Za-z])\s*[)\]:]?$`): the letter's code, upper-cased, or -1.
 */
function loneLetter(text: string, start: number, end: number): number {
  let i = start;
  if (i < end && (codeAt(text, i) === 40 /* ( */ || codeAt(text, i) === 91) /* [ */) i++;
  while (i < end && isSpace(codeAt(text, i))) i++;
  if (i >= end) return -1;
  const c = codeAt(text, i) & ~32;
  if (c < 65 || c > 90) return -1;
  i++;
  while (i < end && isSpace(codeAt(text, i))) i++;
  if (i < end) {
    const close = codeAt(text, i);
    if (close === 41 /* ) */ || close === 93 /* ] */ || close === 58 /* : */) i++;
  }
  return i === end ? c : -1;
}

/**
 * The standalone capitals A–D of the regex `(?<![A-Za-z0-9_°])[A-D](?![A-Za-z0-9_])` (`DNA`, `3D`, `B12`, `25 °C` are
 * not letters): position of the next at or after `from`, or -1.
 */
function nextUpperLetter(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = codeAt(text, i);
    if (c < 65 || c > 68) continue;
    if (i > 0) {
      const before = codeAt(text, i - 1);
      if (isWordChar(before) || before === 0xb0 /* ° */) continue;
    }
    if (i + 1 < text.length && isWordChar(codeAt(text, i + 1))) continue;
    return i;
  }
  return -1;
}

/**
 * Which options the reply holds in full, as whole words (`Oxygen` is not found in `Oxygenated`), as bits. The reply is
 * `lower` (lower-cased) from `start` to `end`. Options are matched in `order`, longest first, and blanked out, so
 * `Iron` is not also found inside `Iron oxide`: the blanks are kept in `masked` instead of a copy of the reply, and
 * until something is blanked the search is the native `indexOf`.
 */
let masked = new Uint8Array(256);
let anyMasked = false;

function scanOptions(lower: string, start: number, end: number, texts: readonly string[], order: readonly number[]): number {
  const n = end - start;
  if (masked.length < n) masked = new Uint8Array(n * 2);
  anyMasked = false;
  let found = 0;
  for (const k of order) {
    const text = texts[k]!;
    const len = text.length;
    if (len === 0) continue;
    for (let at = indexOfMasked(lower, start, end, text, start); at !== -1; at = indexOfMasked(lower, start, end, text, at + len)) {
      if (isBoundary(lower, start, end, at - 1) && isBoundary(lower, start, end, at + len)) {
        if (!anyMasked) masked.fill(0, 0, n);
        anyMasked = true;
        found |= 1 << k;
        masked.fill(1, at - start, at - start + len);
      }
    }
  }
  return found;
}

/** The masked reply's char code at `i`. */
function maskedAt(lower: string, start: number, i: number): number {
  return anyMasked && masked[i - start] === 1 ? 32 : lower.charCodeAt(i);
}

/** `indexOf` in the masked reply `start..end`. */
function indexOfMasked(lower: string, start: number, end: number, text: string, from: number): number {
  const len = text.length;
  if (!anyMasked) {
    const at = lower.indexOf(text, from);
    return at === -1 || at + len > end ? -1 : at;
  }
  outer: for (let at = from; at <= end - len; at++) {
    for (let k = 0; k < len; k++) if (maskedAt(lower, start, at + k) !== codeAt(text, k)) continue outer;
    return at;
  }
  return -1;
}

/** Outside the reply, or not `[a-z0-9]` in the masked reply. */
function isBoundary(lower: string, start: number, end: number, i: number): boolean {
  if (i < start || i >= end) return true;
  const c = maskedAt(lower, start, i);
  return !((c >= 97 && c <= 122) || (c >= 48 && c <= 57));
}

function sentenceInitial(text: string, index: number): boolean {
  let j = index - 1;
  let spaced = false;
  while (j >= 0 && (codeAt(text, j) === 32 || codeAt(text, j) === 9)) {
    j--;
    spaced = true;
  }
  if (j < 0) return true;
  const c = codeAt(text, j);
  return c === 10 || c === 13 || (spaced && (c === 46 || c === 33 || c === 63));
}

/** After spaces or tabs at `at`, a lower-case ASCII word (`[ \t]+([a-z]+)`): its end (start in `wordStart`), or -1. */
let wordStart = 0;
function followingWord(text: string, at: number): number {
  let i = at;
  while (codeAt(text, i) === 32 || codeAt(text, i) === 9) i++;
  if (i === at) return -1;
  wordStart = i;
  for (let c = codeAt(text, i); c >= 97 && c <= 122; c = codeAt(text, ++i));
  return i === wordStart ? -1 : i;
}

/** "A plant absorbs CO2" — a sentence-initial `A` followed by a lowercase word is the article. */
function isArticle(text: string, index: number): boolean {
  if (!sentenceInitial(text, index)) return false;
  const end = followingWord(text, index + 1);
  return end !== -1 && !NOT_AFTER_ARTICLE.has(text.slice(wordStart, end));
}

/** What {@link scanLetters} found: the standalone letters and the anchored ones as bits, the last anchored one (0–3). */
let standaloneBits = 0;
let anchoredBits = 0;
let lastAnchored = -1;

/**
 * The letters of a reply, in one pass: the standalone capitals A–D (`nextUpperLetter`) but the article "A", and the
 * letters after an answer anchor, any case: `Answer: b`, `answer is C`, `Option B`, `choice (d)` (the regex
 * `/\b(?:answer|option|choice)(?:\s+is)?\s*[:-]?\s*[([]?([A-Da-d])(?![A-Za-z0-9_])/gi`, which resumes after each
 * match). A lowercase `a` after an anchor is still the article when a word follows: "the answer is a gas".
 */
function scanLetters(text: string, normalised: string): void {
  standaloneBits = 0;
  anchoredBits = 0;
  lastAnchored = -1;
  // Candidates by the native `indexOf` (much faster than a loop over every char): each capital A–D, and each anchor word
  // in the lower-cased reply, whose positions are the reply's when lower-casing kept its length.
  // A short reply costs less in one pass than in seven native searches.
  if (text.length < 48) return scanLettersByChar(text);
  const lower = lowerOf(normalised);
  if (lower.length !== text.length) return scanLettersByChar(text);
  for (let k = 0; k < 4; k++) {
    for (let p = text.indexOf(CAPITALS[k]!); p !== -1; p = text.indexOf(CAPITALS[k]!, p + 1)) {
      if (standaloneAt(text, p)) {
        standaloneBits |= 1 << k;
        break;
      }
    }
  }
  let answer = lower.indexOf('answer');
  let option = lower.indexOf('option');
  let choice = lower.indexOf('choice');
  let anchorFrom = 0;
  while (answer !== -1 || option !== -1 || choice !== -1) {
    // The next candidate in reading order: the regex resumes after each match, so order matters.
    let p: number;
    if (answer !== -1 && (option === -1 || answer < option) && (choice === -1 || answer < choice)) {
      p = answer;
      answer = lower.indexOf('answer', p + 1);
    } else if (option !== -1 && (choice === -1 || option < choice)) {
      p = option;
      option = lower.indexOf('option', p + 1);
    } else {
      p = choice;
      choice = lower.indexOf('choice', p + 1);
    }
    if (p < anchorFrom || (p > 0 && isWordChar(text.charCodeAt(p - 1)))) continue;
    const end = anchorAt(text, p, lower.charCodeAt(p));
    if (end !== -1) anchorFrom = anchored(text, end);
  }
}

const CAPITALS = ['A', 'B', 'C', 'D'];

/** A standalone capital A–D at `p` that is not the article "A". */
function standaloneAt(text: string, p: number): boolean {
  const before = p > 0 ? text.charCodeAt(p - 1) : -1;
  if (isWordChar(before) || before === 0xb0 /* ° */ || isWordChar(codeAt(text, p + 1))) return false;
  return text.charCodeAt(p) !== 65 || !isArticle(text, p);
}

/** Records the anchored letter of a match ending at `end` (but the article `a` before a word); returns `end`. */
function anchored(text: string, end: number): number {
  if (codeAt(text, end - 1) === 97 && followingWord(text, end) !== -1) return end;
  anchoredBits |= 1 << anchorLetter;
  lastAnchored = anchorLetter;
  return end;
}

/** {@link scanLetters} in one pass over every char, for a short reply or one that lower-casing changes in length. */
function scanLettersByChar(text: string): void {
  let anchorFrom = 0;
  let prev = -1;
  for (let p = 0; p < text.length; prev = text.charCodeAt(p++)) {
    const c = text.charCodeAt(p);
    // Both start a word: a letter A–D standing alone, or an anchor word.
    if (!isWordChar(c) || isWordChar(prev)) continue;
    if (c >= 65 && c <= 68) {
      if (standaloneAt(text, p)) standaloneBits |= 1 << (c - 65);
      if (!isWordChar(codeAt(text, p + 1))) continue;
    }
    if (p < anchorFrom) continue;
    const end = anchorAt(text, p, c | 32);
    if (end !== -1) anchorFrom = anchored(text, end);
  }
}

/** The letter (0–3) {@link anchorAt} read. */
let anchorLetter = 0;

/** The anchor match starting at `p` (its first letter lower-cased `c`): its end, just after the letter, or -1. */
function anchorAt(text: string, p: number, c: number): number {
  const word = c === 97 /* a */ ? 'answer' : c === 111 /* o */ ? 'option' : c === 99 /* c */ ? 'choice' : undefined;
  if (word === undefined || !readsAt(text, p, word)) return -1;
  let j = p + 6;
  // `\s+is` when it is there: without it the letter would have to be the `i`.
  if (isSpace(codeAt(text, j))) {
    let k = j + 1;
    while (isSpace(codeAt(text, k))) k++;
    if (readsAt(text, k, 'is')) j = k + 2;
  }
  while (isSpace(codeAt(text, j))) j++;
  if (codeAt(text, j) === 58 /* : */ || codeAt(text, j) === 45 /* - */) j++;
  while (isSpace(codeAt(text, j))) j++;
  if (codeAt(text, j) === 40 /* ( */ || codeAt(text, j) === 91 /* [ */) j++;
  anchorLetter = letterIndex(codeAt(text, j));
  return anchorLetter === -1 || isWordChar(codeAt(text, j + 1)) ? -1 : j + 1;
}

/** The reply with every option holding a letter of its own blanked out, so quoting `Vitamin D` is not an answer `D`. */
function maskLetteredOptions(normalised: string, lower: string, p: PreparedOptions): string {
  const lettered = p.lettered;
  if (lettered.length === 0 || lower.length !== normalised.length) return normalised;
  if (scanOptions(lower, 0, lower.length, p.texts, lettered) === 0) return normalised;
  let out = '';
  let last = 0;
  for (let i = 0; i < normalised.length; i++) {
    if (masked[i] !== 1) continue;
    out += normalised.slice(last, i) + ' ';
    last = i + 1;
  }
  return out + normalised.slice(last);
}

/** The letter (0–3) {@link leadingAt} read. */
let leadingLetter = 0;

/** `[([]?([A-Da-d])\s*[)\].:-]\s*(\S…)` at `at`: where the attached text starts, or -1. */
function leadingAt(text: string, at: number): number {
  let i = at;
  if (codeAt(text, i) === 40 || codeAt(text, i) === 91) i++;
  leadingLetter = letterIndex(codeAt(text, i));
  if (leadingLetter === -1) return -1;
  i++;
  while (isSpace(codeAt(text, i))) i++;
  const sep = codeAt(text, i);
  if (sep !== 41 && sep !== 93 && sep !== 46 && sep !== 58 && sep !== 45) return -1;
  i++;
  while (isSpace(codeAt(text, i))) i++;
  return i < text.length ? i : -1;
}

/** After `word` and one or more spaces at `at`: the end of the spaces, or -1. */
function wordThenSpaces(text: string, at: number, word: string): number {
  if (!readsAt(text, at, word) || !isSpace(codeAt(text, at + word.length))) return -1;
  let i = at + word.length + 1;
  while (isSpace(codeAt(text, i))) i++;
  return i;
}

/**
 * A leading letter with option text attached: `B) Oxygen`, `(B) Oxygen`, `Answer: B. Oxygen` (the regex
 * `/^(?:(?:the\s+)?(?:final\s+|correct\s+)?answer(?:\s+is)?\s*:?\s*)?[([]?([A-Da-d])\s*[)\].:-]\s*(\S[^\n]*)/i`):
 * where the attached text starts (the letter in `leadingLetter`), or -1. Each optional part of the prefix either is
 * there or the rest cannot match, so one path is tried with the prefix and one without.
 */
function leading(text: string): number {
  // The regex can only match text opening with a letter A–D, `(`, `[`, or a word it allows (the, final, correct, answer).
  const initial = codeAt(text, 0) | 32;
  if (initial !== 40 && initial !== 123 && initial !== 116 && initial !== 102 && letterIndex(initial) === -1) return -1;
  let j = wordThenSpaces(text, 0, 'the');
  if (j === -1) j = 0;
  const qualified = Math.max(wordThenSpaces(text, j, 'final'), wordThenSpaces(text, j, 'correct'));
  if (qualified !== -1) j = qualified;
  if (readsAt(text, j, 'answer')) {
    j += 6;
    if (isSpace(codeAt(text, j))) {
      let k = j + 1;
      while (isSpace(codeAt(text, k))) k++;
      if (readsAt(text, k, 'is')) j = k + 2;
    }
    while (isSpace(codeAt(text, j))) j++;
    if (codeAt(text, j) === 58) j++;
    while (isSpace(codeAt(text, j))) j++;
    const attached = leadingAt(text, j);
    if (attached !== -1) return attached;
  }
  return leadingAt(text, 0);
}

/** `B) Oxygen` when B is not Oxygen: the agent contradicts itself. */
function leadingConflict(normalised: string, p: PreparedOptions): boolean {
  const start = leading(normalised);
  if (start === -1) return false;
  let end = normalised.indexOf('\n', start);
  if (end === -1) end = normalised.length;
  let found: number;
  if (!NON_ASCII.test(normalised)) {
    // Lower-casing ASCII is per character: the lower-cased reply's slice is the slice lower-cased.
    found = scanOptions(lowerOf(normalised), start, end, p.texts, p.all);
  } else {
    const lower = normalised.slice(start, end).toLowerCase();
    found = scanOptions(lower, 0, lower.length, p.texts, p.all);
  }
  return found !== 0 && (found & (found - 1)) === 0 && found !== 1 << leadingLetter;
}

/** `last-answer@1`: a lone letter A–D on the first line (of several), else -1. */
function firstLineLetter(normalised: string): number {
  const nl = normalised.indexOf('\n');
  if (nl === -1) return -1;
  let s = 0;
  let e = nl;
  while (s < e && isSpace(normalised.charCodeAt(s))) s++;
  while (e > s && isSpace(normalised.charCodeAt(e - 1))) e--;
  if (e > s && normalised.charCodeAt(e - 1) === 46) e--;
  const letter = loneLetter(normalised, s, e);
  return letter >= 65 && letter <= 68 ? letter - 65 : -1;
}

/** The reply lower-cased, made once per reply and only when a rule needs it. */
let lowered: string | undefined;
function lowerOf(normalised: string): string {
  lowered ??= normalised.toLowerCase();
  return lowered;
}

/** What `extract` returns when there is no letter. */
const INVALID_OPTION = -1;
const CONFLICT = -2;
const AMBIGUOUS = -3;
const NO_ANSWER = -4;

/** The letter (0–3) the reply gives, or why there is none. */
function extract(normalised: string, p: PreparedOptions, lastAnswer: boolean): number {
  const lone = loneLetter(normalised, 0, normalised.length);
  if (lone !== -1) return lone <= 68 ? lone - 65 : INVALID_OPTION;
  if (lastAnswer) {
    const first = firstLineLetter(normalised);
    if (first !== -1) return first;
  }
  lowered = undefined;
  if (leadingConflict(normalised, p)) return CONFLICT;
  const scanned = p.lettered.length === 0 ? normalised : maskLetteredOptions(normalised, lowerOf(normalised), p);
  scanLetters(scanned, normalised);
  if (lastAnswer && anchoredBits !== 0) return lastAnchored;
  const letters = standaloneBits | anchoredBits;
  if (letters !== 0) return (letters & (letters - 1)) === 0 ? 31 - Math.clz32(letters) : AMBIGUOUS;
  const lower = lowerOf(normalised);
  const found = scanOptions(lower, 0, lower.length, p.texts, p.all);
  if (found !== 0) return (found & (found - 1)) === 0 ? 31 - Math.clz32(found) : AMBIGUOUS;
  return NO_ANSWER;
}

const REASONS = ['invalid-option', 'conflict', 'ambiguous'];

function grade(prepared: PreparedOptions, answer: Letter, response: string, grader: GraderId | undefined): GradeResult {
  if (isBlank(response)) return gradeResult('empty', null, false, 'empty');
  const normalised = normaliseResponse(response);
  const got = extract(normalised, prepared, (grader ?? DEFAULT_GRADER) === 'last-answer@1');
  if (got < 0) return gradeResult('unparseable', null, false, got === NO_ANSWER ? unparseableReason(normalised, 'no-answer') : REASONS[-got - 1]);
  const letter = LETTERS[got]!;
  return gradeResult(letter === answer ? 'correct' : 'wrong', letter, normalised.length === 1 && normalised.charCodeAt(0) === 65 + got);
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
  return (response, opts) => grade(prepared, answer, response, opts?.grader);
}

/**
 * Grades a SimpleScience response against the options as asked. `first-token@1` (default): a lone letter,
 * else the single standalone letter A–D, else exactly one option's full text; two letters are ambiguous.
 * `last-answer@1` also takes a lone letter on the first line and the letter after the last answer anchor.
 * A run grades each question object once, so nothing is kept per question object (such a cache would never hit
 * there); what each option text needs is kept by text instead (`optionFacts`), and the options are prepared only as
 * far as the reply needs. To grade many replies to one question, prepare it once with `prepareChoiceQuestion`.
 */
export function gradeChoice(response: string, question: ChoiceQuestion, opts: GradeChoiceOptions = {}): GradeResult {
  return grade(new PreparedOptions([...question.options]), question.answer, response, opts.grader);
}
