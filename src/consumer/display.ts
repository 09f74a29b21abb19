/** Small helpers shared by the table, CSV and HTML views. Subjects come from public topics: treat them as hostile. */
import { escapeTerminal } from '../core/terminal.js';
import type { SubjectScore } from './scores.js';
import type { ReadSignal } from './types.js';
import { parseUaid } from './uaid.js';

/** Characters that could drive a terminal or spoof text direction, shown escaped (the CLI still imports this name). */
export const printable = (text: string): string => escapeTerminal(text);

/** Cuts the middle out of a long string: `uaid:aid:2ayF…;proto=a2a`. */
export function ellipsize(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return text.slice(0, max);
  const head = Math.ceil((max - 1) * 0.6);
  return `${text.slice(0, head)}…${text.slice(text.length - (max - 1 - head))}`;
}

/** Longest display name shown; longer ones lose their middle. */
export const MAX_NAME_LENGTH = 48;

/**
 * A name from a registry or a file as it may be shown: trimmed, escaped, capped; undefined when nothing is left.
 * Whoever wrote the name chose it: it is shown beside the UAID, never instead of it.
 */
export function displayName(raw: string): string | undefined {
  const text = printable(raw.trim());
  return text === '' ? undefined : ellipsize(text, MAX_NAME_LENGTH);
}

/** What people recognise a subject by: its native id (endpoint host, Hedera account) when the UAID has one. */
export function subjectLabel(subject: string): string {
  const parts = parseUaid(subject);
  return parts.nativeId ?? (parts.target ? `${parts.target}:${parts.id}` : subject);
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
  if (!adapter || !adapter.applicable) return { kind: 'not-applicable' };
  if (adapter.total === null) return { kind: 'no-output' };
  const components = Object.values(subject.components).filter((c) => c.adapterId === adapterId);
  return {
    kind: 'total',
    total: adapter.total,
    stale: components.some((c) => c.status === 'stale'),
    // Nothing measured: only the synthesized default or unavailable components.
    missing: components.length > 0 && components.every((c) => c.synthesized === true || (c.status !== 'ok' && c.status !== 'stale')),
  };
}

/** What a signal observed, in the words the views use (the same word wherever it appears). */
export type OutcomeWord = 'correct' | 'wrong' | 'unparseable' | 'timeout' | 'unreachable' | 'error' | 'not measured' | 'reachable';

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
    case 'wrong':
    case 'unparseable':
    case 'timeout':
      return withReason(m.data.outcome);
    case 'empty':
      return withReason('unparseable');
    case 'skipped':
      return withReason('not measured');
    case 'upstream-error':
      return withReason('error');
    case 'error':
      return withReason(reason && ANSWERED_FAILURE.test(reason) ? 'error' : 'unreachable');
  }
}

/** `simple-evals.a2a_math` → `math`, `availability.probe` → `probe`: a signal id as a column name. */
export function signalShortName(id: string): string {
  return (id.split('.').pop() ?? id).replace(/^a2a_/, '');
}
