/**
 * A subject's history on the live page (`hcs25 serve`): availability and latency over 24 h, 7 d and 30 d, and charts
 * of availability, latency and the stored score per bucket of one window. Inline SVG from the report's primitives
 * (svg.ts), like the report's other charts: no script.
 */
import type { HistoryBucket, SubjectHistory } from '../score/history.js';
import { printable, subjectLabel } from './display.js';
import { esc, n, niceScale, plotHeight, plotWidth, scoreColor, svgOpen, yGrid, type Box } from './svg.js';

const WINDOW_NAMES: Readonly<Record<string, string>> = { '24h': '24 h', '7d': '7 d', '30d': '30 d' };
// Room on the left for the axis labels at the size a phone draws them (html-style.ts sets them larger there).
const BOX: Box = { width: 560, height: 150, left: 84, right: 12, top: 10, bottom: 24 };

export function historySection(h: SubjectHistory): string {
  const per = h.series.bucketSeconds === 3600 ? 'hour' : 'day';
  const span = WINDOW_NAMES[h.series.window] ?? h.series.window;
  return (
    `<div class="sub">Availability and latency <span class="muted">to ${esc(utc(h.now))} UTC; latency of the reachable <code>${esc(printable(h.latencySignal))}</code> signals</span></div>` +
    windowTable(h) +
    `<div class="sub">Availability per ${per}, last ${esc(span)}</div>${availabilityChart(h)}` +
    `<div class="sub">Latency per ${per}, last ${esc(span)}</div>${latencyChart(h)}` +
    `<div class="sub">Score over time, last ${esc(span)} <span class="muted">(the stored score at the end of each ${per})</span></div>${scoreChart(h)}`
  );
}

function windowTable(h: SubjectHistory): string {
  const rows = h.windows
    .map((w) => {
      const name = WINDOW_NAMES[w.window] ?? w.window;
      return (
        `<tr data-window="${esc(w.window)}"><td>${esc(name)}</td>` +
        `<td class="num" data-label="availability">${percent(w.availability)}</td>` +
        `<td class="num" data-label="probes">${w.reachable} / ${w.probes} reachable</td>` +
        `<td class="num" data-label="p50">${w.latency ? `${n(w.latency.p50Ms)} ms` : '–'}</td>` +
        `<td class="num" data-label="p95">${w.latency ? `${n(w.latency.p95Ms)} ms` : '–'}</td></tr>`
      );
    })
    .join('');
  return `<div class="tablewrap flat"><table class="comps stack history"><thead><tr><th>last</th><th>availability</th><th>probes</th><th>latency p50</th><th>p95</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function percent(share: number | null): string {
  return share === null ? '–' : `${(share * 100).toFixed(2)}%`;
}

function utc(iso: string): string {
  return iso.slice(0, 16).replace('T', ' ');
}

/** x of bucket k's middle. */
function bucketX(b: Box, count: number): (k: number) => number {
  const w = plotWidth(b) / count;
  return (k) => b.left + (k + 0.5) * w;
}

function timeAxis(h: SubjectHistory, b: Box): string {
  const first = h.series.buckets[0];
  if (!first) return '';
  const y = b.height - 6;
  return (
    `<text class="tick" x="${b.left}" y="${y}">${esc(utc(first.start))}</text>` +
    `<text class="tick" x="${b.width - b.right}" y="${y}" text-anchor="end">${esc(utc(h.now))} UTC</text>`
  );
}

function when(bucket: HistoryBucket): string {
  return `${utc(bucket.start)} – ${utc(bucket.end)} UTC`;
}

/** Polylines through the buckets that have a value, broken where one has none. */
function lines(
  values: Array<number | null>,
  x: (k: number) => number,
  y: (v: number) => number,
  attrs: string,
): string {
  const runs: string[][] = [[]];
  values.forEach((v, k) => {
    if (v === null) runs.push([]);
    else runs.at(-1)!.push(`${n(x(k))},${n(y(v))}`);
  });
  return runs
    .filter((r) => r.length > 1)
    .map((r) => `<polyline ${attrs} points="${r.join(' ')}"/>`)
    .join('');
}

function availabilityChart(h: SubjectHistory): string {
  const buckets = h.series.buckets;
  if (buckets.every((k) => k.probes === 0)) return '<p class="empty">No availability probes in this window.</p>';
  const b = BOX;
  const w = plotWidth(b) / buckets.length;
  const y = (share: number) => b.top + plotHeight(b) * (1 - share);
  const bars = buckets
    .map((k, i) => {
      if (k.availability === null) return '';
      const top = y(k.availability);
      // A bucket with no reachable probe still shows: a thin red bar at the axis.
      const height = Math.max(2, b.top + plotHeight(b) - top);
      return `<rect x="${n(b.left + i * w + w * 0.1)}" y="${n(b.top + plotHeight(b) - height)}" width="${n(Math.max(1, w * 0.8))}" height="${n(height)}" fill="${scoreColor(k.availability * 100)}"><title>${esc(when(k))}: ${k.reachable} of ${k.probes} probes reachable (${percent(k.availability)})</title></rect>`;
    })
    .join('');
  return `${svgOpen(b, `Availability over time for ${printable(subjectLabel(h.subject))}`, 'chart availability')}${yGrid(b, 1, 0.25, (v) => `${n(v * 100)}%`)}${bars}${timeAxis(h, b)}</svg>`;
}

function latencyChart(h: SubjectHistory): string {
  const buckets = h.series.buckets;
  if (buckets.every((k) => k.latency === null)) return '<p class="empty">No measured latency in this window.</p>';
  const b = BOX;
  const { max, step } = niceScale(Math.max(1, ...buckets.map((k) => k.latency?.p95Ms ?? 0)));
  const x = bucketX(b, buckets.length);
  const y = (v: number) => b.top + plotHeight(b) * (1 - v / max);
  const p50 = buckets.map((k) => k.latency?.p50Ms ?? null);
  const p95 = buckets.map((k) => k.latency?.p95Ms ?? null);
  const marks = buckets
    .map((k, i) =>
      k.latency
        ? `<circle class="probe" cx="${n(x(i))}" cy="${n(y(k.latency.p50Ms))}" r="2.5"><title>${esc(when(k))}: p50 ${n(k.latency.p50Ms)} ms, p95 ${n(k.latency.p95Ms)} ms (${k.latency.samples} measured)</title></circle>`
        : '',
    )
    .join('');
  return (
    `${svgOpen(b, `Latency over time for ${printable(subjectLabel(h.subject))}`, 'chart latency-history')}${yGrid(b, max, step, (v) => `${n(v)} ms`)}` +
    lines(p95, x, y, 'fill="none" stroke="#e0892b" stroke-width="1.4" stroke-dasharray="4 3"') +
    lines(p50, x, y, 'class="lat"') +
    `${marks}${timeAxis(h, b)}</svg>` +
    '<div class="keys"><span class="key"><i style="background:#5b4bd6"></i>p50</span><span class="key"><i style="background:#e0892b"></i>p95 (dashed)</span></div>'
  );
}

function scoreChart(h: SubjectHistory): string {
  const buckets = h.series.buckets;
  if (buckets.every((k) => k.total === null)) return '<p class="empty">No score recorded in this window yet.</p>';
  const b = BOX;
  const x = bucketX(b, buckets.length);
  const y = (v: number) => b.top + plotHeight(b) * (1 - v / 100);
  const totals = buckets.map((k) => k.total);
  const marks = buckets
    .map((k, i) =>
      k.total === null
        ? ''
        : `<circle cx="${n(x(i))}" cy="${n(y(k.total))}" r="2.5" fill="${scoreColor(k.total)}"><title>${esc(utc(k.end))} UTC: score ${k.total.toFixed(2)}, confidence ${(k.confidence ?? 0).toFixed(2)}</title></circle>`,
    )
    .join('');
  return `${svgOpen(b, `Trust score over time for ${printable(subjectLabel(h.subject))}`, 'chart score-history')}${yGrid(b, 100, 25)}${lines(totals, x, y, 'class="lat"')}${marks}${timeAxis(h, b)}</svg>`;
}
