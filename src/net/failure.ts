/** How an ask can fail: the kinds a transport reports and the runner scores (one closed list). */
export const FAILURE_KINDS = [
  'timeout',
  'refused',
  'http-error',
  'protocol-error',
  'auth-required',
  'rate-limited',
  'too-large',
  // The agent answered the protocol correctly but reported its own failure: an OpenAI error body with HTTP 200,
  // an A2A task in state failed/rejected, a JSON-RPC internal error. Scored as `upstream-error`.
  'agent-error',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];
