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

export interface NormaliseOptions {
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

/** What a response holds that normalisation has work for: one bit per step, found in one scan. */
const HAS_NON_ASCII = 1;
const HAS_BACKSLASH = 2;
const HAS_BACKTICK = 4;
const HAS_DOLLAR = 8;
const HAS_EMPHASIS = 16;
const HAS_COMMA = 32;

function scanFlags(text: string): number {
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
    t = t.normalize('NFKC').replace(UNICODE_MINUS, '-').replace(CURLY_APOSTROPHE, "'");
    flags = scanFlags(t);
  }
  if (flags & HAS_BACKSLASH) t = unwrapLatex(t, options.markBoxed === true);
  if (flags & HAS_BACKTICK) t = t.replace(CODE_FENCE, '').replace(BACKTICK, '');
  if (flags & HAS_DOLLAR) t = t.replace(DOLLAR, '');
  if (flags & HAS_EMPHASIS) t = stripEmphasis(t);
  if (flags & HAS_COMMA) t = t.replace(THOUSANDS, (group) => group.replace(COMMA, ''));
  t = t.trim();
  if (t.endsWith('.')) t = t.slice(0, -1).trimEnd();
  return t;
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

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

const REFUSAL =
  /\b(?:i\s*(?:can ?not|can't|won't|will not|am (?:not able|unable)|'m (?:not able|unable)|do not know|don't know)|unable to (?:help|assist|answer|comply)|as an ai\b|i'm sorry|i am sorry)/i;

/** Why a response without an answer has none: a refusal, or just no answer token. */
export function unparseableReason(normalised: string, noAnswer: string): string {
  return REFUSAL.test(normalised) ? 'refusal' : noAnswer;
}
