/**
 * The on-chain formats: what every version shares (protocol.ts); each version's schema and parser (schema-v1.ts +
 * read-v1.ts, schema-v2.ts + read-v2.ts) behind the one message reader (read.ts); the writer of the current version
 * (write.ts, pack.ts) and v1's, kept for finishing v1 runs (write-v1.ts); hashing, failure reasons and statuses.
 */
export * from './protocol.js';
export * from './schema-v1.js';
export * from './schema-v2.js';
export * from './read.js';
export { parseSignalMessage, type ParseOptions, type ParseResult, type RejectReason } from './read-v1.js';
export { expandPack } from './read-v2.js';
export * from './write.js';
export * from './write-v1.js';
export {
  PACK_MODES,
  SignalPacker,
  packBody,
  type PackMode,
  type PackedMessage,
  type SignalPackerOptions,
} from './pack.js';
export * from './hashing.js';
export * from './reasons.js';
export * from './status.js';
