/**
 * Who may write to an agent's inbound topic, from its mirror-node record: anyone (no submit key), only key
 * holders (submit key; maybe us), or anyone who pays (HIP-991 fixed fees). Pure.
 */
import { z } from 'zod';
import type { TopicInfo } from '../hedera/mirror-rest.js';

export type InboundAccess =
  | { kind: 'public' }
  | { kind: 'controlled'; ours: boolean }
  | { kind: 'fee'; hbarTinybars: number; tokenFees: number; collectors: string[] };

const fixedFeeSchema = z.looseObject({
  amount: z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]),
  collector_account_id: z.string().nullable().optional(),
  denominating_token_id: z.string().nullable().optional(),
});
const customFeesSchema = z
  .looseObject({ fixed_fees: z.array(fixedFeeSchema).nullable().optional() })
  .nullable()
  .optional();

/**
 * `ourKeyHex`: our public key, raw hex (`PublicKey.toStringRaw()`): a submit key that is exactly ours counts as open
 * to us. Key lists are never unpicked here; a controlled topic with a list is treated as not ours.
 */
export function classifyInbound(topic: TopicInfo, ourKeyHex?: string): InboundAccess {
  if (topic.submit_key) {
    const ours =
      ourKeyHex !== undefined &&
      topic.submit_key._type !== 'ProtobufEncoded' &&
      topic.submit_key.key.toLowerCase() === ourKeyHex.toLowerCase();
    return { kind: 'controlled', ours };
  }
  const fees = customFeesSchema.safeParse(topic.custom_fees);
  const fixed = fees.success ? (fees.data?.fixed_fees ?? []) : [];
  if (fixed.length === 0) return { kind: 'public' };
  let hbarTinybars = 0;
  let tokenFees = 0;
  const collectors: string[] = [];
  for (const f of fixed) {
    if (f.denominating_token_id) tokenFees++;
    else hbarTinybars += f.amount;
    if (f.collector_account_id) collectors.push(f.collector_account_id);
  }
  return { kind: 'fee', hbarTinybars, tokenFees, collectors };
}

export function describeAccess(access: InboundAccess): string {
  switch (access.kind) {
    case 'public':
      return 'public inbound topic';
    case 'controlled':
      return access.ours ? 'inbound topic with our submit key' : 'inbound topic with a submit key (controlled access)';
    case 'fee':
      return `fee-gated inbound topic (HIP-991: ${access.hbarTinybars / 1e8} ℏ${access.tokenFees ? ` and ${access.tokenFees} token fee(s)` : ''} per message)`;
  }
}
