/**
 * Hedera identifiers, parsed and validated here only. Shard and realm are kept as written: hcs25 never assumes `0.0`.
 */
/** `shard.realm.num`, e.g. `0.0.1234` (an account, topic, file or node). */
export const ENTITY_ID_PATTERN = /^\d+\.\d+\.\d+$/;
/** The SDK's transaction id form, `0.0.2@1700000000.000000001`. */
export const TRANSACTION_ID_PATTERN = /^\d+\.\d+\.\d+@\d+\.\d+$/;

export function isEntityId(value: string): boolean {
  return ENTITY_ID_PATTERN.test(value);
}

/** A run id: a ULID (Crockford base32, 26 characters). */
export const RUN_ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
