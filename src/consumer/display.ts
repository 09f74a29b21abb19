/** Small helpers shared by the table, CSV and HTML views. Subjects come from public topics: treat them as hostile. */
import { escapeTerminal } from '../core/terminal.js';
import type { SubjectScore } from './scores.js';
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
