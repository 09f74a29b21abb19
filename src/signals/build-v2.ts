import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../evals/types.js';
import { hcs14Proto } from '../registry/uaid.js';
import { finishMessage, type BuiltMessage, type SignalContext } from './build.js';
import { questionHash, responseHashV2 } from './hashing.js';
import { failureReason } from './reasons.js';
import { PROTOCOL_ID } from './schemas.js';
import {
  MESSAGE_VERSION_V2,
  SIGNAL_IDS_V2,
  signalMessageV2Schema,
  type EvalDataV2,
  type ProbeDataV2,
  type SignalMessageV2,
} from './schemas-v2.js';
import { signalStatus } from './status.js';

const ANSWER_MAX = 16;

export function signalIdV2(result: AnyEvalResult): SignalMessageV2['signal'] {
  return result.kind === 'availability' ? SIGNAL_IDS_V2.availability : result.kind === 'math' ? SIGNAL_IDS_V2.math : SIGNAL_IDS_V2.science;
}

/**
 * One eval or probe result as a v2 signal message (also the unit the packer packs). As in v1, only the answer token
 * and keyed hashes leave the machine; v2 adds the reference status mapping (signalStatus), closed failure reasons,
 * a run-keyed response hash, no question hash for a question never asked, and UAID-vocabulary transports.
 * Throws MessageTooLargeError when the single message would not fit in one HCS message.
 */
export function buildSignalV2(result: AnyEvalResult, context: SignalContext): BuiltMessage<SignalMessageV2> {
  const sources = context.sources ?? (result.agent.source ? [result.agent.source] : undefined);
  const signal = signalIdV2(result);
  const message = {
    p: PROTOCOL_ID,
    op: 'signal',
    v: MESSAGE_VERSION_V2,
    signal,
    subject: result.agent.subject,
    status: signalStatus(result),
    fetchedAt: result.fetchedAt,
    run: context.run,
    ...(sources && sources.length > 0 ? { sources } : {}),
    data: result.kind === 'availability' ? probeData(result) : evalData(result, signal, context.runKey),
  };
  // Parsed for validation only: the loose schema would keep stray fields, and the builder must emit exactly these.
  signalMessageV2Schema.parse(message);
  return finishMessage(message as SignalMessageV2, 'v2 signal message');
}

function evalData(result: EvalResult, signal: string, runKey: Buffer): EvalDataV2 {
  const reason = failureReason(result);
  return {
    outcome: result.outcome,
    score: result.outcome === 'correct' ? 100 : 0,
    ...(result.outcome === 'skipped' ? {} : { questionHash: questionHash(runKey, result.questionId) }),
    ...(result.answer === null ? {} : { answer: result.answer.slice(0, ANSWER_MAX) }),
    ...(result.response === null ? {} : { responseHash: responseHashV2(runKey, signal, result.agent.subject, result.response) }),
    compliant: result.compliant,
    latencyMs: Math.max(0, Math.round(result.latencyMs)),
    grader: result.grader,
    transport: hcs14Proto(result.transport),
    ...(reason ? { reason } : {}),
  };
}

function probeData(result: ProbeEvalResult): ProbeDataV2 {
  const reason = failureReason(result);
  return {
    reachable: result.reachable,
    score: result.reachable ? 100 : 0,
    latencyMs: Math.max(0, Math.round(result.latencyMs)),
    transport: hcs14Proto(result.transport),
    ...(result.httpStatus !== undefined ? { httpStatus: result.httpStatus } : {}),
    ...(reason ? { reason } : {}),
  };
}
