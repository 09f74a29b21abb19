/** The ids as zod schemas: apart from ids.ts, so that `hcs25 --help` starts without loading zod. */
import { z } from 'zod';
import { ENTITY_ID_PATTERN, TRANSACTION_ID_PATTERN } from './ids.js';

export const entityIdSchema = z.string().regex(ENTITY_ID_PATTERN, 'must look like 0.0.1234 (a Hedera entity id)');
export const transactionIdSchema = z
  .string()
  .regex(TRANSACTION_ID_PATTERN, 'must be a transaction id like 0.0.2@1700000000.000000001');
