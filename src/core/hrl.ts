/**
 * HCS Resource Locators (`hcs://{standard}/{topicId}`, HCS-1 §HRL), parsed here only. Registries and profiles write
 * them with and without a trailing slash and in any case of the scheme, so parsing is lenient in those two ways.
 */
import { ENTITY_ID_PATTERN } from './ids.js';

export interface Hrl {
  /** The HCS standard number, e.g. 1 for an HCS-1 file, 2 for an HCS-2 registry. */
  standard: number;
  topicId: string;
}

const HRL = /^hcs:\/\/(\d{1,4})\/(\d+\.\d+\.\d+)\/?$/i;

export function parseHrl(value: string): Hrl | undefined {
  const m = HRL.exec(value.trim());
  if (!m || !ENTITY_ID_PATTERN.test(m[2]!)) return undefined;
  return { standard: Number(m[1]), topicId: m[2]! };
}

export function formatHrl(standard: number, topicId: string): string {
  return `hcs://${standard}/${topicId}`;
}
