/**
 * HCS-10 registry folding. Registers are accepted in every shape published so far — the current
 * `{account_id}`, the SDK's `{account_id, inbound_topic_id}`, the March 2025 draft with `outbound_topic_id` and a
 * `metadata` object, and the January 2025 draft with `requester_topic_id` — and deletes by `uid` (current) or by
 * `account_id` (old form). The latest surviving registration of an account wins; its HCS-11 profile is authoritative.
 * The standards-sdk's HCS-2 schemas cannot parse these (they require `t_id`), so they are parsed here.
 */
import { z } from 'zod';
import type { TopicMessage } from '../hedera/mirror-rest.js';
import { entityIdSchema } from '../core/id-schemas.js';
import { parseHcs10TopicMemo } from '../hcs10/messages.js';
import {
  DEFAULT_FOLD_LIMITS,
  RegistryFolder,
  type FoldOp,
  metadataSchema,
  uidSchema,
  type FoldLimits,
  type Metadata,
} from './hcs2.js';
import { type SkipList, messageRef } from './skips.js';

export interface Hcs10RegistryMemo {
  ttl: number;
  metadataTopicId?: string;
}

/** `hcs-10:0:{ttl}:3[:{metadataTopicId}]`; null when the memo is not an HCS-10 registry memo. */
export function parseHcs10RegistryMemo(memo: string): Hcs10RegistryMemo | null {
  const parsed = parseHcs10TopicMemo(memo);
  // A registry is an indexed topic (`hcs-10:0:`).
  if (parsed?.type !== 'registry' || !memo.trim().startsWith('hcs-10:0:')) return null;
  return { ttl: parsed.ttl, ...(parsed.metadataTopicId !== undefined && { metadataTopicId: parsed.metadataTopicId }) };
}

const entityId = entityIdSchema;
const memoField = z.string().max(500, 'memo (m) is limited to 500 characters').optional();

const registerSchema = z.object({
  op: z.literal('register'),
  account_id: entityId,
  inbound_topic_id: entityId.optional(),
  outbound_topic_id: entityId.optional(),
  requester_topic_id: entityId.optional(),
  metadata: metadataSchema.optional(),
  m: memoField,
});
const deleteSchema = z
  .object({ op: z.literal('delete'), uid: uidSchema.optional(), account_id: entityId.optional(), m: memoField })
  .refine((v) => v.uid !== undefined || v.account_id !== undefined, 'delete needs uid (or account_id, old form)');
const migrateSchema = z.object({ op: z.literal('migrate'), t_id: entityId, m: memoField });

const SCHEMAS = { register: registerSchema, delete: deleteSchema, migrate: migrateSchema } as const;

export interface Hcs10Entry {
  /** Sequence number of the register message. */
  uid: number;
  accountId: string;
  inboundTopicId?: string;
  outboundTopicId?: string;
  /** Older registers carried a description inline; the HCS-11 profile wins over it. */
  metadata?: Metadata;
}

export class Hcs10Folder extends RegistryFolder<typeof SCHEMAS> {
  private readonly live = new Map<number, Hcs10Entry>();
  /** Live uids per account, so a delete by account is not a scan of every entry (a flood of them would be quadratic). */
  private readonly byAccount = new Map<string, Set<number>>();

  constructor(topicId: string, skips: SkipList, limits: FoldLimits = DEFAULT_FOLD_LIMITS) {
    super(topicId, skips, 'hcs-10', SCHEMAS, limits);
  }

  protected apply(op: FoldOp<typeof SCHEMAS>, msg: TopicMessage, skip: (reason: string) => void): void {
    switch (op.op) {
      case 'register': {
        const inbound = op.inbound_topic_id ?? op.requester_topic_id;
        let uids = this.byAccount.get(op.account_id);
        if (uids === undefined) {
          uids = new Set();
          this.byAccount.set(op.account_id, uids);
        }
        // The account's earlier registration is superseded.
        if (this.changed) for (const uid of uids) this.changed.add(uid);
        this.changed?.add(msg.sequenceNumber);
        uids.add(msg.sequenceNumber);
        this.live.set(msg.sequenceNumber, {
          uid: msg.sequenceNumber,
          accountId: op.account_id,
          ...(inbound !== undefined && { inboundTopicId: inbound }),
          ...(op.outbound_topic_id !== undefined && { outboundTopicId: op.outbound_topic_id }),
          ...(op.metadata !== undefined && { metadata: op.metadata }),
        });
        return;
      }
      case 'delete': {
        if (op.uid !== undefined) {
          const entry = this.live.get(op.uid);
          if (entry === undefined) {
            skip(`delete of uid ${op.uid}, which is not a live registration`);
            return;
          }
          const uids = this.byAccount.get(entry.accountId)!;
          // Deleting the account's latest registration makes its previous one the account's entry again.
          if (this.changed && this.entryOf(op.uid)) for (const uid of uids) this.changed.add(uid);
          this.changed?.add(op.uid);
          this.live.delete(op.uid);
          uids.delete(op.uid);
          if (uids.size === 0) this.byAccount.delete(entry.accountId);
          return;
        }
        const uids = this.byAccount.get(op.account_id!);
        if (uids === undefined) {
          skip(`delete of account ${op.account_id}, which is not registered`);
          return;
        }
        for (const uid of uids) {
          this.live.delete(uid);
          this.changed?.add(uid);
        }
        this.byAccount.delete(op.account_id!);
        return;
      }
    }
  }

  /** The entry of `uid` when it is its account's latest surviving registration (what `entries()` lists), else undefined. */
  entryOf(uid: number): Hcs10Entry | undefined {
    const entry = this.live.get(uid);
    if (entry === undefined) return undefined;
    for (const other of this.byAccount.get(entry.accountId)!) if (other > uid) return undefined;
    return entry;
  }

  /** The latest surviving registration per account, in registration order; earlier ones are reported as skipped. */
  entries(): Hcs10Entry[] {
    const latest = new Map<string, Hcs10Entry>();
    for (const entry of this.live.values()) {
      const prev = latest.get(entry.accountId);
      if (prev === undefined || prev.uid < entry.uid) {
        if (prev)
          this.skips.add(
            messageRef(this.topicId, prev.uid),
            `account ${prev.accountId} registered again at #${entry.uid}`,
          );
        latest.set(entry.accountId, entry);
      } else {
        this.skips.add(
          messageRef(this.topicId, entry.uid),
          `account ${entry.accountId} registered again at #${prev.uid}`,
        );
      }
    }
    return [...latest.values()].sort((a, b) => a.uid - b.uid);
  }
}
