import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../evals/types.js';
import { hcs14Proto } from '../registry/uaid.js';
import { finishMessage, type BuiltMessage, type SignalContext } from './build.js';
import { memoQuestionHash, responseHashV2 } from './hashing.js';
import { failureReason } from './reasons.js';
import { z } from 'zod';
import { PROTOCOL_ID, signalEnvelopeShape } from './schemas.js';
import {
  MESSAGE_VERSION_V2,
  SIGNAL_IDS_V2,
  probeDataV2Schema,
  type EvalDataV2,
  type ProbeDataV2,
  type SignalMessageV2,
} from './schemas-v2.js';
import { signalStatus } from './status.js';

const ANSWER_MAX = 16;

/**
 * The parts of a signal that come from outside the process — the agent's subject and sources (a registry, a file, a
 * library caller) and a probe's HTTP status (the network) — are checked against the v2 schema; the rest is made here
 * and typed (test/signals/v2.test.ts validates every built signal). A whole-message parse per signal was the costliest
 * step of building, so an agent's parts are checked once, on its first signal.
 */
const agentPartsSchema = z.object({ subject: signalEnvelopeShape.subject, sources: signalEnvelopeShape.sources });
const httpStatusSchema = probeDataV2Schema.shape.httpStatus;
const checkedAgents = new WeakSet<object>();

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
  if (context.sources || !checkedAgents.has(result.agent)) {
    agentPartsSchema.parse({ subject: result.agent.subject, sources });
    if (!context.sources) checkedAgents.add(result.agent);
  }
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
  return finishMessage(message as SignalMessageV2, 'v2 signal message');
}

function evalData(result: EvalResult, signal: string, runKey: Buffer): EvalDataV2 {
  const reason = failureReason(result);
  return {
    outcome: result.outcome,
    score: result.outcome === 'correct' ? 100 : 0,
    ...(result.outcome === 'skipped' ? {} : { questionHash: memoQuestionHash(runKey, result.questionId) }),
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
    ...(result.httpStatus !== undefined ? { httpStatus: httpStatusSchema.parse(result.httpStatus)! } : {}),
    ...(reason ? { reason } : {}),
  };
}
