/**
 * Badges for an agent's own page: a subject's trust score or availability as a label and a message, given either as
 * Shields' "endpoint" JSON (https://shields.io/badges/endpoint-badge) or as a self-contained flat SVG in Shields' look.
 * Pure: a score in, text out. No font files: text widths are estimated from the character count, and `textLength`
 * makes the renderer fit the text to that width, so no text overflows its box.
 */
import type { SubjectScore } from '../score/scores.js';
import { esc } from './svg.js';

export const BADGE_METRICS = ['score', 'availability'] as const;
export type BadgeMetric = (typeof BADGE_METRICS)[number];

/** Shields' named colours with the hex values Shields draws them in (the SVG needs the hex). */
export const BADGE_COLORS = {
  brightgreen: '#4c1',
  green: '#97ca00',
  yellowgreen: '#a4a61d',
  yellow: '#dfb317',
  orange: '#fe7d37',
  red: '#e05d44',
  lightgrey: '#9f9f9f',
} as const;
export type BadgeColor = keyof typeof BADGE_COLORS;

export interface Badge {
  label: string;
  message: string;
  color: BadgeColor;
}

export const DEFAULT_LABELS: Readonly<Record<BadgeMetric, string>> = {
  score: 'trust score',
  availability: 'availability',
};

/** The adapter whose total is the availability badge (the built-in configuration's reachable share of probes). */
export const AVAILABILITY_ADAPTER = 'availability';

/** 0–100 → colour: green from 80 and red below 50, as the page colours scores, with Shields' finer steps between. */
export function badgeColor(value: number): BadgeColor {
  if (value >= 90) return 'brightgreen';
  if (value >= 80) return 'green';
  if (value >= 70) return 'yellowgreen';
  if (value >= 50) return 'yellow';
  if (value >= 30) return 'orange';
  return 'red';
}

/** One decimal, cut (not rounded) so a badge never claims more than was measured: 99.96 → `99.9`, 100 → `100`. */
export function badgeNumber(value: number): string {
  return String(Math.floor(value * 10 + 1e-9) / 10);
}

/**
 * The badge for a subject's score answer: `unknown` when no signal about it was indexed, `pending` while its first
 * score is computed. Availability is the score's availability adapter (its window of probes, as the score uses it), so
 * the badge and the score it sits beside agree; `n/a` where that adapter does not apply, `no data` without a probe.
 */
export function badgeFor(
  metric: BadgeMetric,
  score: SubjectScore | 'unknown' | 'pending',
  label = DEFAULT_LABELS[metric],
): Badge {
  if (score === 'unknown' || score === 'pending') return { label, message: score, color: 'lightgrey' };
  if (metric === 'score') {
    const total = score.trustScores.total;
    return { label, message: badgeNumber(total), color: badgeColor(total) };
  }
  const adapter = score.adapters.find((a) => a.adapterId === AVAILABILITY_ADAPTER);
  if (!adapter?.applicable) return { label, message: 'n/a', color: 'lightgrey' };
  const components = Object.values(score.components).filter((c) => c.adapterId === AVAILABILITY_ADAPTER);
  if (adapter.total === null || components.every((c) => c.status === 'missing'))
    return { label, message: 'no data', color: 'lightgrey' };
  // A stale share says how the agent was, not how it is: the badge says so.
  const stale = components.some((c) => c.status === 'stale');
  return { label, message: `${badgeNumber(adapter.total)}%${stale ? ' stale' : ''}`, color: badgeColor(adapter.total) };
}

/** Shields' endpoint schema: Shields draws the badge from it and caches it for `cacheSeconds` (300 at least). */
export function shieldsEndpoint(badge: Badge, cacheSeconds: number) {
  return { schemaVersion: 1, label: badge.label, message: badge.message, color: badge.color, cacheSeconds };
}

/**
 * Verdana 11 px: digits are 7 px, lower-case letters about 6 (DejaVu Sans, its stand-in, a little less). `textLength` spreads or tightens the
 * letter spacing (never the glyphs) to the estimate, so the text stays centred in its box.
 */
const CHAR_WIDTH = 6.2;
const PADDING = 10;

function textWidth(text: string): number {
  return Math.round([...text].length * CHAR_WIDTH);
}

/** The flat badge: a grey label box, a coloured message box, each text centred with Shields' one-pixel shadow. */
export function badgeSvg(badge: Badge): string {
  const lw = textWidth(badge.label) + PADDING;
  const mw = textWidth(badge.message) + PADDING;
  const w = lw + mw;
  const label = esc(badge.label);
  const message = esc(badge.message);
  const text = (x: number, content: string, length: number) =>
    `<text x="${x}" y="15" fill="#010101" fill-opacity=".3" textLength="${length}" lengthAdjust="spacing">${content}</text>` +
    `<text x="${x}" y="14" textLength="${length}" lengthAdjust="spacing">${content}</text>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${label}: ${message}">` +
    `<title>${label}: ${message}</title>` +
    '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>' +
    `<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${mw}" height="20" fill="${BADGE_COLORS[badge.color]}"/><rect width="${w}" height="20" fill="url(#s)"/></g>` +
    '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">' +
    text(lw / 2, label, textWidth(badge.label)) +
    text(lw + mw / 2, message, textWidth(badge.message)) +
    '</g></svg>\n'
  );
}
