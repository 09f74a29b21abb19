/**
 * The mirror node REST responses the client reads, validated with zod at the edge, and the decoded shapes it hands
 * out. Kept apart from the client so its request and paging code reads on its own.
 */
import { z } from 'zod';

const keySchema = z.looseObject({ _type: z.string(), key: z.string() }).nullable().optional();

const chunkInfoSchema = z
  .object({
    initial_transaction_id: z
      .looseObject({
        account_id: z.string(),
        nonce: z.number().int().nullable().optional(),
        scheduled: z.boolean().nullable().optional(),
        transaction_valid_start: z.string(),
      })
      .nullable()
      .optional(),
    number: z.number().int(),
    total: z.number().int(),
  })
  .nullable()
  .optional();

export const rawMessageSchema = z.object({
  consensus_timestamp: z.string(),
  message: z.string(),
  payer_account_id: z.string().nullable().optional(),
  running_hash: z.string().nullable().optional(),
  sequence_number: z.number().int().nonnegative(),
  chunk_info: chunkInfoSchema,
});
export type RawMessage = z.infer<typeof rawMessageSchema>;

export const pageSchema = z.object({
  messages: z.array(rawMessageSchema),
  links: z.object({ next: z.string().nullable().optional() }).nullable().optional(),
});

export const topicSchema = z.looseObject({
  topic_id: z.string(),
  memo: z
    .string()
    .nullable()
    .optional()
    .transform((m) => m ?? ''),
  admin_key: keySchema,
  submit_key: keySchema,
  fee_schedule_key: keySchema,
  deleted: z.boolean().nullable().optional(),
  created_timestamp: z.string().nullable().optional(),
  custom_fees: z.unknown().optional(),
});
export type TopicInfo = z.infer<typeof topicSchema>;

export const accountSchema = z.looseObject({
  account: z.string(),
  memo: z
    .string()
    .nullable()
    .optional()
    .transform((m) => m ?? ''),
  deleted: z.boolean().nullable().optional(),
  key: keySchema,
  evm_address: z.string().nullable().optional(),
});
export type AccountInfo = z.infer<typeof accountSchema>;

const transactionSchema = z.looseObject({
  transaction_id: z.string(),
  consensus_timestamp: z.string(),
  result: z.string(),
  name: z.string(),
  entity_id: z.string().nullable().optional(),
  memo_base64: z.string().nullable().optional(),
  charged_tx_fee: z.number().optional(),
  payer_account_id: z.string().optional(),
});
export type TransactionInfo = z.infer<typeof transactionSchema>;
export const transactionsSchema = z.object({ transactions: z.array(transactionSchema) });

/** One whole topic message: a single-chunk message, or every chunk of a chunked one joined in order. */
export interface TopicMessage {
  /** Sequence number of the last chunk (as the Hedera SDK's TopicMessage reports it). */
  sequenceNumber: number;
  /** Sequence number of the first chunk; equals `sequenceNumber` unless the message was chunked. */
  firstSequenceNumber: number;
  /** Consensus timestamp of the last chunk, `"sss.nnnnnnnnn"`. */
  consensusTimestamp: string;
  payerAccountId: string;
  message: Buffer;
  /** Running hash after the last chunk, base64 as the mirror node returns it. */
  runningHash: string;
  /** How many chunks made up the message (1 for an ordinary message). */
  chunks: number;
}

/** One raw mirror message (a chunk), decoded. */
export interface RawTopicMessage {
  sequenceNumber: number;
  consensusTimestamp: string;
  payerAccountId: string;
  message: Buffer;
  runningHash: string;
  chunkInfo: { initialTransactionId: string | null; number: number; total: number } | null;
}

/** Why a raw message did not become part of a whole message. */
export interface DroppedChunk {
  sequenceNumber: number;
  reason: string;
}

/** A mirror message (one chunk) as the rest of the code sees it. */
export function decodeRaw(m: RawMessage): RawTopicMessage {
  const ci = m.chunk_info;
  const tx = ci?.initial_transaction_id;
  return {
    sequenceNumber: m.sequence_number,
    consensusTimestamp: m.consensus_timestamp,
    payerAccountId: m.payer_account_id ?? '',
    message: Buffer.from(m.message, 'base64'),
    runningHash: m.running_hash ?? '',
    chunkInfo:
      ci === null || ci === undefined
        ? null
        : {
            initialTransactionId: tx
              ? `${tx.account_id}@${tx.transaction_valid_start}${tx.nonce ? `/${tx.nonce}` : ''}${tx.scheduled ? '?scheduled' : ''}`
              : null,
            number: ci.number,
            total: ci.total,
          },
  };
}
