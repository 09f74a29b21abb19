/**
 * Reply normalisation shared by both graders, and the refusal check. Plain regex rules: a reply arrives over the
 * network within a 30 s budget, so readability wins over speed here.
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
export function normaliseOption(option: string): string {
  return normaliseResponse(option).toLowerCase();
}

/** Empty or whitespace only: the agent said nothing. */
export function isBlank(response: string): boolean {
  return response.trim() === '';
}

const REFUSAL = new RegExp(
  String.raw`\b(?:i\s*(?:can ?not|can't|won't|will not|am (?:not able|unable)|'m (?:not able|unable)` +
    String.raw`|do not know|don't know)|unable to (?:help|assist|answer|comply)|as an ai\b|i'm sorry|i am sorry)`,
  'i',
);

/** Why a normalised response without an answer has none: a refusal, or just no answer token (`noAnswer`). */
export function unparseableReason(normalised: string, noAnswer: string): string {
  return REFUSAL.test(normalised) ? 'refusal' : noAnswer;
}

/** Every match of `pattern` in `text` from index `from`, on a copy of the pattern so no shared `lastIndex` moves. */
export function* matchesFrom(pattern: RegExp, text: string, from = 0): Generator<RegExpExecArray> {
  const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  re.lastIndex = from;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    yield m;
    if (m[0] === '') re.lastIndex++;
  }
}
