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

/** NFKC, Unicode minus → `-`, curly apostrophe → `'`: char by char for the common characters, else `normalize`. */
function foldNonAscii(text: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x7f) continue;
    const folded = FOLDS.get(c);
    if (folded === undefined) return foldNfkcSlow(text);
    out += text.slice(last, i) + folded;
    last = i + 1;
  }
  return out + text.slice(last);
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

/** Code fences (` ``` ` and the language word after) and single backticks go. */
function stripBackticks(text: string): string {
  let out = '';
  let last = 0;
  for (let i = text.indexOf('`'); i !== -1; i = text.indexOf('`', last)) {
    out += text.slice(last, i);
    let end = i + 1;
    if (codeAt(text, i + 1) === 96 && codeAt(text, i + 2) === 96) {
      end = i + 3;
      for (let c = codeAt(text, end); isWordChar(c) || c === 43 || c === 45; c = codeAt(text, ++end));
    }
    last = end;
  }
  return out + text.slice(last);
}

/** `$` and `\$` go. */
function stripDollars(text: string): string {
  let out = '';
  let last = 0;
  for (let i = text.indexOf('$'); i !== -1; i = text.indexOf('$', last)) {
    const start = i > last && text.charCodeAt(i - 1) === 92 /* \ */ ? i - 1 : i;
    out += text.slice(last, start);
    last = i + 1;
  }
  return out + text.slice(last);
}

function isAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Runs of `*` and `_` (markdown emphasis) go, but a run between two ASCII letters/digits stays (`7*8`, `snake_case`). */
function stripEmphasis(text: string): string {
  let out = '';
  let last = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c !== 42 && c !== 95) continue;
    const start = i;
    while (i < n && ((c = text.charCodeAt(i)) === 42 || c === 95)) i++;
    if (start > 0 && i < n && isAlnum(text.charCodeAt(start - 1)) && isAlnum(text.charCodeAt(i))) continue;
    out += text.slice(last, start);
    last = i;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * Thousands separators go: `1,234` and `12,345,678` (1–3 digits not after a digit, `.` or `,`, then every following
 * `,ddd` group), never `72, in total`, `1,23` or `1,2345`. This is the regex
 * `(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d]|,\d)`: fewer groups than all of them would leave `,\d` next, so only all match.
 */
function joinThousands(text: string): string {
  let out = '';
  let last = 0;
  for (let p = text.indexOf(','); p !== -1; p = text.indexOf(',', p + 1)) {
    // p is a comma; the group before it starts at `start`.
    let start = p;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    if (p - start < 1 || p - start > 3 || start < last) continue;
    if (start > 0) {
      const before = text.charCodeAt(start - 1);
      if (before === 46 || before === 44) continue;
    }
    let end = p;
    while (codeAt(text, end) === 44 && isDigit3(text, end + 1)) end += 4;
    if (end === p || isDigit(codeAt(text, end)) || (codeAt(text, end) === 44 && isDigit(codeAt(text, end + 1)))) continue;
    out += text.slice(last, start);
    for (let i = start; i < end; i++) if (text.charCodeAt(i) !== 44) out += text[i];
    last = end;
    p = end - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

function isDigit3(text: string, at: number): boolean {
  return isDigit(codeAt(text, at)) && isDigit(codeAt(text, at + 1)) && isDigit(codeAt(text, at + 2));
}

export interface NormaliseOptions {
  /**
   * Keep a marker where `\boxed{…}` stood (as `#### …`): the last-answer grader treats `\boxed` as an
   * answer marker, but the wrapper itself is stripped before extraction.
   */
  markBoxed?: boolean;
}

/** What a response holds that normalisation has work for: one bit per step, found in one scan. */
const HAS_NON_ASCII = 1;
const HAS_BACKSLASH = 2;
const HAS_BACKTICK = 4;
const HAS_DOLLAR = 8;
const HAS_EMPHASIS = 16;
const HAS_COMMA = 32;

/** Any char a normalisation step has work for; long replies are tested with it first (native, faster than the loop). */
const NEEDS_WORK = /[^\x00-\x7f]|[\\`$*_,]/;

function scanFlags(text: string): number {
  if (text.length > 24 && !NEEDS_WORK.test(text)) return 0;
  let flags = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) flags |= HAS_NON_ASCII;
    else if (c === 92) flags |= HAS_BACKSLASH;
    else if (c === 96) flags |= HAS_BACKTICK;
    else if (c === 36) flags |= HAS_DOLLAR;
    else if (c === 42 || c === 95) flags |= HAS_EMPHASIS;
    else if (c === 44) flags |= HAS_COMMA;
  }
  return flags;
}

/**
 * Trim; NFKC (full-width digits and letters), Unicode minus → `-`; markdown emphasis, code ticks and fences;
 * `$…$`, `\(…\)`, `\boxed{}`, `\text{}`; thousands separators; one trailing period.
 * One scan finds which steps have work (a plain `95` has none); a step never adds what a later step looks for, so
 * flags taken after NFKC stay a safe superset.
 */
export function normaliseResponse(response: string, options: NormaliseOptions = {}): string {
  let t = response;
  let flags = scanFlags(t);
  if (flags & HAS_NON_ASCII) {
    t = foldNonAscii(t);
    flags = scanFlags(t);
  }
  if (flags & HAS_BACKSLASH) t = unwrapLatex(t, options.markBoxed === true);
  if (flags & HAS_BACKTICK) t = stripBackticks(t);
  if (flags & HAS_DOLLAR) t = stripDollars(t);
  if (flags & HAS_EMPHASIS) t = stripEmphasis(t);
  if (flags & HAS_COMMA) t = joinThousands(t);
  return trimAnswer(t);
}

/** `trim`, then one trailing period and the spaces before it. */
function trimAnswer(t: string): string {
  let s = 0;
  let e = t.length;
  while (s < e && isSpace(t.charCodeAt(s))) s++;
  while (e > s && isSpace(t.charCodeAt(e - 1))) e--;
  if (e > s && t.charCodeAt(e - 1) === 46) {
    e--;
    while (e > s && isSpace(t.charCodeAt(e - 1))) e--;
  }
  return s === 0 && e === t.length ? t : t.slice(s, e);
}

/** The same normalisation for option texts, lower-cased, so an option and a response quoting it compare equal. */
export function normaliseOption(option: string): string {
  return normaliseResponse(option).toLowerCase();
}

/** Empty or whitespace only: the agent said nothing. */
export function isBlank(response: string): boolean {
  for (let i = 0; i < response.length; i++) if (!isSpace(response.charCodeAt(i))) return false;
  return true;
}

/** What `trim` strips and a regex `\s` matches (WhiteSpace and LineTerminator), by char code. */
export function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return c === 160 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** A regex `\w` character (ASCII letter, digit, underscore), by char code. */
export function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** The char code at `i`, or -1 past the end: a read past the end gives NaN, which makes the scanners' code slower. */
export function codeAt(text: string, i: number): number {
  return i < text.length ? text.charCodeAt(i) : -1;
}

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** `text` at `at` reads `word` (lower-case letters and spaces), ASCII letters in any case, as a regex `/i` does. */
export function readsAt(text: string, at: number, word: string): boolean {
  if (at + word.length > text.length) return false;
  for (let k = 0; k < word.length; k++) {
    const w = word.charCodeAt(k);
    const c = text.charCodeAt(at + k);
    if (w === 32 ? c !== 32 : (c | 32) !== w) return false;
  }
  return true;
}

const REFUSAL =
  /\b(?:i\s*(?:can ?not|can't|won't|will not|am (?:not able|unable)|'m (?:not able|unable)|do not know|don't know)|unable to (?:help|assist|answer|comply)|as an ai\b|i'm sorry|i am sorry)/i;

/** Why a response without an answer has none: a refusal, or just no answer token. */
export function unparseableReason(normalised: string, noAnswer: string): string {
  return REFUSAL.test(normalised) ? 'refusal' : noAnswer;
}
