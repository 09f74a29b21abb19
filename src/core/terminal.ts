/**
 * Text from agents and registries reaches terminals (eval replies, agent names, skip reasons, score tables). Escape
 * sequences in it could move the cursor, rewrite earlier lines, retitle the window or hide text; bidi controls could
 * reorder a line so it reads differently from what it says. Everything printed that someone else wrote goes
 * through `escapeTerminal`, which shows such characters as visible escapes instead (`\x1b`, `\u202e`).
 */

/**
 * C0 controls, DEL, C1 controls (0x9b is an 8-bit CSI), the Arabic letter mark, zero-width and direction marks,
 * line/paragraph separators, bidi embeddings/overrides/isolates, word joiner and invisible operators, and the BOM.
 */
export const TERMINAL_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
const UNSAFE_ALL = new RegExp(TERMINAL_UNSAFE.source, 'g');
const UNSAFE_KEEPING_LINES =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
/** What JSON.stringify leaves raw inside strings (it escapes C0 itself; a raw line feed is its own indentation). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

export interface EscapeOptions {
  /** Keep line feeds and tabs (multi-line text such as a whole reply). Carriage returns are always escaped. */
  keepNewlines?: boolean;
}

/** `text` with every character that could drive a terminal shown as `\xNN` (up to 0xff) or `\uNNNN`. */
export function escapeTerminal(text: string, options: EscapeOptions = {}): string {
  return text.replace(options.keepNewlines ? UNSAFE_KEEPING_LINES : UNSAFE_ALL, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON for a terminal (`--json`, JSON lines): the same value, with every unsafe character written as a JSON `\uNNNN`
 * escape (JSON.stringify escapes C0 controls itself, but passes C1 and bidi controls through raw).
 */
export function stringifyForTerminal(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * stringifyForTerminal(value, space) in pieces that join to exactly its text: arrays and objects down to `depth` levels
 * a member at a time, each value below as one string. A report of a quarter of a million subjects is longer than the
 * longest string V8 can hold.
 */
export function* stringifyInPieces(value: unknown, space: number, depth = 2, indent = ''): Generator<string> {
  const v = hasToJson(value) ? value.toJSON() : value;
  if (depth === 0 || v === null || typeof v !== 'object') {
    // Inside strings JSON escapes line feeds, so every raw one is indentation.
    yield stringifyForTerminal(v, space).replaceAll('\n', `\n${indent}`);
    return;
  }
  const inner = indent + ' '.repeat(space);
  const members: [string | null, unknown][] = Array.isArray(v)
    ? v.map((x) => [null, omitted(x) ? null : x])
    : Object.entries(v).filter(([, x]) => !omitted(x));
  if (members.length === 0) {
    yield Array.isArray(v) ? '[]' : '{}';
    return;
  }
  yield Array.isArray(v) ? '[' : '{';
  for (const [i, [key, x]] of members.entries()) {
    yield `${i === 0 ? '' : ','}\n${inner}${key === null ? '' : `${stringifyForTerminal(key)}: `}`;
    yield* stringifyInPieces(x, space, depth - 1, inner);
  }
  yield `\n${indent}${Array.isArray(v) ? ']' : '}'}`;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
const omitted = (x: unknown) => x === undefined || typeof x === 'function' || typeof x === 'symbol';

const hasToJson = (x: unknown): x is { toJSON(): unknown } =>
  typeof x === 'object' && x !== null && typeof (x as { toJSON?: unknown }).toJSON === 'function';

/** Agent-supplied text made safe for a one-line message: whitespace runs as one space, controls shown escaped. */
export function oneLine(text: string, max = 200): string {
  const flat = escapeTerminal(text.replace(/[ \t\n]+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A short, printable preview of untrusted text for a reason line. */
export function preview(text: string, max = 40): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return `"${escapeTerminal(cut).replace(/"/g, '\\"')}"`;
}
