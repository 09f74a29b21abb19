/**
 * Every error the library throws on purpose is an Hcs25Error: a stable `code` a program can switch on,
 * a message that says what went wrong, and a `hint` that says what to do next.
 * Messages must never contain key material; callers pass only ids, names and sizes.
 */
export class Hcs25Error extends Error {
  readonly code: string;
  readonly hint: string | undefined;

  constructor(code: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'Hcs25Error';
    this.code = code;
    this.hint = options.hint;
  }
}

/** Bad flags, bad config, bad input files: the user can fix it. CLI exit code 2. */
export class UsageError extends Hcs25Error {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('USAGE', message, options);
    this.name = 'UsageError';
  }
}

/** Configuration that fails validation; names the variable or flag and what is wrong. */
export class ConfigError extends Hcs25Error {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('CONFIG', message, options);
    this.name = 'ConfigError';
  }
}

/** A message the builder will not put on-chain (too large, invalid). */
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
