/**
 * Hedera identifiers, parsed and validated here only. Shard and realm are kept as written: hcs25 never assumes `0.0`.
 */
import { z } from 'zod';

/** `shard.realm.num`, e.g. `0.0.1234` (an account, topic, file or node). */
export const ENTITY_ID_PATTERN = /^\d+\.\d+\.\d+$/;
/** The SDK's transaction id form, `0.0.2@1700000000.000000001`. */
export const TRANSACTION_ID_PATTERN = /^\d+\.\d+\.\d+@\d+\.\d+$/;

export function isEntityId(value: string): boolean {
  return ENTITY_ID_PATTERN.test(value);
}

export const entityIdSchema = z.string().regex(ENTITY_ID_PATTERN, 'must look like 0.0.1234 (a Hedera entity id)');
export const transactionIdSchema = z.string().regex(TRANSACTION_ID_PATTERN, 'must be a transaction id like 0.0.2@1700000000.000000001');
