/**
 * Evidence strength in the HTML report (score/evidence.ts): badges beside a score that rests on availability alone or
 * on few observations, a table per subject of each eval's observations and 95% interval, and the words that explain
 * confidence and the interval. A score stored by an earlier hcs25 (served before its rescoring) has no evidence yet:
 * it gets no badge and no table rather than a guess.
 */
import { LOW_EVIDENCE_COUNT, type SignalEvidence, wilsonInterval } from '../score/evidence.js';
import type { SubjectScore } from '../score/scores.js';
import { signalShortName } from './display.js';
import { esc } from './svg.js';

export const EVIDENCE_STYLE = `
.evb{white-space:normal;margin-top:3px}
.evb .chip{margin-right:4px}
.scorebadges{display:flex;flex-wrap:wrap;align-items:center;justify-content:flex-end;gap:4px}
.chip.avail-only{background:#e4eefc;color:#1f4f8f}
.chip.low-ev{background:#fde9d7;color:#8a3f00}
table.evid{margin:6px 0;font-size:12.5px}
table.evid td,table.evid th{padding:4px 8px}
`;

/** The one explanation the page gives of confidence and of the interval (How to read this). */
export const EVIDENCE_EXPLAIN =
  '<dt>Evidence</dt><dd>A confidence of 0.4 means that only 40% of what the score is built from (its components, ' +
  'weighted like the score) was measured and fresh, the rest timed out, failed, went stale or was never measured; ' +
  'the 95% interval beside each eval is the range its true success rate lies in given how few or many answers were ' +
  `seen (1 correct answer of 1 gives ${Math.round(wilsonInterval(1, 1).low * 100)}%–100%), and ` +
  `<span class="chip low-ev">low evidence</span> marks a score with a component of fewer than ${LOW_EVIDENCE_COUNT} ` +
  'observations, <span class="chip avail-only">availability only</span> one with no eval behind it (an MCP server ' +
  'is probed, never asked questions). Equal scores rank more eval observations first.</dd>';

/** The badges beside a subject's score: availability only, low evidence (nothing when neither applies). */
export function evidenceBadges(s: SubjectScore, wrap: 'div' | 'none' = 'div'): string {
  const e = s.evidenceStrength as SubjectScore['evidenceStrength'] | undefined;
  if (!e) return '';
  const chips = [
    e.basis === 'availability-only'
      ? '<span class="chip avail-only" title="No eval backs this score: it rests on availability probes alone">availability only</span>'
      : '',
    e.lowEvidence ? `<span class="chip low-ev" title="${esc(lowEvidenceTitle(s))}">low evidence</span>` : '',
  ].join('');
  if (!chips) return '';
  return wrap === 'div' ? `<div class="evb">${chips}</div>` : chips;
}

function lowEvidenceTitle(s: SubjectScore): string {
  const e = s.evidenceStrength;
  if (e.basis === 'none') return 'Nothing was measured';
  const thin = [...Object.entries(e.evals), ...Object.entries(e.availability)]
    .filter(([, x]) => x.lowEvidence)
    .map(([id, x]) => `${signalShortName(id)} ${x.observations}`);
  return `Fewer than ${e.lowEvidenceBelow} observations: ${thin.join(', ')}`;
}

/** Each eval's and probe's observations, success rate and 95% Wilson interval, for a subject's card. */
export function evidenceTable(s: SubjectScore): string {
  const e = s.evidenceStrength as SubjectScore['evidenceStrength'] | undefined;
  if (!e) return '';
  const rows = [
    ...Object.entries(e.evals).map(([id, x]) => row('eval', id, x)),
    ...Object.entries(e.availability).map(([id, x]) => row('availability', id, x)),
  ];
  if (rows.length === 0) return '<p class="conftext">No eval and no probe backs this score.</p>';
  return (
    '<div class="tablewrap flat"><table class="evid stack"><thead><tr><th>signal</th><th>observations</th>' +
    `<th>success rate</th><th>95% interval</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`
  );
}

function row(kind: 'eval' | 'availability', id: string, x: SignalEvidence): string {
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  return (
    `<tr><td><span class="muted">${kind}</span> ${esc(signalShortName(id))}</td>` +
    `<td class="num" data-label="n">${x.observations}</td>` +
    `<td class="num" data-label="success">${x.rate === null ? '–' : `${pct(x.rate)} <span class="muted">(${x.successes} of ${x.observations})</span>`}</td>` +
    `<td class="num" data-label="95%">${pct(x.interval.low)}–${pct(x.interval.high)}</td>` +
    `<td>${x.lowEvidence ? '<span class="chip low-ev">low evidence</span>' : ''}</td></tr>`
  );
}
