/** The consumer side: read a signal topic, validate, filter, dedupe, score (HCS-25) and report. */
export * from './types.js';
export * from './aggregate.js';
export * from './scoring-config.js';
export { parseUaid, uaidRouting, type UaidParts, type UaidRouting } from '../registry/uaid.js';
export * from './reader.js';
export * from './scores.js';
export * from './table.js';
export * from './csv.js';
export * from './html-report.js';
