import { inspect } from 'node:util';
import { escapeTerminal } from '../core/terminal.js';

const REDACTED = '[redacted]';

/**
 * Holds key material so that no accidental path (template strings, JSON.stringify, console.log, util.inspect,
 * error messages built from config objects) can print it. Only `reveal()` gives the value, at the point of use.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

/**
 * Whether `value` could be, or contain, private-key material in a common encoding: a long hex run (raw or DER,
 * with or without 0x), a long base64/base64url run, PEM, or a BIP-39 style word list. Used wherever a value the
 * user typed might be quoted back: a key put in the wrong variable must never be echoed.
 */
export function mayBeKeyMaterial(value: string): boolean {
  if (/-----BEGIN|PRIVATE KEY/i.test(value)) return true;
  if (HEX_RUN.test(value.replace(/0x/gi, ''))) return true;
  if ((value.match(BASE64_RUN) ?? []).some((run) => /\d/.test(run))) return true;
  return /^\s*[a-z]{3,8}(?:\s+[a-z]{3,8}){11,}\s*$/.test(value);
}

const HEX_RUN = /[0-9a-fA-F]{32,}/;
const BASE64_RUN = /[A-Za-z0-9+/_=-]{40,}/g;
const PEM_BLOCK = /-----BEGIN[^-]*-----[\s\S]*?(?:-----END[^-]*-----|$)/g;

/**
 * The last line of defence at the output boundary (error lines, notes): every run that could be key material is
 * replaced by `[redacted]`, whatever code built the text. Long hashes in error text are redacted too; that is the price.
 */
export function redactKeyMaterial(text: string): string {
  return text
    .replace(PEM_BLOCK, '[redacted]')
    .replace(/(?:0x)?[0-9a-fA-F]{32,}/g, '[redacted]')
    .replace(BASE64_RUN, (run) => (/\d/.test(run) ? '[redacted]' : run));
}

/**
 * A value the user supplied, for an error message: quoted and terminal-safe when it cannot be a key, else only its
 * length. Long values are shortened.
 */
export function quoteInput(value: string, max = 40): string {
  if (mayBeKeyMaterial(value)) return `(a ${value.length}-character value, not shown: it may be a key)`;
  const cut = value.length > max ? `${value.slice(0, max - 1)}…` : value;
  return `"${escapeTerminal(cut)}"`;
}
