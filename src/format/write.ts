/**
 * The writer of the current on-chain format (v2): eval and probe results as signals, score records, the reveal.
 * Packing many of them into one message is pack.ts. As in v1, only the answer token and keyed hashes leave the
 * machine: the question, its id and the response never do.
 */
import { z } from 'zod';
import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../evaluate/types.js';
import { hcs14Proto } from '../discover/uaid.js';
import { questionHash, responseHashV2 } from './hashing.js';
import { PROTOCOL_ID, finishMessage, type BuiltMessage, type SignalContext } from './protocol.js';
import { failureReason } from './reasons.js';
import { signalEnvelopeShape } from './schema-v1.js';
import {
  MESSAGE_VERSION_V2,
  REVEAL_MESSAGE_VERSION,
  SCORE_MESSAGE_VERSION,
  SIGNAL_IDS_V2,
  probeDataV2Schema,
  revealMessageV2Schema,
  scoreMessageV2Schema,
  type EvalDataV2,
  type ProbeDataV2,
  type RevealMessageV2,
  type ScoreExplanation,
  type ScoreMessageV2,
  type SignalMessageV2,
} from './schema-v2.js';
import { signalStatus } from './status.js';

/** The longest answer token a signal carries, in every format. */
export const ANSWER_MAX = 16;

/**
 * The parts of a signal that come from outside the process — the agent's subject and sources (a registry, a file, a
 * library caller) and a probe's HTTP status (the network) — are checked against the schema; the rest is made here
 * and typed (test/format/write.test.ts validates every built signal).
 */
export const agentPartsSchema = z.object({
  subject: signalEnvelopeShape.subject,
  sources: signalEnvelopeShape.sources,
});
const httpStatusSchema = probeDataV2Schema.shape.httpStatus;

export function signalIdV2(result: AnyEvalResult): SignalMessageV2['signal'] {
  if (result.kind === 'availability') return SIGNAL_IDS_V2.availability;
  return result.kind === 'math' ? SIGNAL_IDS_V2.math : SIGNAL_IDS_V2.science;
}

/**
 * One eval or probe result as a v2 signal message (also the unit the packer packs): the reference status mapping
 * (signalStatus), closed failure reasons, a run-keyed response hash, no question hash for a question never asked,
 * and UAID-vocabulary transports. Throws MessageTooLargeError when the single message would not fit one HCS message.
 */
export function buildSignalV2(result: AnyEvalResult, context: SignalContext): BuiltMessage<SignalMessageV2> {
  const sources = context.sources ?? (result.agent.source ? [result.agent.source] : undefined);
  agentPartsSchema.parse({ subject: result.agent.subject, sources });
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
  const { response } = result;
  return {
    outcome: result.outcome,
    score: result.outcome === 'correct' ? 100 : 0,
    ...(result.outcome === 'skipped' ? {} : { questionHash: questionHash(runKey, result.questionId) }),
    ...(result.answer === null ? {} : { answer: result.answer.slice(0, ANSWER_MAX) }),
    ...(response === null ? {} : { responseHash: responseHashV2(runKey, signal, result.agent.subject, response) }),
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

export interface ScoreRecordInput {
  subject: string;
  trustScoreConfigVersion: number;
  trustScoreUpdatedAt: string;
  trustConfidence?: number;
  /** The composite, as computed from the explanation's adapters (score/aggregate.ts). */
  total: number;
  explanation: ScoreExplanation;
}

/**
 * Builds a v2 score record from its explanation: `trustScores` holds the total and every component that has a value,
 * `trustScore` mirrors the total; `explain: false` leaves the explanation itself out (HCS-25 makes it optional).
 * Throws MessageTooLargeError when it would not fit one HCS message.
 */
export function buildScoreMessageV2(
  input: ScoreRecordInput,
  options: { explain?: boolean } = {},
): BuiltMessage<ScoreMessageV2> {
  const { total } = input;
  const trustScores: Record<string, number> = { total };
  for (const adapter of input.explanation.adapters) {
    for (const c of adapter.c) if (c.v !== null) trustScores[c.k] = c.v;
  }
  const message = scoreMessageV2Schema.parse({
    p: PROTOCOL_ID,
    op: 'score',
    v: SCORE_MESSAGE_VERSION,
    subject: input.subject,
    trustScore: total,
    trustScores,
    trustScoreConfigVersion: input.trustScoreConfigVersion,
    trustScoreUpdatedAt: input.trustScoreUpdatedAt,
    ...(input.trustConfidence !== undefined ? { trustConfidence: input.trustConfidence } : {}),
    ...(options.explain === false ? {} : { explanation: input.explanation }),
  });
  return finishMessage(message, 'score message');
}

export type RevealInput = Omit<RevealMessageV2, 'p' | 'op' | 'v'>;

/** The reveal of a run: everything that re-derives its questions (schema-v2.ts). */
export function buildRevealMessageV2(input: RevealInput): BuiltMessage<RevealMessageV2> {
  const message = revealMessageV2Schema.parse({ p: PROTOCOL_ID, op: 'reveal', v: REVEAL_MESSAGE_VERSION, ...input });
  return finishMessage(message, 'reveal message');
}
