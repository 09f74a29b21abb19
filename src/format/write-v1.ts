/**
 * The v1 writer, kept only to finish a run that was journaled in v1 (its resumed signals must match the ones already
 * published); new runs write v2 (write.ts).
 */
import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../evaluate/types.js';
import { questionHash, responseHash } from './hashing.js';
import { PROTOCOL_ID, finishMessage, type BuiltMessage, type SignalContext, type SignalStatus } from './protocol.js';
import {
  MESSAGE_VERSION,
  SIGNAL_IDS,
  revealMessageSchema,
  scoreMessageSchema,
  signalMessageSchema,
  type RevealMessage,
  type ScoreMessage,
  type SignalMessage,
} from './schema-v1.js';
import { statusForOutcome } from './status.js';

const ANSWER_MAX = 16;
const REASON_CODE = /^[a-z0-9][a-z0-9:._-]{0,47}$/;

/**
 * Turns one eval or probe result into an HCS-25 signal message. Only the extracted answer token, a hash of the
 * question id and a hash of the raw response are kept: the question, its id and the response never leave the machine.
 * Throws MessageTooLargeError when the result would not fit in one HCS message.
 */
export function buildSignalMessage(result: AnyEvalResult, context: SignalContext): BuiltMessage<SignalMessage> {
  const sources = context.sources ?? (result.agent.source ? [result.agent.source] : undefined);
  const envelope = {
    p: PROTOCOL_ID,
    op: 'signal',
    v: MESSAGE_VERSION,
    subject: result.agent.subject,
    fetchedAt: result.fetchedAt,
    run: context.run,
    ...(sources && sources.length > 0 ? { sources } : {}),
  } as const;
  const message: SignalMessage =
    result.kind === 'availability'
      ? { ...envelope, signal: SIGNAL_IDS.availability, status: probeStatus(result), data: probeData(result) }
      : {
          ...envelope,
          signal: result.kind === 'math' ? SIGNAL_IDS.math : SIGNAL_IDS.science,
          status: statusForOutcome(result.outcome),
          data: evalData(result, context.runKey),
        };
  return finishMessage(signalMessageSchema.parse(message), 'signal message');
}

function evalData(result: EvalResult, runKey: Buffer) {
  const reason =
    reasonCode(result.reason) ??
    (result.outcome === 'correct' || result.outcome === 'wrong' ? undefined : result.outcome);
  return {
    outcome: result.outcome,
    score: result.outcome === 'correct' ? 100 : 0,
    questionHash: questionHash(runKey, result.questionId),
    answer: result.answer === null ? null : result.answer.slice(0, ANSWER_MAX),
    responseHash: result.response === null ? null : responseHash(result.response),
    compliant: result.compliant,
    latencyMs: Math.max(0, Math.round(result.latencyMs)),
    grader: result.grader,
    transport: result.transport,
    ...(reason ? { reason } : {}),
  } as const;
}

function probeStatus(result: ProbeEvalResult): SignalStatus {
  if (result.reachable) return 'ok';
  return reasonCode(result.reason) === 'timeout' ? 'timeout' : 'error';
}

function probeData(result: ProbeEvalResult) {
  const reason = reasonCode(result.reason);
  return {
    reachable: result.reachable,
    latencyMs: Math.max(0, Math.round(result.latencyMs)),
    transport: result.transport,
    ...(result.httpStatus !== undefined ? { httpStatus: result.httpStatus } : {}),
    score: result.reachable ? 100 : 0,
    ...(reason ? { reason } : {}),
  } as const;
}

/**
 * On-chain reasons are codes, never free text: a free-text reason could quote what an agent said.
 * `http-error: 503 Service Unavailable` becomes `http-error`; anything that is not code-shaped is dropped.
 */
function reasonCode(reason: string | undefined): string | undefined {
  if (!reason) return undefined;
  const head =
    reason
      .trim()
      .toLowerCase()
      .split(/[\s,;()"'`]/, 1)[0] ?? '';
  const code = head.replace(/:+$/, '');
  return REASON_CODE.test(code) ? code : undefined;
}

export function buildScoreMessage(input: Omit<ScoreMessage, 'p' | 'op' | 'v'>): BuiltMessage<ScoreMessage> {
  return finishMessage(
    scoreMessageSchema.parse({ p: PROTOCOL_ID, op: 'score', v: MESSAGE_VERSION, ...input }),
    'score message',
  );
}

export function buildRevealMessage(run: string, runKey: Buffer): BuiltMessage<RevealMessage> {
  return finishMessage(
    revealMessageSchema.parse({
      p: PROTOCOL_ID,
      op: 'reveal',
      v: MESSAGE_VERSION,
      run,
      key: runKey.toString('base64url'),
    }),
    'reveal message',
  );
}
