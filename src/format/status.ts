/** The HCS-25 status of a result: v1's mapping of eval outcomes, and v2's of every result. */
import type { AnyEvalResult, EvalOutcome } from '../evaluate/types.js';
import type { SignalStatus } from './protocol.js';
import { failureReason, type FailureReason } from './reasons.js';

/** HCS-25 status for an eval outcome (DESIGN §3.1). */
export function statusForOutcome(outcome: EvalOutcome): SignalStatus {
  switch (outcome) {
    case 'correct':
    case 'wrong':
    case 'unparseable':
    case 'empty':
      return 'ok';
    case 'timeout':
      return 'timeout';
    case 'error':
    case 'upstream-error':
      return 'error';
    case 'skipped':
      return 'missing';
  }
}

/** Probe failures where no request reached the agent: our limits, not the agent's availability. */
const NOT_SENT: ReadonlySet<FailureReason> = new Set(['aborted', 'private-address', 'unsupported-protocol']);

/**
 * The HCS-25 status of one result, as the reference implementation maps it (and as both the v2 builder and the
 * scorer must apply it): a measurement is `ok` and its value carries the verdict, so a wrong, unparseable or empty
 * answer is `ok` with score 0 and an unreachable probe is `ok` with value 0. `timeout`, `error` and `missing` are
 * left for results where nothing was measured: an eval that timed out or failed before an answer, a skipped eval,
 * and a probe that was never sent (the run was stopped, the endpoint is private and was not contacted, or hcs25
 * has no transport for the protocol). A broken agent description (no or bad endpoint) is the agent's unavailability: ok, 0.
 */
export function signalStatus(result: AnyEvalResult): SignalStatus {
  if (result.kind !== 'availability') return statusForOutcome(result.outcome);
  if (result.reachable) return 'ok';
  const reason = failureReason(result);
  return reason !== undefined && NOT_SENT.has(reason) ? 'missing' : 'ok';
}
