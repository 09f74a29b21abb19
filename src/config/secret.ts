import { inspect } from 'node:util';

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
