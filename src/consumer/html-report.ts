/**
 * One self-contained HTML file that explains itself: a ranked table (score, confidence, per-adapter totals, the
 * newest outcome of each signal), how the total is computed, a score distribution, a score-vs-confidence scatter,
 * and per subject its formula, components, history charts and every signal it was scored from (with HashScan links
 * on public networks). Inline CSS and SVG only: no script, no fonts, no images; a Content-Security-Policy forbids
 * every fetch, so the file works offline and cannot phone home (links are only followed when clicked). Every string
 * from a topic or a registry is escaped. The same inputs give the same bytes.
 */
import { explorerUrl, type LedgerName } from '../config/networks.js';
import { canonicalSignalId } from '../signals/schema-v2.js';
import { FAILURE_REASON_TEXT, type FailureReason } from '../signals/reasons.js';
import { byCodeUnit } from './scores.js';
import type { AdapterBreakdown, ScoreReport, SubjectScore } from './scores.js';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from './scoring-config.js';
import { adapterState, ellipsize, printable, scoreLabel, signalOutcome, signalShortName, subjectLabel, type OutcomeWord } from './display.js';
import { consensusMs } from './reader.js';
import type { ReadSignal } from './types.js';
import { OUTCOME_COLORS, duration, esc, n, niceScale, plotHeight, plotWidth, scoreColor, svgOpen, yGrid, type Box } from './svg.js';

/** The HCS-25 text (the spec's published home). */
export const HCS25_URL = 'https://hol.org/docs/standards/hcs-25';

export interface HtmlReportOptions {
  /** Shown under the title, e.g. `local`, `testnet`. `testnet`, `previewnet` and `mainnet` get HashScan links. */
  network?: string;
  /** The scoring configuration the report was computed with (confidence parameters, component signals). */
  scoring?: ScoringConfig;
  /** Subjects (from the top of the ranking) that get a detail card with history charts. Default 60. */
  maxDetailSubjects?: number;
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
}

interface Point {
  ms: number;
  seq: number;
  run: string;
  word: OutcomeWord;
  /** Outcome word and reason, for tooltips. */
  label: string;
  value: number;
  ok: boolean;
}

interface History {
  evals: Map<string, Point[]>;
  probes: Point[];
}

/** A subject's signals (up to the scoring time) by canonical signal id, each list in (sequence, index) order. */
type SignalsBySubject = Map<string, Map<string, ReadSignal[]>>;

const PUBLIC_LEDGERS: ReadonlySet<string> = new Set<LedgerName>(['testnet', 'previewnet', 'mainnet']);

export function renderHtmlReport(report: ScoreReport, signals: Iterable<ReadSignal>, options: HtmlReportOptions = {}): string {
  const maxDetail = options.maxDetailSubjects ?? 60;
  const detailed = report.subjects.slice(0, maxDetail);
  const bySubject = groupSignals(signals, Date.parse(report.generatedAt));
  const histories = collectHistories(bySubject, detailed, options.maxPoints ?? 120);
  const ledger = options.network !== undefined && PUBLIC_LEDGERS.has(options.network) ? (options.network as LedgerName) : undefined;
  const ctx: Context = { report, bySubject, scoring: options.scoring ?? DEFAULT_SCORING_CONFIG, ledger, maxSignalRows: options.maxSignalRows ?? 500 };
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
    `<style>${STYLE}</style></head><body>`,
    header(report, options.network, ledger),
    ...(options.notice ? [`<p class="warn">${esc(options.notice)}</p>`] : []),
    report.publishers.filter === 'none'
      ? '<p class="warn"><strong>No publisher allow-list.</strong> Signals from any paying account were accepted; anyone can write to a public topic. Pass <code>--publisher</code> with the accounts you trust.</p>'
      : '',
    cards(report),
    explain(ctx),
    '<section class="charts">',
    figure('Score distribution', 'Subjects per 10-point band of trustScores.total', histogram(report)),
    figure('Score and confidence', 'Each dot is a subject: trustScores.total against trustConfidence', scatter(report)),
    '</section>',
    ranking(ctx, maxDetail),
    details(ctx, detailed, histories),
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
}

// ---------- page parts ----------

function link(href: string, text: string): string {
  return `<a href="${esc(href)}" rel="noopener noreferrer">${text}</a>`;
}

function header(report: ScoreReport, network: string | undefined, ledger: LedgerName | undefined): string {
  const topicUrl = report.topic && ledger ? explorerUrl(ledger, 'topic', report.topic) : undefined;
  const facts = [
    report.topic ? `signal topic ${topicUrl ? link(topicUrl, `<code>${esc(report.topic)}</code>`) : `<code>${esc(report.topic)}</code>`}` : null,
    network ? `network <code>${esc(network)}</code>` : null,
    `config v${report.trustScoreConfigVersion}`,
    `scored at <time>${esc(report.generatedAt)}</time>`,
    link(HCS25_URL, 'HCS-25 standard'),
  ].filter(Boolean);
  return `<header><h1>HCS-25 trust scores</h1><p>${facts.join(' · ')}</p></header>`;
}

function cards(report: ScoreReport): string {
  const totals = report.subjects.map((s) => s.trustScores.total).sort((a, b) => a - b);
  const median = totals.length === 0 ? null : totals.length % 2 ? totals[(totals.length - 1) / 2]! : (totals[totals.length / 2 - 1]! + totals[totals.length / 2]!) / 2;
  const meanConfidence = report.subjects.length === 0 ? null : report.subjects.reduce((s, x) => s + x.trustConfidence, 0) / report.subjects.length;
  const rejected = Object.values(report.counts.rejected).reduce((a, b) => a + b, 0);
  const card = (label: string, value: string, note = '') =>
    `<div class="card"><div class="label">${esc(label)}</div><div class="value">${value}</div>${note ? `<div class="note">${esc(note)}</div>` : ''}</div>`;
  return `<section class="cards">${[
    card('Subjects', String(report.counts.subjects)),
    card('Signals scored', String(report.counts.signals), report.counts.ignoredAfterNow ? `${report.counts.ignoredAfterNow} after the scoring time` : ''),
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
  const { fullAtSamples, staleFactor } = ctx.scoring.confidence;
  return (
    '<section class="explain"><h2>How to read this</h2><dl>' +
    `<dt>Score</dt><dd class="formula"><strong>total = Σ w<sub>a</sub> · T<sub>a</sub> / Σ w<sub>a</sub></strong> over the adapters that apply to the subject; T<sub>a</sub> is the mean of adapter a's component values (0–100). Weights: ${adapters}. ` +
    `A conditional adapter without data is left out; any other applicable adapter without data counts as 0. Each card shows its subject's sum (${link(HCS25_URL, 'HCS-25')}, Aggregation).</dd>` +
    `<dt>Confidence</dt><dd>Confidence (0–1) says how much evidence backs a score, not how good it is: each component counts 1 when measured and fresh, ${staleFactor} when stale and 0 when unavailable, scaled by its number of signals up to ${fullAtSamples}, averaged per adapter and weighted like the score.</dd>` +
    `<dt>Outcomes</dt><dd>${OUTCOME_WORDS.map(([w, text]) => `${outcomeChip(w)} ${esc(text)}`).join(' · ')}. A failure names its reason code (listed under Method).</dd>` +
    `<dt>Order</dt><dd>${esc(ORDER_TEXT)}</dd>` +
    '</dl></section>'
  );
}

const ORDER_TEXT = 'Highest score first; equal scores by confidence (higher first), then by name (or native id), then by UAID, so ties always appear in the same order.';

const OUTCOME_WORDS: ReadonlyArray<readonly [OutcomeWord, string]> = [
  ['correct', 'graded right (100)'],
  ['wrong', 'graded wrong (0)'],
  ['unparseable', 'answered, but no gradable answer (0)'],
  ['timeout', 'no answer in time (0)'],
  ['unreachable', 'could not be reached (0)'],
  ['error', 'reached, but the exchange failed (0)'],
  ['not measured', 'not asked, e.g. no chat operation (no score)'],
  ['reachable', 'probe answered (availability 100)'],
];

function outcomeChip(word: OutcomeWord, reason?: string): string {
  const cls = word.replace(' ', '-');
  const why = reason ? ` <span class="reason" title="${esc(reasonText(reason))}">${esc(printable(reason))}</span>` : '';
  return `<span class="oc ${cls}">${esc(word)}</span>${why}`;
}

function reasonText(reason: string): string {
  return Object.hasOwn(FAILURE_REASON_TEXT, reason) ? FAILURE_REASON_TEXT[reason as FailureReason] : 'reason code published by a v1 signal';
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

function ranking(ctx: Context, maxDetail: number): string {
  const { report } = ctx;
  const adapterIds = report.subjects[0]?.adapters.map((a) => a.adapterId) ?? [];
  const head = ['#', 'Subject', 'Score', 'Confidence', ...adapterIds, 'Newest outcome', 'Latency p50 / p95', 'Signals'];
  // Long adapter ids may break after a hyphen; the other headers between words.
  const th = (h: string) => `<th>${esc(h).replace(/-/g, '-<wbr>')}</th>`;
  const rows = report.subjects.map((s, i) => {
    const name = esc(ellipsize(scoreLabel(s), 48));
    const linked = i < maxDetail ? `<a href="#s${i + 1}">${name}</a>` : name;
    const badges = [s.protocol, s.registry].filter((x): x is string => x !== null).map((b) => `<span class="badge">${esc(ellipsize(printable(b), 20))}</span>`).join('');
    return (
      `<tr data-subject="${esc(printable(s.subject))}"><td class="num" data-label="#">${i + 1}</td>` +
      `<td class="subject">${linked}${badges}<div class="uaid" title="${esc(printable(s.subject))}">${esc(ellipsize(printable(s.subject), 64))}</div></td>` +
      `<td class="score" data-label="score">${bar(s.trustScores.total, 100, scoreColor(s.trustScores.total), s.trustScores.total.toFixed(2))}</td>` +
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
    '<p class="legend"><span class="chip stale">stale</span> newest signal older than the freshness window (value × stale multiplier) · <span class="chip na">n/a</span> adapter not applicable to the subject (left out of the denominator) · <span class="chip none">no output</span> conditional adapter without data · <span class="chip missing">missing</span> applicable but no data (scores 0)</p></section>'
  );
}

function adapterCell(s: SubjectScore, adapterId: string): string {
  const state = adapterState(s, adapterId);
  if (state.kind === 'not-applicable') return '<span class="chip na">n/a</span>';
  if (state.kind === 'no-output') return '<span class="chip none">no output</span>';
  const chip = state.stale ? ' <span class="chip stale">stale</span>' : state.missing ? ' <span class="chip missing">missing</span>' : '';
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
  const terms = used.map((a) => `${a.weight} × ${a.total!.toFixed(2)} <span class="muted">${esc(a.adapterId)}</span>`).join(' + ');
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
  const counts = [...tally].sort((a, b) => b[1] - a[1] || byCodeUnit(a[0], b[0])).map(([w, c]) => `${c} ${w}`).join(' · ');
  return `${outcomeChip(newest.word, newest.reason)}${counts ? ` <span class="muted">(${esc(counts)})</span>` : ''}`;
}

function details(ctx: Context, subjects: SubjectScore[], histories: Map<string, History>): string {
  if (subjects.length === 0) return '';
  const total = ctx.report.subjects.length;
  const note = total > subjects.length ? `<p class="muted">Details for the top ${subjects.length} of ${total} subjects.</p>` : '';
  const articles = subjects.map((s, i) => {
    const h = histories.get(s.subject) ?? { evals: new Map(), probes: [] };
    const comps = Object.entries(s.components)
      .map(([key, c]) => {
        const flags = [
          // timeout/error are already the outcome word; stale and missing say something the word does not.
          c.status === 'stale' || c.status === 'missing' ? `<span class="chip ${c.status}">${esc(c.status)}</span>` : '',
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
      `<span class="pill" style="background:${scoreColor(s.trustScores.total)}">${s.trustScores.total.toFixed(2)}</span></div>` +
      `<div class="uaid">${esc(printable(s.subject))}</div>` +
      subjectFormula(s) +
      `<p class="conftext">Confidence ${s.trustConfidence.toFixed(2)}: ${s.counts.signals} signal(s) from ${s.counts.runs} run(s) by ${s.counts.publishers} publisher(s).</p>` +
      `<div class="tablewrap flat"><table class="comps stack"><thead><tr><th>component</th><th>value</th><th>newest outcome (window tally)</th><th>signals</th><th>newest (UTC)</th></tr></thead><tbody>${comps}</tbody></table></div>` +
      (notApplicable.length ? `<p class="muted">Not applicable: ${notApplicable.map(esc).join(', ')}.</p>` : '') +
      `<div class="sub">Eval outcomes over time</div>${evalChart(h.evals, s.subject)}` +
      `<div class="sub">Probe latency over time${s.latency ? ` <span class="muted">p50 ${s.latency.p50Ms} ms · p95 ${s.latency.p95Ms} ms · ${s.latency.samples} reachable probes</span>` : ''}</div>${latencyChart(h.probes, s.subject)}` +
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
      const url = ctx.ledger ? explorerUrl(ctx.ledger, 'transaction', x.consensusTimestamp) : undefined;
      const where = `${x.sequenceNumber}${x.index > 0 ? `<span class="muted">#${x.index}</span>` : ''}`;
      return (
        `<tr class="sigrow"><td class="num">${where}</td><td class="nowrap">${esc(x.consensusAt.slice(5, 19).replace('T', ' '))}</td>` +
        `<td>${esc(signalShortName(canonicalSignalId(x.message.signal)))}</td><td>${outcomeChip(o.word)}</td>` +
        `<td>${o.reason ? `<span class="reason" title="${esc(reasonText(o.reason))}">${esc(printable(o.reason))}</span>` : ''}</td>` +
        `<td class="num">${x.message.data.latencyMs} ms</td>` +
        `<td class="nowrap">${url ? link(url, 'HashScan') : `<span class="muted">${esc(x.consensusTimestamp)}</span>`}</td></tr>`
      );
    })
    .join('');
  const more = all.length > shown.length ? `<p class="muted">The newest ${shown.length} of ${all.length} signals.</p>` : '';
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
  const windowText = w.kind === 'latest' ? `latest ${w.count} signals per subject and signal id` : `signals within ${duration(w.seconds)} of the newest per subject and signal id`;
  const rejected = Object.entries(report.counts.rejected);
  const publishers =
    report.publishers.filter === 'none' ? 'any paying account (no allow-list)' : report.publishers.accounts.map((a) => `<code>${esc(a)}</code>`).join(', ');
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
  for (const bySignal of ctx.bySubject.values()) for (const list of bySignal.values()) for (const x of list) if (x.message.data.reason) seen.add(x.message.data.reason);
  return [...seen].sort(byCodeUnit);
}

// ---------- charts ----------

function histogram(report: ScoreReport): string {
  const b: Box = { width: 460, height: 220, left: 34, right: 10, top: 14, bottom: 34 };
  const bins = new Array<number>(10).fill(0);
  for (const s of report.subjects) bins[Math.min(9, Math.floor(s.trustScores.total / 10))]!++;
  const { max, step } = niceScale(Math.max(...bins, 1), true);
  const bw = plotWidth(b) / 10;
  const bars = bins
    .map((count, i) => {
      const h = (count / max) * plotHeight(b);
      const x = b.left + i * bw + 2;
      const y = b.top + plotHeight(b) - h;
      const range = `${i * 10}–${i === 9 ? 100 : i * 10 + 10}`;
      return (
        `<rect class="bin" x="${n(x)}" y="${n(y)}" width="${n(bw - 4)}" height="${n(h)}" fill="${scoreColor(i * 10 + 5)}"><title>${range}: ${count} subject(s)</title></rect>` +
        (count ? `<text class="tick" x="${n(x + (bw - 4) / 2)}" y="${n(y - 3)}" text-anchor="middle">${count}</text>` : '')
      );
    })
    .join('');
  const xTicks = Array.from({ length: 11 }, (_, i) => `<text class="tick" x="${n(b.left + i * bw)}" y="${b.height - b.bottom + 14}" text-anchor="middle">${i * 10}</text>`).join('');
  return (
    svgOpen(b, 'Histogram of trust scores', 'chart hist') +
    yGrid(b, max, step) +
    bars +
    xTicks +
    `<text class="axis" x="${b.left + plotWidth(b) / 2}" y="${b.height - 4}" text-anchor="middle">trust score</text></svg>`
  );
}

function scatter(report: ScoreReport): string {
  const b: Box = { width: 460, height: 220, left: 34, right: 14, top: 14, bottom: 34 };
  const x = (c: number) => b.left + c * plotWidth(b);
  const y = (s: number) => b.top + plotHeight(b) * (1 - s / 100);
  const dots = report.subjects
    .map(
      (s, i) =>
        `<circle class="dot" cx="${n(x(s.trustConfidence))}" cy="${n(y(s.trustScores.total))}" r="5" fill="${scoreColor(s.trustScores.total)}"><title>#${i + 1} ${esc(scoreLabel(s))}: score ${s.trustScores.total.toFixed(2)}, confidence ${s.trustConfidence.toFixed(2)}</title></circle>`,
    )
    .join('');
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map((c) => `<text class="tick" x="${n(x(c))}" y="${b.height - b.bottom + 14}" text-anchor="middle">${c}</text>`).join('');
  return (
    svgOpen(b, 'Trust score against confidence', 'chart scatter') +
    yGrid(b, 100, 25) +
    xTicks +
    dots +
    `<text class="axis" x="${b.left + plotWidth(b) / 2}" y="${b.height - 4}" text-anchor="middle">trust confidence</text></svg>`
  );
}

function timeScale(points: Point[], b: Box): (ms: number) => number {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    if (p.ms < lo) lo = p.ms;
    if (p.ms > hi) hi = p.ms;
  }
  const span = hi - lo;
  return (ms) => (span > 0 ? b.left + ((ms - lo) / span) * plotWidth(b) : b.left + plotWidth(b) / 2);
}

function timeAxis(points: Point[], b: Box): string {
  if (points.length === 0) return '';
  const ms = points.map((p) => p.ms);
  const fmt = (v: number) => new Date(v).toISOString().slice(0, 16).replace('T', ' ');
  const y = b.height - 6;
  return (
    `<text class="tick" x="${b.left}" y="${y}">${fmt(Math.min(...ms))}</text>` +
    `<text class="tick" x="${b.width - b.right}" y="${y}" text-anchor="end">${fmt(Math.max(...ms))} UTC</text>`
  );
}

/** One run is a point in time, not a history: say what it observed instead of drawing a time axis. */
function singleRun(points: Point[]): boolean {
  return new Set(points.map((p) => p.run)).size <= 1;
}

function onlyRunText(points: Point[], what: string): string {
  const at = new Date(Math.min(...points.map((p) => p.ms))).toISOString().slice(0, 16).replace('T', ' ');
  return `<p class="empty single">One run (${esc(at)} UTC): no history to draw yet; ${esc(what)}</p>`;
}

function evalChart(series: Map<string, Point[]>, subject: string): string {
  const names = [...series.keys()].sort(byCodeUnit);
  if (names.length === 0) return '<p class="empty">No eval signals.</p>';
  const all = names.flatMap((k) => series.get(k)!);
  if (singleRun(all)) return onlyRunText(all, 'its outcomes are in the component table and the signal list.');
  const rowH = 26;
  const b: Box = { width: 560, height: names.length * rowH + 34, left: 64, right: 12, top: 10, bottom: 24 };
  const x = timeScale(all, b);
  const rows = names
    .map((name, r) => {
      const cy = b.top + r * rowH + rowH / 2;
      const marks = series
        .get(name)!
        .map(
          (p) =>
            `<circle class="outcome" cx="${n(x(p.ms))}" cy="${n(cy)}" r="5" fill="${OUTCOME_COLORS[p.word]}"><title>${esc(new Date(p.ms).toISOString())} ${esc(signalShortName(name))}: ${esc(p.label)}</title></circle>`,
        )
        .join('');
      return `<line class="grid" x1="${b.left}" x2="${b.width - b.right}" y1="${n(cy)}" y2="${n(cy)}"/><text class="tick" x="${b.left - 8}" y="${n(cy + 3.5)}" text-anchor="end">${esc(signalShortName(name))}</text>${marks}`;
    })
    .join('');
  const seen = [...new Set(all.map((p) => p.word))].sort(byCodeUnit);
  const legend = seen.map((w) => `<span class="key"><i style="background:${OUTCOME_COLORS[w]}"></i>${esc(w)}</span>`).join('');
  return `${svgOpen(b, `Eval outcomes over time for ${printable(subjectLabel(subject))}`, 'chart evals')}${rows}${timeAxis(all, b)}</svg><div class="keys">${legend}</div>`;
}

function latencyChart(probes: Point[], subject: string): string {
  if (probes.length === 0) return '<p class="empty">No availability probes.</p>';
  if (singleRun(probes)) return onlyRunText(probes, 'the probe is in the signal list.');
  const b: Box = { width: 560, height: 150, left: 52, right: 12, top: 10, bottom: 24 };
  const reachable = probes.filter((p) => p.ok);
  const { max, step } = niceScale(Math.max(1, ...reachable.map((p) => p.value)));
  const x = timeScale(probes, b);
  const y = (v: number) => b.top + plotHeight(b) * (1 - v / max);
  const line = reachable.length > 1 ? `<polyline class="lat" points="${reachable.map((p) => `${n(x(p.ms))},${n(y(p.value))}`).join(' ')}"/>` : '';
  const marks = probes
    .map((p) =>
      p.ok
        ? `<circle class="probe" cx="${n(x(p.ms))}" cy="${n(y(p.value))}" r="3"><title>${esc(new Date(p.ms).toISOString())}: ${p.value} ms</title></circle>`
        : `<rect class="down" x="${n(x(p.ms) - 3)}" y="${n(b.top + plotHeight(b) - 6)}" width="6" height="6"><title>${esc(new Date(p.ms).toISOString())}: ${esc(p.label)}</title></rect>`,
    )
    .join('');
  return `${svgOpen(b, `Probe latency over time for ${printable(subjectLabel(subject))}`, 'chart latency')}${yGrid(b, max, step, (v) => `${n(v)} ms`)}${line}${marks}${timeAxis(probes, b)}</svg><div class="keys"><span class="key"><i style="background:#5b4bd6"></i>reachable (latency)</span><span class="key"><i style="background:#c63d3d"></i>not reachable (timeout or unreachable)</span></div>`;
}

// ---------- data ----------

function groupSignals(signals: Iterable<ReadSignal>, nowMs: number): SignalsBySubject {
  const out: SignalsBySubject = new Map();
  for (const s of signals) {
    // What the scores left out (after the scoring time) is not shown as if it had counted.
    if (!(consensusMs(s.consensusTimestamp) <= nowMs)) continue;
    const id = canonicalSignalId(s.message.signal);
    let bySignal = out.get(s.message.subject);
    if (!bySignal) out.set(s.message.subject, (bySignal = new Map()));
    const list = bySignal.get(id);
    if (list) list.push(s);
    else bySignal.set(id, [s]);
  }
  for (const bySignal of out.values()) for (const list of bySignal.values()) list.sort((a, b) => bySeqDesc(b, a));
  return out;
}

function collectHistories(bySubject: SignalsBySubject, subjects: SubjectScore[], maxPoints: number): Map<string, History> {
  const out = new Map<string, History>();
  for (const { subject } of subjects) {
    const h: History = { evals: new Map(), probes: [] };
    for (const [id, list] of bySubject.get(subject) ?? []) {
      const points = list.slice(-maxPoints).map((s): Point => {
        const m = s.message;
        const o = signalOutcome(m);
        const label = o.reason ? `${o.word} (${printable(o.reason)})` : o.word;
        return { ms: consensusMs(s.consensusTimestamp), seq: s.sequenceNumber, run: m.run, word: o.word, label, value: m.data.latencyMs, ok: o.word === 'reachable' };
      });
      if (list.some((s) => 'reachable' in s.message.data)) h.probes.push(...points);
      else h.evals.set(id, points);
    }
    out.set(subject, h);
  }
  return out;
}

const STYLE = `
:root{--ink:#1b1e2b;--muted:#6b7084;--line:#e3e5ee;--bg:#f5f6fa;--card:#fff;--accent:#5b4bd6}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
header{background:#14172b;color:#fff;padding:22px 32px}
header h1{margin:0 0 4px;font-size:22px;font-weight:650;letter-spacing:.2px}
header p{margin:0;color:#c4c7dc}
header code{color:#fff}
header a{color:#c9c2ff}
section{margin:22px 32px}
h2{font-size:16px;margin:0 0 10px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.warn{margin:18px 32px 0;padding:10px 14px;border-radius:8px;background:#fff4dc;border:1px solid #f0cf83;color:#6b4a00}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.card .value{font-size:24px;font-weight:650;margin-top:2px}
.card .note{color:var(--muted);font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(380px,100%),1fr));gap:12px}
figure{margin:0;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
figcaption{display:flex;flex-direction:column;margin-bottom:6px}
figcaption span{color:var(--muted);font-size:12px}
svg.chart{width:100%;height:auto;display:block}
.grid{stroke:var(--line);stroke-width:1}
.tick{fill:var(--muted);font-size:10.5px}
.axis{fill:var(--muted);font-size:11px}
.dot{stroke:#fff;stroke-width:1.5;opacity:.9}
.lat{fill:none;stroke:var(--accent);stroke-width:1.6}
.probe{fill:var(--accent)}
.down{fill:#c63d3d}
.outcome{stroke:#fff;stroke-width:1}
.tablewrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:10px}
table{border-collapse:collapse;width:100%}
th,td{padding:7px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfd}
tbody tr:last-child td{border-bottom:0}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.subject a{color:var(--ink);font-weight:600;text-decoration:none}
td.subject a:hover{text-decoration:underline}
.uaid{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:11px;color:var(--muted);word-break:break-all}
.badge{display:inline-block;margin-left:6px;padding:0 6px;border-radius:9px;background:#eceafd;color:#3d30a8;font-size:11px}
.bar{display:inline-block;width:44px;height:8px;border-radius:4px;background:#eceef4;vertical-align:middle;overflow:hidden}
.bar .fill{display:block;height:100%}
.barval{margin-left:8px;font-variant-numeric:tabular-nums;font-weight:600}
td.score .barval{font-size:15px}
td.score,td.conf{white-space:nowrap}
.rank .uaid{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:220px}
.chip{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;font-weight:500}
.chip.stale{background:#fff1d6;color:#8a5a00}
.chip.na{background:#eef0f5;color:#6b7084}
.chip.none{background:#eef0f5;color:#6b7084}
.chip.missing{background:#fde4e4;color:#9b2c2c}
.legend{color:var(--muted);font-size:12px}
.muted{color:var(--muted)}
.details{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(680px,100%),1fr));gap:12px}
article svg.chart{max-width:720px}
article{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;min-width:0}
.ahead{display:flex;justify-content:space-between;align-items:center;gap:8px}
article h3{margin:0;font-size:15px;word-break:break-all}
.pill{color:#fff;font-weight:650;border-radius:12px;padding:2px 10px;font-variant-numeric:tabular-nums}
table.comps{margin:8px 0;font-size:12.5px}
table.comps td,table.comps th{padding:4px 8px}
.sub{margin-top:10px;font-weight:600;font-size:12.5px}
.keys{display:flex;flex-wrap:wrap;gap:10px;color:var(--muted);font-size:11.5px}
.key i{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:4px;vertical-align:-1px}
.empty{color:var(--muted);font-size:12px;margin:4px 0}
.method dl,.explain dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px;margin:0}
.method dt,.explain dt{color:var(--muted)}
.method dd,.explain dd{margin:0;min-width:0;overflow-wrap:anywhere}
footer{margin:26px 32px 30px;color:var(--muted);font-size:12px}
.oc{display:inline-block;padding:0 7px;border-radius:9px;font-size:11.5px;font-weight:600;color:#fff;white-space:nowrap}
.oc.correct,.oc.reachable{background:#12845a}.oc.wrong{background:#c63d3d}.oc.unparseable{background:#b8661a}
.oc.timeout{background:#6b7084}.oc.unreachable{background:#4a4f63}.oc.error{background:#7a2e8a}.oc.not-measured{background:#e3e5ee;color:#4a4f63}
.reason{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:11px;color:#9b2c2c}
.lo{display:block;margin:1px 0;white-space:nowrap}
.lo .sig{color:var(--muted);font-size:11.5px}
.formula{font-size:13px;overflow-wrap:anywhere}
p.formula{margin:8px 0 2px}
.conftext{margin:0 0 4px;color:var(--muted);font-size:12.5px}
.tablewrap.flat{border:0;border-radius:0;background:none}
.nowrap{white-space:nowrap}
details.signals{margin-top:12px}
details.signals summary{cursor:pointer;font-weight:600;font-size:12.5px}
table.sigs{font-size:12px}
table.sigs td,table.sigs th{padding:3px 8px}
.explain sub{font-size:10px}
@media (max-width:640px){
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block}
table.stack thead{display:none}
table.stack tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:2px 12px;padding:6px 8px;border-bottom:1px solid var(--line)}
table.stack td{border:0;padding:1px 0;text-align:left;min-width:0}
table.stack td[data-label]::before{content:attr(data-label) " ";color:var(--muted);font-size:11px;font-weight:400}
table.rank td.subject,table.rank td.outcomes{flex-basis:100%}
table.rank .lo{display:inline-block;margin-right:10px}
.rank .uaid{max-width:100%}
table.rank td.subject{overflow-wrap:anywhere}
header{padding:16px}
section{margin:16px 10px}
.warn{margin:12px 10px 0}
footer{margin:20px 10px}
.method dl,.explain dl{grid-template-columns:1fr}
article{padding:12px 10px}
}
`;
