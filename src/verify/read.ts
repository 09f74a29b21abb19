/**
 * What the reader yields (read/reader.ts, and the serve store, which indexes the same) as the verification
 * library takes it: field picks only, no reading or validating of its own.
 */
import type { ReadRecord, ReadSignal, RejectedMessage } from '../read/types.js';
import type { Equivocation } from './findings.js';
import type { VerifiableReveal, VerifiableSignal } from './signals.js';

export function verifiableSignal(s: ReadSignal): VerifiableSignal {
  const { subject, signal, run, status, data } = s.message;
  return {
    subject,
    signal,
    run,
    status,
    data,
    sequenceNumber: s.sequenceNumber,
    index: s.index,
    consensusTimestamp: s.consensusTimestamp,
    payer: s.payerAccountId,
  };
}

/** A reveal record (v1: run and key; v2: everything that re-derives the questions) as the library takes it. */
export function revealOf(r: ReadRecord): VerifiableReveal[] {
  if (r.kind !== 'reveal' || !r.validated) return [];
  const m = r.message as unknown as Omit<VerifiableReveal, 'sequenceNumber' | 'consensusTimestamp' | 'payer'>;
  return [
    { ...m, sequenceNumber: r.sequenceNumber, consensusTimestamp: r.consensusTimestamp, payer: r.payerAccountId },
  ];
}

/** A conflicting copy the reader rejected (reason `conflict`), as the library reports it; anything else: none. */
export function equivocationOf(r: RejectedMessage): Equivocation[] {
  if (r.reason !== 'conflict' || !r.conflict) return [];
  const { firstSequence, ...signal } = r.conflict;
  return [
    {
      ...signal,
      payer: r.payerAccountId,
      sequenceNumber: r.sequenceNumber,
      ...(r.index !== undefined ? { index: r.index } : {}),
      firstSequence,
    },
  ];
}
