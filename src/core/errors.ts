/**
 * One error hierarchy, in the manner of viem's BaseError. Every error the library throws on purpose is an Hcs25Error:
 * a `code` from the closed ErrorCode set that a program can switch on, a one-line message that says what went wrong,
 * `details` (the underlying reason, usually the cause's message), a `docsPath` into the documentation, a `hint` that
 * says what to do next, and the cause chain (`walk`). Messages must never contain key material; callers pass only ids,
 * names and sizes. Exit codes are the CLI's business: src/cli/exit-codes.ts maps codes to them.
 */

/** Every code an Hcs25Error can carry (besides the SUBMIT_ family below). */
export const ERROR_CODES = [
  // The user can fix it: flags, config, input files.
  'USAGE',
  'CONFIG',
  'SCIENCE_BANK',
  'SCORING_CONFIG',
  'NO_OPERATOR',
  // Stopped by the user.
  'INTERRUPTED',
  'MESSAGE_TOO_LARGE',
  'HCS10_MESSAGE_TOO_LARGE',
  'HCS10_ASK',
  'HCS1_INVALID',
  'RESOLVE',
  'REGISTRY_NOT_FOUND',
  'NOT_A_REGISTRY',
  'NO_IDENTITY',
  'TOPIC_NOT_FOUND',
  'TOPIC_DELETED',
  'TOPIC_NOT_SIGNAL',
  'TOPIC_SUBMIT_KEY',
  'NO_AGENTS',
  'LEDGER_TX',
  'NODE_UNREACHABLE',
  'MIRROR_REQUEST',
  'MIRROR_BAD_RESPONSE',
  'MIRROR_UNAVAILABLE',
  'MIRROR_NOT_FOUND',
  'JOURNAL',
  'FEE_CAP',
  'BUILD',
  // Agent transports (a failed ask is a result, not a crash; these surface only inside transports).
  'TRANSPORT',
  'PRIVATE_ADDRESS',
  // The embedded local node.
  'STATE_CORRUPT',
  'STATE_DIR',
  'BAD_OPTION',
  'BAD_FAULT',
  'START_FAILED',
  'PORT_IN_USE',
  'BIND_FAILED',
  'UNKNOWN_NODE',
  'STOPPED',
  'CHILD_FAILED',
  'CHILD_EXITED',
  'DEMO',
  // hcs25 serve's database (PGlite or PostgreSQL).
  'DATABASE_UNAVAILABLE',
  'DATABASE_SCHEMA',
] as const;

export type KnownErrorCode = (typeof ERROR_CODES)[number];

/**
 * A stopped submission carries the HAPI status that stopped it (`SUBMIT_INVALID_SIGNATURE`, `SUBMIT_INVALID_TOPIC_ID`,
 * or one of the submitter's own: `SUBMIT_NETWORK`, `SUBMIT_INTERRUPTED`, …): the status set is Hedera's, so that
 * family is a pattern.
 */
export type SubmitErrorCode = `SUBMIT_${string}`;
export type ErrorCode = KnownErrorCode | SubmitErrorCode;

/** Where each family of errors is explained; an error may name a more precise page. */
const DOCS_PATHS: Partial<Record<KnownErrorCode, string>> = {
  USAGE: 'README.md#commands',
  CONFIG: 'README.md#configuration',
  NO_OPERATOR: 'README.md#configuration',
  MESSAGE_TOO_LARGE: 'docs/formats.md',
  HCS10_MESSAGE_TOO_LARGE: 'docs/formats.md',
  HCS1_INVALID: 'docs/formats.md',
  TOPIC_NOT_SIGNAL: 'docs/formats.md',
  FEE_CAP: 'README.md#costs',
  DATABASE_UNAVAILABLE: 'docs/serve.md',
  DATABASE_SCHEMA: 'docs/serve.md',
};

export interface ErrorOptions {
  /** What to do next. */
  hint?: string;
  cause?: unknown;
  /** The underlying reason; defaults to the cause's details or message. */
  details?: string;
  /** A page (and anchor) of the documentation, relative to the repository root. */
  docsPath?: string;
}

export class Hcs25Error extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: string | undefined;
  readonly docsPath: string | undefined;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'Hcs25Error';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details ?? detailsOf(options.cause);
    this.docsPath = options.docsPath ?? DOCS_PATHS[code as KnownErrorCode];
  }

  /**
   * The cause chain, from this error down: the deepest error when `fn` is absent, else the first one `fn` accepts
   * (or null).
   */
  walk(fn?: (err: unknown) => boolean): unknown {
    return walk(this, fn);
  }
}

/** Follows `cause` from `err`: the deepest error when `fn` is absent, else the first error `fn` accepts (or null). */
export function walk(err: unknown, fn?: (err: unknown) => boolean): unknown {
  const seen = new Set<unknown>([err]);
  let current = err;
  for (;;) {
    if (fn?.(current)) return current;
    const next = current instanceof Error ? current.cause : undefined;
    // A cause chain can loop (a cause set after the fact): stop at the first error seen twice.
    if (next === undefined || seen.has(next)) return fn ? null : current;
    seen.add(next);
    current = next;
  }
}

function detailsOf(cause: unknown): string | undefined {
  if (cause instanceof Hcs25Error) return cause.details ?? cause.message;
  if (cause instanceof Error) return cause.message;
  return cause === undefined ? undefined : String(cause);
}

/** Bad flags, bad input files: the user can fix it. */
export class UsageError extends Hcs25Error {
  constructor(message: string, options: ErrorOptions = {}) {
    super('USAGE', message, options);
    this.name = 'UsageError';
  }
}

/** Configuration that fails validation; names the variable or flag and what is wrong, never a secret's value. */
export class ConfigError extends Hcs25Error {
  constructor(message: string, options: ErrorOptions = {}) {
    super('CONFIG', message, options);
    this.name = 'ConfigError';
  }
}

/** A message the builder will not put on-chain because it would not fit in one HCS chunk. */
export class MessageTooLargeError extends Hcs25Error {
  readonly bytes: number;
  readonly limit: number;
  constructor(bytes: number, limit: number, what: string) {
    super('MESSAGE_TOO_LARGE', `${what} is ${bytes} bytes serialized; the limit is ${limit} bytes (one HCS chunk)`, {
      hint: 'shorten free-text fields such as reason or answer; signals must fit in a single 1024-byte chunk',
    });
    this.name = 'MessageTooLargeError';
    this.bytes = bytes;
    this.limit = limit;
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
