/**
 * The process exit codes of hcs25: 0 ok, 1 failure, 2 usage (the user can fix it), 130 interrupted. Errors carry
 * codes (core/errors.ts); this table gives each code its exit code.
 */
import { Hcs25Error, type KnownErrorCode } from '../core/errors.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** Stopped by Ctrl-C (128 + SIGINT), as shells expect. */
export const EXIT_INTERRUPTED = 130;

/** The codes that do not exit 1: what the user can fix (flags, config, input files, the choice of topic), and Ctrl-C. */
const EXIT_CODES: Partial<Record<KnownErrorCode, number>> = {
  USAGE: EXIT_USAGE,
  CONFIG: EXIT_USAGE,
  SCIENCE_BANK: EXIT_USAGE,
  SCORING_CONFIG: EXIT_USAGE,
  NO_OPERATOR: EXIT_USAGE,
  TOPIC_DELETED: EXIT_USAGE,
  TOPIC_NOT_SIGNAL: EXIT_USAGE,
  TOPIC_SUBMIT_KEY: EXIT_USAGE,
  INTERRUPTED: EXIT_INTERRUPTED,
};

/** The exit code for any thrown value: the table above for Hcs25Errors, 1 for anything else. */
export function exitCodeOf(err: unknown): number {
  if (!(err instanceof Hcs25Error)) return EXIT_FAILURE;
  return (Object.hasOwn(EXIT_CODES, err.code) && EXIT_CODES[err.code as KnownErrorCode]) || EXIT_FAILURE;
}
