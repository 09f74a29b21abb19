/**
 * A subject's per-publisher table for its drill-down: when several accounts publish about one subject, each one's
 * signal count, first and last signal, and the score from its signals alone, so a reader sees whose reports the
 * total mixes. Every string is escaped.
 */
import { printable } from './display.js';
import { esc, scoreColor } from './svg.js';

export interface PublisherSummary {
  publisher: string;
  signals: number;
  firstAt: string;
  lastAt: string;
  score: { trustScores: { total: number }; trustConfidence: number } | null;
}

/** The table, or nothing when fewer than two publishers are known for the subject. */
export function publisherTable(rows: readonly PublisherSummary[] | undefined): string {
  if (!rows || rows.length < 2) return '';
  const time = (iso: string) => esc(iso.slice(0, 16).replace('T', ' '));
  const body = rows
    .map((r) => {
      const score = r.score
        ? `<span class="pill" style="background:${scoreColor(r.score.trustScores.total)}">${r.score.trustScores.total.toFixed(2)}</span>`
        : '<span class="muted">–</span>';
      return (
        `<tr><td><code>${esc(printable(r.publisher))}</code></td><td class="num" data-label="signals">${r.signals}</td>` +
        `<td class="nowrap" data-label="first">${time(r.firstAt)}</td><td class="nowrap" data-label="last">${time(r.lastAt)}</td>` +
        `<td data-label="score">${score}</td><td class="num" data-label="confidence">${r.score ? r.score.trustConfidence.toFixed(2) : '–'}</td></tr>`
      );
    })
    .join('');
  return (
    `<div class="sub">By publisher <span class="muted">(${rows.length} accounts; each score from its signals alone)</span></div>` +
    '<div class="tablewrap flat"><table class="publishers stack"><thead><tr><th>publisher</th><th>signals</th><th>first (UTC)</th><th>last (UTC)</th><th>score</th><th>confidence</th></tr></thead>' +
    `<tbody>${body}</tbody></table></div>`
  );
}
