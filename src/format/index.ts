/**
 * The on-chain formats: what every version shares (protocol.ts); each version's schema and parser (schema-v1.ts +
 * read-v1.ts, schema-v2.ts + read-v2.ts, schema-v3.ts + read-v3.ts) behind the one message reader (read.ts); the
 * writer of the current format 3 (write-v3.ts, pack-v3.ts) and those of v2 and v1, kept for finishing runs begun in
 * them (write.ts, pack.ts, write-v1.ts); format-3 score records (score-v3.ts, read-score-v3.ts) and the format's
 * definition that topics point to (definition.ts, json-schemas-v3.ts); hashing, failure reasons and statuses.
 */
export * from './protocol.js';
export * from './schema-v1.js';
export * from './schema-v2.js';
export * from './read.js';
export { parseSignalMessage, type ParseOptions, type ParseResult, type RejectReason } from './read-v1.js';
export { expandPack } from './read-v2.js';
export * from './write.js';
export * from './write-v1.js';
export * from './schema-v3.js';
export * from './write-v3.js';
export {
  SignalPackerV3,
  readableJsonV3,
  signalUnitV3,
  zlibMessageV3,
  type PackedMessageV3,
  type SignalUnitV3,
} from './pack-v3.js';
export {
  PACK_MODES,
  PACK_MODES_V2,
  SignalPacker,
  packBody,
  type PackMode,
  type PackedMessage,
  type SignalPackerOptions,
} from './pack.js';
export * from './hashing.js';
export * from './reasons.js';
export * from './status.js';
export * from './score-v3.js';
export { readScoreOpsV3 } from './read-score-v3.js';
export * from './definition.js';
export { FORMAT_THREE_SCHEMA_SOURCES } from './json-schemas-v3.js';
