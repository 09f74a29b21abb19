/** Plain-text views for an 80-column terminal: the ranked score table and the signal list. */
import { adapterState, ellipsize, printable, scoreLabel, subjectLabel } from './display.js';
import type { ScoreReport, SubjectScore } from '../score/scores.js';
import type { ReadSignal, RejectedMessage } from '../read/types.js';

export const TERMINAL_WIDTH = 80;

interface Column {
  header: string;
  width: number;
  align: 'left' | 'right';
}

function renderRow(columns: Column[], cells: string[]): string {
  return columns
    .map((c, i) => {
      const cell = cells[i] ?? '';
      return c.align === 'right' ? cell.padStart(c.width) : cell.padEnd(c.width);
    })
    .join(' ')
    .trimEnd();
}

/** `availability` → `AVAIL`, `simple-math` → `MATH`: the adapter id's last segment, at most 5 letters. */
export function adapterHeader(adapterId: string): string {
  const last = adapterId.split('-').pop() ?? adapterId;
  return last.slice(0, 5).toUpperCase();
}

/** One adapter cell: its total, `*` when a component is stale, `n/a` when not applicable, `-` when it had no output. */
function adapterCell(subject: SubjectScore, adapterId: string): string {
  const state = adapterState(subject, adapterId);
  if (state.kind === 'not-applicable') return 'n/a';
  if (state.kind === 'no-output') return '-';
  return `${state.total.toFixed(1)}${state.stale ? '*' : ''}`;
}

/**
 * The ranked table (the report is already sorted by score). Fits 80 columns with up to three adapters; the subject
 * column takes what is left, at least 16 characters.
 */
export function renderScoreTable(report: ScoreReport): string {
  const adapterIds = report.subjects[0]?.adapters.map((a) => a.adapterId) ?? [];
  const fixedColumns: Column[] = [
    { header: '#', width: 3, align: 'right' },
    { header: 'SCORE', width: 6, align: 'right' },
    { header: 'CONF', width: 4, align: 'right' },
    ...adapterIds.map((id): Column => ({ header: adapterHeader(id), width: 6, align: 'right' })),
    { header: 'P50/P95 ms', width: 10, align: 'right' },
  ];
  const used = fixedColumns.reduce((sum, c) => sum + c.width + 1, 0);
  const columns: Column[] = [
    ...fixedColumns,
    { header: 'SUBJECT', width: Math.max(16, TERMINAL_WIDTH - 1 - used), align: 'left' },
  ];
  const subjectWidth = columns[columns.length - 1]!.width;

  const lines = [
    renderRow(
      columns,
      columns.map((c) => c.header),
    ),
  ];
  report.subjects.forEach((s, i) => {
    const latency = s.latency ? `${s.latency.p50Ms}/${s.latency.p95Ms}` : '-';
    // A name is someone's claim: the native id stays beside it.
    const label = `${s.label ? `${scoreLabel(s)} · ${subjectLabel(s.subject)}` : scoreLabel(s)}${s.protocol ? ` (${s.protocol})` : ''}`;
    lines.push(
      renderRow(columns, [
        String(i + 1),
        s.trustScores.total.toFixed(2),
        s.trustConfidence.toFixed(2),
        ...adapterIds.map((id) => adapterCell(s, id)),
        ellipsize(latency, 10),
        ellipsize(printable(label), subjectWidth),
      ]),
    );
  });
  if (report.subjects.length === 0) lines.push('(no signals to score)');
  lines.push('');
  lines.push(...summaryLines(report));
  return `${lines.join('\n')}\n`;
}

function summaryLines(report: ScoreReport): string[] {
  const rejected = Object.entries(report.counts.rejected);
  const lines = [
    `${report.counts.subjects} subjects, ${report.counts.signals} signals${report.topic ? `, topic ${report.topic}` : ''}, ` +
      `config v${report.trustScoreConfigVersion}, at ${report.generatedAt}`,
    'CONF = trustConfidence 0-1; * stale; n/a not applicable; - no output',
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
  return lines.map((line) => wrap(line));
}

/** Wraps long prose at word boundaries to the terminal width. */
function wrap(text: string, width = TERMINAL_WIDTH - 1): string {
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

const SIGNAL_COLUMNS: Column[] = [
  { header: 'SEQ', width: 6, align: 'right' },
  { header: 'CONSENSUS UTC', width: 14, align: 'left' },
  { header: 'PAYER', width: 11, align: 'left' },
  { header: 'SIGNAL', width: 7, align: 'left' },
  { header: 'RESULT', width: 15, align: 'left' },
];
const SIGNAL_SUBJECT: Column = {
  header: 'SUBJECT',
  width: TERMINAL_WIDTH - 1 - SIGNAL_COLUMNS.reduce((sum, c) => sum + c.width + 1, 0),
  align: 'left',
};

export function renderSignalHeader(): string {
  return renderRow(
    [...SIGNAL_COLUMNS, SIGNAL_SUBJECT],
    [...SIGNAL_COLUMNS, SIGNAL_SUBJECT].map((c) => c.header),
  );
}

/** One line per signal: sequence, consensus time (MM-DD hh:mm:ss), publisher, signal, result, subject. */
export function renderSignalLine(s: ReadSignal): string {
  const m = s.message;
  const result = 'reachable' in m.data ? (m.data.reachable ? 'up' : `down/${m.status}`) : m.data.outcome;
  return renderRow(
    [...SIGNAL_COLUMNS, SIGNAL_SUBJECT],
    [
      String(s.sequenceNumber),
      s.consensusAt.slice(5, 19).replace('T', ' '),
      ellipsize(s.payerAccountId, 11),
      (m.signal.split('.').pop() ?? m.signal).slice(0, 7),
      ellipsize(`${result} ${m.data.latencyMs}ms`, 15),
      ellipsize(printable(subjectLabel(m.subject)), SIGNAL_SUBJECT.width),
    ],
  );
}

export function renderRejectedLine(r: RejectedMessage): string {
  return printable(
    `${String(r.sequenceNumber).padStart(6)} rejected ${r.reason} (payer ${r.payerAccountId || '?'}): ${r.detail}`,
  ).slice(0, 200);
}
