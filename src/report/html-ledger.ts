/**
 * Where the HTML report points at the ledger: a topic message's links (HashScan on public networks, the mirror node's
 * REST API where the report knows it), and the runs, each with whether its key was revealed and how `verify` judged
 * its signals, in words. Strings in, escaped HTML out.
 */
import { messageLinks, type MessageLinks } from '../config/networks.js';
import type { VerdictCounts } from '../verify/findings.js';
import { esc } from './svg.js';

/** A publishing run as the live page lists it (the serve store's run row, its reveal as links). */
export interface RunSummary {
  run: string;
  signals: number;
  firstAt: string;
  lastAt: string;
  revealed: boolean;
  /** `verify`'s counts when computed and current, else null. */
  verification: (VerdictCounts & { equivocation: number }) | null;
  /** Where the run's reveal is, or null before it is revealed. */
  links: MessageLinks | null;
}

function a(href: string, text: string): string {
  return `<a href="${esc(href)}" rel="noopener noreferrer">${esc(text)}</a>`;
}

/** A report's signal links: HashScan on public networks; the mirror node when its base and the topic are known. */
export function messageLinker(
  ledger: string | undefined,
  topic: string | null,
  mirrorRestUrl: string | undefined,
): (sequenceNumber: number, consensusTimestamp: string) => MessageLinks {
  const network = {
    ledger: ledger ?? 'local',
    ...(topic !== null && mirrorRestUrl !== undefined && { mirrorRestUrl }),
  };
  return (sequenceNumber, consensusTimestamp) => messageLinks(network, topic ?? '', sequenceNumber, consensusTimestamp);
}

/** `HashScan · mirror`, whichever the message has; `fallback` (muted) when it has neither. */
export function linksCell(links: MessageLinks | undefined, fallback: string): string {
  const parts = [
    links?.hashscan ? a(links.hashscan, 'HashScan') : '',
    links?.mirror ? a(links.mirror, 'mirror') : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : `<span class="muted">${esc(fallback)}</span>`;
}

/** How `verify` judged a run's signals, in a sentence a reader acts on. */
export function verdictWords(run: Pick<RunSummary, 'revealed' | 'verification'>): string {
  const c = run.verification;
  if (c === null) return 'not verified yet (GET /v1/runs/{run}/verification verifies it)';
  const total = c['re-derived'] + c['commitment-checked'] + c['not-checkable'] + c.mismatch;
  const conflicts = c.equivocation ? `, ${c.equivocation} conflicting cop${c.equivocation === 1 ? 'y' : 'ies'}` : '';
  if (c.mismatch || c.equivocation)
    return `fails: ${c.mismatch} of ${total} signal(s) disagree with what was published or revealed${conflicts}`;
  if (total === 0) return 'no signals to check';
  if (c['re-derived'] === total) return `verified: all ${total} signal(s) re-derived from the revealed key`;
  const parts = [
    c['re-derived'] ? `${c['re-derived']} re-derived` : '',
    c['commitment-checked'] ? `${c['commitment-checked']} matched their commitment` : '',
    c['not-checkable'] ? `${c['not-checkable']} not checkable` : '',
  ].filter(Boolean);
  const head = run.revealed ? 'no disagreement' : 'not revealed yet';
  return `${head}: ${parts.join(', ')} of ${total}`;
}

const ROW_TIME = (iso: string) => (iso ? iso.slice(5, 16).replace('T', ' ') : '–');

/** The runs, newest first; `more` says the list is the newest part of a longer one. */
export function runsSection(runs: readonly RunSummary[], more: boolean): string {
  const rows = runs
    .map(
      (r) =>
        `<tr class="runrow"><td><code>${esc(r.run)}</code></td><td class="num" data-label="signals">${r.signals}</td>` +
        `<td class="nowrap" data-label="UTC">${esc(ROW_TIME(r.firstAt))} – ${esc(ROW_TIME(r.lastAt))}</td>` +
        `<td class="nowrap" data-label="revealed">${r.revealed ? `yes ${r.links ? `<span class="muted">(${linksCell(r.links, '')})</span>` : ''}` : 'no'}</td>` +
        `<td class="verdict">${esc(verdictWords(r))}</td></tr>`,
    )
    .join('');
  return (
    `<section><h2>Runs</h2>${more ? `<p class="muted">The newest ${runs.length} runs; the API (/v1/runs) pages through all of them.</p>` : ''}` +
    '<div class="tablewrap"><table class="runs stack"><thead><tr><th>run</th><th>signals</th><th>first – last (UTC)</th><th>revealed</th><th>verification</th></tr></thead>' +
    `<tbody>${rows || '<tr><td colspan="5" class="muted">No runs yet.</td></tr>'}</tbody></table></div>` +
    '<p class="legend">A run publishes its answers as commitments and later reveals its key: then <code>verify</code> re-derives each question and grade from it. <em>re-derived</em>: recomputed and equal; <em>matched their commitment</em>: the published hash checks, the question cannot be recomputed; <em>not checkable</em>: nothing to check it against yet (no reveal), or ever (an availability probe); a signal that <em>disagrees</em> was published wrong or altered.</p></section>'
  );
}
