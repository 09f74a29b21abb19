/** How subjects are named in every view: escaped, capped, beside their UAID. Subjects come from public topics. */
import { escapeTerminal } from '../core/terminal.js';
import { parseUaid, type UaidRouting } from '../discover/uaid.js';

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
  return uaidLabel(parseUaid(subject), subject);
}

/** `subjectLabel` of a subject already parsed. */
export function uaidLabel(parts: UaidRouting, subject: string): string {
  return parts.nativeId ?? (parts.target ? `${parts.target}:${parts.id}` : subject);
}
