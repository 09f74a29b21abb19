/**
 * What the reader yields (read/reader.ts, and the serve store, which indexes the same) as the verification
 * library takes it: field picks only, no reading or validating of its own.
 */
import type { ReadRecord, ReadSignal } from '../read/types.js';
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
    payer: s.payerAccountId,
  };
}

/** A reveal record (v1: run and key; v2: everything that re-derives the questions) as the library takes it. */
export function revealOf(r: ReadRecord): VerifiableReveal[] {
  if (r.kind !== 'reveal' || !r.validated) return [];
  const m = r.message as unknown as Omit<VerifiableReveal, 'sequenceNumber' | 'payer'>;
  return [{ ...m, sequenceNumber: r.sequenceNumber, payer: r.payerAccountId }];
}
