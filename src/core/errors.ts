/**
 * One error hierarchy. Every error the library throws on purpose is an Hcs25Error: a `code` from the closed
 * ErrorCode union that a program can switch on, a one-line message that says what went wrong, and a `hint` that says
 * what to do next. Messages must never contain key material; callers pass only ids, names and sizes.
 * The CLI maps codes to exit codes with EXIT_CODE_OF (one table, here, beside the codes).
 */

/** Every code an Hcs25Error can carry, with the process exit code the CLI gives it. */
export const ERROR_CODES = {
  // The user can fix it: flags, config, input files (exit 2).
  USAGE: 2,
  CONFIG: 2,
  SCIENCE_BANK: 2,
  SCORING_CONFIG: 2,
  NO_OPERATOR: 2,
  // Stopped by the user (128 + SIGINT, as shells expect).
  INTERRUPTED: 130,
  // Everything else is a failure (exit 1).
  MESSAGE_TOO_LARGE: 1,
  HCS10_MESSAGE_TOO_LARGE: 1,
  HCS10_ASK: 1,
  HCS1_INVALID: 1,
  RESOLVE: 1,
  REGISTRY_NOT_FOUND: 1,
  NOT_A_REGISTRY: 1,
  NO_IDENTITY: 1,
  TOPIC_NOT_FOUND: 1,
  TOPIC_DELETED: 2,
  TOPIC_NOT_SIGNAL: 2,
  TOPIC_SUBMIT_KEY: 2,
  NO_AGENTS: 1,
  LEDGER_TX: 1,
  NODE_UNREACHABLE: 1,
  MIRROR_REQUEST: 1,
  MIRROR_BAD_RESPONSE: 1,
  MIRROR_UNAVAILABLE: 1,
  MIRROR_NOT_FOUND: 1,
  JOURNAL: 1,
  FEE_CAP: 1,
  BUILD: 1,
  // Agent transports (a failed ask is a result, not a crash; these surface only inside transports).
  TRANSPORT: 1,
  PRIVATE_ADDRESS: 1,
  // The embedded local node.
  STATE_CORRUPT: 1,
  STATE_DIR: 1,
  BAD_OPTION: 1,
  BAD_FAULT: 1,
  START_FAILED: 1,
  PORT_IN_USE: 1,
  BIND_FAILED: 1,
  UNKNOWN_NODE: 1,
  STOPPED: 1,
  CHILD_FAILED: 1,
  CHILD_EXITED: 1,
  DEMO: 1,
  // hcs25 serve's database (PGlite or PostgreSQL).
  DATABASE_UNAVAILABLE: 1,
  DATABASE_SCHEMA: 1,
} as const;

/**
 * A stopped submission carries the HAPI status that stopped it (`SUBMIT_INVALID_SIGNATURE`, `SUBMIT_INVALID_TOPIC_ID`,
 * or one of the submitter's own: `SUBMIT_NETWORK`, `SUBMIT_INTERRUPTED`, …): the status set is Hedera's, so that
 * family is a pattern. Its exit code is 1.
 */
export type SubmitErrorCode = `SUBMIT_${string}`;
export type ErrorCode = keyof typeof ERROR_CODES | SubmitErrorCode;

export interface ErrorOptions {
  hint?: string;
  cause?: unknown;
}

export class Hcs25Error extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'Hcs25Error';
    this.code = code;
    this.hint = options.hint;
  }
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

/** The exit code for any thrown value: the table above for Hcs25Errors, 1 for anything else. */
export function exitCodeOf(err: unknown): number {
  if (!(err instanceof Hcs25Error)) return 1;
  return Object.hasOwn(ERROR_CODES, err.code) ? ERROR_CODES[err.code as keyof typeof ERROR_CODES] : 1;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
