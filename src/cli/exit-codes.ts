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

/** Every known code's exit code; SUBMIT_* codes (a stopped submission) exit 1. */
const EXIT_CODES: Record<KnownErrorCode, number> = {
  USAGE: EXIT_USAGE,
  CONFIG: EXIT_USAGE,
  SCIENCE_BANK: EXIT_USAGE,
  SCORING_CONFIG: EXIT_USAGE,
  NO_OPERATOR: EXIT_USAGE,
  INTERRUPTED: EXIT_INTERRUPTED,
  MESSAGE_TOO_LARGE: EXIT_FAILURE,
  HCS10_MESSAGE_TOO_LARGE: EXIT_FAILURE,
  HCS10_ASK: EXIT_FAILURE,
  HCS1_INVALID: EXIT_FAILURE,
  RESOLVE: EXIT_FAILURE,
  REGISTRY_NOT_FOUND: EXIT_FAILURE,
  NOT_A_REGISTRY: EXIT_FAILURE,
  NO_IDENTITY: EXIT_FAILURE,
  TOPIC_NOT_FOUND: EXIT_FAILURE,
  // A topic that cannot take signals is the user's choice of topic.
  TOPIC_DELETED: EXIT_USAGE,
  TOPIC_NOT_SIGNAL: EXIT_USAGE,
  TOPIC_SUBMIT_KEY: EXIT_USAGE,
  NO_AGENTS: EXIT_FAILURE,
  LEDGER_TX: EXIT_FAILURE,
  NODE_UNREACHABLE: EXIT_FAILURE,
  MIRROR_REQUEST: EXIT_FAILURE,
  MIRROR_BAD_RESPONSE: EXIT_FAILURE,
  MIRROR_UNAVAILABLE: EXIT_FAILURE,
  MIRROR_NOT_FOUND: EXIT_FAILURE,
  JOURNAL: EXIT_FAILURE,
  FEE_CAP: EXIT_FAILURE,
  BUILD: EXIT_FAILURE,
  TRANSPORT: EXIT_FAILURE,
  PRIVATE_ADDRESS: EXIT_FAILURE,
  STATE_CORRUPT: EXIT_FAILURE,
  STATE_DIR: EXIT_FAILURE,
  BAD_OPTION: EXIT_FAILURE,
  BAD_FAULT: EXIT_FAILURE,
  START_FAILED: EXIT_FAILURE,
  PORT_IN_USE: EXIT_FAILURE,
  BIND_FAILED: EXIT_FAILURE,
  UNKNOWN_NODE: EXIT_FAILURE,
  STOPPED: EXIT_FAILURE,
  CHILD_FAILED: EXIT_FAILURE,
  CHILD_EXITED: EXIT_FAILURE,
  DEMO: EXIT_FAILURE,
  DATABASE_UNAVAILABLE: EXIT_FAILURE,
  DATABASE_SCHEMA: EXIT_FAILURE,
};

/** The exit code for any thrown value: the table above for Hcs25Errors, 1 for anything else. */
export function exitCodeOf(err: unknown): number {
  if (!(err instanceof Hcs25Error)) return EXIT_FAILURE;
  return Object.hasOwn(EXIT_CODES, err.code) ? EXIT_CODES[err.code as KnownErrorCode] : EXIT_FAILURE;
}
