/**
 * Failure reasons of v2 signals: the codes hcs25 writes, never free text, so nothing an agent said can reach the
 * ledger through a reason, and consumers can count and translate them. Readers take any well-formed code (a later
 * writer may add some) and count those not listed here as unknown. A reason is present only on a failure (an unreachable probe, an eval
 * that did not produce a gradable correct/wrong answer); never on a reachable probe or a graded answer.
 *
 * The codes and what each means: FAILURE_REASON_TEXT below (the HTML report shows it beside each failure).
 */
import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../evaluate/types.js';

export const FAILURE_REASONS = [
  'timeout',
  'aborted',
  'connect-refused',
  'connection-reset',
  'dns',
  'tls',
  'unreachable',
  'private-address',
  'http-4xx',
  'http-5xx',
  'rate-limited',
  'auth-required',
  'too-large',
  'bad-body',
  'protocol-error',
  'agent-error',
  'no-endpoint',
  'bad-endpoint',
  'unsupported-protocol',
  'not-chat-capable',
  'probe-unreachable',
  'refusal',
  'ambiguous',
  'conflict',
  'invalid-option',
  'unit',
  'no-answer',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export const FAILURE_REASON_TEXT: Readonly<Record<FailureReason, string>> = {
  timeout: 'no (complete) answer within the time budget',
  aborted: 'the run was stopped before the check finished (nothing measured)',
  'connect-refused': 'the TCP connection was refused',
  'connection-reset': 'the connection was reset or closed mid-exchange',
  dns: 'the host name did not resolve',
  tls: 'TLS handshake or certificate failure',
  unreachable: "host/network unreachable, or the agent's topic/endpoint does not exist",
  'private-address': 'the endpoint resolves to a non-public address (not contacted)',
  'http-4xx': 'the agent answered with an HTTP 4xx status (other than 401/402/403/429)',
  'http-5xx': 'the agent answered with an HTTP 5xx status',
  'rate-limited': 'HTTP 429 or a rate-limit error object',
  'auth-required': 'HTTP 401/402/403, an auth-required task, or a gated HCS-10 inbound topic',
  'too-large': 'the response exceeded the size cap',
  'bad-body': 'the response body was not what the protocol promises (HTML, not JSON, empty)',
  'protocol-error': 'the exchange broke the protocol in another way',
  'agent-error': 'the agent reported its own failure (error object, failed task)',
  'no-endpoint': 'the agent description has no way to reach it (no URL, no inbound topic)',
  'bad-endpoint': 'the endpoint is not a usable URL (bad syntax, scheme, credentials)',
  'unsupported-protocol': "hcs25 has no transport for the agent's protocol in this run",
  'not-chat-capable': 'the protocol has no chat operation (MCP): evals are skipped',
  'probe-unreachable':
    'not asked: the availability probe of the same run found the agent unreachable (status missing, nothing measured)',
  refusal: 'graded unparseable: the agent declined to answer',
  ambiguous: 'graded unparseable: more than one candidate answer',
  conflict: 'graded unparseable: the answer contradicts itself',
  'invalid-option': 'graded unparseable: a letter that is not one of the options',
  unit: 'graded unparseable: a number only with a unit or inside other text',
  'no-answer': 'graded unparseable: no answer token found',
};

const GRADE_REASONS: ReadonlySet<string> = new Set<FailureReason>([
  'refusal',
  'ambiguous',
  'conflict',
  'invalid-option',
  'unit',
  'no-answer',
]);

/**
 * Free-text patterns of today's transports and runner (src/transports, src/evaluate/runner.ts), first match wins.
 * The `kind: ` prefix the runner puts in front of a transport failure is matched as part of the text.
 */
const TEXT_RULES: ReadonlyArray<readonly [RegExp, FailureReason]> = [
  // The runner's own rule (evaluate/runner.ts): first, since the text goes on to quote the probe's failure.
  [/^probe-unreachable\b/, 'probe-unreachable'],
  [/aborted by the caller/i, 'aborted'],
  [/non-public address|private endpoints/i, 'private-address'],
  [/^timeout\b|timed out|in time\b|within \d+ ?ms|budget ran out|stalled/i, 'timeout'],
  [/^rate-limited\b|\b429\b|rate.?limit/i, 'rate-limited'],
  [/^auth-required\b|authenticat|requires payment|submit key|fee-gated/i, 'auth-required'],
  [/^too-large\b|exceeds the .*cap|bytes; the cap/i, 'too-large'],
  [/connection refused/i, 'connect-refused'],
  [/connection (reset|closed)/i, 'connection-reset'],
  [/host name not found|dns lookup/i, 'dns'],
  [/\btls\b|certificate/i, 'tls'],
  [/host unreachable|network unreachable|does not exist/i, 'unreachable'],
  [/MCP has no chat operation|no chat operation/i, 'not-chat-capable'],
  [/no \S+ transport|no way to ask|need the runner'?s HCS-10 identity/i, 'unsupported-protocol'],
  [/has no endpoint|neither an account nor an inbound topic|no HCS-11 profile|no inboundTopicId/i, 'no-endpoint'],
  [/not a valid URL|invalid agent endpoint|unsupported URL scheme|embedded credentials/i, 'bad-endpoint'],
  [/^agent-error\b|agent error|agent returned an error|^agent-error:|task (failed|rejected|canceled)/i, 'agent-error'],
  [
    /HTML page|not JSON|empty response body|without JSON events|unexpected JSON shape|without choices|neither text\/plain|JSON without a string field|no JSON-RPC response|neither a Message nor a Task|server error/i,
    'bad-body',
  ],
];

/**
 * The one reason classifier: the closed code for a failed result, or undefined for a success (reachable probe,
 * graded correct or wrong answer). `httpStatus` on a probe wins over text; HTTP 500 is `http-5xx`.
 */
export function failureReason(result: AnyEvalResult): FailureReason | undefined {
  return result.kind === 'availability' ? probeReason(result) : evalReason(result);
}

function probeReason(result: ProbeEvalResult): FailureReason | undefined {
  if (result.reachable) return undefined;
  const text = result.reason ?? '';
  const byStatus = statusReason(result.httpStatus ?? httpStatusIn(text));
  // A 5xx on a probe is the server's own word; text such as "server error" adds nothing.
  if (byStatus === 'http-5xx') return byStatus;
  return textReason(text) ?? byStatus ?? 'unreachable';
}

function evalReason(result: EvalResult): FailureReason | undefined {
  const text = result.reason ?? '';
  switch (result.outcome) {
    case 'correct':
    case 'wrong':
    case 'empty':
      // The outcome says it all; a grader note or "answered on retry" is not a failure.
      return undefined;
    case 'unparseable': {
      const head =
        text
          .trim()
          .toLowerCase()
          .split(/[\s;,]/, 1)[0] ?? '';
      return GRADE_REASONS.has(head) ? (head as FailureReason) : 'no-answer';
    }
    case 'skipped':
      return textReason(text) ?? 'not-chat-capable';
    case 'timeout':
      return textReason(text) === 'aborted' ? 'aborted' : 'timeout';
    case 'error':
    case 'upstream-error': {
      if (/^http-error\b/i.test(text)) return statusReason(httpStatusIn(text)) ?? 'protocol-error';
      return (
        textReason(text) ??
        statusReason(httpStatusIn(text)) ??
        (result.outcome === 'upstream-error' ? 'agent-error' : 'protocol-error')
      );
    }
  }
}

function textReason(text: string): FailureReason | undefined {
  for (const [pattern, reason] of TEXT_RULES) if (pattern.test(text)) return reason;
  return undefined;
}

function httpStatusIn(text: string): number | undefined {
  const m = /\bHTTP (\d{3})\b/.exec(text);
  return m ? Number(m[1]) : undefined;
}

function statusReason(status: number | undefined): FailureReason | undefined {
  if (status === undefined) return undefined;
  if (status === 429) return 'rate-limited';
  if (status === 401 || status === 402 || status === 403) return 'auth-required';
  if (status >= 500 && status <= 599) return 'http-5xx';
  if (status >= 400 && status <= 499) return 'http-4xx';
  return undefined;
}
