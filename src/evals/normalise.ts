/**
 * Response normalisation shared by both graders, scanned by char code: graders run once per reply (millions in a big
 * run), and one pass per step that has work is several times faster than the regex cascade it replaces (kept as the
 * property test's oracle in test/evals/reference-graders.ts, with the regexes each step follows).
 */

const NON_ASCII = /[^\x00-\x7f]/;
const UNICODE_MINUS = /[\u2212\ufe63\uff0d]/g;
const CURLY_APOSTROPHE = /[\u2018\u2019]/g;

function foldNfkcSlow(text: string): string {
  return text.normalize('NFKC').replace(UNICODE_MINUS, '-').replace(CURLY_APOSTROPHE, "'");
}

/**
 * Non-ASCII characters replies commonly hold, each with what NFKC (plus the minus and apostrophe folds) makes of it:
 * full-width ASCII, minus signs, quotes, dashes, spaces, ellipsis, degree. None of them composes with a neighbour
 * under NFKC, so a text made only of these and ASCII folds character by character. Taken from `normalize` itself.
 */
const FOLDS = new Map<number, string>();
for (const [from, to] of [
  [0xff01, 0xff5e], [0x2000, 0x200a], [0x2010, 0x2026], [0x2212, 0x2212], [0xfe63, 0xfe63], [0x00a0, 0x00a0],
  [0x00b0, 0x00b0], [0x00d7, 0x00d7], [0x00f7, 0x00f7], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000],
  [0xfeff, 0xfeff], [0x2028, 0x2029], [0x1680, 0x1680],
] as const) {
  for (let c = from; c <= to; c++) {
    const ch = String.fromCharCode(c);
    const folded = foldNfkcSlow(ch);
    // Only what folds to ASCII or stays itself: a combining mark in the result could reorder or compose.
    if (folded === ch || !NON_ASCII.test(folded)) FOLDS.set(c, folded);
  }
}

/** LaTeX wrappers whose argument is the answer, in the order the regex `\\(?:boxed|fbox|…)\s*\{([^{}]*)\}` tries them. */
const LATEX_WRAPPERS = ['boxed', 'fbox', 'text', 'textbf', 'textit', 'textrm', 'mathrm', 'mathbf', 'mathit'];

/** End of the wrapper `\name{inner}` at `at` (a backslash), or -1; `wrapperName` and `innerStart` say what matched. */
let wrapperName = '';
let innerStart = 0;
function matchWrapper(text: string, at: number): number {
  for (const name of LATEX_WRAPPERS) {
    if (!text.startsWith(name, at + 1)) continue;
    let i = at + 1 + name.length;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (codeAt(text, i) !== 123 /* { */) continue;
    let k = i + 1;
    while (k < text.length && text.charCodeAt(k) !== 123 && text.charCodeAt(k) !== 125 /* } */) k++;
    if (k >= text.length || text.charCodeAt(k) !== 125) continue;
    wrapperName = name;
    innerStart = i + 1;
    return k + 1;
  }
  return -1;
}

/** One round of wrapper unwrapping; the same string when there was none. */
function replaceWrappers(text: string, markBoxed: boolean): string {
  let out = '';
  let last = 0;
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i)) {
    const end = matchWrapper(text, i);
    if (end === -1) {
      i++;
      continue;
    }
    const inner = text.slice(innerStart, end - 1);
    out += text.slice(last, i) + (markBoxed && (wrapperName === 'boxed' || wrapperName === 'fbox') ? ` #### ${inner} ` : inner);
    last = i = end;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** `\(`, `\)`, `\[`, `\]`, `\,`, `\!`, `\ ` go. */
function isLatexDelimiter(c: number): boolean {
  return c === 40 || c === 41 || c === 91 || c === 93 || c === 44 || c === 33 || c === 32;
}

/** `\boxed{}`, `\text{}` and the like unwrap, a few times so `\boxed{\text{B}}` unwraps fully; then delimiters go. */
function unwrapLatex(text: string, markBoxed: boolean): string {
  let t = text;
  for (let i = 0; i < 3 && t.includes('{'); i++) {
    const next = replaceWrappers(t, markBoxed);
    if (next === t) break;
    t = next;
  }
  let out = '';
  let last = 0;
  for (let i = t.indexOf('\\'); i !== -1; i = t.indexOf('\\', i)) {
    if (i + 1 < t.length && isLatexDelimiter(t.charCodeAt(i + 1))) {
      out += t.slice(last, i);
      last = i = i + 2;
    } else {
      i++;
    }
  }
  return last === 0 ? t : out + t.slice(last);
}

/**
 * The normalised reply, reused from reply to reply: chars `0..length` of `text`. Graders read it by index instead of
 * as a string, so a reply costs no string copies (no slice, trim or lower-casing of the whole reply). `exotic` says
 * NFKC ran in full (a char outside the common folds): only then can lower-casing change a char with case or the length.
 * `lines` is false when the reply as loaded held no line break, so holds none after the steps, which only remove chars.
 */
export const reply = { text: new Uint16Array(256), length: 0, exotic: false, lines: true };
/** The other buffer of the pair each normalisation step reads from and writes to. */
let spare = new Uint16Array(256);

function ensureCapacity(n: number): void {
  if (reply.text.length >= n) return;
  const size = Math.max(n, reply.text.length * 2);
  const bigger = new Uint16Array(size);
  bigger.set(reply.text.subarray(0, reply.length));
  reply.text = bigger;
  spare = new Uint16Array(size);
}

/** Step `src` → `spare` is done: `spare` holds `length` chars and becomes the reply. */
function swapIn(length: number): void {
  const written = spare;
  spare = reply.text;
  reply.text = written;
  reply.length = length;
}

/** What a reply holds that a normalisation step has work for: one bit per step, by char code. */
export const HAS_BACKSLASH = 1;
const HAS_BACKTICK = 2;
const HAS_DOLLAR = 4;
const HAS_EMPHASIS = 8;
const HAS_COMMA = 16;
const STEP_OF = new Uint8Array(128);
STEP_OF[92] = HAS_BACKSLASH;
STEP_OF[96] = HAS_BACKTICK;
STEP_OF[36] = HAS_DOLLAR;
STEP_OF[42] = STEP_OF[95] = HAS_EMPHASIS;
STEP_OF[44] = HAS_COMMA;
/** Not a step: a line break, noted by the same table load (see `reply.lines`). */
const HAS_BREAK = 32;
STEP_OF[10] = HAS_BREAK;

/** Notes in `reply.lines` whether the loaded text held a line break; the steps without that bit. */
function noteLines(steps: number): number {
  reply.lines = (steps & HAS_BREAK) !== 0;
  return steps & ~HAS_BREAK;
}
let maxFold = 1;
for (const folded of FOLDS.values()) maxFold = Math.max(maxFold, folded.length);

/** `text` into the reply buffer; the steps it has work for. */
function loadString(text: string): number {
  ensureCapacity(text.length);
  const out = reply.text;
  let steps = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[i] = c;
    if (c < 128) steps |= STEP_OF[c]!;
  }
  reply.length = text.length;
  return noteLines(steps);
}

/**
 * The reply into the buffer with NFKC, Unicode minus → `-` and curly apostrophe → `'` applied; the steps the folded
 * text has work for. Most replies are ASCII: their loop only copies and notes steps. Leading ASCII spaces are not
 * copied: the final trim would drop them, no step looks behind for a space, and so the trim rarely has to move the text.
 */
/** The last {@link load} copied the reply unchanged but for leading ASCII spaces. */
let loadedAsIs = false;

function load(response: string): number {
  const n = response.length;
  ensureCapacity(n);
  const out = reply.text;
  reply.exotic = false;
  loadedAsIs = true;
  let i = 0;
  while (i < n && isAsciiSpace(response.charCodeAt(i))) i++;
  let steps = 0;
  let w = 0;
  let digitsAroundComma = false;
  for (; i < n; i++) {
    const c = response.charCodeAt(i);
    if (c >= 128) return loadFolded(response);
    if (c === 44 && w > 0 && isDigit(out[w - 1]!) && i + 1 < n && isDigit(response.charCodeAt(i + 1))) digitsAroundComma = true;
    out[w++] = c;
    steps |= STEP_OF[c]!;
  }
  reply.length = w;
  steps = noteLines(steps);
  // A separator sits between digits (`1,095`), and no other step removes what stands between (`1**,**095`): without
  // one, the separator pass has nothing to join (`80, then`).
  if (!digitsAroundComma && (steps & ~HAS_COMMA) === 0) steps = 0;
  return steps;
}

function isAsciiSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** {@link load} for a reply with non-ASCII chars: folded char by char for the common ones (`FOLDS`), else by `normalize`. */
function loadFolded(response: string): number {
  loadedAsIs = false;
  const n = response.length;
  ensureCapacity(n * maxFold);
  const out = reply.text;
  let steps = 0;
  let w = 0;
  for (let i = 0; i < n; i++) {
    const c = response.charCodeAt(i);
    if (c < 128) {
      out[w++] = c;
      steps |= STEP_OF[c]!;
      continue;
    }
    const folded = FOLDS.get(c);
    if (folded === undefined) {
      reply.exotic = true;
      return loadString(foldNfkcSlow(response));
    }
    for (let k = 0; k < folded.length; k++) {
      const f = folded.charCodeAt(k);
      out[w++] = f;
      if (f < 128) steps |= STEP_OF[f]!;
    }
  }
  reply.length = w;
  return noteLines(steps);
}

/** Code fences (` ``` ` and the language word after) and single backticks go. */
function stripBackticks(src: Uint16Array, n: number, dst: Uint16Array): number {
  let w = 0;
  for (let i = 0; i < n; ) {
    const c = src[i]!;
    if (c !== 96) {
      dst[w++] = c;
      i++;
    } else if (i + 2 < n && src[i + 1] === 96 && src[i + 2] === 96) {
      i += 3;
      while (i < n && (isWordChar(src[i]!) || src[i] === 43 || src[i] === 45)) i++;
    } else {
      i++;
    }
  }
  return w;
}

/** `$` and `\$` go. */
function stripDollars(src: Uint16Array, n: number, dst: Uint16Array): number {
  let w = 0;
  for (let i = 0; i < n; i++) {
    const c = src[i]!;
    if (c !== 36) dst[w++] = c;
    else if (i > 0 && src[i - 1] === 92) w--;
  }
  return w;
}

function isAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Runs of `*` and `_` (markdown emphasis) go, but a run between two ASCII letters/digits stays (`7*8`, `snake_case`). */
function stripEmphasis(src: Uint16Array, n: number, dst: Uint16Array): number {
  let w = 0;
  for (let i = 0; i < n; ) {
    let c = src[i]!;
    if (c !== 42 && c !== 95) {
      dst[w++] = c;
      i++;
      continue;
    }
    const start = i;
    while (i < n && ((c = src[i]!) === 42 || c === 95)) i++;
    if (start > 0 && i < n && isAlnum(src[start - 1]!) && isAlnum(src[i]!)) for (let k = start; k < i; k++) dst[w++] = src[k]!;
  }
  return w;
}

function isDigitAt(src: Uint16Array, n: number, i: number): boolean {
  return i < n && isDigit(src[i]!);
}

/**
 * Thousands separators go: `1,234` and `12,345,678` (1–3 digits not after a digit, `.` or `,`, then every following
 * `,ddd` group), never `72, in total`, `1,23` or `1,2345`. This is the regex
 * `(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d]|,\d)`: fewer groups than all of them would leave `,\d` next, so only all match.
 */
function joinThousands(src: Uint16Array, n: number, dst: Uint16Array): number {
  let w = 0;
  let last = 0;
  for (let p = 0; p < n; p++) {
    if (src[p] !== 44) continue;
    // p is a comma; the group before it starts at `start`.
    let start = p;
    while (start > 0 && isDigit(src[start - 1]!)) start--;
    if (p - start < 1 || p - start > 3 || start < last) continue;
    if (start > 0 && (src[start - 1] === 46 || src[start - 1] === 44)) continue;
    let end = p;
    while (end < n && src[end] === 44 && isDigitAt(src, n, end + 1) && isDigitAt(src, n, end + 2) && isDigitAt(src, n, end + 3)) end += 4;
    if (end === p || isDigitAt(src, n, end) || (end < n && src[end] === 44 && isDigitAt(src, n, end + 1))) continue;
    for (let i = last; i < end; i++) if (i < start || src[i] !== 44) dst[w++] = src[i]!;
    last = end;
    p = end - 1;
  }
  if (last === 0) return -1;
  for (let i = last; i < n; i++) dst[w++] = src[i]!;
  return w;
}

/** The reply's chars as a string: only for the rare steps and answers that need one. */
export function replyString(from = 0, to = reply.length): string {
  return charsToString(reply.text, from, to);
}

export function charsToString(chars: Uint16Array, from: number, to: number): string {
  let out = '';
  if (to - from <= 16) {
    for (let i = from; i < to; i++) out += String.fromCharCode(chars[i]!);
    return out;
  }
  for (let i = from; i < to; i += 4096) out += String.fromCharCode.apply(null, chars.subarray(i, Math.min(to, i + 4096)) as unknown as number[]);
  return out;
}

/**
 * Normalises `response` into {@link reply}: NFKC (full-width digits and letters), Unicode minus → `-`; `$…$`,
 * `\(…\)`, `\boxed{}`, `\text{}`; markdown emphasis, code ticks and fences; thousands separators; trim; one trailing
 * period. The load finds which steps have work (a plain `95` has none); a step never adds what a later step looks
 * for, so the steps found at load stay a safe superset. Returns those steps (`HAS_BACKSLASH`: the reply holds LaTeX).
 * A blank reply normalises to nothing: graders test `isBlank` only then, not before every reply.
 */
export function normaliseReply(response: string, markBoxed: boolean): number {
  const steps = load(response);
  if (steps !== 0) {
    // LaTeX is rare in replies and its rules are the most involved: it keeps its string form.
    // A reply loaded as it came (ASCII: only leading spaces dropped, which unwrapping ignores) is its own string.
    if (steps & HAS_BACKSLASH) loadString(unwrapLatex(loadedAsIs ? response : replyString(), markBoxed));
    if (steps & HAS_BACKTICK) swapIn(stripBackticks(reply.text, reply.length, spare));
    if (steps & HAS_DOLLAR) swapIn(stripDollars(reply.text, reply.length, spare));
    if (steps & HAS_EMPHASIS) swapIn(stripEmphasis(reply.text, reply.length, spare));
    if (steps & HAS_COMMA) {
      const joined = joinThousands(reply.text, reply.length, spare);
      if (joined !== -1) swapIn(joined);
    }
  }
  trimReply();
  return steps;
}

/** `trim`, then one trailing period and the spaces before it. */
function trimReply(): void {
  const t = reply.text;
  let s = 0;
  let e = reply.length;
  while (s < e && isSpace(t[s]!)) s++;
  while (e > s && isSpace(t[e - 1]!)) e--;
  if (e > s && t[e - 1] === 46) {
    e--;
    while (e > s && isSpace(t[e - 1]!)) e--;
  }
  if (s > 0) for (let i = s; i < e; i++) t[i - s] = t[i]!;
  reply.length = e - s;
}

export interface NormaliseOptions {
  /**
   * Keep a marker where `\boxed{…}` stood (as `#### …`): the last-answer grader treats `\boxed` as an
   * answer marker, but the wrapper itself is stripped before extraction.
   */
  markBoxed?: boolean;
}

/** {@link normaliseReply} as a string, for option texts and callers outside the graders. */
export function normaliseResponse(response: string, options: NormaliseOptions = {}): string {
  normaliseReply(response, options.markBoxed === true);
  return replyString();
}


/**
 * The same normalisation for option texts, lower-cased, so an option and a response quoting it compare equal. Options
 * are prepared lazily, while a reply is being graded: the reply in the buffer is kept.
 */
export function normaliseOption(option: string): string {
  const length = reply.length;
  const exotic = reply.exotic;
  const lines = reply.lines;
  const saved = reply.text.slice(0, length);
  const out = normaliseResponse(option).toLowerCase();
  ensureCapacity(length);
  reply.text.set(saved);
  reply.length = length;
  reply.exotic = exotic;
  reply.lines = lines;
  return out;
}

/** Empty or whitespace only: the agent said nothing. */
export function isBlank(response: string): boolean {
  for (let i = 0; i < response.length; i++) if (!isSpace(response.charCodeAt(i))) return false;
  return true;
}

/**
 * Char classes by char code, one load per test: the scanners ask them of nearly every char, and a table beats a chain
 * of range tests several times over. Callers may pass -1 (past the end): `& 0xffff` maps it to U+FFFF, in no class.
 */
const CHAR_CLASS = new Uint8Array(0x10000);
export const DIGIT = 1;
export const WORD = 2;
export const SPACE = 4;
/** `)`, `]`, `.`, `:`, `-`: what follows the letter of a leading `B) Oxygen`. */
export const SEPARATOR = 8;
for (let c = 48; c <= 57; c++) CHAR_CLASS[c] = DIGIT | WORD;
for (let c = 65; c <= 90; c++) CHAR_CLASS[c] = CHAR_CLASS[c + 32] = WORD;
CHAR_CLASS[95] = WORD;
for (const c of [41, 93, 46, 58, 45]) CHAR_CLASS[c] = SEPARATOR;
// What `trim` strips and a regex `\s` matches (WhiteSpace and LineTerminator).
for (const c of [9, 10, 11, 12, 13, 32, 160, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff]) CHAR_CLASS[c] = SPACE;
for (let c = 0x2000; c <= 0x200a; c++) CHAR_CLASS[c] = SPACE;

/** The classes (`DIGIT`, `WORD`, `SPACE` bits) of char code `c` (or -1). */
export function charClass(c: number): number {
  return CHAR_CLASS[c & 0xffff]!;
}

/** What `trim` strips and a regex `\s` matches (WhiteSpace and LineTerminator), by char code. */
export function isSpace(c: number): boolean {
  return (CHAR_CLASS[c & 0xffff]! & SPACE) !== 0;
}

/** A regex `\w` character (ASCII letter, digit, underscore), by char code. */
export function isWordChar(c: number): boolean {
  return (CHAR_CLASS[c & 0xffff]! & WORD) !== 0;
}

/** The char code at `i`, or -1 past the end: a read past the end gives NaN, which makes the scanners' code slower. */
export function codeAt(text: string, i: number): number {
  return i < text.length ? text.charCodeAt(i) : -1;
}

export function isDigit(c: number): boolean {
  return (CHAR_CLASS[c & 0xffff]! & DIGIT) !== 0;
}

/** The reply's char at `i`, or -1 outside it: reading past a typed array's end gives undefined and slows the scanners. */
export function charAt(t: Uint16Array, n: number, i: number): number {
  return i >= 0 && i < n ? t[i]! : -1;
}

/** A word the scanners look for, as char codes: reading a typed array costs less than `charCodeAt` of a string. */
export type Word = Uint16Array;

export function word(text: string): Word {
  const codes = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
  return codes;
}

/**
 * `t` (of length `n`) at `at` reads `word`, ASCII letters in any case as a regex `/i` does (non-ASCII never folds to
 * ASCII there), any other char exactly.
 */
export function readsAt(t: Uint16Array, n: number, at: number, word: Word): boolean {
  if (at < 0 || at + word.length > n) return false;
  for (let k = 0; k < word.length; k++) {
    const w = word[k]!;
    const c = t[at + k]!;
    if (w >= 97 && w <= 122 ? (c | 32) !== w : c !== w) return false;
  }
  return true;
}

/** After `i`'s spaces (a regex `\s*`) in `t`: where the next non-space char is. */
export function skipSpaces(t: Uint16Array, n: number, i: number): number {
  while (i < n && isSpace(t[i]!)) i++;
  return i;
}

/**
 * The regex `\b(?:i\s*(?:can ?not|can't|won't|will not|am (?:not able|unable)|'m (?:not able|unable)|do not know|
 * don't know)|unable to (?:help|assist|answer|comply)|as an ai\b|i'm sorry|i am sorry)` with `/i`, tried at `p`.
 * Every alternative starts with a word char, so `\b` is "no word char before".
 */
function refusalAt(t: Uint16Array, n: number, p: number): boolean {
  const c = t[p]! | 32;
  if (p > 0 && isWordChar(t[p - 1]!)) return false;
  if (c === 105 /* i */) {
    if (readsAt(t, n, p, I_M_SORRY) || readsAt(t, n, p, I_AM_SORRY)) return true;
    const j = skipSpaces(t, n, p + 1);
    for (const tail of REFUSAL_AFTER_I) if (readsAt(t, n, j, tail)) return true;
    return false;
  }
  if (c === 117 /* u */) {
    if (!readsAt(t, n, p, UNABLE_TO)) return false;
    for (const tail of REFUSAL_AFTER_UNABLE) if (readsAt(t, n, p + 10, tail)) return true;
    return false;
  }
  return c === 97 /* a */ && readsAt(t, n, p, AS_AN_AI) && !isWordChar(charAt(t, n, p + 8));
}

const REFUSAL_AFTER_I = ['cannot', 'can not', "can't", "won't", 'will not', 'am not able', 'am unable', "'m not able", "'m unable", 'do not know', "don't know"].map(word);
const REFUSAL_AFTER_UNABLE = ['help', 'assist', 'answer', 'comply'].map(word);
const I_M_SORRY = word("i'm sorry");
const I_AM_SORRY = word('i am sorry');
const UNABLE_TO = word('unable to ');
const AS_AN_AI = word('as an ai');

/** Why the normalised reply `t` (of length `n`) has no answer: a refusal, or just no answer token. */
export function unparseableReason(t: Uint16Array, n: number, noAnswer: string): string {
  for (let p = 0; p < n; p++) {
    // Only `i`, `u` and `a` open a refusal: the cheap test first.
    const c = t[p]! | 32;
    if ((c === 105 || c === 117 || c === 97) && refusalAt(t, n, p)) return 'refusal';
  }
  return noAnswer;
}
