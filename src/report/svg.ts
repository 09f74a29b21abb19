/**
 * Tiny SVG chart primitives for the HTML report: strings in, strings out, no DOM, no script. Every number is printed
 * with fixed decimals so the same data always gives the same bytes.
 */
import type { OutcomeWord } from './display.js';

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function n(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

export interface Box {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export function plotWidth(b: Box): number {
  return b.width - b.left - b.right;
}

export function plotHeight(b: Box): number {
  return b.height - b.top - b.bottom;
}

export function svgOpen(b: Box, label: string, cls: string): string {
  return `<svg class="${cls}" viewBox="0 0 ${b.width} ${b.height}" role="img" aria-label="${esc(label)}" xmlns="http://www.w3.org/2000/svg">`;
}

/** A "nice" axis maximum (1, 2, 2.5 or 5 × 10^k) at or above `max`, and a step that gives about four ticks. */
export function niceScale(max: number, integer = false): { max: number; step: number } {
  if (!(max > 0)) return { max: 1, step: 1 };
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
  // Counts get whole-number ticks.
  if (integer) step = Math.max(1, Math.ceil(step));
  return { max: Math.ceil(max / step) * step, step };
}

/** `259200` → `3 d`, `5400` → `90 min`: the largest unit that divides evenly. */
export function duration(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['min', 60],
  ] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size} ${unit}`;
  }
  return `${seconds} s`;
}

/** Horizontal grid lines with labels on the left axis. */
export function yGrid(b: Box, max: number, step: number, format: (v: number) => string = n): string {
  const parts: string[] = [];
  for (let v = 0; v <= max + step / 1e6; v += step) {
    const y = b.top + plotHeight(b) * (1 - v / max);
    parts.push(
      `<line class="grid" x1="${b.left}" x2="${b.width - b.right}" y1="${n(y)}" y2="${n(y)}"/>` +
        `<text class="tick" x="${b.left - 6}" y="${n(y + 3.5)}" text-anchor="end">${esc(format(v))}</text>`,
    );
  }
  return parts.join('');
}

/** Score colour: red below 50, amber below 80, green from 80 (the table uses the same thresholds). */
export function scoreColor(score: number): string {
  return score >= 80 ? '#12845a' : score >= 50 ? '#9a6410' : '#c63d3d';
}

/** One colour per outcome word (display.ts `OutcomeWord`): the chips, the chart marks and their legends agree. */
export const OUTCOME_COLORS: Readonly<Record<OutcomeWord, string>> = {
  correct: '#12845a',
  reachable: '#12845a',
  wrong: '#c63d3d',
  unparseable: '#e0892b',
  timeout: '#8b90a3',
  unreachable: '#4a4f63',
  error: '#7a2e8a',
  'not measured': '#c9ccd6',
};
