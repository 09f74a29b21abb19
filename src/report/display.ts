/** Small helpers shared by the table, CSV and HTML views. Subjects come from public topics: treat them as hostile. */
import type { SubjectScore } from '../score/scores.js';
import type { ReadSignal } from '../read/types.js';

export { printable, ellipsize, MAX_NAME_LENGTH, displayName, subjectLabel } from '../read/labels.js';
import { ellipsize, printable, subjectLabel } from '../read/labels.js';

/** The protocol as users name it: an HTTP agent's UAID says `rest`. */
export function protocolName(proto: string | null): string {
  return proto === 'rest' ? 'http' : (proto ?? '');
}

/**
 * A UAID short enough for a table row that still tells subjects apart: what distinguishes agents of one registry is
 * the native id at the end, so that is kept whole (up to `max`) and the identifier's head loses its middle instead.
 */
export function compactUaid(subject: string, max = 80): string {
  const at = subject.indexOf(';nativeId=');
  if (subject.length <= max || at < 0) return ellipsize(subject, max);
  const tail = ellipsize(subject.slice(at + 1), max - 21);
  return `${subject.slice(0, Math.min(at, 20))}…${tail}`;
}

/** A scored subject's display name: the caller's label, else the UAID's native id. */
export function scoreLabel(s: Pick<SubjectScore, 'subject' | 'label'>): string {
  return printable(s.label || subjectLabel(s.subject));
}

/** How one adapter stands for one subject, for the views: not applicable, no output, or a total with flags. */
export type AdapterState =
  | { kind: 'not-applicable' }
  | { kind: 'no-output' }
  | { kind: 'total'; total: number; stale: boolean; missing: boolean };

export function adapterState(subject: SubjectScore, adapterId: string): AdapterState {
  const adapter = subject.adapters.find((a) => a.adapterId === adapterId);
  if (!adapter?.applicable) return { kind: 'not-applicable' };
  if (adapter.total === null) return { kind: 'no-output' };
  const components = Object.values(subject.components).filter((c) => c.adapterId === adapterId);
  return {
    kind: 'total',
    total: adapter.total,
    stale: components.some((c) => c.status === 'stale'),
    // Nothing measured: only the synthesized default or unavailable components.
    missing:
      components.length > 0 &&
      components.every((c) => c.synthesized === true || (c.status !== 'ok' && c.status !== 'stale')),
  };
}

/** What a signal observed, in the words the views use (the same word wherever it appears). */
export type OutcomeWord =
  | 'correct'
  | 'wrong'
  | 'unparseable'
  | 'timeout'
  | 'unreachable'
  | 'error'
  | 'not measured'
  | 'reachable';

/** Failures that prove the agent answered: it was reachable, and then failed. */
const ANSWERED_FAILURE = /^(http-|rate-limited|auth-required|too-large|bad-body|protocol-error|agent-error)/;

/** A signal's outcome word and, for a failure, its reason code (as published; v1 codes are free-form but short). */
export function signalOutcome(m: ReadSignal['message']): { word: OutcomeWord; reason?: string } {
  const reason = m.data.reason ?? undefined;
  const withReason = (word: OutcomeWord) => (reason ? { word, reason } : { word });
  if ('reachable' in m.data) {
    if (m.data.reachable) return { word: 'reachable' };
    return withReason(reason === 'timeout' || (!reason && m.status === 'timeout') ? 'timeout' : 'unreachable');
  }
  switch (m.data.outcome) {
    case 'correct':
      return withReason('correct');
    case 'wrong':
      return withReason('wrong');
    case 'unparseable':
    case 'empty':
      return withReason('unparseable');
    case 'timeout':
      return withReason('timeout');
    case 'skipped':
      return withReason('not measured');
    case 'upstream-error':
      return withReason('error');
    case 'error':
      return withReason(reason && ANSWERED_FAILURE.test(reason) ? 'error' : 'unreachable');
    default:
      // An outcome a later version defines: its status and score say what was observed.
      if (m.status === 'ok') return withReason(m.data.score === 100 ? 'correct' : 'wrong');
      return withReason(m.status === 'timeout' || m.status === 'error' ? m.status : 'not measured');
  }
}

/** `simple-evals.a2a_math` → `math`, `availability.probe` → `probe`: a signal id as a column name. */
export function signalShortName(id: string): string {
  return (id.split('.').pop() ?? id).replace(/^a2a_/, '');
}
