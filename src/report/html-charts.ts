/** The HTML report's inline SVG charts: score distribution, score against confidence, and a subject's histories. */
import { byCodeUnit, type ScoreReport } from '../score/scores.js';
import { printable, scoreLabel, signalShortName, subjectLabel, type OutcomeWord } from './display.js';
import {
  OUTCOME_COLORS,
  esc,
  n,
  niceScale,
  plotHeight,
  plotWidth,
  scoreColor,
  svgOpen,
  yGrid,
  type Box,
} from './svg.js';

/** One signal of a subject's history, as a chart draws it. */
export interface Point {
  ms: number;
  seq: number;
  run: string;
  word: OutcomeWord;
  /** Outcome word and reason, for tooltips. */
  label: string;
  value: number;
  ok: boolean;
}

export function histogram(report: ScoreReport): string {
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
        (count
          ? `<text class="tick" x="${n(x + (bw - 4) / 2)}" y="${n(y - 3)}" text-anchor="middle">${count}</text>`
          : '')
      );
    })
    .join('');
  const xTicks = Array.from(
    { length: 11 },
    (_, i) =>
      `<text class="tick" x="${n(b.left + i * bw)}" y="${b.height - b.bottom + 14}" text-anchor="middle">${i * 10}</text>`,
  ).join('');
  return (
    svgOpen(b, 'Histogram of trust scores', 'chart hist') +
    yGrid(b, max, step) +
    bars +
    xTicks +
    `<text class="axis" x="${b.left + plotWidth(b) / 2}" y="${b.height - 4}" text-anchor="middle">trust score</text></svg>`
  );
}

export function scatter(report: ScoreReport): string {
  const b: Box = { width: 460, height: 220, left: 34, right: 14, top: 14, bottom: 34 };
  const x = (c: number) => b.left + c * plotWidth(b);
  const y = (s: number) => b.top + plotHeight(b) * (1 - s / 100);
  // Subjects at one point (same score and confidence: ties are common) share one dot, larger and numbered, whose
  // title lists them all: drawn apart they would hide each other.
  const points = new Map<string, { score: number; confidence: number; who: string[]; ranks: number[] }>();
  report.subjects.forEach((s, i) => {
    const at = `${s.trustScores.total}|${s.trustConfidence}`;
    const point = points.get(at) ?? { score: s.trustScores.total, confidence: s.trustConfidence, who: [], ranks: [] };
    point.who.push(`#${i + 1} ${scoreLabel(s)}`);
    point.ranks.push(i + 1);
    points.set(at, point);
  });
  const dots = [...points.values()]
    .map((p) => {
      const [cx, cy] = [n(x(p.confidence)), n(y(p.score))];
      const many = p.who.length > 1;
      const title = `${p.who.length > 1 ? `${p.who.length} subjects` : p.who[0]}: score ${p.score.toFixed(2)}, confidence ${p.confidence.toFixed(2)}${many ? ` (${firstOf(p.who)})` : ''}`;
      return (
        `<g class="point"><circle class="dot" cx="${cx}" cy="${cy}" r="${many ? 9 : 6}" fill="${scoreColor(p.score)}"><title>${esc(title)}</title></circle>` +
        (many
          ? `<text class="count" x="${cx}" y="${n(Number(cy) + 4)}" text-anchor="middle">${p.who.length}</text>`
          : '') +
        '</g>'
      );
    })
    .join('');
  const xTicks = [0, 0.25, 0.5, 0.75, 1]
    .map((c) => `<text class="tick" x="${n(x(c))}" y="${b.height - b.bottom + 14}" text-anchor="middle">${c}</text>`)
    .join('');
  return (
    svgOpen(b, 'Trust score against confidence', 'chart scatter') +
    yGrid(b, 100, 25) +
    xTicks +
    dots +
    `<text class="axis" x="${b.left + plotWidth(b) / 2}" y="${b.height - 4}" text-anchor="middle">trust confidence</text></svg>` +
    sharedPoints([...points.values()])
  );
}

/** Names listed for one dot, at most: a whole registry can share a point (every subject unreachable, say). */
const MAX_LISTED = 20;

function firstOf(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `${shown} and ${items.length - MAX_LISTED} more` : shown;
}

/** Who shares a dot, in words: a dot's tooltip needs a mouse, this line does not. Ranks as in the ranking table. */
function sharedPoints(points: { score: number; confidence: number; ranks: number[] }[]): string {
  const shared = points.filter((p) => p.ranks.length > 1).sort((a, b) => a.ranks[0]! - b.ranks[0]!);
  if (shared.length === 0) return '';
  const items = shared.map(
    (p) =>
      `<li><strong>${p.ranks.length}</strong> at score ${p.score.toFixed(2)}, confidence ${p.confidence.toFixed(2)}: ranks ${firstOf(p.ranks.map((r) => `#${r}`))}</li>`,
  );
  return `<div class="shared"><span>Numbered dots (subjects at one point):</span><ul>${items.join('')}</ul></div>`;
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

export function evalChart(series: Map<string, Point[]>, subject: string): string {
  const names = [...series.keys()].sort(byCodeUnit);
  if (names.length === 0) return '<p class="empty">No eval signals.</p>';
  const all = names.flatMap((k) => series.get(k)!);
  if (singleRun(all)) return onlyRunText(all, 'its outcomes are in the component table and the signal list.');
  const rowH = 26;
  const b: Box = { width: 560, height: names.length * rowH + 34, left: 92, right: 12, top: 10, bottom: 24 };
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
  const legend = seen
    .map((w) => `<span class="key"><i style="background:${OUTCOME_COLORS[w]}"></i>${esc(w)}</span>`)
    .join('');
  return `${svgOpen(b, `Eval outcomes over time for ${printable(subjectLabel(subject))}`, 'chart evals')}${rows}${timeAxis(all, b)}</svg><div class="keys">${legend}</div>`;
}

export function latencyChart(probes: Point[], subject: string): string {
  if (probes.length === 0) return '<p class="empty">No availability probes.</p>';
  if (singleRun(probes)) return onlyRunText(probes, 'the probe is in the signal list.');
  const b: Box = { width: 560, height: 150, left: 52, right: 12, top: 10, bottom: 24 };
  const reachable = probes.filter((p) => p.ok);
  const { max, step } = niceScale(Math.max(1, ...reachable.map((p) => p.value)));
  const x = timeScale(probes, b);
  const y = (v: number) => b.top + plotHeight(b) * (1 - v / max);
  const line =
    reachable.length > 1
      ? `<polyline class="lat" points="${reachable.map((p) => `${n(x(p.ms))},${n(y(p.value))}`).join(' ')}"/>`
      : '';
  const marks = probes
    .map((p) =>
      p.ok
        ? `<circle class="probe" cx="${n(x(p.ms))}" cy="${n(y(p.value))}" r="3"><title>${esc(new Date(p.ms).toISOString())}: ${p.value} ms</title></circle>`
        : `<rect class="down" x="${n(x(p.ms) - 3)}" y="${n(b.top + plotHeight(b) - 6)}" width="6" height="6"><title>${esc(new Date(p.ms).toISOString())}: ${esc(p.label)}</title></rect>`,
    )
    .join('');
  return `${svgOpen(b, `Probe latency over time for ${printable(subjectLabel(subject))}`, 'chart latency')}${yGrid(b, max, step, (v) => `${n(v)} ms`)}${line}${marks}${timeAxis(probes, b)}</svg><div class="keys"><span class="key"><i style="background:#5b4bd6"></i>reachable (latency)</span><span class="key"><i style="background:#c63d3d"></i>not reachable (timeout or unreachable)</span></div>`;
}
