import type { GradeResult, GraderId, Letter } from './types.js';
import { DEFAULT_GRADER, gradeResult } from './grade-result.js';
import { charAt, charClass, isBlank, isSpace, isWordChar, normaliseOption, normaliseReply, readsAt, reply, replyString, SEPARATOR, skipSpaces, unparseableReason, word, type Word } from './normalise.js';

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
const NOT_AFTER_ARTICLE = ['or', 'and', 'nor', 'but', 'is', 'was', 'because', 'since', 'vs', 'versus', 'then'];

/** Inserts option `k` into the first `count` of `order`, longest text first; equal lengths keep the asked order. */
function insertLongestFirst(order: number[], count: number, texts: readonly string[], k: number): void {
  let i = count;
  while (i > 0 && texts[order[i - 1]!]!.length < texts[k]!.length) {
    order[i] = order[i - 1]!;
    i--;
  }
  order[i] = k;
}

/**
 * What grading needs of one option text, kept by text: the same texts come back in other orders and other questions.
 * Bounded: cleared when full.
 */
interface OptionFacts {
  /** Normalised and lower-cased. */
  text: string;
  /** `text` as char codes. */
  codes: Uint16Array;
  /** Holds a standalone A–D of its own (`Vitamin D`). */
  lettered: boolean;
  /** Holds no one-char word a–d and no anchor word: a reply of just this text, in any case, holds no letter. */
  letterFree: boolean;
}
const NO_CODES = new Uint16Array(0);
const OPTION_FACTS_LIMIT = 4096;
const optionFactsByText = new Map<string, OptionFacts>();

function optionFacts(option: string): OptionFacts {
  let facts = optionFactsByText.get(option);
  if (facts === undefined) {
    if (optionFactsByText.size >= OPTION_FACTS_LIMIT) optionFactsByText.clear();
    const text = normaliseOption(option);
    const codes = new Uint16Array(text.length);
    for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
    facts = {
      text,
      codes,
      lettered: hasUpperLetter(NON_ASCII.test(option) ? option.normalize('NFKC') : option),
      letterFree: isLetterFree(text),
    };
    optionFactsByText.set(option, facts);
  }
  return facts;
}

/** `text` (lower-cased) holds no one-char word a–d and none of the anchor words: see {@link wholeOption}. */
function isLetterFree(text: string): boolean {
  if (text.includes('answer') || text.includes('option') || text.includes('choice')) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 100 && (i === 0 || !isWordChar(text.charCodeAt(i - 1))) && (i + 1 === text.length || !isWordChar(text.charCodeAt(i + 1)))) return false;
  }
  return true;
}

/**
 * The options as the grader needs them: the normalised, lower-cased texts, every option's index longest text first
 * (the order `scanOptions` matches them in), and those holding a standalone A–D of their own (`Vitamin D`), masked
 * before the letter scan. A bare-letter reply needs none of it, so nothing is worked out before a reply needs it
 * (`prepare`), and then once per question (see `preparedFor`).
 */
class PreparedOptions {
  private ready = false;
  /** Normalised, lower-cased option texts, in the asked order. */
  readonly texts: string[] = ['', '', '', ''];
  /** The same texts as char codes: the option scan compares them with the reply char by char. */
  readonly codes: Uint16Array[] = [NO_CODES, NO_CODES, NO_CODES, NO_CODES];
  /** Every option's index, longest text first. */
  readonly all: number[] = [0, 1, 2, 3];
  /** The first `letteredCount` are the options holding a letter of their own, longest text first. */
  readonly lettered: number[] = [0, 1, 2, 3];
  letteredCount = 0;
  /** Each option text's first char when a letter or digit (where `scanOptions` looks for it), else -1. */
  readonly firsts: number[] = [-1, -1, -1, -1];
  /** A reply of just this option's text gives this option, its letters unread: see {@link wholeOption}. */
  readonly whole: boolean[] = [false, false, false, false];
  /** `oneShot`: stands for each question graded once in turn, prepared from the questions kept by text. */
  constructor(
    private options: readonly string[],
    private readonly oneShot = false,
  ) {}

  /** Another question's options: one-shot grading allocates nothing for a bare-letter reply. */
  reuse(options: readonly string[]): PreparedOptions {
    this.options = options;
    this.ready = false;
    return this;
  }

  /** The options prepared: this object, or the one prepared earlier for the same four texts in the same order. */
  prepare(): PreparedOptions {
    if (this.ready) return this;
    if (this.oneShot) return preparedFor(this.options);
    this.fill();
    return this;
  }

  /** Works the options out from the facts kept by option text. */
  fill(): void {
    this.ready = true;
    this.letteredCount = 0;
    for (let k = 0; k < 4; k++) {
      const facts = optionFacts(this.options[k]!);
      this.texts[k] = facts.text;
      this.codes[k] = facts.codes;
      const first = facts.text.charCodeAt(0);
      this.firsts[k] = isLowerAlnum(first) ? first : -1;
      this.whole[k] = facts.lettered || facts.letterFree;
      insertLongestFirst(this.all, k, this.texts, k);
      if (facts.lettered) insertLongestFirst(this.lettered, this.letteredCount++, this.texts, k);
    }
  }
}

/**
 * Questions prepared lately, by a slot from the four texts' lengths and two chars: a run makes a new question object
 * per agent, but from a bank of a few hundred questions, so the same four texts (in one of 24 orders) come back again
 * and again; a hit costs four string comparisons, usually of the very same strings. A slot holds one question.
 */
const QUESTION_SLOTS = 16384;
const preparedQuestions: (PreparedOptions | undefined)[] = new Array<PreparedOptions | undefined>(QUESTION_SLOTS).fill(undefined);
/** Each slot's four texts, side by side: a lookup compares them without loading the prepared object. */
const questionTexts: string[] = new Array<string>(QUESTION_SLOTS * 4).fill('');

/** A slot for four texts: their lengths and middle chars, mixed so a bank's questions spread over the slots. */
function questionSlot(a: string, b: string, c: string, d: string): number {
  let h = 0;
  h = Math.imul(h ^ a.length, 0x9e3779b1) ^ middleChar(a);
  h = Math.imul(h ^ b.length, 0x85ebca6b) ^ middleChar(b);
  h = Math.imul(h ^ c.length, 0xc2b2ae35) ^ middleChar(c);
  h = Math.imul(h ^ d.length, 0x27d4eb2f) ^ middleChar(d);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) & (QUESTION_SLOTS - 1);
}

function middleChar(text: string): number {
  return text.length > 0 ? text.charCodeAt(text.length >> 1) : 0;
}

/**
 * The prepared options for these four texts in this order: from the slot or its pair (`slot ^ 1`), else prepared now
 * and kept in the slot, its old question moving to the pair. Two ways, not one: a bank's ~800 question orders in 16,384
 * slots put ~8% of them in a shared slot, and with one way those missed every time, each miss a new prepared question.
 * Each option is read once (a question's options may be getters).
 */
function preparedFor(options: readonly string[]): PreparedOptions {
  const a = options[0]!;
  const b = options[1]!;
  const c = options[2]!;
  const d = options[3]!;
  const slot = questionSlot(a, b, c, d);
  if (holds(slot, a, b, c, d)) return preparedQuestions[slot]!;
  const pair = slot ^ 1;
  if (holds(pair, a, b, c, d)) return preparedQuestions[pair]!;
  const prepared = new PreparedOptions([a, b, c, d]);
  prepared.fill();
  keep(pair, preparedQuestions[slot], slot * 4);
  preparedQuestions[slot] = prepared;
  const at = slot * 4;
  questionTexts[at] = a;
  questionTexts[at + 1] = b;
  questionTexts[at + 2] = c;
  questionTexts[at + 3] = d;
  return prepared;
}

/** Slot `slot` holds the question of these four texts. */
function holds(slot: number, a: string, b: string, c: string, d: string): boolean {
  const at = slot * 4;
  return preparedQuestions[slot] !== undefined && questionTexts[at] === a && questionTexts[at + 1] === b && questionTexts[at + 2] === c && questionTexts[at + 3] === d;
}

/** `prepared` (with its texts at `from` of `questionTexts`) into `slot`. */
function keep(slot: number, prepared: PreparedOptions | undefined, from: number): void {
  const at = slot * 4;
  preparedQuestions[slot] = prepared;
  for (let k = 0; k < 4; k++) questionTexts[at + k] = questionTexts[from + k]!;
}

/** A–D or a–d: its index 0–3, else -1. */
function letterIndex(c: number): number {
  const k = (c | 32) - 97;
  return k >= 0 && k <= 3 ? k : -1;
}

/**
 * The chars `start..end` of `t` are one letter, bare or wrapped: `B`, `b`, `(B)`, `B)`, `[B]`, `B:` (the regex
 * `^[([]?\s*([A-Za-z])\s*[)\]:]?$`): the letter's code, upper-cased, or -1.
 */
function loneLetter(t: Uint16Array, start: number, end: number): number {
  let i = start;
  if (i < end && (t[i] === 40 /* ( */ || t[i] === 91) /* [ */) i++;
  while (i < end && isSpace(t[i]!)) i++;
  if (i >= end) return -1;
  const c = t[i]! & ~32;
  if (c < 65 || c > 90) return -1;
  i++;
  while (i < end && isSpace(t[i]!)) i++;
  if (i < end) {
    const close = t[i];
    if (close === 41 /* ) */ || close === 93 /* ] */ || close === 58 /* : */) i++;
  }
  return i === end ? c : -1;
}

/**
 * The standalone capitals A–D of the regex `(?<![A-Za-z0-9_°])[A-D](?![A-Za-z0-9_])` (`DNA`, `3D`, `B12`, `25 °C` are
 * not letters) in an option text: whether it holds one.
 */
function hasUpperLetter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 65 || c > 68) continue;
    if (i > 0) {
      const before = text.charCodeAt(i - 1);
      if (isWordChar(before) || before === 0xb0 /* ° */) continue;
    }
    if (i + 1 < text.length && isWordChar(text.charCodeAt(i + 1))) continue;
    return true;
  }
  return false;
}

/** `c` lower-cased if an ASCII capital: a reply without a full NFKC has no other char with case. */
function lowerAscii(c: number): number {
  return c >= 65 && c <= 90 ? c | 32 : c;
}

function isLowerAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/**
 * Which options the reply holds in full from `start` to `end`, as whole words (`Oxygen` is not found in `Oxygenated`),
 * as bits. `src` is the reply (ASCII capitals lower-cased as they are read) or, after a full NFKC, the reply
 * lower-cased. Options are matched in `order`, longest first, and blanked out, so `Iron` is not also found inside
 * `Iron oxide`: the blanks are kept in `masked` instead of a copy of the reply. As with `indexOf`, each search goes on
 * after a match whether or not it stands as a whole word.
 *
 * An option opening with a letter or digit can only start where a word does, and blanking never makes a new such
 * start (a blanked option is followed by a non-word char), so one pass lists the word starts that open some option
 * and each option tries only those; any other option is searched char by char.
 */
/** `masked[i] === stamp`: blanked in this scan. A new stamp per scan clears the mask without a pass over it. */
let masked = new Int32Array(256);
let stamp = 0;
let candidates = new Int32Array(64);

function scanOptions(src: Uint16Array, start: number, end: number, p: PreparedOptions, order: readonly number[], orderCount: number): number {
  const n = end - start;
  if (masked.length < n) masked = new Int32Array(n * 2);
  // Wrapped while still a small integer (a fast compare), long before any reply count a process reaches.
  if (stamp === 0x3fffffff) {
    masked.fill(0);
    stamp = 0;
  }
  // Module state in locals: the loops below read them for every char, and a local costs no context load.
  const mark = ++stamp;
  const mask = masked;
  const firsts = p.firsts;
  let cands = candidates;
  let count = 0;
  for (let i = start; i < end; i++) {
    const c = lowerAscii(src[i]!);
    if (!isLowerAlnum(c)) continue;
    if (c === firsts[0] || c === firsts[1] || c === firsts[2] || c === firsts[3]) {
      if (count === cands.length) {
        const more = new Int32Array(count * 2);
        more.set(cands);
        candidates = cands = more;
      }
      cands[count++] = i;
    }
    while (i + 1 < end && isLowerAlnum(lowerAscii(src[i + 1]!))) i++;
  }
  // `mark` is in `mask` only once an option has been blanked out.
  let anyMasked = false;
  let found = 0;
  for (let o = 0; o < orderCount; o++) {
    const k = order[o]!;
    const text = p.codes[k]!;
    const len = text.length;
    if (len === 0) continue;
    const byWord = isLowerAlnum(text[0]!);
    // By word: only the listed word starts; else every position.
    const last = byWord ? count : end - len + 1;
    let from = start;
    for (let c = byWord ? 0 : start; c < last; c++) {
      const at = byWord ? cands[c]! : c;
      if (at < from || at > end - len) continue;
      const hit = optionAt(src, start, end, text, at, anyMasked ? mask : null, mark);
      if (hit === NO_MATCH) continue;
      from = at + len;
      if (hit === WHOLE_WORD) {
        found |= 1 << k;
        anyMasked = true;
        // A loop, not `fill`: the spans are short and a builtin call costs more than the stores.
        for (let i = at - start, to = i + len; i < to; i++) mask[i] = mark;
      }
    }
  }
  return found;
}

const NO_MATCH = 0;
/** The text is there but runs on into a word: as with `indexOf`, the search goes on after it. */
const INSIDE_WORD = 1;
const WHOLE_WORD = 2;

/** The option `text` at `at` of the reply with the chars `mask` marks `mark` blanked (none when null). */
function optionAt(src: Uint16Array, start: number, end: number, text: Uint16Array, at: number, mask: Int32Array | null, mark: number): number {
  const len = text.length;
  for (let j = 0; j < len; j++) if (maskedAt(src, start, at + j, mask, mark) !== text[j]) return NO_MATCH;
  const before = at - 1;
  const after = at + len;
  if (before >= start && isLowerAlnum(maskedAt(src, start, before, mask, mark))) return INSIDE_WORD;
  if (after < end && isLowerAlnum(maskedAt(src, start, after, mask, mark))) return INSIDE_WORD;
  return WHOLE_WORD;
}

/** The masked, lower-cased reply's char code at `i`. */
function maskedAt(src: Uint16Array, start: number, i: number, mask: Int32Array | null, mark: number): number {
  return mask !== null && mask[i - start] === mark ? 32 : lowerAscii(src[i]!);
}

function sentenceInitial(t: Uint16Array, index: number): boolean {
  let j = index - 1;
  let spaced = false;
  while (j >= 0 && (t[j] === 32 || t[j] === 9)) {
    j--;
    spaced = true;
  }
  if (j < 0) return true;
  const c = t[j];
  return c === 10 || c === 13 || (spaced && (c === 46 || c === 33 || c === 63));
}

/** After spaces or tabs at `at`, a lower-case ASCII word (`[ \t]+([a-z]+)`): its end (start in `wordStart`), or -1. */
let wordStart = 0;
function followingWord(t: Uint16Array, n: number, at: number): number {
  let i = at;
  while (i < n && (t[i] === 32 || t[i] === 9)) i++;
  if (i === at) return -1;
  wordStart = i;
  while (i < n && t[i]! >= 97 && t[i]! <= 122) i++;
  return i === wordStart ? -1 : i;
}

/** The chars `from..to` of `t` are one of `words`. */
function isOneOf(t: Uint16Array, from: number, to: number, words: readonly string[]): boolean {
  outer: for (const word of words) {
    if (word.length !== to - from) continue;
    for (let k = 0; k < word.length; k++) if (t[from + k] !== word.charCodeAt(k)) continue outer;
    return true;
  }
  return false;
}

/** "A plant absorbs CO2" — a sentence-initial `A` followed by a lowercase word is the article. */
function isArticle(t: Uint16Array, n: number, index: number): boolean {
  if (!sentenceInitial(t, index)) return false;
  const end = followingWord(t, n, index + 1);
  return end !== -1 && !isOneOf(t, wordStart, end, NOT_AFTER_ARTICLE);
}

/** What {@link scanLetters} found: the standalone letters and the anchored ones as bits, the last anchored one (0–3). */
let standaloneBits = 0;
let anchoredBits = 0;
let lastAnchored = -1;

/**
 * The letters of a reply, in one pass over its chars: the standalone capitals A–D (the regex
 * `(?<![A-Za-z0-9_°])[A-D](?![A-Za-z0-9_])`) but the article "A", and the letters after an answer anchor, any case:
 * `Answer: b`, `answer is C`, `Option B`, `choice (d)` (the regex
 * `/\b(?:answer|option|choice)(?:\s+is)?\s*[:-]?\s*[([]?([A-Da-d])(?![A-Za-z0-9_])/gi`, which resumes after each
 * match). A lowercase `a` after an anchor is still the article when a word follows: "the answer is a gas".
 */
function scanLetters(t: Uint16Array, n: number): void {
  standaloneBits = 0;
  anchoredBits = 0;
  lastAnchored = -1;
  let anchorFrom = 0;
  // Word by word: both a letter A–D standing alone and an anchor word start a word.
  for (let p = 0; p < n; p++) {
    let c = t[p]!;
    if (!isWordChar(c)) continue;
    const start = p;
    while (p + 1 < n && isWordChar(t[p + 1]!)) p++;
    if (c >= 65 && c <= 68 && p === start) {
      if ((start === 0 || t[start - 1] !== 0xb0) /* ° */ && (c !== 65 || !isArticle(t, n, start))) standaloneBits |= 1 << (c - 65);
      continue;
    }
    c |= 32;
    // An anchor word is six letters, or seven with its letter glued on (`answerb`): other words are read no further.
    const length = p + 1 - start;
    if (start < anchorFrom || (length !== 6 && length !== 7) || (c !== 97 && c !== 111 && c !== 99)) continue;
    const end = anchorAt(t, n, start, c);
    if (end === -1) continue;
    anchorFrom = end;
    // The article `a` before a word is no letter.
    if (t[end - 1] === 97 && followingWord(t, n, end) !== -1) continue;
    anchoredBits |= 1 << anchorLetter;
    lastAnchored = anchorLetter;
  }
}

const ANSWER = word('answer');
const OPTION = word('option');
const CHOICE = word('choice');
const IS = word('is');
const THE = word('the');
const FINAL = word('final');
const CORRECT = word('correct');

/** The letter (0–3) {@link anchorAt} read. */
let anchorLetter = 0;

/** The anchor match starting at `p` (its first letter lower-cased `c`): its end, just after the letter, or -1. */
function anchorAt(t: Uint16Array, n: number, p: number, c: number): number {
  const anchor = c === 97 /* a */ ? ANSWER : c === 111 /* o */ ? OPTION : c === 99 /* c */ ? CHOICE : undefined;
  if (anchor === undefined || !readsAt(t, n, p, anchor)) return -1;
  let j = p + 6;
  // `\s+is` when it is there: without it the letter would have to be the `i`.
  if (j < n && isSpace(t[j]!)) {
    const k = skipSpaces(t, n, j + 1);
    if (readsAt(t, n, k, IS)) j = k + 2;
  }
  j = skipSpaces(t, n, j);
  if (j < n && (t[j] === 58 /* : */ || t[j] === 45) /* - */) j++;
  j = skipSpaces(t, n, j);
  if (j < n && (t[j] === 40 /* ( */ || t[j] === 91) /* [ */) j++;
  anchorLetter = letterIndex(charAt(t, n, j));
  return anchorLetter === -1 || isWordChar(charAt(t, n, j + 1)) ? -1 : j + 1;
}

/**
 * The reply with every option holding a letter of its own blanked out, so quoting `Vitamin D` is not an answer `D`:
 * the reply's own buffer when there is nothing to blank.
 */
let blanked = new Uint16Array(256);
function maskLetteredOptions(t: Uint16Array, n: number, p: PreparedOptions): Uint16Array {
  const lower = lowerOf();
  if (lowerLength !== n || scanOptions(lower, 0, n, p, p.lettered, p.letteredCount) === 0) return t;
  if (blanked.length < n) blanked = new Uint16Array(n * 2);
  for (let i = 0; i < n; i++) blanked[i] = masked[i] === stamp ? 32 : t[i]!;
  return blanked;
}

/** The letter (0–3) {@link leadingAt} read. */
let leadingLetter = 0;

/** `[([]?([A-Da-d])\s*[)\].:-]\s*(\S…)` at `at`: where the attached text starts, or -1. */
function leadingAt(t: Uint16Array, n: number, at: number): number {
  let i = at;
  if (i < n && (t[i] === 40 || t[i] === 91)) i++;
  leadingLetter = letterIndex(charAt(t, n, i));
  if (leadingLetter === -1) return -1;
  i = skipSpaces(t, n, i + 1);
  const sep = charAt(t, n, i);
  if (sep !== 41 && sep !== 93 && sep !== 46 && sep !== 58 && sep !== 45) return -1;
  i = skipSpaces(t, n, i + 1);
  return i < n ? i : -1;
}

/** After `word` and one or more spaces at `at`: the end of the spaces, or -1. */
function wordThenSpaces(t: Uint16Array, n: number, at: number, w: Word): number {
  if (!readsAt(t, n, at, w) || !isSpace(charAt(t, n, at + w.length))) return -1;
  return skipSpaces(t, n, at + w.length + 1);
}

/**
 * A leading letter with option text attached: `B) Oxygen`, `(B) Oxygen`, `Answer: B. Oxygen` (the regex
 * `/^(?:(?:the\s+)?(?:final\s+|correct\s+)?answer(?:\s+is)?\s*:?\s*)?[([]?([A-Da-d])\s*[)\].:-]\s*(\S[^\n]*)/i`):
 * where the attached text starts (the letter in `leadingLetter`), or -1. Each optional part of the prefix either is
 * there or the rest cannot match, so one path is tried with the prefix and one without.
 */
function leading(t: Uint16Array, n: number): number {
  // The regex can only match text opening with a letter A–D, `(`, `[`, or a word it allows (the, final, correct, answer).
  const initial = charAt(t, n, 0) | 32;
  if (initial !== 40 && initial !== 123 && initial !== 116 && initial !== 102 && letterIndex(initial) === -1) return -1;
  // A word opening with a–d (`Carbon dioxide`) is no letter (a separator must follow it) and no prefix but `answer` or
  // `correct`: most option-text replies end here, before the words are read one by one.
  if (initial >= 97 && initial <= 100 && isWordChar(charAt(t, n, 1))) {
    if (initial === 97 ? !readsAt(t, n, 0, ANSWER) : initial !== 99 || !readsAt(t, n, 0, CORRECT)) return -1;
  }
  // A separator must follow the letter: a reply opening with a prefix word (`The answer is B`) and holding none ends
  // here, its prefix never read. Other replies fail fast without this scan (`A or B`, `Plants take in…`).
  if ((initial === 116 || initial === 102 || initial === 99 || initial === 97) && isWordChar(charAt(t, n, 1))) {
    let sep = 2;
    while (sep < n && (charClass(t[sep]!) & SEPARATOR) === 0) sep++;
    if (sep >= n) return -1;
  }
  let j = wordThenSpaces(t, n, 0, THE);
  if (j === -1) j = 0;
  const qualified = Math.max(wordThenSpaces(t, n, j, FINAL), wordThenSpaces(t, n, j, CORRECT));
  if (qualified !== -1) j = qualified;
  if (readsAt(t, n, j, ANSWER)) {
    j += 6;
    if (j < n && isSpace(t[j]!)) {
      const k = skipSpaces(t, n, j + 1);
      if (readsAt(t, n, k, IS)) j = k + 2;
    }
    j = skipSpaces(t, n, j);
    if (j < n && t[j] === 58) j++;
    j = skipSpaces(t, n, j);
    const attached = leadingAt(t, n, j);
    if (attached !== -1) return attached;
  }
  return leadingAt(t, n, 0);
}

/**
 * The option whose whole text the reply is (ASCII capitals lower-cased; no full NFKC), when that alone is the verdict,
 * else -1. Most option-text replies are one option's text, and then the letter and option scans come to that option:
 * a lettered option (`Vitamin D`) is blanked out whole before the letter scan (longest first, no other option fits
 * the whole reply); a letter-free one gives the scan nothing to find, and blanking another option inside it makes no
 * letter (it needs an `A` or an anchor word there already); no other option is found in the blanked reply. Two
 * options of that text are ambiguous: left to the scans.
 */
function wholeOption(t: Uint16Array, n: number, p: PreparedOptions): number {
  let hit = -1;
  for (let k = 0; k < 4; k++) {
    const text = p.codes[k]!;
    if (text.length !== n) continue;
    let j = 0;
    while (j < n && lowerAscii(t[j]!) === text[j]) j++;
    if (j < n) continue;
    if (hit !== -1 || !p.whole[k]) return -1;
    hit = k;
  }
  return hit;
}

/** `B) Oxygen` when B is not Oxygen: the agent contradicts itself. */
function leadingConflict(t: Uint16Array, n: number, p: PreparedOptions): boolean {
  const start = leading(t, n);
  if (start === -1) return false;
  let end = start;
  while (end < n && t[end] !== 10) end++;
  let found: number;
  if (!reply.exotic) {
    // Lower-casing the common chars is per char: the lower-cased reply's slice is the slice lower-cased.
    found = scanOptions(lowerOf(), start, end, p, p.all, 4);
  } else {
    const lower = loadLower(replyString(start, end).toLowerCase());
    lowerReady = false;
    found = scanOptions(lower, 0, lowerLength, p, p.all, 4);
  }
  return found !== 0 && (found & (found - 1)) === 0 && found !== 1 << leadingLetter;
}

/** `last-answer@1`: a lone letter A–D on the first line (of several), else -1. */
function firstLineLetter(t: Uint16Array, n: number): number {
  if (!reply.lines) return -1;
  let nl = 0;
  while (nl < n && t[nl] !== 10) nl++;
  if (nl === n) return -1;
  let s = 0;
  let e = nl;
  while (s < e && isSpace(t[s]!)) s++;
  while (e > s && isSpace(t[e - 1]!)) e--;
  if (e > s && t[e - 1] === 46) e--;
  const letter = loneLetter(t, s, e);
  return letter >= 65 && letter <= 68 ? letter - 65 : -1;
}

/**
 * The reply as `scanOptions` reads it: the reply itself (its ASCII capitals are lower-cased as they are read), or after
 * a full NFKC the reply lower-cased, made once per reply into a reused buffer, which may differ in length.
 */
let lowered = new Uint16Array(256);
let lowerLength = 0;
let lowerReady = false;
function lowerOf(): Uint16Array {
  if (!reply.exotic) {
    lowerLength = reply.length;
    return reply.text;
  }
  if (!lowerReady) {
    lowerReady = true;
    loadLower(replyString().toLowerCase());
  }
  return lowered;
}

function loadLower(text: string): Uint16Array {
  if (lowered.length < text.length) lowered = new Uint16Array(text.length * 2);
  for (let i = 0; i < text.length; i++) lowered[i] = text.charCodeAt(i);
  lowerLength = text.length;
  return lowered;
}

/** What `extract` returns when there is no letter. */
const INVALID_OPTION = -1;
const CONFLICT = -2;
const AMBIGUOUS = -3;
const NO_ANSWER = -4;

/** The letter (0–3) the normalised reply gives, or why there is none. */
function extract(p: PreparedOptions, lastAnswer: boolean): number {
  const t = reply.text;
  const n = reply.length;
  const lone = loneLetter(t, 0, n);
  if (lone !== -1) return lone <= 68 ? lone - 65 : INVALID_OPTION;
  if (lastAnswer) {
    const first = firstLineLetter(t, n);
    if (first !== -1) return first;
  }
  lowerReady = false;
  p = p.prepare();
  if (leadingConflict(t, n, p)) return CONFLICT;
  if (!reply.exotic) {
    const whole = wholeOption(t, n, p);
    if (whole !== -1) return whole;
  }
  scanLetters(p.letteredCount === 0 ? t : maskLetteredOptions(t, n, p), n);
  if (lastAnswer && anchoredBits !== 0) return lastAnchored;
  const letters = standaloneBits | anchoredBits;
  if (letters !== 0) return (letters & (letters - 1)) === 0 ? 31 - Math.clz32(letters) : AMBIGUOUS;
  const found = scanOptions(lowerOf(), 0, lowerLength, p, p.all, 4);
  if (found !== 0) return (found & (found - 1)) === 0 ? 31 - Math.clz32(found) : AMBIGUOUS;
  return NO_ANSWER;
}

const REASONS = ['invalid-option', 'conflict', 'ambiguous'];

function grade(prepared: PreparedOptions, answer: Letter, response: string, grader: GraderId | undefined): GradeResult {
  normaliseReply(response, false);
  if (reply.length === 0 && isBlank(response)) return gradeResult('empty', null, false, 'empty');
  const got = extract(prepared, (grader ?? DEFAULT_GRADER) === 'last-answer@1');
  if (got < 0) return gradeResult('unparseable', null, false, got === NO_ANSWER ? unparseableReason(reply.text, reply.length, 'no-answer') : REASONS[-got - 1]);
  const letter = LETTERS[got]!;
  return gradeResult(letter === answer ? 'correct' : 'wrong', letter, reply.length === 1 && reply.text[0] === 65 + got);
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
 * there); the options are prepared only when the reply needs them, and kept by their four texts (`preparedFor`), which
 * come back for every agent asked the same bank question. To grade many replies to one question, prepare it once with
 * `prepareChoiceQuestion`.
 */
export function gradeChoice(response: string, question: ChoiceQuestion, opts: GradeChoiceOptions = {}): GradeResult {
  return grade(oneShot.reuse(question.options), question.answer, response, opts.grader);
}

/** What {@link gradeChoice} prepares a question's options in: nothing of it outlives the call. */
const oneShot = new PreparedOptions([], true);
