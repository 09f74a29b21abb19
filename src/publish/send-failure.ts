/**
 * What a failed submission means: the submitter's error (`SubmitError`, one code per HAPI status) and the sorting of
 * a failed send or SDK call into retry-the-same-id, give up, or stop (`classifySend`). Shared by the submitter, the
 * SDK transport and one-off SDK calls (`withTransientRetry`).
 */
import { MaxAttemptsOrTimeoutError, PrecheckStatusError, ReceiptStatusError, Status } from '@hashgraph/sdk';
import { Hcs25Error, errorMessage } from '../core/errors.js';
import { retry } from '../core/retry.js';

export class SubmitError extends Hcs25Error {
  /** The HAPI status or error class that stopped submission. */
  readonly status: string;
  constructor(status: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(`SUBMIT_${status}`, message, options);
    this.name = 'SubmitError';
    this.status = status;
  }
}

/** Precheck codes the network answers for load or leadership; the same id may be sent again. */
const TRANSIENT_PRECHECK = new Set<string>([
  Status.Busy.toString(),
  Status.Unknown.toString(),
  Status.PlatformTransactionNotCreated.toString(),
  Status.PlatformNotActive.toString(),
  Status.InvalidNodeAccount.toString(),
  // Valid start ahead of the node's clock: the same id becomes valid as time passes.
  Status.InvalidTransactionStart.toString(),
]);

/** gRPC codes that are the network's or connection's fault, not the request's. */
const TRANSIENT_GRPC = new Set([1, 2, 4, 8, 10, 13, 14, 17]); // CANCELLED UNKNOWN DEADLINE_EXCEEDED RESOURCE_EXHAUSTED ABORTED INTERNAL UNAVAILABLE, SDK TIMEOUT

export type ClassifiedFailure =
  | { kind: 'duplicate' }
  | { kind: 'expired' }
  | { kind: 'transient'; reason: string }
  | { kind: 'fatal'; error: SubmitError };

/** Sorts a failed send into what to do next. */
export function classifySend(err: unknown): ClassifiedFailure {
  if (err instanceof PrecheckStatusError) {
    const status = err.status.toString();
    if (status === Status.DuplicateTransaction.toString()) return { kind: 'duplicate' };
    if (status === Status.TransactionExpired.toString()) return { kind: 'expired' };
    if (TRANSIENT_PRECHECK.has(status)) return { kind: 'transient', reason: `precheck ${status}` };
    return { kind: 'fatal', error: statusError(status, undefined, 'precheck', err) };
  }
  if (err instanceof MaxAttemptsOrTimeoutError) return { kind: 'transient', reason: err.message };
  if (err instanceof ReceiptStatusError)
    return { kind: 'fatal', error: statusError(err.status.toString(), undefined, 'receipt', err) };
  if (err instanceof Error) {
    const code = grpcCode(err);
    if (code !== undefined) {
      if (TRANSIENT_GRPC.has(code)) return { kind: 'transient', reason: `gRPC ${err.message}` };
      return {
        kind: 'fatal',
        error: new SubmitError('GRPC', `the consensus node refused the request: ${err.message}`, {
          cause: err,
          hint: 'check --network and the node addresses',
        }),
      };
    }
    // Thrown by the SDK when every node is in backoff after connection failures.
    if (
      /All nodes are unhealthy|Network connectivity issue|failed to find a healthy working node|ECONNREFUSED|ECONNRESET|socket hang up/i.test(
        err.message,
      )
    ) {
      return { kind: 'transient', reason: err.message };
    }
  }
  return {
    kind: 'fatal',
    error: new SubmitError('UNEXPECTED', `submission failed unexpectedly: ${errorMessage(err)}`, {
      cause: err,
      hint: 'run with HCS25_DEBUG=1 for details, then resume the run',
    }),
  };
}

/**
 * The gRPC status code of a failed SDK call. The SDK wraps the codes it retries in GrpcServiceError but rethrows
 * the others (CANCELLED when a node shuts down mid-call, …) as grpc-js's own error: code, details, metadata.
 */
function grpcCode(err: Error): number | undefined {
  if (err.name === 'GrpcServiceError') return (err as Error & { status?: { _code?: number } }).status?._code;
  const raw = err as Error & { code?: unknown; details?: unknown; metadata?: unknown };
  return typeof raw.code === 'number' &&
    typeof raw.details === 'string' &&
    typeof raw.metadata === 'object' &&
    raw.metadata !== null
    ? raw.code
    : undefined;
}

const STATUS_HINTS: Record<string, string> = {
  INVALID_SIGNATURE:
    "the topic has a submit key the operator does not hold (or the operator key does not match the account): check the topic's submit_key on the mirror node and HCS25_OPERATOR_KEY",
  INVALID_TOPIC_ID: 'the topic does not exist on this network or was deleted: check --topic and --network',
  TOPIC_EXPIRED: 'the topic has expired: create a new one with `hcs25 topic create`',
  INSUFFICIENT_PAYER_BALANCE: 'fund the operator account, then resume the run',
  INSUFFICIENT_ACCOUNT_BALANCE: 'fund the operator account, then resume the run',
  INSUFFICIENT_TX_FEE:
    'the network charges more than the per-transaction maximum (0.1 ℏ, or what is left under --max-fee-hbar): raise --max-fee-hbar and resume',
  PAYER_ACCOUNT_NOT_FOUND: 'the operator account does not exist on this network: check HCS25_OPERATOR_ID and --network',
  INVALID_PAYER_SIGNATURE: 'the operator key does not match the operator account: check HCS25_OPERATOR_KEY',
  ACCOUNT_DELETED: 'the operator account was deleted: use another account',
  MESSAGE_SIZE_TOO_LARGE: 'a message exceeded one chunk; this is a bug in the message builder, please report it',
};

export function statusError(
  status: string,
  topicId: string | undefined,
  stage: 'precheck' | 'receipt',
  cause?: unknown,
): SubmitError {
  const where = topicId ? ` to topic ${topicId}` : '';
  const what = stage === 'precheck' ? 'refused the submission' : 'rejected the submission at consensus';
  return new SubmitError(status, `the network ${what}${where}: ${status}`, {
    hint: STATUS_HINTS[status] ?? 'see the Hedera status code documentation; unsent signals are kept in the journal',
    ...(cause ? { cause } : {}),
  });
}

/** How long a run rides out a busy or unreachable network before it stops (resumable), by default. */
export const DEFAULT_RETRY_FOR_MS = 5 * 60_000;

/**
 * Runs a one-off SDK call (topic create, balance query) again while it fails for a transient reason: a busy
 * node, or a single-node network whose only node the SDK has put in backoff after a dropped connection ("All nodes
 * are unhealthy", "failed to find a healthy working node"), for up to `forMs`. Anything else is thrown at once.
 */
export function withTransientRetry<T>(
  fn: () => Promise<T>,
  options: { forMs?: number; onRetry?: (reason: string, delayMs: number) => void } = {},
): Promise<T> {
  const until = Date.now() + (options.forMs ?? 30_000);
  return retry(fn, {
    attempts: Number.POSITIVE_INFINITY,
    minMs: 250,
    maxMs: 8_000,
    retryable: (err) => classifySend(err).kind === 'transient' && Date.now() < until,
    onRetry: (_attempt, err, delayMs) => {
      const failure = classifySend(err);
      options.onRetry?.(failure.kind === 'transient' ? failure.reason : errorMessage(err), delayMs);
    },
  });
}
