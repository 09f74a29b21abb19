/** Plain-text views for a terminal: the ranked score table and the signal list. */
import {
  adapterState,
  printable,
  protocolName,
  scoreLabel,
  signalOutcome,
  signalShortName,
  subjectLabel,
} from './display.js';
import type { ScoreReport, SubjectScore } from '../score/scores.js';
import { LOW_EVIDENCE_COUNT } from '../score/evidence.js';
import type { ReadSignal, RejectedMessage } from '../read/types.js';

interface Column {
  header: string;
  align: 'left' | 'right';
}

/** Rows under their headers, each column as wide as its widest cell: nothing is cut. */
function layout(columns: readonly Column[], rows: readonly string[][]): string[] {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (columns[i]!.align === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)];
}

/** `availability` → `AVAILABILITY`, `simple-math` → `MATH`: the adapter id's last segment. */
export function adapterHeader(adapterId: string): string {
  return (adapterId.split('-').pop() ?? adapterId).toUpperCase();
}

/** One adapter cell: its total, `*` when a component is stale, `n/a` when not applicable, `-` when it had no output. */
function adapterCell(subject: SubjectScore, adapterId: string): string {
  const state = adapterState(subject, adapterId);
  if (state.kind === 'not-applicable') return 'n/a';
  if (state.kind === 'no-output') return '-';
  return `${state.total.toFixed(1)}${state.stale ? '*' : ''}`;
}

const BASIS_WORD = { evals: 'evals', 'availability-only': 'avail', none: 'none' } as const;

/** What the score rests on (`evals`, `avail` alone, `none`), `!` when a component has few observations (low evidence). */
function evidenceCell(subject: SubjectScore): string {
  const e = subject.evidenceStrength;
  return `${BASIS_WORD[e.basis]}${e.lowEvidence && e.basis !== 'none' ? '!' : ''}`;
}

export interface TableOptions {
  /** The terminal's width: a wider table leaves out the SUBJECT column, then cuts names at their end. Default: none. */
  width?: number;
}

/**
 * The ranked table (the report is already sorted by score). Identifiers are never cut: on a narrow terminal the
 * SUBJECT column (native ids) is left out first, with a line saying so, and only then names lose their end.
 */
export function renderScoreTable(report: ScoreReport, options: TableOptions = {}): string {
  const adapterIds = report.subjects[0]?.adapters.map((a) => a.adapterId) ?? [];
  const columns: Column[] = [
    { header: '#', align: 'right' },
    { header: 'SCORE', align: 'right' },
    { header: 'CONF', align: 'right' },
    { header: 'EVID', align: 'left' },
    ...adapterIds.map((id): Column => ({ header: adapterHeader(id), align: 'right' })),
    { header: 'P50/P95 MS', align: 'right' },
    { header: 'PROTOCOL', align: 'left' },
    { header: 'NAME', align: 'left' },
    { header: 'SUBJECT', align: 'left' },
  ];
  const rows = report.subjects.map((s, i) => [
    String(i + 1),
    s.trustScores.total.toFixed(2),
    s.trustConfidence.toFixed(2),
    evidenceCell(s),
    ...adapterIds.map((id) => adapterCell(s, id)),
    s.latency ? `${s.latency.p50Ms}/${s.latency.p95Ms}` : '-',
    protocolName(s.protocol),
    // A name is someone's claim: the native id stays beside it.
    s.label ? scoreLabel(s) : '-',
    printable(subjectLabel(s.subject)),
  ]);
  let lines = layout(columns, rows);
  const notes: string[] = [];
  const width = options.width;
  if (width !== undefined && lines.some((l) => l.length > width)) {
    lines = layout(
      columns.slice(0, -1),
      rows.map((r) => r.slice(0, -1)),
    );
    notes.push('SUBJECT (native ids) left out to fit the terminal: --csv or --json shows every column.');
    const widest = Math.max(...lines.map((l) => l.length));
    if (widest > width) {
      const nameWidth = Math.max(8, Math.max(...rows.map((r) => r.at(-2)!.length)) - (widest - width));
      lines = layout(
        columns.slice(0, -1),
        rows.map((r) => [...r.slice(0, -2), cutEnd(r.at(-2)!, nameWidth)]),
      );
    }
  }
  if (report.subjects.length === 0) lines.push('(no signals to score)');
  const prose = [...notes, ...summaryLines(report)].map((line) => wrap(line, (width ?? 100) - 1));
  return `${[...lines, '', ...prose].join('\n')}\n`;
}

function cutEnd(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function summaryLines(report: ScoreReport): string[] {
  const rejected = Object.entries(report.counts.rejected);
  const lines = [
    `${report.counts.subjects} subjects, ${report.counts.signals} signals${report.topic ? `, topic ${report.topic}` : ''}, ` +
      `config v${report.trustScoreConfigVersion}, at ${report.generatedAt}`,
    'CONF = trustConfidence 0-1; * stale; n/a not applicable; - no output',
    `EVID = what the score rests on: evals, avail (availability alone) or none; ! low evidence (a component has fewer than ${LOW_EVIDENCE_COUNT} observations)`,
  ];
  if (rejected.length > 0) lines.push(`Rejected: ${rejected.map(([r, n]) => `${r} ${n}`).join(', ')}.`);
  const unknown = Object.entries(report.counts.unknown ?? {});
  if (unknown.length > 0)
    lines.push(`Not known to this version (skipped or ignored): ${unknown.map(([u, n]) => `${u} ${n}`).join(', ')}.`);
  lines.push(
    report.publishers.filter === 'none'
      ? 'WARNING: no publisher allow-list; signals from any paying account were accepted (use --publisher).'
      : `Publishers: ${report.publishers.accounts.join(', ')}.`,
  );
  return lines;
}

/** Wraps long prose at word boundaries to the terminal width. */
function wrap(text: string, width: number): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = `  ${word}`;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out.join('\n');
}

/** Signal lines stream as they are read: fixed widths for the short columns, the subject last and whole. */
const SIGNAL_WIDTHS = { seq: 6, at: 14, payer: 11, signal: 8, result: 12, ms: 6 } as const;

export function renderSignalHeader(): string {
  const w = SIGNAL_WIDTHS;
  return [
    'SEQ'.padStart(w.seq),
    'CONSENSUS UTC'.padEnd(w.at),
    'PAYER'.padEnd(w.payer),
    'SIGNAL'.padEnd(w.signal),
    'RESULT'.padEnd(w.result),
    'MS'.padStart(w.ms),
    'SUBJECT',
  ].join('  ');
}

/**
 * One line per signal: sequence, consensus time (MM-DD hh:mm:ss), publisher, signal, outcome, latency, then the
 * subject (its name from the registry when known, and its native id) and the reason of a failure. Nothing is cut.
 */
export function renderSignalLine(s: ReadSignal, name?: string): string {
  const w = SIGNAL_WIDTHS;
  const m = s.message;
  const { word, reason } = signalOutcome(m);
  const subject = printable(subjectLabel(m.subject));
  return [
    String(s.sequenceNumber).padStart(w.seq),
    s.consensusAt.slice(5, 19).replace('T', ' ').padEnd(w.at),
    s.payerAccountId.padEnd(w.payer),
    printable(signalShortName(m.signal)).padEnd(w.signal),
    word.padEnd(w.result),
    String(m.data.latencyMs).padStart(w.ms),
    `${name ? `${printable(name)} · ` : ''}${subject}${reason && reason !== word ? ` (${printable(reason)})` : ''}`,
  ].join('  ');
}

export function renderRejectedLine(r: RejectedMessage): string {
  return printable(
    `${String(r.sequenceNumber).padStart(6)} rejected ${r.reason} (payer ${r.payerAccountId || '?'}): ${r.detail}`,
  ).slice(0, 200);
}
