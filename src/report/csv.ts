/** The score report as RFC 4180 CSV, one row per subject in rank order. */
import { escapeTerminal } from '../core/terminal.js';
import type { ScoreReport, SubjectScore } from '../score/scores.js';

/**
 * Quotes when needed, and defuses spreadsheet formulas: a cell an attacker controls (registry, nativeId) that starts
 * with = + - @ or a control character gets a leading apostrophe (OWASP CSV injection guidance). The CSV also goes to
 * terminals (`scores --csv`): control and bidi characters are shown escaped.
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${escapeTerminal(value)}` : escapeTerminal(value);
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function renderScoresCsv(report: ScoreReport): string {
  const adapterIds = report.subjects[0]?.adapters.map((a) => a.adapterId) ?? [];
  return [scoresCsvHeader(adapterIds), ...report.subjects.map((s, i) => scoresCsvRow(s, i + 1, adapterIds))].join('');
}

/** The header line of the scores CSV (one `score_<adapter>` column per adapter), CRLF-terminated. */
export function scoresCsvHeader(adapterIds: readonly string[]): string {
  const header = [
    'rank',
    'subject',
    'name',
    'registry',
    'protocol',
    'native_id',
    'trust_score',
    'trust_confidence',
    ...adapterIds.map((id) => `score_${id}`),
    'stale_components',
    'latency_p50_ms',
    'latency_p95_ms',
    'signals',
    'runs',
    'publishers',
    'last_signal_at',
    'trust_score_config_version',
    'trust_score_updated_at',
  ];
  return csvLine(header);
}

/** One subject's line of the scores CSV, at `rank`. */
export function scoresCsvRow(s: SubjectScore, rank: number, adapterIds: readonly string[]): string {
  const totals = adapterIds.map((id) => s.adapters.find((a) => a.adapterId === id)?.total ?? null);
  const stale = Object.entries(s.components)
    .filter(([, c]) => c.status === 'stale')
    .map(([key]) => key)
    .join(' ');
  return csvLine([
    rank,
    s.subject,
    s.label ?? null,
    s.registry,
    s.protocol,
    s.nativeId,
    s.trustScores.total,
    s.trustConfidence,
    ...totals,
    stale,
    s.latency?.p50Ms ?? null,
    s.latency?.p95Ms ?? null,
    s.counts.signals,
    s.counts.runs,
    s.counts.publishers,
    s.counts.lastAt,
    s.trustScoreConfigVersion,
    s.trustScoreUpdatedAt,
  ]);
}

/** Cells as one CRLF-terminated line (RFC 4180). */
export function csvLine(cells: ReadonlyArray<string | number | null>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
