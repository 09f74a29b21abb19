/**
 * The writer of format 3 (schema-v3.ts): an eval or probe result as a format-3 signal entry, a one-signal `op:
 * "signals"` message (the unit the packer merges, pack-v3.ts, and what `--pack none` sends), and the reveal. As in
 * v2, only the answer token and keyed hashes leave the machine: the question, its id and a reply that
 * said more than its answer never do.
 */
import type { AnyEvalResult, EvalResult, ProbeEvalResult } from '../evaluate/types.js';
import { hcs14Proto, parseUaid } from '../discover/uaid.js';
import { questionHash, responseHashV2 } from './hashing.js';
import { finishMessage, type BuiltMessage, type SignalContext } from './protocol.js';
import { failureReason } from './reasons.js';
import {
  FORMAT_ID_V3,
  REVEAL_OP,
  SIGNALS_OP,
  revealMessageV3Schema,
  signalEntryV3Schema,
  type RevealMessageV3,
  type SignalsMessageV3,
} from './schema-v3.js';
import { signalStatus } from './status.js';
import { ANSWER_MAX, agentPartsSchema, signalIdV2 } from './write.js';

/** A probe's HTTP status comes from the network: checked, as the agent's parts are (agentPartsSchema). */
const httpSchema = signalEntryV3Schema.shape.http;

/** A signal entry without its place in a message (`i`, `dt`): what the packer re-bases into each message. */
export interface SignalEntryBodyV3 {
  st?: string;
  score: number;
  outcome?: string;
  q?: string;
  a?: string;
  r?: string;
  ms?: number;
  reason?: string;
  http?: number;
}

/** The hs256 hashes of format 3 are v2's without the prefix. */
function bare(hash: string): string {
  return hash.slice(hash.indexOf(':') + 1);
}

/**
 * One result as a format-3 signal entry (less `i` and `dt`): status only when not ok, the reference status mapping
 * (signalStatus), failure reasons, run-keyed hashes, and `r` only when the reply was not exactly the answer (a
 * compliant reply is its answer `a`, so its hash would tell nothing more).
 */
export function signalEntryV3(result: AnyEvalResult, runKey: Buffer): SignalEntryBodyV3 {
  const status = signalStatus(result);
  const st = status === 'ok' ? {} : { st: status };
  const ms = Math.max(0, Math.round(result.latencyMs));
  const reason = failureReason(result);
  if (result.kind === 'availability') return probeEntry(result, st, ms, reason);
  return evalEntry(result, runKey, st, ms, reason);
}

function evalEntry(
  result: EvalResult,
  runKey: Buffer,
  st: { st?: string },
  ms: number,
  reason: string | undefined,
): SignalEntryBodyV3 {
  const { response, answer } = result;
  // Without `r` a reader takes the reply to be exactly `a`: only true for a compliant reply whose answer is whole.
  const hashed = response !== null && (!result.compliant || answer === null || answer.length > ANSWER_MAX);
  return {
    ...st,
    score: result.outcome === 'correct' ? 100 : 0,
    // A graded answer's score says it all (100 correct, 0 wrong): left out, it lets two subjects share a message.
    ...(result.outcome === 'correct' || result.outcome === 'wrong' ? {} : { outcome: result.outcome }),
    ...(result.outcome === 'skipped' ? {} : { q: bare(questionHash(runKey, result.questionId)) }),
    ...(answer === null ? {} : { a: answer.slice(0, ANSWER_MAX) }),
    ...(hashed ? { r: bare(responseHashV2(runKey, signalIdV2(result), result.agent.subject, response)) } : {}),
    ms,
    ...(reason ? { reason } : {}),
  };
}

function probeEntry(
  result: ProbeEvalResult,
  st: { st?: string },
  ms: number,
  reason: string | undefined,
): SignalEntryBodyV3 {
  const status = result.httpStatus;
  const failed = !result.reachable || (status !== undefined && (status < 200 || status >= 400));
  return {
    ...st,
    score: result.reachable ? 100 : 0,
    ms,
    ...(reason ? { reason } : {}),
    ...(failed && status !== undefined ? { http: httpSchema.parse(status)! } : {}),
  };
}

/** One signal and what a message says once for it (run, subject, transport, sources): what bodies are built of. */
export interface SignalPartsV3 {
  run: string;
  /** fetchedAt, ms. */
  at: number;
  fetchedAt: string;
  signal: string;
  subject: string;
  tr: string;
  sources: string[];
  /** The signal entry without `i` and `dt`. */
  entry: SignalEntryBodyV3 | Record<string, unknown>;
}

/**
 * The `op: "signals"` body of signals of one run, grouped by subject in order of first appearance (`order`: the
 * signals in index order). What every subject shares is written once: the sources table alone when every subject has
 * exactly its entries, and a subject's transport only when its UAID's `proto` does not say it.
 */
export function signalsBodyV3<T extends SignalPartsV3>(parts: readonly T[]): { body: SignalsMessageV3; order: T[] } {
  const first = parts[0];
  if (!first) throw new RangeError('a message needs at least one signal');
  const ids: string[] = [];
  const src: string[] = [];
  const groups = new Map<string, { entry: SignalsMessageV3['subjects'][number]; members: T[]; sources: string[] }>();
  for (const u of parts) {
    if (u.run !== first.run) throw new RangeError('a message holds the signals of one run');
    const groupKey = `${u.subject}\u0000${u.tr}\u0000${u.sources.join('\u0000')}`;
    let group = groups.get(groupKey);
    if (!group) {
      const refs = u.sources.map((ref) => indexIn(src, ref));
      const tr = parseUaid(u.subject).proto === u.tr ? {} : { tr: u.tr };
      group = { entry: { id: u.subject, src: refs, ...tr, sig: [] }, members: [], sources: u.sources };
      groups.set(groupKey, group);
    }
    group.entry.sig.push({ i: indexIn(ids, u.signal), dt: u.at - first.at, ...u.entry } as never);
    group.members.push(u);
  }
  const all = src.join('\u0000');
  const shared = [...groups.values()].every((g) => g.sources.join('\u0000') === all);
  const body: SignalsMessageV3 = {
    fmt: FORMAT_ID_V3,
    op: SIGNALS_OP,
    run: first.run,
    at: first.fetchedAt,
    ...(src.length > 0 ? { src } : {}),
    ids,
    subjects: [...groups.values()].map(({ entry }) => {
      if (!shared) return entry;
      const { src: _src, ...rest } = entry;
      return rest;
    }),
  };
  return { body, order: [...groups.values()].flatMap((g) => g.members) };
}

function indexIn(table: string[], value: string): number {
  const i = table.indexOf(value);
  return i >= 0 ? i : table.push(value) - 1;
}

/**
 * One result as a one-signal format-3 message: what `--pack none` sends, and the unit the journal keeps and the
 * packer merges. Throws MessageTooLargeError when it would not fit one HCS message.
 */
export function buildSignalV3(result: AnyEvalResult, context: SignalContext): BuiltMessage<SignalsMessageV3> {
  const sources = context.sources ?? (result.agent.source ? [result.agent.source] : undefined);
  agentPartsSchema.parse({ subject: result.agent.subject, sources });
  const at = Date.parse(result.fetchedAt);
  const { body } = signalsBodyV3([
    {
      run: context.run,
      at,
      fetchedAt: result.fetchedAt,
      signal: signalIdV2(result),
      subject: result.agent.subject,
      tr: hcs14Proto(result.transport),
      sources: sources ?? [],
      entry: signalEntryV3(result, context.runKey),
    },
  ]);
  return finishMessage(body, 'format-3 signal message');
}

export type RevealInputV3 = Omit<RevealMessageV3, 'fmt' | 'op'>;

/** The format-3 reveal of a run: the v2 reveal's fields under the format-3 envelope. */
export function buildRevealMessageV3(input: RevealInputV3): BuiltMessage<RevealMessageV3> {
  const message = revealMessageV3Schema.parse({ fmt: FORMAT_ID_V3, op: REVEAL_OP, ...input });
  return finishMessage(message, 'reveal message');
}
