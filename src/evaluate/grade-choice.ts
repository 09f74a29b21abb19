import type { GradeResult, GraderId, Letter } from './types.js';
import { DEFAULT_GRADER, EMPTY_RESULT, gradeResult } from './grade-result.js';
import { isBlank, matchesFrom, normaliseOption, normaliseResponse, unparseableReason } from './normalise.js';

export const LETTERS: readonly Letter[] = ['A', 'B', 'C', 'D'];

export interface ChoiceQuestion {
  options: readonly [string, string, string, string];
  answer: Letter;
}

export interface GradeChoiceOptions {
  grader?: GraderId;
}

const NON_ASCII = /[^\x00-\x7f]/;
/** The whole response is one letter, bare or wrapped: `B`, `b`, `(B)`, `B)`, `[B]`, `B:`. */
const LONE_LETTER = /^[([]?\s*([A-Za-z])\s*[)\]:]?$/;
/** A standalone capital A–D, not part of a word, number or unit (`DNA`, `3D`, `B12`, `25 °C` are not letters). */
const UPPER_LETTER = /(?<![A-Za-z0-9_°])[A-D](?![A-Za-z0-9_])/;
/** A letter after an answer anchor, any case: `Answer: b`, `answer is C`, `Option B`, `choice (d)`. */
const ANCHORED = /\b(?:answer|option|choice)(?:\s+is)?\s*[:-]?\s*[([]?([A-Da-d])(?![A-Za-z0-9_])/i;
/** A leading letter with option text attached: `B) Oxygen`, `(B) Oxygen`, `Answer: B. Oxygen`. */
const LEADING =
  /^(?:(?:the\s+)?(?:final\s+|correct\s+)?answer(?:\s+is)?\s*:?\s*)?[([]?([A-Da-d])\s*[)\].:-]\s*(\S[^\n]*)/i;
/** The word right after a letter, on the same line. */
const FOLLOWING_WORD = /^[ \t]+([a-z]+)/;
const WORD_CHAR = /[a-z0-9]/;
/** Words that follow a letter but never the article "A": `A or B`, `A is correct`. */
const NOT_AFTER_ARTICLE = new Set(['or', 'and', 'nor', 'but', 'is', 'was', 'because', 'since', 'vs', 'versus', 'then']);
const ALL = [0, 1, 2, 3];

/** The word that follows `text[index - 1]` after spaces or tabs, if any. */
function followingWord(text: string, index: number): string | undefined {
  return FOLLOWING_WORD.exec(text.slice(index))?.[1];
}

function isBoundary(text: string, index: number): boolean {
  const c = text[index];
  return c === undefined || !WORD_CHAR.test(c);
}

/**
 * Which options (of `which`) appear in full in `lower`, as whole words (`Oxygen` is not found in `Oxygenated`). Longer
 * options are matched first and blanked out, so `Iron` is not also found inside `Iron oxide`.
 */
function scanOptions(
  lower: string,
  texts: readonly string[],
  which: readonly number[],
): { found: number[]; masked: string } {
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

/** At the start of a line, or after a sentence's end and a space. */
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
  const next = followingWord(text, index + 1);
  return next !== undefined && !NOT_AFTER_ARTICLE.has(next);
}

/** Letters after an answer anchor; a lowercase `a` there followed by a word is the article: "the answer is a gas". */
function anchoredLetters(text: string): Letter[] {
  const out: Letter[] = [];
  for (const m of matchesFrom(ANCHORED, text)) {
    const raw = m[1] as string;
    if (raw === 'a' && followingWord(text, m.index + m[0].length) !== undefined) continue;
    out.push(raw.toUpperCase() as Letter);
  }
  return out;
}

function standaloneLetters(text: string): Set<Letter> {
  const out = new Set<Letter>();
  for (const m of matchesFrom(UPPER_LETTER, text)) {
    if (m[0] === 'A' && isArticle(text, m.index)) continue;
    out.add(m[0] as Letter);
  }
  for (const letter of anchoredLetters(text)) out.add(letter);
  return out;
}

/** The option texts as a grader compares them, and which options hold a standalone A–D of their own (`Vitamin D`). */
interface Options {
  texts: string[];
  lettered: number[];
}

function readOptions(options: readonly string[]): Options {
  const lettered = ALL.filter((i) => {
    const o = options[i] ?? '';
    return UPPER_LETTER.test(NON_ASCII.test(o) ? o.normalize('NFKC') : o);
  });
  return { texts: options.map(normaliseOption), lettered };
}

/** Blank out options that contain a letter of their own, so quoting `Vitamin D` is not an answer `D`. */
function maskLetteredOptions(normalised: string, lower: string, options: Options): string {
  if (options.lettered.length === 0 || lower.length !== normalised.length) return normalised;
  const { masked } = scanOptions(lower, options.texts, options.lettered);
  if (masked === lower) return normalised;
  let out = '';
  for (let i = 0; i < normalised.length; i++) out += masked[i] === ' ' && lower[i] !== ' ' ? ' ' : normalised[i];
  return out;
}

/** `B) Oxygen` when B is not Oxygen: the agent contradicts itself. */
function leadingConflict(normalised: string, options: Options): boolean {
  const m = LEADING.exec(normalised);
  if (!m) return false;
  const letter = LETTERS.indexOf((m[1] as string).toUpperCase() as Letter);
  const { found } = scanOptions((m[2] as string).toLowerCase(), options.texts, ALL);
  return found.length === 1 && found[0] !== letter;
}

function firstLineLetter(normalised: string): Letter | undefined {
  const nl = normalised.indexOf('\n');
  if (nl === -1) return undefined;
  let line = normalised.slice(0, nl).trim();
  if (line.endsWith('.')) line = line.slice(0, -1);
  const letter = LONE_LETTER.exec(line)?.[1]?.toUpperCase() as Letter | undefined;
  return letter !== undefined && LETTERS.includes(letter) ? letter : undefined;
}

type Extraction = { letter: Letter } | { reason: string };

function extract(normalised: string, optionTexts: readonly string[], grader: GraderId): Extraction {
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
  const options = readOptions(optionTexts);
  if (leadingConflict(normalised, options)) return { reason: 'conflict' };
  const lower = normalised.toLowerCase();
  const scanned = maskLetteredOptions(normalised, lower, options);
  if (lastAnswer) {
    const last = anchoredLetters(scanned).at(-1);
    if (last) return { letter: last };
  }
  const letters = standaloneLetters(scanned);
  if (letters.size === 1) return { letter: letters.values().next().value as Letter };
  if (letters.size > 1) return { reason: 'ambiguous' };
  const { found } = scanOptions(lower, options.texts, ALL);
  if (found.length === 1) return { letter: LETTERS[found[0] as number] as Letter };
  if (found.length > 1) return { reason: 'ambiguous' };
  return { reason: unparseableReason(normalised, 'no-answer') };
}

/**
 * Grades a SimpleScience response against the options as asked. `first-token@1` (default): a lone letter,
 * else the single standalone letter A–D, else exactly one option's full text; two letters are ambiguous.
 * `last-answer@1` also takes a lone letter on the first line and the letter after the last answer anchor.
 */
export function gradeChoice(response: string, question: ChoiceQuestion, opts: GradeChoiceOptions = {}): GradeResult {
  if (isBlank(response)) return { ...EMPTY_RESULT };
  const normalised = normaliseResponse(response);
  const got = extract(normalised, question.options, opts.grader ?? DEFAULT_GRADER);
  if ('reason' in got) return gradeResult('unparseable', null, false, got.reason);
  return gradeResult(got.letter === question.answer ? 'correct' : 'wrong', got.letter, normalised === got.letter);
}

/** Grades replies to one question. */
export type ChoiceGrader = (response: string, opts?: GradeChoiceOptions) => GradeResult;

/** A grader bound to one question, its options and answer as they are now. */
export function prepareChoiceQuestion(question: ChoiceQuestion): ChoiceGrader {
  const bound: ChoiceQuestion = { options: [...question.options], answer: question.answer };
  return (response, opts = {}) => gradeChoice(response, bound, opts);
}
