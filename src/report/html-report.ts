/**
 * One self-contained HTML file that explains itself: a ranked table (score, confidence, per-adapter totals, the
 * newest outcome of each signal), how the total is computed, a score distribution, a score-vs-confidence scatter,
 * and per subject its formula, components, history charts and every signal it was scored from (with HashScan links
 * on public networks). Inline CSS and SVG only: no script, no fonts, no images; a Content-Security-Policy forbids
 * every fetch, so the file works offline and cannot phone home (links are only followed when clicked). Every string
 * from a topic or a registry is escaped. The same inputs give the same bytes.
 */
import { explorerUrl, type LedgerName, type MessageLinks } from '../config/networks.js';
import { canonicalSignalId } from '../format/schema-v2.js';
import { FAILURE_REASON_TEXT, type FailureReason } from '../format/reasons.js';
import { byCodeUnit } from '../score/scores.js';
import type { AdapterBreakdown, ScoreReport, SubjectScore } from '../score/scores.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from '../score/scoring-config.js';
import {
  adapterState,
  compactUaid,
  ellipsize,
  printable,
  protocolName,
  scoreLabel,
  signalOutcome,
  signalShortName,
  type OutcomeWord,
} from './display.js';
import type { ReadSignal } from '../read/types.js';
import { duration, esc, n, scoreColor } from './svg.js';
import { evalChart, histogram, latencyChart, scatter } from './html-charts.js';
import { publisherTable, type PublisherSummary } from './html-publishers.js';
import { historySection } from './html-history.js';
import type { SubjectHistory } from '../score/history.js';
import { STYLE } from './html-style.js';
import { collectHistories, groupSignals, type History, type SignalsBySubject } from './html-data.js';
import { filterForm, IDENTITY_STYLE, identityLine, type IdentityView, type ReportFilters } from './html-identity.js';
import { linksCell, messageLinker, runsSection, type RunSummary } from './html-ledger.js';
import { EVIDENCE_EXPLAIN, EVIDENCE_STYLE, evidenceBadges, evidenceTable } from './html-evidence.js';

/** The HCS-25 text (the spec's published home). */
export const HCS25_URL = 'https://hol.org/docs/standards/hcs-25';

export interface HtmlReportOptions {
  /** Shown under the title, e.g. `local`, `testnet`. `testnet`, `previewnet` and `mainnet` get HashScan links. */
  network?: string;
  /** The scoring configuration the report was computed with (confidence parameters, component signals). */
  scoring?: ScoringConfig;
  /** Subjects (from the top of the ranking) that get a detail card with history charts. Default 60. */
  maxDetailSubjects?: number;
  /**
   * Subjects listed in the ranking table, from the top. Default 5,000: a browser shows that many rows well, and a
   * whole registry's would make a page of hundreds of megabytes (CSV and JSON list every subject).
   */
  maxRankedSubjects?: number;
  /** Newest points kept per history series. Default 120. */
  maxPoints?: number;
  /** Newest signals listed per subject in its drill-down. Default 500. */
  maxSignalRows?: number;
  /**
   * Served live (`hcs25 serve`): the page loads this same-origin script, which follows the server's event stream and
   * swaps in the re-rendered page. The policy then allows that one script and same-origin fetches, nothing else.
   */
  liveScript?: string;
  /** A note shown under the header, e.g. that a live page lists only the top of a large ranking. */
  notice?: string;
  /** Who each subject is (its registry entry), shown under its name: html-identity.ts. */
  identities?: ReadonlyMap<string, IdentityView>;
  /** Served live: the search form, showing these filters. */
  filters?: ReportFilters;
  /** Per subject, its publishers (shown in the drill-down when there are several). */
  publishers?: ReadonlyMap<string, readonly PublisherSummary[]>;
  /** The mirror node's REST base (without `/api/v1`): each signal then links to its message there too. */
  mirrorRestUrl?: string;
  /** Runs to list with their reveal and verification (the live page's newest); `runsMore`: there are older ones. */
  runs?: readonly RunSummary[];
  runsMore?: boolean;
  /** Served live: subjects' availability, latency and score over time (their detail cards show them). */
  history?: ReadonlyMap<string, SubjectHistory>;
}

const DEFAULT_MAX_RANKED = 5_000;

const PUBLIC_LEDGERS: ReadonlySet<string> = new Set<LedgerName>(['testnet', 'previewnet', 'mainnet']);

export function renderHtmlReport(
  report: ScoreReport,
  signals: Iterable<ReadSignal>,
  options: HtmlReportOptions = {},
): string {
  const maxDetail = options.maxDetailSubjects ?? 60;
  const detailed = report.subjects.slice(0, maxDetail);
  const bySubject = groupSignals(signals, Date.parse(report.generatedAt));
  const histories = collectHistories(bySubject, detailed, options.maxPoints ?? 120);
  const ledger =
    options.network !== undefined && PUBLIC_LEDGERS.has(options.network) ? (options.network as LedgerName) : undefined;
  const ctx: Context = {
    report,
    bySubject,
    scoring: options.scoring ?? DEFAULT_SCORING_CONFIG,
    ledger,
    maxSignalRows: options.maxSignalRows ?? 500,
    identities: options.identities,
    publishers: options.publishers,
    links: messageLinker(ledger, report.topic, options.mirrorRestUrl),
    history: options.history,
  };
  const title = `HCS-25 trust scores${report.topic ? ` · topic ${report.topic}` : ''}`;

  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:${options.liveScript ? "; script-src 'self'; connect-src 'self'" : ''}">`,
    ...(options.liveScript ? [`<script src="${esc(options.liveScript)}" defer></script>`] : []),
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<link rel="icon" href="data:,">',
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}${IDENTITY_STYLE}${EVIDENCE_STYLE}</style></head><body>`,
    header(report, options.network, ledger),
    ...(options.notice ? [`<p class="warn">${esc(options.notice)}</p>`] : []),
    ...(options.filters ? [filterForm(options.filters)] : []),
    report.publishers.filter === 'none'
      ? '<p class="warn"><strong>No publisher allow-list.</strong> Signals from any paying account were accepted; anyone can write to a public topic. Pass <code>--publisher</code> with the accounts you trust.</p>'
      : '',
    // What people come for first: the ranking; the figures, charts and how to read them follow.
    ranking(ctx, maxDetail, options.maxRankedSubjects ?? DEFAULT_MAX_RANKED),
    cards(report),
    '<section class="charts">',
    figure('Score distribution', 'Subjects per 10-point band of trustScores.total', histogram(report)),
    figure(
      'Score and confidence',
      'Each dot is a subject (a larger dot with a number: that many subjects at one point): trustScores.total against trustConfidence',
      scatter(report),
    ),
    '</section>',
    explain(ctx),
    details(ctx, detailed, histories),
    options.runs ? runsSection(options.runs, options.runsMore ?? false) : '',
    method(ctx),
    '<footer>Generated by hcs25. HCS-25 scores depend on who published the signals and on this configuration; use them as decision support, not as the sole basis for gating.</footer>',
    '</body></html>',
    '',
  ].join('\n');
}

interface Context {
  report: ScoreReport;
  bySubject: SignalsBySubject;
  scoring: ScoringConfig;
  ledger: LedgerName | undefined;
  maxSignalRows: number;
  identities: ReadonlyMap<string, IdentityView> | undefined;
  publishers: HtmlReportOptions['publishers'];
  links: (sequenceNumber: number, consensusTimestamp: string) => MessageLinks;
  history: ReadonlyMap<string, SubjectHistory> | undefined;
}

// ---------- page parts ----------

function link(href: string, text: string): string {
  return `<a href="${esc(href)}" rel="noopener noreferrer">${text}</a>`;
}

function header(report: ScoreReport, network: string | undefined, ledger: LedgerName | undefined): string {
  const topicUrl = report.topic && ledger ? explorerUrl(ledger, 'topic', report.topic) : undefined;
  const facts = [
    report.topic
      ? `signal topic ${topicUrl ? link(topicUrl, `<code>${esc(report.topic)}</code>`) : `<code>${esc(report.topic)}</code>`}`
      : null,
    network ? `network <code>${esc(network)}</code>` : null,
    `config v${report.trustScoreConfigVersion}`,
    `scored at <time>${esc(report.generatedAt)}</time>`,
    link(HCS25_URL, 'HCS-25 standard'),
  ].filter(Boolean);
  return `<header><h1>HCS-25 trust scores</h1><p>${facts.join(' · ')}</p></header>`;
}

function cards(report: ScoreReport): string {
  const totals = report.subjects.map((s) => s.trustScores.total).sort((a, b) => a - b);
  const median =
    totals.length === 0
      ? null
      : totals.length % 2
        ? totals[(totals.length - 1) / 2]!
        : (totals[totals.length / 2 - 1]! + totals[totals.length / 2]!) / 2;
  const meanConfidence =
    report.subjects.length === 0
      ? null
      : report.subjects.reduce((s, x) => s + x.trustConfidence, 0) / report.subjects.length;
  const rejected = Object.values(report.counts.rejected).reduce((a, b) => a + b, 0);
  const card = (label: string, value: string, note = '') =>
    `<div class="card"><div class="label">${esc(label)}</div><div class="value">${value}</div>${note ? `<div class="note">${esc(note)}</div>` : ''}</div>`;
  return `<section class="cards">${[
    card('Subjects', String(report.counts.subjects)),
    card(
      'Signals scored',
      String(report.counts.signals),
      report.counts.ignoredAfterNow ? `${report.counts.ignoredAfterNow} after the scoring time` : '',
    ),
    card('Median score', median === null ? '–' : median.toFixed(2)),
    card('Mean confidence', meanConfidence === null ? '–' : meanConfidence.toFixed(2)),
    card('Rejected messages', String(rejected), rejected ? 'see Method below' : ''),
  ].join('')}</section>`;
}

/** The adapters with their modes and weights: the report's own (what was computed), else the configuration's. */
function adapterList(ctx: Context): Pick<AdapterBreakdown, 'adapterId' | 'contributionMode' | 'weight'>[] {
  return ctx.report.subjects[0]?.adapters ?? ctx.scoring.adapters;
}

/** How to read the page: the formula with its weights, confidence, the outcome words and the order. */
function explain(ctx: Context): string {
  const adapters = adapterList(ctx)
    .map((a) => `<code>${esc(a.adapterId)}</code> weight ${a.weight} (${esc(a.contributionMode)})`)
    .join(', ');
  return (
    '<section class="explain"><h2>How to read this</h2><dl>' +
    `<dt>Score</dt><dd class="formula"><strong>total = Σ w<sub>a</sub> · T<sub>a</sub> / Σ w<sub>a</sub></strong> over the adapters that apply to the subject; T<sub>a</sub> is the mean of adapter a's component values (0–100). Weights: ${adapters}. ` +
    `A conditional adapter without data is left out; any other applicable adapter without data counts as 0. Each card shows its subject's sum (${link(HCS25_URL, 'HCS-25')}, Aggregation).</dd>` +
    `<dt>Confidence</dt><dd>Confidence (0–1) says how much evidence backs a score, not how good it is: the share of each adapter's components that were measured and fresh (status ok), weighted like the score (HCS-25's recommended form, as the reference implementation computes it).</dd>` +
    `<dt>Outcomes</dt><dd>${OUTCOME_WORDS.map(([w, text]) => `${outcomeChip(w)} ${esc(text)}`).join('; ')}. A failure names its reason code (listed under Method).</dd>` +
    EVIDENCE_EXPLAIN +
    `<dt>Order</dt><dd>${esc(ORDER_TEXT)}</dd>` +
    '</dl></section>'
  );
}

const ORDER_TEXT =
  'Highest score first; equal scores by evidence (more eval observations first), then by confidence (higher first), then by name (or native id), then by UAID, so ties always appear in the same order.';

const OUTCOME_WORDS: ReadonlyArray<readonly [OutcomeWord, string]> = [
  ['correct', 'graded right: scores 100'],
  ['wrong', 'graded wrong: scores 0'],
  ['unparseable', 'answered, but no gradable answer: scores 0'],
  ['timeout', 'no answer in time: scores 0'],
  ['unreachable', 'could not be reached: scores 0'],
  ['error', 'reached, but the exchange failed: scores 0'],
  ['not measured', 'not asked, e.g. no chat operation: no score'],
  ['reachable', 'probe answered: availability 100'],
];

function outcomeChip(word: OutcomeWord, reason?: string): string {
  const cls = word.replace(' ', '-');
  const why = reason ? ` <span class="reason" title="${esc(reasonText(reason))}">${esc(printable(reason))}</span>` : '';
  return `<span class="oc ${cls}">${esc(word)}</span>${why}`;
}

function reasonText(reason: string): string {
  return Object.hasOwn(FAILURE_REASON_TEXT, reason)
    ? FAILURE_REASON_TEXT[reason as FailureReason]
    : 'a reason code this hcs25 does not know (a v1 code, or one a later version added)';
}

function figure(title: string, caption: string, svg: string): string {
  return `<figure><figcaption><strong>${esc(title)}</strong><span>${esc(caption)}</span></figcaption>${svg}</figure>`;
}

/** Newest signal of each signal id of a subject, as outcome chips with short signal names. */
function latestOutcomes(ctx: Context, subject: string): string {
  const bySignal = ctx.bySubject.get(subject);
  if (!bySignal) return '<span class="muted">–</span>';
  return [...bySignal.keys()]
    .sort(byCodeUnit)
    .map((id) => {
      const list = bySignal.get(id)!;
      const o = signalOutcome(list[list.length - 1]!.message);
      return `<span class="lo"><span class="sig">${esc(signalShortName(id))}</span> ${outcomeChip(o.word, o.reason)}</span>`;
    })
    .join('');
}

function ranking(ctx: Context, maxDetail: number, maxRanked: number): string {
  const { report } = ctx;
  const listed = report.subjects.slice(0, maxRanked);
  const adapterIds = report.subjects[0]?.adapters.map((a) => a.adapterId) ?? [];
  const head = ['#', 'Subject', 'Score', 'Confidence', ...adapterIds, 'Newest outcome', 'Latency p50 / p95', 'Signals'];
  // Long adapter ids may break after a hyphen; the other headers between words.
  const th = (h: string) => `<th>${esc(h).replace(/-/g, '-<wbr>')}</th>`;
  const rows = listed.map((s, i) => {
    const name = esc(ellipsize(scoreLabel(s), 48));
    const linked = i < maxDetail ? `<a href="#s${i + 1}">${name}</a>` : name;
    const badges = [
      ['protocol', s.protocol && protocolName(s.protocol)],
      ['registry', s.registry],
    ]
      .filter((x): x is [string, string] => x[1] !== null)
      .map(
        ([what, b]) => `<span class="badge" title="${what} (from the UAID)">${esc(ellipsize(printable(b), 20))}</span>`,
      )
      .join('');
    return (
      `<tr data-subject="${esc(printable(s.subject))}"><td class="num" data-label="#">${i + 1}</td>` +
      `<td class="subject">${linked}${badges}${identityLine(ctx.identities?.get(s.subject))}<div class="uaid" title="${esc(printable(s.subject))}">${esc(compactUaid(printable(s.subject)))}</div></td>` +
      `<td class="score" data-label="score">${bar(s.trustScores.total, 100, scoreColor(s.trustScores.total), s.trustScores.total.toFixed(2))}${evidenceBadges(s)}</td>` +
      `<td class="conf" data-label="confidence">${bar(s.trustConfidence, 1, '#5b4bd6', s.trustConfidence.toFixed(2))}</td>` +
      adapterIds.map((id) => `<td class="num" data-label="${esc(id)}">${adapterCell(s, id)}</td>`).join('') +
      `<td class="outcomes">${latestOutcomes(ctx, s.subject)}</td>` +
      `<td class="num" data-label="p50 / p95">${s.latency ? `${s.latency.p50Ms} / ${s.latency.p95Ms} ms` : '<span class="muted">–</span>'}</td>` +
      `<td class="num" data-label="signals">${s.counts.signals}</td></tr>`
    );
  });
  return (
    `<section><h2>Ranking</h2><div class="tablewrap"><table class="rank stack"><thead><tr>${head.map(th).join('')}</tr></thead>` +
    `<tbody>${rows.join('') || `<tr><td colspan="${head.length}" class="muted">No signals to score.</td></tr>`}</tbody></table></div>` +
    (listed.length < report.subjects.length
      ? `<p class="warn">The top ${listed.length} of ${report.subjects.length} subjects; <code>hcs25 scores --csv</code> or <code>--json</code> lists every one.</p>`
      : '') +
    '<p class="legend">Beside each name: its protocol and the registry named in its UAID (<span class="badge">a2a</span> <span class="badge">hol</span>) · <span class="chip stale">stale</span> newest signal older than the freshness window (value × stale multiplier) · <span class="chip na">n/a</span> adapter not applicable to the subject (left out of the denominator) · <span class="chip none">no output</span> conditional adapter without data · <span class="chip missing">missing</span> applicable but no data (scores 0)</p></section>'
  );
}

function adapterCell(s: SubjectScore, adapterId: string): string {
  const state = adapterState(s, adapterId);
  if (state.kind === 'not-applicable') return '<span class="chip na">n/a</span>';
  if (state.kind === 'no-output') return '<span class="chip none">no output</span>';
  const chip = state.stale
    ? ' <span class="chip stale">stale</span>'
    : state.missing
      ? ' <span class="chip missing">missing</span>'
      : '';
  return `${state.total.toFixed(1)}${chip}`;
}

function bar(value: number, max: number, color: string, text: string): string {
  const pct = Math.max(0, Math.min(100, (value / max) * 100));
  return `<div class="bar"><span class="fill" style="width:${n(pct)}%;background:${color}"></span></div><span class="barval">${esc(text)}</span>`;
}

/** This subject's weighted sum, with its numbers: `(1 × 90.00 + 0.5 × 100.00) / 1.5 = 93.33`. */
function subjectFormula(s: SubjectScore): string {
  const used = s.adapters.filter((a) => a.inDenominator && a.total !== null);
  if (used.length === 0) return '<p class="formula muted">No adapter applies: total 0.</p>';
  const weights = used.reduce((sum, a) => sum + a.weight, 0);
  const terms = used
    .map((a) => `${a.weight} × ${a.total!.toFixed(2)} <span class="muted">${esc(a.adapterId)}</span>`)
    .join(' + ');
  return `<p class="formula">total = (${terms}) / ${n(Math.round(weights * 1000) / 1000)} = <strong>${s.trustScores.total.toFixed(2)}</strong></p>`;
}

/** The component's newest outcome and the tally of the newest `samples` measured signals (its window). */
function componentOutcome(ctx: Context, s: SubjectScore, key: string, samples: number): string {
  const signal = ctx.scoring.adapters.flatMap((a) => a.components).find((c) => c.key === key)?.signal;
  const list = signal === undefined ? undefined : ctx.bySubject.get(s.subject)?.get(canonicalSignalId(signal));
  if (!list || list.length === 0) return '<span class="muted">–</span>';
  const newest = signalOutcome(list[list.length - 1]!.message);
  const measured = list.filter((x) => x.message.status !== 'missing').slice(-samples);
  const tally = new Map<OutcomeWord, number>();
  for (const x of measured) {
    const w = signalOutcome(x.message).word;
    tally.set(w, (tally.get(w) ?? 0) + 1);
  }
  const counts = [...tally]
    .sort((a, b) => b[1] - a[1] || byCodeUnit(a[0], b[0]))
    .map(([w, c]) => `${c} ${w}`)
    .join(' · ');
  return `${outcomeChip(newest.word, newest.reason)}${counts ? ` <span class="muted">(${esc(counts)})</span>` : ''}`;
}

function details(ctx: Context, subjects: SubjectScore[], histories: Map<string, History>): string {
  if (subjects.length === 0) return '';
  const total = ctx.report.subjects.length;
  const note =
    total > subjects.length ? `<p class="muted">Details for the top ${subjects.length} of ${total} subjects.</p>` : '';
  const articles = subjects.map((s, i) => {
    const h = histories.get(s.subject) ?? { evals: new Map(), probes: [] };
    const comps = Object.entries(s.components)
      .map(([key, c]) => {
        const flags = [
          // timeout/error are already the outcome word; stale and missing say something the word does not.
          c.status === 'stale' || c.status === 'missing'
            ? `<span class="chip ${c.status}">${esc(c.status)}</span>`
            : '',
          c.synthesized ? '<span class="muted">(default)</span>' : '',
          c.omitted ? '<span class="muted">(omitted)</span>' : '',
        ].filter(Boolean);
        return (
          `<tr><td><code>${esc(key)}</code></td><td class="num">${c.value.toFixed(2)}</td>` +
          `<td>${componentOutcome(ctx, s, key, c.samples)}${flags.length ? ` ${flags.join(' ')}` : ''}</td>` +
          `<td class="num" data-label="signals">${c.samples}</td><td class="muted nowrap" data-label="newest">${c.newestAt ? esc(c.newestAt.slice(0, 16).replace('T', ' ')) : '–'}</td></tr>`
        );
      })
      .join('');
    const notApplicable = s.adapters.filter((a) => !a.applicable).map((a) => a.adapterId);
    return (
      `<article id="s${i + 1}"><div class="ahead"><h3>${i + 1}. ${esc(ellipsize(scoreLabel(s), 60))}</h3>` +
      `<span class="scorebadges">${evidenceBadges(s, 'none')}<span class="pill" style="background:${scoreColor(s.trustScores.total)}">${s.trustScores.total.toFixed(2)}</span></span></div>` +
      identityLine(ctx.identities?.get(s.subject)) +
      `<div class="uaid">${esc(printable(s.subject))}</div>` +
      subjectFormula(s) +
      `<p class="conftext">Confidence ${s.trustConfidence.toFixed(2)}: ${s.counts.signals} signal(s) from ${s.counts.runs} run(s) by ${s.counts.publishers} publisher(s).</p>` +
      evidenceTable(s) +
      `<div class="tablewrap flat"><table class="comps stack"><thead><tr><th>component</th><th>value</th><th>newest outcome (window tally)</th><th>signals</th><th>newest (UTC)</th></tr></thead><tbody>${comps}</tbody></table></div>` +
      (notApplicable.length ? `<p class="muted">Not applicable: ${notApplicable.map(esc).join(', ')}.</p>` : '') +
      `<div class="sub">Eval outcomes over time</div>${evalChart(h.evals, s.subject)}` +
      `<div class="sub">Probe latency over time${s.latency ? ` <span class="muted">p50 ${s.latency.p50Ms} ms · p95 ${s.latency.p95Ms} ms · ${s.latency.samples} reachable probes</span>` : ''}</div>${latencyChart(h.probes, s.subject)}` +
      publisherTable(ctx.publishers?.get(s.subject)) +
      (ctx.history?.has(s.subject) ? historySection(ctx.history.get(s.subject)!) : '') +
      drillDown(ctx, s) +
      '</article>'
    );
  });
  return `<section><h2>Subjects</h2>${note}<div class="details">${articles.join('')}</div></section>`;
}

/** Every signal the subject was scored from, newest first: where it is on the topic, what it observed, why it failed. */
function drillDown(ctx: Context, s: SubjectScore): string {
  const all = [...(ctx.bySubject.get(s.subject)?.values() ?? [])].flat().sort(bySeqDesc);
  const shown = all.slice(0, ctx.maxSignalRows);
  const rows = shown
    .map((x) => {
      const o = signalOutcome(x.message);
      const where = `${x.sequenceNumber}${x.index > 0 ? `<span class="muted">#${x.index}</span>` : ''}`;
      return (
        `<tr class="sigrow"><td class="num">${where}</td><td class="nowrap">${esc(x.consensusAt.slice(5, 19).replace('T', ' '))}</td>` +
        `<td>${esc(signalShortName(canonicalSignalId(x.message.signal)))}</td><td>${outcomeChip(o.word)}</td>` +
        `<td>${o.reason ? `<span class="reason" title="${esc(reasonText(o.reason))}">${esc(printable(o.reason))}</span>` : ''}</td>` +
        `<td class="num">${x.message.data.latencyMs} ms</td>` +
        `<td class="nowrap">${linksCell(ctx.links(x.sequenceNumber, x.consensusTimestamp), x.consensusTimestamp)}</td></tr>`
      );
    })
    .join('');
  const more =
    all.length > shown.length ? `<p class="muted">The newest ${shown.length} of ${all.length} signals.</p>` : '';
  return (
    `<details class="signals"><summary>All ${all.length} signal(s): outcome, reason, latency, topic sequence number</summary>${more}` +
    '<div class="tablewrap flat"><table class="sigs stack"><thead><tr><th>seq#index</th><th>consensus UTC</th><th>signal</th><th>outcome</th><th>reason</th><th>latency</th><th>transaction</th></tr></thead>' +
    `<tbody>${rows}</tbody></table></div></details>`
  );
}

function bySeqDesc(a: ReadSignal, b: ReadSignal): number {
  return b.sequenceNumber - a.sequenceNumber || b.index - a.index;
}

function method(ctx: Context): string {
  const { report } = ctx;
  const w = report.window;
  const windowText =
    w.kind === 'latest'
      ? `latest ${w.count} signals per subject and signal id`
      : `signals within ${duration(w.seconds)} of the newest per subject and signal id`;
  const rejected = Object.entries(report.counts.rejected);
  const publishers =
    report.publishers.filter === 'none'
      ? 'any paying account (no allow-list)'
      : report.publishers.accounts.map((a) => `<code>${esc(a)}</code>`).join(', ');
  const reasons = usedReasons(ctx);
  return (
    '<section class="method"><h2>Method</h2><dl>' +
    `<dt>Standard</dt><dd>${link(HCS25_URL, 'HCS-25: AI Trust Score Methodology')}</dd>` +
    `<dt>Window</dt><dd>${esc(windowText)}</dd>` +
    `<dt>Freshness</dt><dd>${duration(report.freshnessSeconds)}: a component whose newest signal is older is <em>stale</em>, its value multiplied by ${report.staleMultiplier}</dd>` +
    `<dt>Order</dt><dd>${esc(ORDER_TEXT)}</dd>` +
    `<dt>Publishers</dt><dd>${publishers}</dd>` +
    `<dt>Configuration</dt><dd>trustScoreConfigVersion ${report.trustScoreConfigVersion}; scores are comparable only within one version</dd>` +
    `<dt>Reasons</dt><dd>${reasons.length ? reasons.map((r) => `<span class="reason">${esc(printable(r))}</span> ${esc(reasonText(r))}`).join(' · ') : 'no failures'}</dd>` +
    `<dt>Rejected</dt><dd>${rejected.length ? rejected.map(([r, c]) => `${esc(r)} ${c}`).join(' · ') : 'none'}</dd>` +
    '</dl></section>'
  );
}

function usedReasons(ctx: Context): string[] {
  const seen = new Set<string>();
  for (const bySignal of ctx.bySubject.values())
    for (const list of bySignal.values())
      for (const x of list) if (x.message.data.reason) seen.add(x.message.data.reason);
  return [...seen].sort(byCodeUnit);
}
